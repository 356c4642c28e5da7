"""Before and after: ``delta_report`` (also ``compare``) and ``format_delta_report``."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeVar

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai._checks import check_choice, check_int
from whileai.defaults import (
    BOOTSTRAP_DRAWS,
    CEILING_PASS_RATE,
    CI_LEVEL,
    COMPARE_CI_METHOD,
    DEFAULT_SEED,
    EVAL_RUNS,
    MIN_PAIRED_SHARE,
    MIN_PAIRED_TASKS,
    PERMUTATION_DRAWS,
    POWER,
    RESOLVE_MAX_EVAL_RUNS,
)
from whileai.errors import ArgumentError
from whileai.measure._args import check_level, check_probability
from whileai.measure._compare import (
    COMPARE_CI_METHODS,
    CompareMethod,
    Comparison,
    Verdict,
    _counts,
    _p,
    aligned,
    compare_arrays,
)
from whileai.measure._format import fmt_interval, fmt_signed
from whileai.measure._holdout import detectable_gain, min_sign_flip_tasks, tasks_needed
from whileai.measure._metrics import (
    MARKER_PREFIX,
    PASS_AT_1,
    marker_names,
    metric_label,
    task_values,
)
from whileai.measure._rows import clean_rewards, read_rows
from whileai.measure._runs import run_config, run_labels
from whileai.measure._stream import StreamSide, stream_side
from whileai.measure._variance import EvalVarianceReport, run_means
from whileai.report import ChartedReport, Part, Tone
from whileai.stats.intervals import t_quantile
from whileai.stats.power import detectable_moved, noise_band_width
from whileai.stats.rng import check_rng
from whileai.table import IntoRows, is_ray_dataset

__all__ = ["DeltaReport", "DeltaResolve", "GroupDelta", "MetricDelta", "delta_report", "format_delta_report"]

GainVerdict = Literal["moved", "moved_unreplicated", "within_eval_noise", "no_change_detected", "insufficient_data"]
Headline = Literal["moved", "moved_unreplicated", "within_eval_noise", "no_change_detected", "regressed",
                   "not_comparable"]

_CONFOUNDS = ("temperature", "top_p", "max_tokens", "provider", "base_url", "judge_name", "judge_version", "user_model",
              "writer_model")
_MAX_GROUPS = 50


class DeltaSide(NamedTuple):
    """What ``delta_report`` reads of one arm: per-task values and a few row facts.

    Every field is a per-task mean or a sum, min or max over rows, so an engine that sees the rows
    in parts merges them exactly (``docs/scale.md``).
    """

    values: pl.DataFrame
    """``task_values`` over the metrics: task_key, n_graded, one column a metric."""
    run_values: pl.DataFrame | None
    """``task_values`` keyed by (``_run``, task_key) when the rows carry an eval-run label, else None."""
    n_rows: int
    """Rows in the arm."""
    n_graded: int
    """Rows with a reward."""
    marker_range: dict[str, tuple[Any, Any]]
    """Each marker's (min, max) over the arm's rows."""
    config: dict[str, Any]
    """``run_config`` of the arm (empty for no rows)."""


def delta_side(df: pl.DataFrame, metrics: list[str]) -> DeltaSide:
    """One arm's :class:`DeltaSide` from its rows (the local engine)."""
    if df.height == 0:
        return DeltaSide(_empty_values(metrics), None, 0, 0, {}, {})
    markers = [m for m in metrics if m != PASS_AT_1]
    ranges: dict[str, tuple[Any, Any]] = {}
    if markers:
        row = df.select([e for m in markers for e in (pl.col("markers").struct.field(m).min().alias(f"{m}:lo"),
                                                      pl.col("markers").struct.field(m).max().alias(f"{m}:hi"))]).row(0, named=True)
        ranges = {m: (row[f"{m}:lo"], row[f"{m}:hi"]) for m in markers}
    expr = run_labels(df)[0]
    run_values = None
    if expr is not None:
        run_values = task_values(df.with_columns(expr.alias("_run")), metrics, keys=("_run", "task_key"), maintain_order=False)
    return DeltaSide(task_values(df, metrics, maintain_order=False), run_values, df.height, int(df["reward"].count()),
                     ranges, run_config(df))


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
        colors = []
        for n in names:
            m = self.metrics[n]
            moved = m.get("gain_verdict") in ("moved", "moved_unreplicated")
            colors.append(CHART_GOOD if moved and m.get("direction") == "up" else
                          CHART_BAD if moved and m.get("direction") == "down" else CHART_MUTED)
        return forest(names or [self.target], [self.metrics[n].get("delta") for n in names] or [None],
                      [c[0] if c else None for c in cis] or [None], [c[1] if c else None for c in cis] or [None],
                      band=self.noise_band, verdict=self.verdict_word()[0], colors=colors or None,
                      title=f"{self.n_paired_tasks} paired tasks, {self.level:.0%} intervals")


def format_delta_report(report: DeltaReport) -> str:
    """The delta report as text: the headline first, then the reading, then one line per metric.

    The first line is exactly PASS, NO DIFFERENCE, FAIL or NOT COMPARABLE (causes) (docs/measure.md,
    "delta_report (and compare)").

    Args:
        report: A :class:`DeltaReport`.

    Returns:
        The printed report (``str(report)`` is the same text).
    """
    r = report
    lines = [r.headline]
    t = r.metrics.get(r.target)
    if t is not None:
        lines.append(f"{r.target}: {r.target_verdict} ({fmt_signed(r.target_delta)}, {r.level:.0%} "
                     f"{_ci_words(r.target_ci95)}, {t.get('n_paired', 0)} paired tasks{_disagreement(t)})")
    if r.guards_failed:
        lines.append("failed guards: " + ", ".join(r.guards_failed))
    if r.noise_band is not None:
        lines.append(f"eval noise: run_std {r.run_std:.3f}, a delta under {r.noise_band:.3f} is noise ({r.noise_rule})")
    elif r.target_verdict == "moved_unreplicated":
        lines.append(f"repeated: 1 run a side, noise unknown ({r.target} {fmt_signed(r.target_delta)}; "
                     "simulate(tasks=..., runs=3) shows whether the verdict repeats)")
    if r.detectable_effect is not None or r.tasks_needed is not None:
        floor = min_sign_flip_tasks(1.0 - r.level)
        size = (f"sizing: {r.n_paired_tasks} paired tasks detect {fmt_signed(r.detectable_effect)} at {POWER:.0%} power"
                if r.detectable_effect is not None else
                f"sizing: {r.n_paired_tasks} paired tasks detect no gain: the sign-flip test needs {floor} to reach "
                f"p < {1.0 - r.level:.2g}")
        if r.tasks_needed is not None:
            size += f"; the observed {fmt_signed(r.target_delta)} needs {r.tasks_needed}"
        if r.repeats and len(set(r.repeats.values())) > 1:
            size += f" (k={r.repeats.get('before')} before, k={r.repeats.get('after')} after)"
        lines.append(size)
    if r.resolve.get("line"):
        lines.append(r.resolve["line"])
    if r.moved_detectable_effect is not None and r.detectable_effect is not None:
        lines.append(f"band cost: the noise band calls a gain moved at {POWER:.0%} power from "
                     f"{fmt_signed(r.moved_detectable_effect)} (the test alone: {fmt_signed(r.detectable_effect)})")
    for name, m in r.metrics.items():
        noise = f"  noise<{m['noise_band']:.3f}" if m.get("noise_band") is not None else ""
        word = {"up": "up", "down": "down"}.get(m.get("direction", "none"), "")
        lines.append(f"  {name:<28} {_num(m.get('mean_a'))} -> {_num(m.get('mean_b'))}  {fmt_signed(m.get('delta', math.nan))} "
                     f"{fmt_interval(_tuple(m.get('ci95')), signed=True)}  {word or m.get('gain_verdict', '')}  "
                     f"({m.get('n_paired', 0)} paired{_disagreement(m, short=True)}){noise}")
    if r.groups:
        lines.append(f"by {r.by}:")
        for g, grp in r.groups.items():
            flag = "  DOWN" if g in r.groups_down else ""
            lines.append(f"  {g:<28} {_num(grp.get('mean_a'))} -> {_num(grp.get('mean_b'))}  {fmt_signed(grp.get('delta', math.nan))} "
                         f"{fmt_interval(_tuple(grp.get('ci95')), signed=True)}  ({grp.get('n_paired', 0)} paired){flag}")
    lines.extend(f"! {w}" for w in r.warnings)
    return "\n".join(lines)


def _num(v: Any) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.3f}"


def _tuple(v: Any) -> tuple[float, float] | None:
    return None if v is None else (float(v[0]), float(v[1]))


def _ci_words(ci: tuple[float, float] | None) -> str:
    return "interval n/a" if ci is None else f"{ci[0]:+.3f}..{ci[1]:+.3f}"


def _disagreement(m: Mapping[str, Any] | GroupDelta, *, short: bool = False) -> str:
    """Words for a metric whose printed interval reads otherwise than the test behind its verdict, else ''.

    The verdict follows the test (the exact sign-flip test on paired tasks, Welch's on the
    unpaired fallback); the printed interval is the estimate's precision (the score interval, or
    the t or bootstrap one asked for), which at few tasks can exclude zero while the exact test
    cannot reject, or the reverse.
    """
    if m.get("interval_agrees", True) or m.get("ci95") is None:
        return ""
    test = "sign-flip" if m.get("test") == "sign_flip" else "Welch"
    p = m.get("p_value")
    p_words = f"{test} p {_p(p)}" if p is not None and math.isfinite(p) else f"{test} test"
    if short:
        return f"; {p_words} decides"
    n = m.get("n_paired", 0) if m.get("paired") else m.get("n_used", 0)
    exact = "exact " if test == "sign-flip" else ""
    return f"; {p_words}: the interval and the {exact}test disagree at {n} tasks; the test decides"


def delta_report(before: IntoRows, after: IntoRows, *, target: str | None = None, must_not_regress: Sequence[str] = (),
                 markers: Sequence[str] | None = None, by: str | Callable[[dict[str, Any]], Any] | None = None,
                 run_std: float | Mapping[str, float] | EvalVarianceReport | None = None,
                 run_std_runs: int | None = None, balance_rollouts: bool = False, level: float = CI_LEVEL,
                 power: float = POWER, ci_method: CompareMethod = COMPARE_CI_METHOD,
                 n_boot: int = BOOTSTRAP_DRAWS, n_perm: int = PERMUTATION_DRAWS,
                 ceiling_pass_rate: float = CEILING_PASS_RATE, min_paired: int = MIN_PAIRED_TASKS,
                 seed: int | np.random.Generator | None = DEFAULT_SEED) -> DeltaReport:
    """Before against after: pass@1 and every shared marker compared on paired tasks, with a verdict.

    Each metric runs the ``compare_runs`` comparison (per-task values paired by task_key, the MOVER
    interval from each side's clustered score interval, Zou and Donner 2008, Statistics in Medicine
    27:1693, or the Student-t interval on the paired differences with ``ci_method="t"``, and the
    exact sign-flip test; Miller 2024, arXiv:2411.00640, section 4). The test decides; its verdict word reads the test against the
    eval's own re-run band (docs/measure.md, "delta_report (and compare)" and "Run the eval three
    times"): ``moved`` (the test rejects and the delta clears the band), ``moved_unreplicated``
    (rejects, but one eval run a side and no run_std), ``within_eval_noise`` (rejects, inside the
    band: equivalence, not a win), ``no_change_detected`` (the test does not reject). When the
    printed interval reads otherwise (at few tasks it can exclude zero while the exact test cannot
    reject), the metric's line says so and that the test decides. The band is
    q x run_std x sqrt(1/n_before + 1/n_after) with q the t quantile at the run_std's degrees of
    freedom; rows carrying ``lineage.eval_run`` give run_std themselves (pooled over both sides,
    df = runs - 2 in all); a bare ``run_std=`` keeps 1.96 and warns. The first printed line is
    PASS (the target moved up), NO DIFFERENCE (the test does not reject, or inside the band), FAIL
    (the target moved down, or a ``must_not_regress`` metric dropped significantly) or
    NOT COMPARABLE (causes) when under half the tasks pair, a side is ungraded, or too few tasks.

    Args:
        before: The baseline rows.
        after: The rows after the change, on the same tasks.
        target: The metric the change was meant to move (default ``pass_at_1``).
        must_not_regress: Metrics whose significant drop fails the report (markers: 1.0 is good).
        markers: Compare only these markers (default every marker both sides carry).
        by: A row key, a marker, or a callable on a row dict that groups rows; the target is
            compared within each group and ``groups_down`` names groups that dropped.
        run_std: The eval's re-run sd: a number (for the target), a dict per metric, or an
            :class:`EvalVarianceReport`.
        run_std_runs: The re-runs run_std came from; the band then uses t at runs - 1 df.
        balance_rollouts: Trim every paired task to the rollouts both sides have (drawn by seed).
        level: Confidence level (``CI_LEVEL``).
        power: Power for the sizing line (``POWER``).
        ci_method: ``"sign_flip"`` (default, ``COMPARE_CI_METHOD``), ``"score"``, ``"t"``, ``"percentile"`` or ``"bca"``.
        n_boot: Bootstrap draws for a bootstrap ``ci_method``.
        n_perm: Monte Carlo sign flips when the exact test is too large.
        ceiling_pass_rate: A before pass@1 at or above this sets ``ceiling`` (``CEILING_PASS_RATE``).
        min_paired: Fewest shared tasks for a paired comparison (``MIN_PAIRED_TASKS``).
        seed: Seed or Generator.

    Returns:
        A :class:`DeltaReport`; ``print`` gives :func:`format_delta_report`.

    Raises:
        ArgumentError: An option outside its allowed values, or a target / guard neither side measures.
        SchemaError: A reward outside [0, 1] or not a number.

    Examples:
        >>> a = [{"task_id": f"t{i}", "reward": r} for i in range(8) for r in (0, 1, 0, 0)]
        >>> b = [{"task_id": f"t{i}", "reward": r} for i in range(8) for r in (1, 1, 1, 0)]
        >>> delta_report(a, b).headline
        'PASS (UNREPLICATED: one eval run a side and no noise floor, so this could be eval noise)'
    """
    level = check_level(level)
    power = check_probability("power", power)
    check_choice("ci_method", ci_method, COMPARE_CI_METHODS)
    check_int("n_boot", n_boot)
    check_int("n_perm", n_perm)
    check_int("min_paired", min_paired, minimum=2)
    ceiling_pass_rate = check_probability("ceiling_pass_rate", ceiling_pass_rate, open_high=False)
    if not isinstance(balance_rollouts, bool):
        raise ArgumentError(f"balance_rollouts must be True or False, got {balance_rollouts!r}. Pass balance_rollouts=True.")
    guards = _names("must_not_regress", must_not_regress)
    wanted_markers = None if markers is None else _names("markers", markers)
    if target is not None and (not isinstance(target, str) or not target):
        raise ArgumentError(f"target must be a metric name such as 'pass_at_1', got {target!r}. Pass target='pass_at_1'.")
    if by is not None and not (isinstance(by, str) or callable(by)):
        raise ArgumentError(f"by must be a row key, a marker name or a callable on a row, got {by!r}. Pass by='tier'.")
    given_std, given_runs = _check_run_std(run_std, run_std_runs)
    rng = check_rng(seed)

    warnings: list[str] = []
    if is_ray_dataset(before) or is_ray_dataset(after):
        return _delta_ray(before, after, by=by, balance_rollouts=balance_rollouts, wanted_markers=wanted_markers,
                          target=target, guards=guards, given_std=given_std, given_runs=given_runs, level=level,
                          power=power, ci_method=ci_method, n_boot=n_boot, n_perm=n_perm,
                          ceiling_pass_rate=ceiling_pass_rate, min_paired=min_paired, rng=rng, warnings=warnings)
    if by is None and not balance_rollouts:
        streamed = [stream_side(rows) for rows in (before, after)]
        if any(side is not None for side in streamed):
            sides, metrics, target_name = _streamed_sides((before, after), streamed, wanted_markers, target, guards,
                                                          warnings)
            return delta_from_sides(sides[0], sides[1], metrics=metrics, target_name=target_name, guards=guards,
                                    given_std=given_std, given_runs=given_runs, balanced={}, level=level, power=power,
                                    ci_method=ci_method, n_boot=n_boot, n_perm=n_perm,
                                    ceiling_pass_rate=ceiling_pass_rate, min_paired=min_paired, rng=rng,
                                    warnings=warnings)
    (side_a, side_b), (a_df, b_df), metrics, target_name, balanced = _frame_sides(
        (before, after), by=by, balance_rollouts=balance_rollouts, wanted_markers=wanted_markers, target=target,
        guards=guards, rng=rng, warnings=warnings)
    return delta_from_sides(side_a, side_b, metrics=metrics,
                            target_name=target_name, guards=guards, given_std=given_std, given_runs=given_runs,
                            balanced=balanced, level=level, power=power, ci_method=ci_method, n_boot=n_boot,
                            n_perm=n_perm, ceiling_pass_rate=ceiling_pass_rate, min_paired=min_paired, rng=rng,
                            warnings=warnings, by=by, frames=(a_df, b_df))


def _frame_sides(arms: tuple[IntoRows, IntoRows], *, by: Any, balance_rollouts: bool,
                 wanted_markers: list[str] | None, target: str | None, guards: list[str], rng: np.random.Generator,
                 warnings: list[str]) -> tuple[tuple[DeltaSide, DeltaSide], tuple[pl.DataFrame, pl.DataFrame],
                                               list[str], str, dict[str, int]]:
    """Both arms read whole (``by=`` or balancing needs the rows): their sides, frames, metrics, target, trims."""
    extra = [by] if isinstance(by, str) else []
    a_df, b_df = (clean_rewards(read_rows(rows, extra=extra, all_columns=callable(by)), warnings) for rows in arms)
    shared_markers = sorted(set(marker_names(a_df)) & set(marker_names(b_df)))
    metrics, target_name = _metrics_of(shared_markers, wanted_markers, target, guards)
    configs = [run_config(df) if df.height else {} for df in (a_df, b_df)]
    balanced: dict[str, int] = {}
    if balance_rollouts and a_df.height and b_df.height:
        a_df, b_df, balanced = _balance(a_df, b_df, rng)
    sides = (delta_side(a_df, metrics)._replace(config=configs[0]), delta_side(b_df, metrics)._replace(config=configs[1]))
    return sides, (a_df, b_df), metrics, target_name, balanced


def _metrics_of(shared_markers: list[str], wanted_markers: list[str] | None, target: str | None,
                guards: list[str]) -> tuple[list[str], str]:
    """The metrics both arms measure (pass_at_1 first) and the target's name; refuses unknown names."""
    if wanted_markers is not None:
        missing = [m for m in wanted_markers if m not in shared_markers]
        if missing:
            raise ArgumentError(f"markers must be carried by both arms, got {missing!r}. "
                                f"Both arms carry: {', '.join(shared_markers) or 'no markers'}.")
        shared_markers = [m for m in shared_markers if m in wanted_markers]
    metrics = [PASS_AT_1, *shared_markers]
    target_name = metric_label(target) if target is not None else PASS_AT_1
    for name, what in [(target_name, "target"), *((g, "must_not_regress") for g in guards)]:
        if name not in metrics:
            raise ArgumentError(f"{what} must name a metric both arms measure, got {name!r}. "
                                f"Measured on both: {', '.join(metrics)}.")
    return metrics, target_name


def _streamed_sides(arms: tuple[Any, Any], streamed: list[StreamSide | None], wanted_markers: list[str] | None,
                    target: str | None, guards: list[str],
                    warnings: list[str]) -> tuple[list[DeltaSide], list[str], str]:
    """Both arms' :class:`DeltaSide`, a Parquet arm read by the streaming engine and any other one eagerly.

    What ``delta_side`` and ``run_config`` read off the rows, from the streamed per-task values
    and reductions; the warnings in the order the eager reads give them.
    """
    frames: list[pl.DataFrame | None] = []
    names: list[list[str]] = []
    for rows, side in zip(arms, streamed, strict=True):
        if side is not None:
            warnings.extend(side.warnings)
            frames.append(None)
            names.append(side.markers)
        else:
            df = clean_rewards(read_rows(rows), warnings)
            frames.append(df)
            names.append(marker_names(df))
    metrics, target_name = _metrics_of(sorted(set(names[0]) & set(names[1])), wanted_markers, target, guards)
    sides: list[DeltaSide] = []
    for frame, side in zip(frames, streamed, strict=True):
        if side is None:
            assert frame is not None
            sides.append(delta_side(frame, metrics)._replace(config=run_config(frame) if frame.height else {}))
            continue
        markers = [m for m in metrics if m != PASS_AT_1]
        sides.append(DeltaSide(side.values.select("task_key", "n_graded", *metrics), side.run_values(metrics),
                               side.n_rows, side.n_graded, {m: side.marker_range[m] for m in markers}, side.config()))
    return sides, metrics, target_name


def _delta_ray(before: Any, after: Any, *, by: Any, balance_rollouts: bool, wanted_markers: list[str] | None,
               target: str | None, guards: list[str], warnings: list[str], **options: Any) -> DeltaReport:
    """``delta_report`` with one or both arms a ``ray.data.Dataset``: each arm's merged sums, the same kernel."""
    if by is not None or balance_rollouts:
        raise ArgumentError(f"by= and balance_rollouts=True must be left off when an arm is a Ray dataset, got "
                            f"by={by!r}, balance_rollouts={balance_rollouts!r}. Compare without them, or read the "
                            "arms into Polars first (docs/scale.md).")
    arms: list[tuple[pl.DataFrame | None, pl.DataFrame | None, list[str]]] = []
    for rows in (before, after):
        if is_ray_dataset(rows):
            cells, markers, found = _delta_cells_ray(rows)
            warnings.extend(found)
            arms.append((None, cells, markers))
        else:
            df = clean_rewards(read_rows(rows), warnings)
            arms.append((df, None, marker_names(df)))
    shared = sorted(set(arms[0][2]) & set(arms[1][2]))
    metrics, target_name = _metrics_of(shared, wanted_markers, target, guards)
    sides = []
    for local, merged, _ in arms:
        if local is not None:
            sides.append(delta_side(local, metrics)._replace(config=run_config(local) if local.height else {}))
        elif merged is not None:
            sides.append(_side_from_cells_ray(merged, metrics))
    return delta_from_sides(sides[0], sides[1], metrics=metrics, target_name=target_name, guards=guards,
                            balanced={}, warnings=warnings, **options)


def delta_from_sides(a: DeltaSide, b: DeltaSide, *, metrics: list[str], target_name: str, guards: list[str],
                     given_std: dict[str | None, float] | None, given_runs: int | None, balanced: dict[str, int],
                     level: float, power: float, ci_method: str, n_boot: int, n_perm: int, ceiling_pass_rate: float,
                     min_paired: int, rng: np.random.Generator, warnings: list[str], by: Any = None,
                     frames: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> DeltaReport:
    """The :func:`delta_report` report from each arm's :class:`DeltaSide` (the kernel both engines share).

    ``by=`` groups need the rows themselves (``frames``); the Ray engine refuses ``by=`` up front.
    """
    a_vals, b_vals = a.values, b.values
    band, band_fields = _noise_band(a, b, metrics=metrics, target_name=target_name, given_std=given_std,
                                    given_runs=given_runs, level=level, warnings=warnings)
    compared, moved = _compare_metrics(a_vals, b_vals, band, metrics=metrics, level=level, ci_method=ci_method,
                                       n_boot=n_boot, n_perm=n_perm, min_paired=min_paired, rng=rng)
    report = DeltaReport(target=target_name, level=level, ci_method=ci_method, must_not_regress=guards,
                         n_metrics=len(metrics), config={"before": a.config, "after": b.config},
                         balanced=balanced or None, repeats={"before": _k(a_vals), "after": _k(b_vals)},
                         **band_fields, metrics=compared, improved=moved.improved, regressions=moved.regressions,
                         within_noise=moved.within_noise)
    _target_fields(report, band, target_name=target_name, given_runs=given_runs, level=level)
    _comparability(report, a, b, warnings)
    _unpaired_verdicts(report)
    _guards(report, guards, a, b, warnings)
    _headline(report)
    _sizing(report, a_vals, power, level, ceiling_pass_rate, warnings)
    _resolve(report, band.df, level)
    _config_warnings(report, warnings)
    if by is not None and frames is not None and not report.not_comparable:
        report.by = by if isinstance(by, str) else getattr(by, "__name__", "callable")
        report.groups, report.groups_down = _groups(frames[0], frames[1], by, report.by, target_name, level=level,
                                                    ci_method=ci_method, n_boot=n_boot, n_perm=n_perm,
                                                    min_paired=min_paired, rng=rng, warnings=warnings)
        if report.groups_down:
            moved_up = report.headline_verdict in ("moved", "moved_unreplicated")
            warnings.append(f"{target_name} dropped significantly in group(s) {', '.join(report.groups_down)}"
                            + (" while the headline moved up" if moved_up else "")
                            + f"; read the by={report.by!r} table before calling this a win.")
    _movement_warnings(report, target_name=target_name, guards=guards, warnings=warnings)
    report.warnings = warnings
    return report


class _Band(NamedTuple):
    """The re-run noise band's inputs: run_std per metric, its degrees of freedom, eval runs per arm."""

    std: dict[str, float]
    df: int | None
    runs_a: int
    runs_b: int


class _Moved(NamedTuple):
    """The metrics that moved up, moved down, and moved inside the re-run band (the report's lists)."""

    improved: list[str]
    regressions: list[str]
    within_noise: list[str]


def _noise_band(a: DeltaSide, b: DeltaSide, *, metrics: list[str], target_name: str,
                given_std: dict[str | None, float] | None, given_runs: int | None, level: float,
                warnings: list[str]) -> tuple[_Band, dict[str, Any]]:
    """run_std per metric: given, or derived from the eval runs the rows carry (Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640).

    Returns the band's inputs and the report fields they fill (eval_runs, run_std_source,
    run_std_runs, replicated, run_std_by_metric, run_std_df).
    """
    runs_a, runs_b, derived, derived_df = _derived_run_std([a.run_values, b.run_values], metrics)
    fields: dict[str, Any] = {"eval_runs": {"before": runs_a, "after": runs_b}}
    std_by_metric: dict[str, float] = {}
    band_df: int | None = None
    if given_std is not None:
        std_by_metric = {(target_name if k is None else metric_label(k)): v for k, v in given_std.items()}
        fields["run_std_source"] = "given"
        fields["run_std_runs"] = given_runs
        band_df = None if given_runs is None else given_runs - 1
        if given_runs is None:
            warnings.append("run_std was given without run_std_runs, so the band reads it as exact and uses "
                            f"{float(t_quantile(level, np.inf)):.2f}; a floor from three re-runs is an estimate and that band "
                            "lets about one pure-noise delta in five through. Pass run_std_runs= (the re-runs it came from).")
        if derived:
            warnings.append("run_std was given and the rows also carry eval runs; the given run_std is used.")
    elif derived:
        std_by_metric = derived
        fields["run_std_source"] = "rows"
        band_df = derived_df
        fields["replicated"] = True
    unknown = [m for m in std_by_metric if m not in metrics]
    if unknown:
        raise ArgumentError(f"run_std must be keyed by metrics both arms measure, got {unknown!r}. "
                            f"Measured on both: {', '.join(metrics)}.")
    fields["run_std_by_metric"] = {m: float(v) for m, v in std_by_metric.items()}
    fields["run_std_df"] = band_df
    return _Band(std_by_metric, band_df, runs_a, runs_b), fields


def _compare_metrics(a_vals: pl.DataFrame, b_vals: pl.DataFrame, band_in: _Band, *, metrics: list[str], level: float,
                     ci_method: str, n_boot: int, n_perm: int, min_paired: int,
                     rng: np.random.Generator) -> tuple[dict[str, MetricDelta], _Moved]:
    """Every metric compared on one alignment of the two sides' task values, each with its gain verdict.

    Returns the entries by metric and the report's ``improved``, ``regressions`` and
    ``within_noise`` lists.
    """
    both = aligned(a_vals, b_vals, [*metrics, "n_graded"])
    n_a, n_b = _counts(both["n_graded"]), _counts(both["n_graded_b"])
    entries: dict[str, MetricDelta] = {}
    moved = _Moved([], [], [])
    for name in metrics:
        comp = compare_arrays(both[name].to_numpy().astype(np.float64), both[f"{name}_b"].to_numpy().astype(np.float64),
                              metric=name if name == PASS_AT_1 else MARKER_PREFIX + name, level=level,
                              ci_method=ci_method, n_boot=n_boot, n_perm=n_perm, min_paired=min_paired, rng=rng,
                              n_a=n_a, n_b=n_b)
        std = band_in.std.get(name)
        band = None if std is None else noise_band_width(std, band_in.runs_a, band_in.runs_b, band_in.df, level=level)
        verdict = _gain_verdict(comp, band)
        entries[name] = MetricDelta.of(comp, gain_verdict=verdict, run_std=std, noise_band=band,
                                       within_noise=verdict == "within_eval_noise")
        if verdict in ("moved", "moved_unreplicated"):
            (moved.improved if comp.direction == "up" else moved.regressions).append(name)
        elif verdict == "within_eval_noise":
            moved.within_noise.append(name)
    return entries, moved


def _target_fields(report: DeltaReport, band: _Band, *, target_name: str, given_runs: int | None,
                   level: float) -> None:
    """The target metric's verdict, delta and band on the report's top level, and the pairing counts."""
    band_df, runs_a, runs_b = band.df, band.runs_a, band.runs_b
    t = report.metrics[target_name]
    p1 = report.metrics[PASS_AT_1]
    report.target_verdict = t["gain_verdict"]
    report.target_direction = t["direction"]
    report.target_delta = t["delta"] if t["delta"] is not None else math.nan
    report.target_ci95 = _tuple(t["ci95"])
    report.run_std = band.std.get(target_name)
    report.noise_band = t["noise_band"]
    if report.noise_band is not None:
        q = float(t_quantile(level, np.inf if band_df is None else band_df))
        quant = f"t(df={band_df})={q:.2f}" if band_df is not None else f"{q:.2f}"
        src = (f"run_std given from {given_runs} re-runs" if report.run_std_source == "given" and given_runs
               else "run_std given" if report.run_std_source == "given"
               else f"{runs_a} eval runs before, {runs_b} after")
        report.noise_rule = f"{quant} x run_std x sqrt(1/{runs_a} + 1/{runs_b}); {src}"
    report.n_paired_tasks = p1["n_paired"]
    report.n_unpaired_tasks = p1["n_only_a"] + p1["n_only_b"]
    report.paired_share = p1["paired_share"] if p1["paired_share"] is not None else math.nan


def _movement_warnings(report: DeltaReport, *, target_name: str, guards: list[str], warnings: list[str]) -> None:
    """A metric that dropped but is guarded by nothing; a target that moved in one eval run a side."""
    for name in report.regressions:
        if name != target_name and name not in guards:
            m = report.metrics[name]
            warnings.append(f"{name} dropped ({fmt_signed(m['delta'])} {fmt_interval(_tuple(m['ci95']), signed=True)}); "
                            f"name it in must_not_regress= to fail on it.")
    if report.target_verdict == "moved_unreplicated" and report.headline == UNREPLICATED_PASS:
        warnings.append(f"{target_name} moved in one eval run a side, which could be noise: re-run both arms with "
                        f"simulate(agent, tasks=base, runs={EVAL_RUNS}) and compare again, or pass run_std= and run_std_runs=.")


def _names(what: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    try:
        names = list(value)
    except TypeError:
        raise ArgumentError(f"{what} must be a list of metric names, got {value!r}. Pass {what}=['pass_at_1'].") from None
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise ArgumentError(f"{what} must be a list of metric names, got {bad[0]!r} in it. Pass names such as 'honest_claims'.")
    return [metric_label(n) for n in names]


def _check_run_std(run_std: Any, runs: Any) -> tuple[dict[str | None, float] | None, int | None]:
    if runs is not None:
        runs = check_int("run_std_runs", runs, minimum=2)
    if run_std is None:
        if runs is not None:
            raise ArgumentError(f"run_std_runs needs run_std, got run_std_runs={runs!r} alone. "
                                "Pass run_std= from eval_variance too.")
        return None, None
    if isinstance(run_std, EvalVarianceReport):
        std: dict[str | None, float] = {k: v for k, v in run_std.run_std_by_metric.items() if math.isfinite(v)}
        if not std:
            raise ArgumentError(f"run_std must carry a run_std, got an eval_variance report over {run_std.n_runs} run(s). "
                                "Pass three or more re-runs to eval_variance.")
        return std, runs if runs is not None else run_std.n_runs
    items: dict[str | None, Any] = dict(run_std) if isinstance(run_std, Mapping) else {None: run_std}
    for key, value in items.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ArgumentError(f"run_std must be a number >= 0 (or a dict of them), got {value!r}"
                                f"{'' if key is None else f' for {key!r}'}. Pass eval_variance(...).run_std.")
    return {k: float(v) for k, v in items.items()}, runs


def _empty_values(metrics: list[str]) -> pl.DataFrame:
    return pl.DataFrame(schema={"task_key": pl.String, "n_graded": pl.Int64, **{m: pl.Float64 for m in metrics}})


def _k(vals: pl.DataFrame) -> int:
    return int(vals["n_graded"].max() or 0) if vals.height else 0  # type: ignore[arg-type]


def _gain_verdict(comp: Comparison, band: float | None) -> GainVerdict:
    if comp.verdict == "insufficient_data":
        return "insufficient_data"
    if comp.verdict == "no_difference_detected":
        return "no_change_detected"
    if band is None:
        return "moved_unreplicated"
    return "within_eval_noise" if abs(comp.delta) <= band else "moved"


def _derived_run_std(run_values: list[pl.DataFrame | None], metrics: list[str]) -> tuple[int, int, dict[str, float], int | None]:
    """Eval runs per side and, when any side has two or more, run_std per metric pooled over sides."""
    sides: list[tuple[int, pl.DataFrame | None]] = []
    for vals in run_values:
        if vals is None:
            sides.append((1, None))
            continue
        vals = vals.filter(pl.col("_run").is_not_null())
        n = vals["_run"].n_unique()
        sides.append((max(1, n), vals if n >= 2 else None))
    (runs_a, va), (runs_b, vb) = sides
    if va is None and vb is None:
        return runs_a, runs_b, {}, None
    out: dict[str, float] = {}
    df_total = sum(n - 1 for n, v in sides if v is not None)
    for m in metrics:
        ss = 0.0
        dof = 0
        for _, v in sides:
            if v is None:
                continue
            means = [x for x in run_means(v, [m])[0][m].values() if x is not None]
            if len(means) >= 2:
                ss += float(np.var(means, ddof=1)) * (len(means) - 1)
                dof += len(means) - 1
        if dof:
            out[m] = math.sqrt(ss / dof)
    return runs_a, runs_b, out, df_total or None


def _balance(a: pl.DataFrame, b: pl.DataFrame, rng: np.random.Generator) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, int]]:
    """Trim every paired task to the rollouts both sides have, the kept rows drawn by seed."""
    na = a.group_by("task_key").agg(pl.len().alias("_na"))
    nb = b.group_by("task_key").agg(pl.len().alias("_nb"))
    both = na.join(nb, on="task_key").select("task_key", pl.min_horizontal("_na", "_nb").alias("_keep"))
    out = []
    for df in (a, b):
        ranked = (df.with_columns(pl.Series("_r", rng.random(df.height)))
                  .with_columns(pl.col("_r").rank("ordinal").over("task_key").alias("_rank"))
                  .join(both, on="task_key", how="left", maintain_order="left"))
        out.append(ranked.filter(pl.col("_keep").is_null() | (pl.col("_rank") <= pl.col("_keep"))).drop("_r", "_rank", "_keep"))
    return out[0], out[1], {"before": a.height - out[0].height, "after": b.height - out[1].height}


def _comparability(report: DeltaReport, a: DeltaSide, b: DeltaSide, warnings: list[str]) -> None:
    causes: list[str] = []
    graded_a, graded_b = a.n_graded, b.n_graded
    if not a.n_rows or not b.n_rows:
        causes.append("ungraded")  # no rows at all: nothing graded either
        empty = " and ".join(side for side, n in (("before", a.n_rows), ("after", b.n_rows)) if not n)
        warnings.append(f"the {empty} side holds no rows ({a.n_rows} before, {b.n_rows} after), so there is nothing to "
                        "compare. Check the file path, or run the eval that should have filled it.")
    elif not graded_a or not graded_b:
        causes.append("ungraded")
        warnings.append(f"one arm has no graded rows ({graded_a} before, {graded_b} after): grade both arms first.")
    elif not math.isfinite(report.paired_share) or report.paired_share < MIN_PAIRED_SHARE:
        causes.append("situations")
        share = 0.0 if not math.isfinite(report.paired_share) else report.paired_share
        warnings.append(f"only {share:.0%} of tasks pair ({report.n_paired_tasks} shared, {report.n_unpaired_tasks} on one "
                        "side only): the two arms drew different situations, so the delta is between two evals. Pin the "
                        "after side to the baseline's tasks (simulate(..., tasks=base)) or compare per tier.")
    elif report.metrics[PASS_AT_1]["verdict"] == "insufficient_data":
        causes.append("too_few_tasks")
        warnings.append(f"{report.n_paired_tasks} paired task(s) give no interval: an interval needs 3 tasks. Evaluate "
                        "more tasks (holdout_size says how many).")
    if report.target != PASS_AT_1 and not causes and report.metrics[report.target]["verdict"] == "insufficient_data":
        causes.append("too_few_tasks")
        warnings.append(f"the target {report.target} has too few tasks with a value on both sides for an interval.")
    report.not_comparable = causes


def _unpaired_verdicts(report: DeltaReport) -> None:
    """A NOT COMPARABLE report calls no metric moved on 0 paired tasks: its verdict is insufficient_data."""
    if not report.not_comparable:
        return
    entries: dict[str, MetricDelta] = {}
    for name, m in report.metrics.items():
        if not m.n_paired and m.gain_verdict != "insufficient_data":
            m = m.model_copy(update={"gain_verdict": "insufficient_data"})
            for bucket in (report.improved, report.regressions, report.within_noise):
                if name in bucket:
                    bucket.remove(name)
        entries[name] = m
    report.metrics = entries
    report.target_verdict = report.metrics[report.target].gain_verdict


def _guards(report: DeltaReport, guards: list[str], a: DeltaSide, b: DeltaSide, warnings: list[str]) -> None:
    for g in guards:
        m = report.metrics[g]
        if m["gain_verdict"] in ("moved", "moved_unreplicated") and m["direction"] == "down":
            report.guards_failed.append(g)
        if g != PASS_AT_1:
            lo_hi = [side.marker_range[g] for side in (a, b) if side.n_rows and g in side.marker_range]
            values = {v for pair in lo_hi for v in pair if v is not None}
            if len(values) <= 1:
                report.degenerate_guards.append(g)
    if report.degenerate_guards:
        warnings.append(f"guard(s) {', '.join(report.degenerate_guards)} have the same value on every row of both arms, "
                        "so they cannot fail; check that the marker can come out any other way.")


#: The headline of a PASS that rests on one eval run a side with no noise floor: it says so on the first line.
UNREPLICATED_PASS = "PASS (UNREPLICATED: one eval run a side and no noise floor, so this could be eval noise)"


def _headline(report: DeltaReport) -> None:
    if report.not_comparable:
        report.headline = f"NOT COMPARABLE ({', '.join(report.not_comparable)})"
        report.headline_verdict = "not_comparable"
        report.ok = False
        return
    v, d = report.target_verdict, report.target_direction
    if report.guards_failed or (v in ("moved", "moved_unreplicated") and d == "down"):
        report.headline, report.headline_verdict, report.ok = "FAIL", "regressed", False
    elif v == "moved_unreplicated":
        report.headline, report.headline_verdict, report.ok = UNREPLICATED_PASS, v, True
    elif v == "moved":
        report.headline, report.headline_verdict, report.ok = "PASS", v, True
    elif v == "within_eval_noise":
        report.headline, report.headline_verdict, report.ok = "NO DIFFERENCE", "within_eval_noise", True
    else:
        report.headline, report.headline_verdict, report.ok = "NO DIFFERENCE", "no_change_detected", True


def _resolve(report: DeltaReport, band_df: int | None, level: float) -> None:
    """What would turn a NO DIFFERENCE on a positive delta into a verdict, from the measured spread.

    The band ``q x run_std x sqrt(1/r + 1/r)`` with r eval runs a side, run_std pooled from them at
    ``2 (r - 1)`` degrees of freedom (what ``simulate(..., runs=r)`` on both arms gives), falls under
    the observed delta from the smallest r found here; with the runs kept, a band from rollout noise
    falls as 1/sqrt(tasks), so ``T (band / delta)^2`` tasks a run bring it under; the test alone
    needs ``tasks_needed`` paired tasks (the rule ``holdout_size`` uses).
    """
    delta = report.target_delta
    if report.headline != "NO DIFFERENCE" or not math.isfinite(delta) or delta <= 0.0:
        return
    out: dict[str, Any] = {"delta": delta, "eval_runs": None, "tasks_for_band": None,
                           "tasks_for_test": report.tasks_needed}
    parts: list[str] = []
    n = report.n_paired_tasks
    if report.noise_band is not None and report.run_std is not None and delta <= report.noise_band:
        runs_now = max(report.eval_runs.get("before", 1), report.eval_runs.get("after", 1))
        for r in range(max(2, runs_now), RESOLVE_MAX_EVAL_RUNS + 1):
            if noise_band_width(report.run_std, r, r, 2 * (r - 1), level=level) < delta:
                out["eval_runs"] = r
                break
        out["tasks_for_band"] = int(math.ceil(n * (report.noise_band / delta) ** 2)) if n else None
        if out["eval_runs"] is not None:
            parts.append(f"{out['eval_runs']} eval runs a side (now {runs_now}) bring the band under it at "
                         f"run_std {report.run_std:.3f}")
        else:
            parts.append(f"more eval runs alone do not bring the band under it at run_std {report.run_std:.3f} "
                         f"(not by {RESOLVE_MAX_EVAL_RUNS} a side)")
        if out["tasks_for_band"] is not None:
            parts.append(f"or about {out['tasks_for_band']} paired tasks a run (now {n}), if the re-run spread is "
                         "rollout noise")
    if report.target_verdict == "no_change_detected" and report.tasks_needed is not None:
        parts.append(f"the test needs about {report.tasks_needed} paired tasks (now {n}) to detect it at "
                     f"{POWER:.0%} power")
    if not parts:
        return
    out["line"] = (f"to resolve: the observed {fmt_signed(delta)} is not settled, not shown to be zero; "
                   + "; ".join(parts))
    report.resolve = DeltaResolve(**out)


def _sizing(report: DeltaReport, a_vals: pl.DataFrame, power: float, level: float, ceiling_pass_rate: float,
            warnings: list[str]) -> None:
    t = report.metrics[report.target]
    sd = t.get("task_std")
    n = t.get("n_paired", 0)
    if t.get("paired") and sd is not None and math.isfinite(sd) and sd > 0 and n >= 2:
        # the rule holdout_size sizes by: the paired t test's power (noncentral t), where the sign-flip test can reject
        alpha = 1.0 - level
        detectable = detectable_gain(n, lambda _gain: sd, power=power, alpha=alpha)
        if math.isfinite(detectable):
            report.detectable_effect = detectable
            if report.noise_band is not None:  # a gain called moved passes the test first: never under the test alone
                report.moved_detectable_effect = max(detectable, detectable_moved(n, sd, report.noise_band, power=power,
                                                                                  alpha=alpha))
        delta = report.target_delta
        if math.isfinite(delta) and delta != 0:
            report.tasks_needed = int(tasks_needed(abs(delta), sd, power=power, alpha=alpha))
        report.tasks_needed_source = "rows"
    if report.repeats.get("before") != report.repeats.get("after") and report.repeats.get("before") and report.repeats.get("after"):
        warnings.append(f"the arms have different rollouts per task (k={report.repeats['before']} before, "
                        f"k={report.repeats['after']} after): rows lost at random only widen the interval, rows lost for a "
                        "reason (timeouts on hard tasks) bias it; re-run the short arm on its short tasks, or pass "
                        "balance_rollouts=True for one k.")
    before_rate = report.metrics[PASS_AT_1]["mean_a"]
    if before_rate is not None and math.isfinite(before_rate) and a_vals.height:
        room = int((a_vals[PASS_AT_1].drop_nulls() < 1.0).sum())
        if before_rate >= ceiling_pass_rate or room < MIN_PAIRED_TASKS:
            report.ceiling = True
            warnings.append(f"the before run already passes {before_rate:.0%} of its tasks ({room} task(s) with room to "
                            "improve), so there is little gain this eval could show; use harder situations before "
                            "training again.")


def _config_warnings(report: DeltaReport, warnings: list[str]) -> None:
    ca, cb = report.config.get("before", {}), report.config.get("after", {})
    for key in _CONFOUNDS:
        if key in ca and key in cb and ca[key] != cb[key]:
            warnings.append(f"{key} differs between the arms ({ca[key]!r} before, {cb[key]!r} after): the delta mixes the "
                            "change with that.")
    same = [k for k in ("policy_version", "model_version", "system_prompt_hash") if k in ca and k in cb]
    if same and all(ca[k] == cb[k] for k in same):
        warnings.append(f"before and after carry the same {', '.join(same)}: this compares a setup to itself. Stamp the "
                        "arms distinguishably (policy_version or model_version).")


def _groups(a: pl.DataFrame, b: pl.DataFrame, by: Any, by_name: str, target: str, *, level: float,
            ci_method: str, n_boot: int, n_perm: int, min_paired: int, rng: np.random.Generator,
            warnings: list[str]) -> tuple[dict[str, GroupDelta], list[str]]:
    """The target compared within each ``by=`` group (the largest ``_MAX_GROUPS``), and the groups it dropped in."""
    exprs = []
    for df in (a, b):
        exprs.append(_group_column(df, by))
    a_g = task_values(a.with_columns(exprs[0]), [target], keys=("_group", "task_key"), maintain_order=False)
    b_g = task_values(b.with_columns(exprs[1]), [target], keys=("_group", "task_key"), maintain_order=False)
    names = (pl.concat([a_g.select("_group"), b_g.select("_group")]).drop_nulls()
             .group_by("_group").len().sort(["len", "_group"], descending=[True, False])["_group"].to_list())
    if len(names) > _MAX_GROUPS:
        warnings.append(f"by={by_name!r} makes {len(names)} groups; the {_MAX_GROUPS} largest are compared.")
        names = names[:_MAX_GROUPS]
    both = aligned(a_g, b_g, [target, "n_graded"], keys=["_group", "task_key"])
    group_col = both["_group"].to_numpy()
    va_all = both[target].to_numpy().astype(np.float64)
    vb_all = both[f"{target}_b"].to_numpy().astype(np.float64)
    na_all, nb_all = _counts(both["n_graded"]), _counts(both["n_graded_b"])
    groups: dict[str, GroupDelta] = {}
    down: list[str] = []
    for g in sorted(names, key=str):
        mask = group_col == g
        comp = compare_arrays(va_all[mask], vb_all[mask], metric=target if target == PASS_AT_1 else MARKER_PREFIX + target,
                              level=level, ci_method=ci_method, n_boot=n_boot, n_perm=n_perm, min_paired=min_paired, rng=rng,
                              n_a=na_all[mask], n_b=nb_all[mask])
        groups[str(g)] = GroupDelta.of(comp)
        if comp.direction == "down":
            down.append(str(g))
    return groups, down


def _group_column(df: pl.DataFrame, by: Any) -> pl.Expr | pl.Series:
    if callable(by):
        values = [by(row) for row in table.iter_rows(df)]
        return pl.Series("_group", [None if v is None else str(v) for v in values], dtype=pl.String)
    if by in df.columns:
        return pl.col(by).cast(pl.String).alias("_group")
    if by in marker_names(df):
        return pl.col("markers").struct.field(by).cast(pl.String).alias("_group")
    raise ArgumentError(f"by must name a row key or a marker both arms carry, got {by!r}. "
                        f"Columns: {', '.join(c for c in df.columns[:15])}; markers: {', '.join(marker_names(df)) or 'none'}.")


def _delta_cells_ray(ds: Any) -> tuple[pl.DataFrame, list[str], list[str]]:
    """One ``delta_report`` arm: merged cells keyed by eval run, marker names, warnings."""
    from whileai.measure._ray import cells, nan_warning

    c, markers = cells(ds, runs=True)
    warnings: list[str] = []
    nan_warning(c, warnings)
    return c, markers, warnings


def _side_from_cells_ray(c: pl.DataFrame, metrics: list[str]) -> Any:
    """A ``DeltaSide`` from merged cells: what ``delta_side`` reads off the rows, from sums."""
    from whileai.measure._ray import SEP, per_task, ray_config, values_of

    if c.height == 0:
        return DeltaSide(_empty_values(metrics), None, 0, 0, {}, {})
    markers = [m for m in metrics if m != PASS_AT_1]
    t = per_task(c, markers)
    run_values = None
    if c["_run"].null_count() < c.height:
        run_values = values_of(per_task(c, markers, ("_run", "task_key")), metrics, ("_run", "task_key"))
    ranges: dict[str, tuple[Any, Any]] = {}
    if markers:
        row = t.select([e for m in markers for e in (pl.col(f"{m}{SEP}lo").min(), pl.col(f"{m}{SEP}hi").max())]).row(0)
        ranges = {m: (row[2 * i], row[2 * i + 1]) for i, m in enumerate(markers)}
    return DeltaSide(values_of(t, metrics), run_values, int(c["n"].sum()), int(c["n_graded"].sum()), ranges,
                     ray_config(c))
