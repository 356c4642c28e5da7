"""The before/after report's model: :class:`DeltaReport` and the entries it holds.

``delta_report`` (``wai.compare``) compares two arms in phases, each in its own module:
``_delta_args`` checks the arguments, ``_delta_sides`` reads each arm down to per-task values,
``_delta_compare`` compares every metric and reads it against the eval's re-run noise band,
``_delta_verdict`` decides whether the arms compare and what the headline says,
``_delta_sizing`` says what these tasks can detect and what would settle a NO DIFFERENCE, and
``_delta_report`` runs them in that order; ``_delta_text`` prints the report. This module holds
what they all fill in: the report (its fields, verdict word and forest plot), the per-metric and
per-group entries, and the resolve block (docs/measure.md, "delta_report (and compare)").
"""

from __future__ import annotations

import math
from typing import Any, Literal, TypeVar

from pydantic import Field

from whileai.defaults import CI_LEVEL, COMPARE_CI_METHOD
from whileai.measure._compare import Comparison, Verdict
from whileai.measure._delta_text import _tuple, format_delta_report
from whileai.measure._metrics import PASS_AT_1
from whileai.report import ChartedReport, Part, Tone

__all__ = ["DeltaReport", "DeltaResolve", "GroupDelta", "MetricDelta"]

GainVerdict = Literal["moved", "moved_unreplicated", "within_eval_noise", "no_change_detected", "insufficient_data"]
Headline = Literal["moved", "moved_unreplicated", "within_eval_noise", "no_change_detected", "regressed",
                   "not_comparable"]


class DeltaResolve(Part):
    """What would settle a NO DIFFERENCE with a gain on the point estimate (``DeltaReport.resolve``)."""

    delta: float | None = None
    """The observed target delta."""
    eval_runs: int | None = None
    """Eval runs a side, averaged, that bring the re-run band under it (None past ``RESOLVE_MAX_EVAL_RUNS``)."""
    tasks_for_band: int | None = None
    """Paired tasks a run at which the band falls under it, if the re-run spread is rollout noise."""
    tasks_for_test: int | None = None
    """Paired tasks at which the test detects it at 80% power."""
    line: str | None = None
    """The sentence the report prints."""


class GroupDelta(Part):
    """One metric compared inside a delta report: ``compare_runs``'s keys, as :class:`Comparison` has them.

    What ``Comparison.to_dict()`` gives, without its warnings: a NaN there is None here. A
    ``by=`` group's entry in ``DeltaReport.groups`` is this; each metric's entry adds its gain
    verdict (:class:`MetricDelta`).
    """

    metric: str = PASS_AT_1
    """``pass_at_1`` or ``marker:<name>``."""
    paired: bool = False
    """True when the difference is over paired tasks; False for the unpaired fallback."""
    n_paired: int = 0
    """Tasks both arms share with a value on both sides."""
    n_only_a: int = 0
    """Tasks only the before arm has."""
    n_only_b: int = 0
    """Tasks only the after arm has."""
    paired_share: float | None = None
    """Paired tasks over all tasks either arm has (None when there are none)."""
    n_used: int = 0
    """Tasks the difference is over."""
    mean_a: float | None = None
    """The metric before, over the tasks used."""
    mean_b: float | None = None
    """The metric after, over the tasks used."""
    delta: float | None = None
    """mean_b - mean_a, the mean paired difference."""
    ci95: list[float | None] | None = None
    """Interval on delta at ``level``; None when undefined."""
    level: float = CI_LEVEL
    """Confidence level."""
    ci_method: str = COMPARE_CI_METHOD
    """The interval method used (``Comparison.ci_method``)."""
    p_value: float | None = None
    """The test's two-sided p-value."""
    p_method: str = "none"
    """``exact`` or ``monte_carlo`` sign flip, ``welch``, ``none``."""
    p_mc_error: float | None = 0.0
    """Monte Carlo standard error of ``p_value`` (0 when exact)."""
    task_std: float | None = None
    """Standard deviation of the per-task paired difference."""
    verdict: Verdict = "insufficient_data"
    """The test's word: b_better, a_better, no_difference_detected, insufficient_data."""
    test: Literal["sign_flip", "welch", "none"] = "none"
    """The test behind ``verdict``."""
    interval_agrees: bool = True
    """Whether ``ci95`` reads the same as the test."""
    direction: Literal["up", "down", "none"] = "none"
    """Sign of a delta the test calls significant."""
    note: str = ""
    """What qualifies the comparison."""

    @classmethod
    def of(cls: type[_Entry], comp: Comparison, **more: Any) -> _Entry:
        """The entry for ``comp``: its ``to_dict()`` without the warnings, and ``more``."""
        entry = comp.to_dict()
        entry.pop("warnings", None)
        return cls(**entry, **more)


_Entry = TypeVar("_Entry", bound=GroupDelta)


class MetricDelta(GroupDelta):
    """One metric of a delta report (``DeltaReport.metrics``): the comparison and its gain verdict against the band."""

    gain_verdict: GainVerdict = "insufficient_data"
    """moved, moved_unreplicated, within_eval_noise, no_change_detected or insufficient_data."""
    run_std: float | None = None
    """The metric's re-run standard deviation, when known."""
    noise_band: float | None = None
    """Its re-run band: a delta inside it is the eval re-running."""
    within_noise: bool = False
    """Whether the test calls it changed but the delta sits inside the band."""


class DeltaReport(ChartedReport):
    """Before against after on pass@1 and every shared marker, with the verdict a person reads first."""

    ok: bool = False
    """False when the headline is FAIL or NOT COMPARABLE."""
    headline: str = "NOT COMPARABLE"
    """The printed first line: PASS, PASS (UNREPLICATED: ...) when it rests on one eval run a side with no
    noise floor, NO DIFFERENCE, FAIL or NOT COMPARABLE (causes)."""
    headline_verdict: Headline = "not_comparable"
    """The word behind the headline: moved / moved_unreplicated (PASS), no_change_detected /
    within_eval_noise (NO DIFFERENCE), regressed (FAIL), not_comparable."""
    not_comparable: list[str] = Field(default_factory=list)
    """Why the arms cannot be compared: situations (under half the tasks pair), ungraded,
    too_few_tasks."""
    target: str = PASS_AT_1
    """The metric the change was meant to move (the headline)."""
    target_verdict: GainVerdict = "insufficient_data"
    """The target's verdict word."""
    target_direction: Literal["up", "down", "none"] = "none"
    """Direction of a target change the test calls significant."""
    target_delta: float = math.nan
    """The target's mean paired difference, after - before."""
    target_ci95: tuple[float, float] | None = None
    """Interval on target_delta."""
    must_not_regress: list[str] = Field(default_factory=list)
    """Guards: metrics whose significant drop fails the report."""
    guards_failed: list[str] = Field(default_factory=list)
    """Guards that dropped significantly."""
    degenerate_guards: list[str] = Field(default_factory=list)
    """Guards with the same value on every row of both arms: they cannot fail."""
    n_metrics: int = 0
    """Metrics compared (pass_at_1 and every marker both arms carry)."""
    level: float = CI_LEVEL
    """Confidence level of every interval."""
    ci_method: str = COMPARE_CI_METHOD
    """Interval method asked for on paired gains (``sign_flip``: the deciding test's own, ``COMPARE_CI_METHOD``);
    each metric's ``ci_method`` names the one it used."""
    n_paired_tasks: int = 0
    """Tasks both arms graded (pass_at_1)."""
    n_unpaired_tasks: int = 0
    """Tasks only one arm graded."""
    paired_share: float = math.nan
    """Paired tasks over every task either arm graded."""
    improved: list[str] = Field(default_factory=list)
    """Metrics that moved up (moved or moved_unreplicated)."""
    regressions: list[str] = Field(default_factory=list)
    """Metrics that moved down (moved or moved_unreplicated)."""
    within_noise: list[str] = Field(default_factory=list)
    """Metrics the test calls changed but whose delta sits inside the re-run band."""
    run_std: float | None = None
    """The target's re-run standard deviation, given or derived from lineage.eval_run."""
    run_std_by_metric: dict[str, float] = Field(default_factory=dict)
    """run_std of each metric that has one."""
    run_std_source: Literal["given", "rows"] | None = None
    """Where run_std came from."""
    run_std_runs: int | None = None
    """Re-runs behind a given run_std (None: read as exact, 1.96)."""
    run_std_df: int | None = None
    """Degrees of freedom of the band's t quantile (None: normal quantile)."""
    noise_band: float | None = None
    """The target's re-run band: a delta inside it is the eval re-running."""
    noise_rule: str = ""
    """How the band was computed, in words."""
    eval_runs: dict[str, int] = Field(default_factory=dict)
    """Eval runs found on each side (lineage.eval_run), 1 when none."""
    replicated: bool = False
    """True when the band comes from re-runs in these rows (runs=3), so a move is replicated."""
    ceiling: bool = False
    """The before arm already passes most tasks (or too few paired tasks have room): little to show."""
    detectable_effect: float | None = None
    """The smallest target gain these paired tasks detect at ``power`` (the paired t test's power by the
    noncentral t, as ``holdout_size`` sizes); None when the sign-flip test cannot reject at this many tasks."""
    moved_detectable_effect: float | None = None
    """The smallest target gain this report can call ``moved`` at ``power`` with these paired tasks,
    rollouts and run_std: it must clear both the test and the noise band (None without a band).
    Beside ``detectable_effect`` (the test alone) it is the power the band costs; see docs/measure.md."""
    resolve: DeltaResolve = Field(default_factory=DeltaResolve)
    """On NO DIFFERENCE with a gain on the point estimate: what would settle it, from the measured
    spread. ``eval_runs`` (runs a side, averaged, that bring the re-run band under the observed
    delta at this run_std; None past ``RESOLVE_MAX_EVAL_RUNS``), ``tasks_for_band`` (paired tasks a
    run at which the band falls under it, if run_std is rollout noise and falls as 1/sqrt(tasks)),
    ``tasks_for_test`` (paired tasks at which the test detects it at 80% power), and ``line``."""
    tasks_needed: int | None = None
    """Paired tasks needed to detect the observed target delta at ``power`` (``holdout_size``'s rule)."""
    tasks_needed_source: str | None = None
    """Where the sizing sd came from (``rows``: the paired differences here)."""
    metrics: dict[str, MetricDelta] = Field(default_factory=dict)
    """Per metric: the compare_runs keys plus gain_verdict, run_std, noise_band, within_noise."""
    config: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """What each arm's rows were produced with (``before``, ``after``)."""
    repeats: dict[str, int] = Field(default_factory=dict)
    """Rollouts per task on each side (the most graded rollouts any task has)."""
    balanced: dict[str, int] | None = None
    """Rows each side gave up under ``balance_rollouts=True``; None when off."""
    by: str | None = None
    """What ``by=`` grouped on."""
    groups: dict[str, GroupDelta] = Field(default_factory=dict)
    """Per group: the target compared within the group."""
    groups_down: list[str] = Field(default_factory=list)
    """Groups whose target dropped significantly."""

    def render(self) -> str:
        """The report as ``format_delta_report`` prints it."""
        return format_delta_report(self)

    def verdict_word(self) -> tuple[str, Tone]:
        """The headline's word: PASS good, FAIL bad, NO DIFFERENCE and NOT COMPARABLE warn."""
        for word, tone in (("PASS", "good"), ("FAIL", "bad"), ("NO DIFFERENCE", "warn"), ("NOT COMPARABLE", "warn")):
            if self.headline.startswith(word):
                return word, tone  # type: ignore[return-value]
        return self.headline.split(" (")[0], "neutral"

    def figure_spec(self) -> dict[str, Any]:
        """A forest plot of every metric's delta and interval, the target's noise band shaded."""
        from whileai.charts import forest
        from whileai.defaults import CHART_BAD, CHART_GOOD, CHART_MUTED

        names = list(self.metrics)
        cis = [_tuple(self.metrics[n].get("ci95")) for n in names]
        shade = {"up": CHART_GOOD, "down": CHART_BAD}
        colors = [shade.get(m.get("direction"), CHART_MUTED) if m.get("gain_verdict") in ("moved", "moved_unreplicated")
                  else CHART_MUTED for m in self.metrics.values()]
        return forest(names or [self.target], [self.metrics[n].get("delta") for n in names] or [None],
                      [c[0] if c else None for c in cis] or [None], [c[1] if c else None for c in cis] or [None],
                      band=self.noise_band, verdict=self.verdict_word()[0], colors=colors or None,
                      title=f"{self.n_paired_tasks} paired tasks, {self.level:.0%} intervals")

