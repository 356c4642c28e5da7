"""RL selection: prune a graded rollout table to the groups a grouped update learns from.

docs/select.md, "the difficulty band": drop, in this order, junk rows; duplicate rollouts within an ask;
truncated rollouts; unanimous asks; asks outside the difficulty band. Then keep whole groups
round-robin across fault kinds and, within a fault kind, across pass rates. Every step is a
Polars expression or group-by over the table; nothing loops over rows or tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Literal

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai.charts import histogram_counts
from whileai.defaults import (
    BAND_MIN_ROLLOUTS,
    CI_LEVEL,
    DIFFICULTY_BAND,
    DIFFICULTY_BINS,
    HACK_THRESHOLD,
    PASS_THRESHOLD,
    SELECT_TARGET,
)
from whileai.errors import TrainingSelectionError, WaiError
from whileai.guard import trajectory_signature
from whileai.measure import check_reward_range, nan_as_ungraded, nan_rewards_unset, task_stats
from whileai.report import ROWS_GIVEN, ChartedReport, Part
from whileai.selection._args import check_band, check_choice, check_positive_int
from whileai.selection._calibration import stamp_calibration
from whileai.selection._groups import Signal, group_signal
from whileai.selection._hygiene import Duplicates
from whileai.selection._rows import (
    eval_sourced,
    has,
    junk_flag,
    junk_split,
    read_columns,
    require_graded,
    truncated_flag,
)
from whileai.selection._scans import (
    Correlations,
    LeakCheck,
    correlation_warnings,
    correlations,
    eval_sourced_warning,
    privileged_leaks,
)
from whileai.stats.wilson import wilson
from whileai.table import IntoRows

__all__ = ["RL_ORDERS", "TRUNCATED_POLICIES", "RLSelectionReport", "select_for_rl"]

#: What ``truncated=`` accepts: drop the rollout, keep it flagged ``overlong``, or keep it as a
#: failure with the judged score under ``reward_before_penalty`` (DAPO overlong handling,
#: Yu et al. 2025, arXiv:2503.14476, section 3.4).
TRUNCATED_POLICIES = ("drop", "keep", "penalize")

#: What ``order=`` accepts: round-robin across pass rates, or nearest-to-50% first.
RL_ORDERS = ("spread", "middle")

#: The label of rows with no fault.
NO_FAULT = "no fault"

# Seed of the 64-bit task-key hash the narrow frame groups on (u64 keys group and join faster
# than strings; two of ten million tasks collide with probability about 3e-6, birthday bound).
_TASK_SEED = 7

#: What the drops and the group order read from a Parquet file before the kept rows are known.
_DECISION_COLUMNS = ("reward", "final_text", "fault_kind", "truncated", "finish_reason", "lineage", "messages")


class Gates(Part):
    """Junk rows dropped, per reason; each row counts once."""

    no_output: int = 0
    """No reply and no tool call."""
    garbage: int = 0
    """A reply with no letter or digit and no tool call."""
    ungraded: int = 0
    """No reward."""


class Unanimous(Part):
    """The unanimous asks dropped, by kind."""

    all_pass: int = 0
    """Every remaining rollout passes."""
    all_fail: int = 0
    """Every remaining rollout fails."""
    single: int = 0
    """One rollout left."""


class BandDropped(Part):
    """The asks outside the difficulty band."""

    too_easy: int = 0
    """Pass rate above the band."""
    too_hard: int = 0
    """Pass rate below the band."""


class CalibrationStamps(Part):
    """The calibration stamps on the kept rows (docs/select.md, "The calibration stamp")."""

    n_tasks: int = 0
    """Asks kept."""
    n_stamped: int = 0
    """Kept rows carrying a stamp."""
    n_carried: int = 0
    """Stamps carried over from the rows as given (measured over more repeats)."""
    k_median: float = math.nan
    """Median graded rollouts per task (k as graded)."""
    level: float = CI_LEVEL
    """The level of each stamp's Wilson interval."""


class RLSelectionReport(ChartedReport):
    """What ``select(mode="rl")`` dropped, in order and per reason, and what it kept.

    Keys follow whileai 0.131's RL selection report where the two overlap.
    """

    mode: str = "rl"
    """Always ``"rl"``."""
    n_rows: int = Field(0, validation_alias=ROWS_GIVEN)
    """Rows given."""
    renamed: ClassVar[dict[str, str]] = {"n": "n_rows"}

    @property
    def n(self) -> int:
        """``n_rows`` under its old name (rows given), kept so code written with it still reads."""
        return self.n_rows

    n_tasks: int = 0
    """Tasks given (by ``task_key``)."""
    privileged_leaks_dropped: int = 0
    """Rows whose reply quotes their own privileged context (``whileai.guard.leak_report``)."""
    privileged_leaks: LeakCheck = Field(default_factory=LeakCheck)
    """``checked``, ``n_checked``, ``n_dropped`` and the first ``leaked`` rows."""
    gates: Gates = Field(default_factory=Gates)
    """Junk rows dropped, per reason: ``no_output`` (no reply and no tool call), ``garbage`` (a
    reply with no letter or digit and no tool call), ``ungraded`` (no reward). Each row counts once."""
    junk_dropped: int = 0
    """Sum of ``gates``."""
    n_after_gates: int = 0
    """Rows left after the junk gates."""
    duplicates: Duplicates = Field(default_factory=lambda: Duplicates(n_rows=0))
    """Duplicate rollouts within an ask: ``n_rows``, ``n_kept``, ``n_dropped``, ``groups_affected``,
    ``duplicate_rate``, ``conflicting_rewards`` (duplicate sets the judge scored differently)."""
    truncated_policy: str = "drop"
    """The ``truncated=`` policy."""
    truncated_found: int = 0
    """Truncated rollouts among the rows left after dedupe."""
    truncated_dropped: int = 0
    """Truncated rollouts dropped (``truncated="drop"``)."""
    truncated_kept: int = 0
    """Truncated rollouts kept and marked ``overlong`` (``truncated="keep"``)."""
    truncated_penalized: int = 0
    """Truncated rollouts kept as failures (``truncated="penalize"``)."""
    truncated_selected: int = 0
    """Truncated rollouts in the selection."""
    n_after_trim: int = 0
    """Rows left after junk, duplicates and truncation."""
    unanimous_groups_dropped: int = 0
    """Asks whose remaining rollouts all have one reward (zero advantage), or only one rollout left."""
    unanimous: Unanimous = Field(default_factory=Unanimous)
    """``all_pass``, ``all_fail`` and ``single`` (one rollout left) among those."""
    collapsed_groups_dropped: int = 0
    """Unanimous asks that were mixed as graded and lost their contrast to the dedupe or the trims."""
    band: tuple[float, float] = DIFFICULTY_BAND
    """The difficulty band (inclusive)."""
    enforce_band: bool = True
    """Whether the band was applied."""
    band_groups_dropped: int = 0
    """Asks dropped for a pass rate outside the band."""
    band_dropped: BandDropped = Field(default_factory=BandDropped)
    """``too_easy`` (above the band) and ``too_hard`` (below it)."""
    band_rollouts: float = math.nan
    """Median graded rollouts per task the pass rates were measured from."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Rows dropped per reason, in order: privileged_leak, junk, duplicate, truncated, unanimous, band, target."""
    groups_eligible: int = 0
    """Asks that passed every filter."""
    n_selected: int = 0
    """Rows kept."""
    groups_selected: int = 0
    """Asks kept (whole groups)."""
    fault_kinds: dict[str, int] = Field(default_factory=dict)
    """Asks kept per fault kind."""
    target: int | None = SELECT_TARGET
    """The row budget (groups are never split; None keeps every eligible group)."""
    order: str = "spread"
    """The group order: ``spread`` (round-robin across pass rates) or ``middle`` (nearest 50% first)."""
    correlations: Correlations = Field(default_factory=Correlations)
    """Pooled reward correlation with reply length, tool calls and turns over the selection,
    flagged at ``HACK_THRESHOLD``."""
    hack_scan: Any = None
    """``whileai.guard.hack_scan`` over the selection, when ``endorsed=`` was given."""
    signal: Signal = Field(default_factory=Signal)
    """``group_signal`` over the selection."""
    eval_sourced: int = 0
    """Selected rows whose reward came from evaluate() (``lineage.source == "eval"``)."""
    eval_sourced_input: int = 0
    """The same count over the rows given."""
    calibration: CalibrationStamps = Field(default_factory=CalibrationStamps)
    """The stamps: ``n_tasks``, ``n_stamped``, ``n_carried``, ``k_median`` (k as graded), ``level``."""
    hygiene_warnings: list[str] = Field(default_factory=list)
    """Data-hygiene warnings (duplicates, correlations, hack scan, band resolution, pass^k)."""
    difficulty: list[int] = Field(default_factory=list)
    """Graded tasks per pass-rate bin as graded (``DIFFICULTY_BINS`` equal bins over [0, 1])."""
    difficulty_kept: list[int] = Field(default_factory=list)
    """Kept tasks per pass-rate bin, the same bins."""

    def figure_spec(self) -> dict[str, Any]:
        """The per-task difficulty histogram with the band shaded and the kept tasks overlaid."""
        from whileai.charts import difficulty_histogram

        return difficulty_histogram(self.difficulty or [0] * DIFFICULTY_BINS, band=self.band,
                                    kept=self.difficulty_kept or None,
                                    title=f"kept {self.groups_selected} of {self.n_tasks} tasks ({self.n_selected} of {self.n_rows} rows)")

    def render(self) -> str:
        """The printed block, first line as in whileai 0.131."""
        lo, hi = self.band
        lines = [f"rl selection: kept {self.n_selected} of {self.n_rows} rows"]
        if self.enforce_band:
            lines.append(f"  band {lo:.0%}..{hi:.0%} pass rate: {self.band_groups_dropped} asks dropped "
                         f"({self.band_dropped.get('too_easy', 0)} too easy, {self.band_dropped.get('too_hard', 0)} too hard)")
        else:
            lines.append("  band not enforced")
        lines.append(f"  unanimous groups dropped: {self.unanimous_groups_dropped}; duplicates dropped: "
                     f"{self.duplicates.get('n_dropped', 0)}; truncated {self.truncated_policy}: "
                     f"{self._truncated_count()}")
        if self.privileged_leaks.get("checked"):
            lines.append(f"  privileged leaks dropped: {self.privileged_leaks_dropped}")
        if self.junk_dropped:
            parts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in self.gates.model_dump().items() if v)
            lines.append(f"  junk rows dropped: {self.junk_dropped} ({parts})")
        target = "all" if self.target is None else f"target {self.target} rows"
        lines.append(f"  groups kept: {self.groups_selected} of {self.groups_eligible} eligible ({target}, order {self.order})")
        if self.hack_scan is not None:
            regime = _get(self.hack_scan, "regime")
            lines.append(f"  hack scan: {regime if regime is not None else 'unknown'}")
        lines.extend(f"  warning: {w}" for w in self.warnings)
        return "\n".join(lines)

    def _truncated_count(self) -> int:
        return {"drop": self.truncated_dropped, "keep": self.truncated_kept,
                "penalize": self.truncated_penalized}.get(self.truncated_policy, 0)


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def select_for_rl(
    rows: IntoRows,
    /,
    *,
    target: int | None = SELECT_TARGET,
    band: tuple[float, float] = DIFFICULTY_BAND,
    enforce_band: bool = True,
    truncated: Literal["drop", "keep", "penalize"] = "drop",
    order: Literal["spread", "middle"] = "spread",
    endorsed: Sequence[str] | None = None,
) -> table.StepResult:
    """Keep the groups of rollouts a grouped RL update (GRPO) learns from.

    Drops, in this order and counted per reason (docs/select.md, "the difficulty band"): replies that
    quote their own privileged context (the answer key the judge read; ``whileai.guard.leak_report``,
    only when the rows carry one); junk rows (no reply and no tool call, or a reply with no letter
    or digit, or no reward); duplicate rollouts within an ask (the same tool calls with the same arguments and the same final
    text: the same trajectory twice adds nothing to a group-relative advantage); truncated
    rollouts (``truncated``: "drop"; "keep" marks them ``overlong``; "penalize" keeps them as
    failures with the judged score under ``reward_before_penalty``, DAPO's overlong handling,
    Yu et al. 2025, arXiv:2503.14476); unanimous asks (every remaining rollout has one reward,
    or one rollout is left: zero advantage); asks whose pass rate is outside ``band``
    (``DIFFICULTY_BAND``, Lambert 2025, chapter Reasoning). "Out of band" is difficulty, never
    topic: the prompt is not read.

    Pass rates are ``whileai.measure.task_stats`` over the rows as given, before the dedupe and
    trims, and every kept row is stamped with them (``calibration``: task_id, n = k as graded,
    pass_rate, its 95% Wilson interval, the policy). Then whole groups are kept round-robin
    across fault kinds (in first-seen order) and, within a fault kind, across pass rates (a
    25%, a 50% and a 75% ask in turn, lowest rate first; ``order="middle"`` ranks by distance
    from 50% instead), up to ``target`` rows. Groups are never split.

    Args:
        rows: A graded rollout table or anything ``table.frame`` reads.
        target: Most rows to keep; None keeps every eligible group.
        band: Inclusive pass-rate band ``(lo, hi)``.
        enforce_band: Apply the band (False keeps mixed asks of any difficulty).
        truncated: "drop", "keep" or "penalize".
        order: "spread" or "middle".
        endorsed: Features the reward is meant to track; when given (even empty),
            ``whileai.guard.hack_scan`` runs on the selection and lands in ``report["hack_scan"]``.

    Returns:
        A :class:`whileai.table.StepResult`: the kept rows (in selection order) and an
        :class:`RLSelectionReport` (``wai.select_for_rl`` wraps them as a ``Selection``).

    Raises:
        ArgumentError: ``truncated``, ``order``, ``band`` or ``target`` is not an allowed value.
        TrainingSelectionError: No row is graded, or no group survives the filters.
    """
    truncated, order, (lo, hi), target = check_rl_options(truncated=truncated, order=order, band=band, target=target)
    endorsed_list = None if endorsed is None else _check_endorsed(endorsed)

    # The decision columns first (from a whileai Parquet file: the tool calls only), the kept rows last.
    with table.source(rows) as src:
        df = src.read(read_columns(_DECISION_COLUMNS), calls=("name", "arguments"))
        require_graded(df, 'select(mode="rl")')
        check_reward_range(df)  # a pass rate, a pass threshold: rewards on another scale read as nonsense
        warnings: list[str] = []
        df = nan_as_ungraded(df, warnings)  # NaN passes every threshold in Polars' order

        # Pass rates as graded: before any dedupe or trim (docs/select.md, "The calibration stamp": k is the repeats the grader saw).
        stats = task_stats(df)
        graded_stats = stats.filter(pl.col("n_graded") > 0)
        k_in = float(graded_stats["n_graded"].median())  # type: ignore[arg-type]

        # 1. junk rows. Every filter below runs on a narrow frame (row position, task, reward, flags,
        # trajectory hash); the wide rows (conversations) are gathered once, for the kept rows only.
        work = df.lazy().select(
            pl.int_range(pl.len(), dtype=pl.Int64).alias("_pos"),
            pl.col("task_key").hash(_TASK_SEED).alias("_tid"),
            pl.col("reward").cast(pl.Float64),
            junk_flag(df).alias("_junk"),
            truncated_flag(df).alias("_trunc"),
            trajectory_signature(df).alias("_traj"),
            (pl.col("fault_kind").cast(pl.String) if has(df, "fault_kind") else pl.lit(None, pl.String)).alias("_fault"),
        ).collect()
        # 0. replies that quote their own privileged context (the answer key the judge read)
        leak_mask, leaks = privileged_leaks(src, warnings)
        if leak_mask is not None and leaks.n_dropped:
            work = work.with_columns(pl.col("_junk") & ~leak_mask)
            keep = ~leak_mask
        else:
            keep = None
        no_output, garbage = junk_split(df, work["_junk"])
        if keep is not None:
            work = work.filter(keep)
        ungraded = int((~work["_junk"] & work["reward"].is_null()).sum())
        work = work.filter(~pl.col("_junk") & pl.col("reward").is_not_null())
        n_after_gates = work.height

        # 2. duplicate trajectories within an ask (the hash includes the task)
        first, in_set = _first_and_duplicated(work["_traj"])
        dup_dropped, dup_groups, conflicting = _duplicate_counts(work, first, in_set)
        work = work.filter(first)

        # 3. truncated rollouts
        truncated_found = int(work["_trunc"].sum())
        work = _apply_truncated(work, truncated)

        # 4. unanimous asks, on what is left; 5. the band, on the rate as graded
        groups, counts, keep_group = _group_filters(work, stats, lo, hi, enforce_band)
        eligible = groups.filter(keep_group)
        tally = RLTally(
            n_rows=df.height, no_output=no_output, garbage=garbage, ungraded=ungraded, n_after_gates=n_after_gates,
            dup_dropped=dup_dropped, dup_groups=dup_groups, conflicting=conflicting, truncated_found=truncated_found,
            n_after_trim=work.height, **{k: int(counts[k]) for k in _GROUP_COUNTS},
            eval_sourced_input=int(df.select(eval_sourced(df).sum()).item()))
        report = rl_report(tally, leaks=leaks, n_tasks=stats.height, k_in=k_in,
                           rates=(graded_stats["c"] / graded_stats["n_graded"]).to_numpy(), groups_eligible=eligible.height,
                           truncated=truncated, band=(lo, hi), enforce_band=enforce_band, target=target, order=order)
        hygiene = duplicate_notes(report)
        refuse_no_group(report)

        # 6. order whole groups and take them up to target
        eligible = eligible.join(_group_fault_kinds(work, eligible), on="_tid", how="left")
        ordered = order_groups(eligible, order)
        n_keep = groups_within_target(ordered["_size"].to_numpy(), target, warnings)
        chosen = keep_groups(report, ordered, n_keep).select(
            "_tid", "_kind", pl.int_range(pl.len(), dtype=pl.Int64).alias("_order"))

        selected = _gather(src, work, chosen, truncated)
        report.truncated_selected = int(selected["overlong"].sum()) if truncated == "keep" else (
            int(selected["reward_before_penalty"].is_not_null().sum()) if truncated == "penalize" else 0)
        selected, n_carried = stamp_calibration(selected, stats)
        report.n_selected = selected.height
        report.calibration = CalibrationStamps(n_tasks=chosen.height, n_stamped=int(selected["calibration"].is_not_null().sum()),
                                               n_carried=n_carried, k_median=k_in, level=CI_LEVEL)

        # hygiene: correlations, hack scan, band resolution, k-way numbers, eval-sourced rewards
        _hygiene(selected, k_in, endorsed_list, report, hygiene)
        report.eval_sourced = int(selected.select(eval_sourced(selected).sum()).item())
        if report.eval_sourced:
            warnings.append(eval_sourced_warning(report.eval_sourced, "selected row(s)"))
        report.signal = _signal(selected, (lo, hi))
        report.hygiene_warnings = hygiene
        report.warnings = [*hygiene, *warnings]
        return table.StepResult(selected, report, {"mode": "rl"})


# ------------------------------------------------------------------------------------------
# the report and the rules both engines share (selection/_ray.py sums the tallies of its asks)
# ------------------------------------------------------------------------------------------

#: The per-ask group counts ``_group_filters`` gives, under their tally names.
_GROUP_COUNTS = ("all_pass", "all_fail", "single", "collapsed", "too_easy", "too_hard", "unanimous_rows", "band_rows")


@dataclass
class RLTally:
    """The row and ask counts an RL report is built from.

    Every count is a sum over asks (each filter before the row budget reads one ask's rows), so
    the Ray engine adds up its asks' tallies and builds the report the local path builds.
    """

    n_rows: int = 0
    no_output: int = 0
    garbage: int = 0
    ungraded: int = 0
    n_after_gates: int = 0
    dup_dropped: int = 0
    dup_groups: int = 0
    conflicting: int = 0
    truncated_found: int = 0
    n_after_trim: int = 0
    all_pass: int = 0
    all_fail: int = 0
    single: int = 0
    collapsed: int = 0
    too_easy: int = 0
    too_hard: int = 0
    unanimous_rows: int = 0
    band_rows: int = 0
    eval_sourced_input: int = 0

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The count names, in order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def of(cls, report: RLSelectionReport) -> RLTally:
        """The tally ``rl_report`` built ``report`` from (a band count is 0 when the band was not enforced)."""
        return cls(
            n_rows=report.n_rows, no_output=report.gates.no_output, garbage=report.gates.garbage,
            ungraded=report.gates.ungraded, n_after_gates=report.n_after_gates, dup_dropped=report.duplicates.n_dropped,
            dup_groups=report.duplicates.groups_affected, conflicting=report.duplicates.conflicting_rewards,
            truncated_found=report.truncated_found, n_after_trim=report.n_after_trim, all_pass=report.unanimous.all_pass,
            all_fail=report.unanimous.all_fail, single=report.unanimous.single, collapsed=report.collapsed_groups_dropped,
            too_easy=report.band_dropped.too_easy, too_hard=report.band_dropped.too_hard,
            unanimous_rows=report.dropped.get("unanimous", 0), band_rows=report.dropped.get("band", 0),
            eval_sourced_input=report.eval_sourced_input)

    def as_dict(self) -> dict[str, int]:
        """The counts by name."""
        return asdict(self)


def check_rl_options(*, truncated: Any, order: Any, band: Any,
                     target: Any) -> tuple[Literal["drop", "keep", "penalize"], Literal["spread", "middle"], tuple[float, float], int | None]:
    """``select(mode="rl")``'s options checked (an ArgumentError names a bad one), as either engine runs them."""
    return (check_choice("truncated", truncated, TRUNCATED_POLICIES),  # type: ignore[return-value]
            check_choice("order", order, RL_ORDERS), check_band(band),
            check_positive_int("target", target, allow_none=True))


def rl_report(t: RLTally, *, leaks: LeakCheck, n_tasks: int, k_in: float, rates: np.ndarray, groups_eligible: int,
              truncated: str, band: tuple[float, float], enforce_band: bool, target: int | None,
              order: str) -> RLSelectionReport:
    """The RL report of the drops, from the tally and the leak check, before the group order (either engine).

    ``rates`` are the graded tasks' pass rates as graded (the difficulty histogram); the kept
    groups are filled in by ``keep_groups`` and the kept rows' numbers by the engine.
    """
    enforce = bool(enforce_band)
    easy, hard = (t.too_easy, t.too_hard) if enforce else (0, 0)
    junk = t.no_output + t.garbage + t.ungraded
    drop_trunc = t.truncated_found if truncated == "drop" else 0
    return RLSelectionReport(
        n_rows=t.n_rows, n_tasks=n_tasks, truncated_policy=truncated, band=band, enforce_band=enforce, target=target,
        order=order, band_rollouts=k_in, privileged_leaks_dropped=leaks.n_dropped, privileged_leaks=leaks,
        gates=Gates(no_output=t.no_output, garbage=t.garbage, ungraded=t.ungraded), junk_dropped=junk,
        n_after_gates=t.n_after_gates,
        duplicates=Duplicates(n_rows=t.n_after_gates, n_kept=t.n_after_gates - t.dup_dropped, n_dropped=t.dup_dropped,
                              groups_affected=t.dup_groups, conflicting_rewards=t.conflicting,
                              duplicate_rate=round(t.dup_dropped / t.n_after_gates, 4) if t.n_after_gates else 0.0),
        truncated_found=t.truncated_found, truncated_dropped=drop_trunc,
        truncated_kept=t.truncated_found if truncated == "keep" else 0,
        truncated_penalized=t.truncated_found if truncated == "penalize" else 0, n_after_trim=t.n_after_trim,
        unanimous_groups_dropped=t.all_pass + t.all_fail + t.single,
        unanimous=Unanimous(all_pass=t.all_pass, all_fail=t.all_fail, single=t.single),
        collapsed_groups_dropped=t.collapsed, band_dropped=BandDropped(too_easy=easy, too_hard=hard),
        band_groups_dropped=easy + hard, groups_eligible=groups_eligible,
        dropped={"privileged_leak": leaks.n_dropped, "junk": junk, "duplicate": t.dup_dropped, "truncated": drop_trunc,
                 "unanimous": t.unanimous_rows, "band": t.band_rows if enforce else 0},
        eval_sourced_input=t.eval_sourced_input, difficulty=histogram_counts(rates),
    )


def refuse_no_group(report: RLSelectionReport) -> None:
    """Raise TrainingSelectionError when no ask passed the filters, naming what dropped them."""
    if report.groups_eligible:
        return
    lo, hi = report.band
    parts = ", ".join(f"{reason} {n}" for reason, n in report.dropped.items() if n)
    band = report.band_dropped
    raise TrainingSelectionError(
        f'select(mode="rl") must keep at least one group, got none of {report.n_tasks} asks '
        f"(rows dropped: {parts or 'none'}; {report.unanimous_groups_dropped} unanimous asks, "
        f"{band.too_easy} too easy and {band.too_hard} too hard for the "
        f"{lo:.0%}..{hi:.0%} band). Grade more rollouts per ask (repeats >= 4) so asks can mix, use harder or "
        "easier situations, or widen band=.",
        report=report, counts=dict(report.dropped),
    )


def keep_groups(report: RLSelectionReport, ordered: pl.DataFrame, n_keep: int) -> pl.DataFrame:
    """The first ``n_keep`` of the ordered groups, with the report's kept-group numbers filled in.

    ``ordered`` holds one row per eligible ask (``_size``, ``_rate``, ``_kind``) in selection order.
    """
    sizes = ordered["_size"].to_numpy()
    chosen = ordered.head(n_keep)
    report.dropped["target"] = int(sizes[n_keep:].sum())
    report.groups_selected = chosen.height
    report.difficulty_kept = histogram_counts(chosen["_rate"].to_numpy())
    kinds = chosen.group_by("_kind", maintain_order=True).len()
    report.fault_kinds = dict(zip(kinds["_kind"].to_list(), (int(v) for v in kinds["len"].to_list())))
    return chosen


def duplicate_notes(report: RLSelectionReport) -> list[str]:
    """The hygiene notes on the duplicates dropped and on duplicates the judge scored differently."""
    dup, notes = report.duplicates, []
    if dup.n_dropped:
        notes.append(f"{dup.n_dropped} duplicate rollout(s) within {dup.groups_affected} ask(s) dropped")
    if dup.conflicting_rewards:
        notes.append(f"{dup.conflicting_rewards} set(s) of identical rollouts got different rewards; "
                     "the judge is not deterministic on the same trajectory; check it before training")
    return notes


def band_resolution_notes(k_in: float) -> list[str]:
    """The note on a band measured from fewer than ``BAND_MIN_ROLLOUTS`` rollouts a task (none above it)."""
    if k_in >= BAND_MIN_ROLLOUTS:
        return []
    lo_w, hi_w = wilson(np.array([k_in / 2.0]), np.array([k_in]))
    half = float(hi_w[0] - lo_w[0]) / 2.0
    return [f"difficulty was measured from {k_in:g} rollouts per task (median), fewer than {BAND_MIN_ROLLOUTS}: a task's "
            f"pass rate carries a 95% interval of about +/-{half:.2f} at that k, so its band assignment can be off by that "
            f"much. Simulate with repeats={BAND_MIN_ROLLOUTS} for a firmer band (Lambert 2025, chapter Reasoning)."]


# ------------------------------------------------------------------------------------------
# pieces
# ------------------------------------------------------------------------------------------


def _apply_truncated(work: pl.DataFrame, truncated: str) -> pl.DataFrame:
    """The truncated rows dropped, kept or given reward 0 (the reward before it kept in ``_before``)."""
    if truncated == "drop":
        return work.filter(~pl.col("_trunc"))
    if truncated == "penalize":
        return work.with_columns(
            pl.when(pl.col("_trunc")).then(pl.col("reward")).otherwise(None).alias("_before"),
            pl.when(pl.col("_trunc")).then(pl.lit(0.0)).otherwise(pl.col("reward")).alias("reward"),
        )
    return work


def _hygiene(selected: pl.DataFrame, k_in: float, endorsed: list[str] | None, report: RLSelectionReport,
             hygiene: list[str]) -> None:
    """The kept rows' reward correlations and hack scan into ``report``, their notes into ``hygiene``.

    Also the notes on the band's resolution at ``k_in`` rollouts a task and on pass^k after the prune.
    """
    corr = correlations(selected, threshold=HACK_THRESHOLD)
    report.correlations = corr
    hygiene.extend(correlation_warnings(corr))
    if endorsed is not None:
        report.hack_scan = _hack_scan(selected, endorsed, hygiene)
    hygiene.extend(band_resolution_notes(k_in))
    k_out = float(selected.group_by("task_key").len()["len"].median())  # type: ignore[arg-type]
    hygiene.append(
        f"pass^k and pass@k do not survive the prune: the graded rows had k={k_in:g} rollouts per task (median) and the "
        f"selection keeps {k_out:g} per ask with unanimous and out-of-band asks removed, so pass_at on these rows does "
        "not measure the policy. Take pass^k and pass@k from pass_at before select; each kept row's calibration stamp "
        "keeps its task's graded pass rate.")


def _group_filters(work: pl.DataFrame, stats: pl.DataFrame, lo: float, hi: float,
                   enforce_band: bool) -> tuple[pl.DataFrame, dict[str, Any], pl.Expr]:
    """Per ask on the rows left: size, reward range, first row, and the rate as graded.

    Returns the groups, the counts per drop reason, and the expression that keeps a group
    (not unanimous and, when the band is enforced, inside it).
    """
    groups = (
        work.lazy()
        .group_by("_tid")
        .agg(pl.len().alias("_size"), pl.col("reward").min().alias("_min"), pl.col("reward").max().alias("_max"),
             pl.col("_pos").min().alias("_first"))
        .join(stats.lazy().select(pl.col("task_key").hash(_TASK_SEED).alias("_tid"), "n_graded", "c"), on="_tid",
              how="left")
        .with_columns((pl.col("c") / pl.col("n_graded")).alias("_rate"))
        .collect()
    )
    size, same = pl.col("_size"), pl.col("_min") == pl.col("_max")
    unanimous = (size < 2) | same
    too_easy = pl.col("_rate") > hi
    too_hard = pl.col("_rate") < lo
    counts = groups.select(
        (size < 2).sum().alias("single"),
        ((size >= 2) & same & (pl.col("_min") >= PASS_THRESHOLD)).sum().alias("all_pass"),
        ((size >= 2) & same & (pl.col("_min") < PASS_THRESHOLD)).sum().alias("all_fail"),
        (unanimous & (pl.col("c") > 0) & (pl.col("c") < pl.col("n_graded"))).sum().alias("collapsed"),
        pl.when(unanimous).then(size).otherwise(0).sum().alias("unanimous_rows"),
        (~unanimous & too_easy).sum().alias("too_easy"),
        (~unanimous & too_hard).sum().alias("too_hard"),
        pl.when(~unanimous & (too_easy | too_hard)).then(size).otherwise(0).sum().alias("band_rows"),
    ).row(0, named=True)
    keep = ~unanimous & ~too_easy & ~too_hard if enforce_band else ~unanimous
    return groups, counts, keep


def _gather(src: table.Source, work: pl.DataFrame, chosen: pl.DataFrame, truncated: str) -> pl.DataFrame:
    """The kept rows of the wide table, in selection order, with the truncation columns.

    The whole rows come from the source (``take``): from a file, the kept rows only.
    """
    kept = (
        work.join(chosen.select("_tid", "_order"), on="_tid", how="inner")
        .sort("_order", "_pos")
        .with_row_index("_rank")
        .sort("_pos")
    )
    selected = nan_rewards_unset(src.take(kept["_pos"]))
    if truncated == "keep":
        selected = selected.with_columns(kept["_trunc"].alias("overlong"))
    elif truncated == "penalize":
        selected = selected.with_columns(kept["reward"].alias("reward"), kept["_before"].alias("reward_before_penalty"))
    return selected.with_columns(kept["_rank"].alias("_rank")).sort("_rank").drop("_rank")


def _check_endorsed(endorsed: Any) -> list[str]:
    from whileai.errors import ArgumentError

    if isinstance(endorsed, str):
        return [endorsed]
    try:
        items = list(endorsed)
    except TypeError:
        raise ArgumentError(f"endorsed must be a list of feature names, got {endorsed!r}. "
                            "Pass for example endorsed=['tool:get_order'].", argument="endorsed") from None
    if not all(isinstance(x, str) for x in items):
        raise ArgumentError(f"endorsed must be a list of feature names, got {endorsed!r}. "
                            "Pass for example endorsed=['tool:get_order'].", argument="endorsed")
    return items


def _first_and_duplicated(h: pl.Series) -> tuple[pl.Series, pl.Series]:
    """The first row of each trajectory hash (in row order), and the rows whose hash repeats.

    Polars' hashed ``is_first_distinct`` / ``is_duplicated``: the answer of one stable sort of the
    hashes, at about 0.1 s instead of 0.17 s for a million rows.
    """
    return h.is_first_distinct().alias("_first"), h.is_duplicated().alias("_dup")


def _duplicate_counts(work: pl.DataFrame, first: pl.Series, in_set: pl.Series) -> tuple[int, int, int]:
    """Rows dropped as duplicates, the asks that lost one, and the duplicate sets scored differently."""
    n_dup = int((~first).sum())
    groups_affected = conflicting = 0
    if n_dup:
        sets = work.select("_tid", "reward", "_traj").filter(in_set)
        groups_affected = sets["_tid"].n_unique()
        conflicting = int(sets.group_by("_traj").agg(pl.col("reward").n_unique().alias("u"))
                          .select((pl.col("u") > 1).sum()).item())
    return n_dup, int(groups_affected), conflicting


def _group_fault_kinds(work: pl.DataFrame, eligible: pl.DataFrame) -> pl.DataFrame:
    """Each eligible ask's fault kind: the most common one its rollouts met, else ``no fault``.

    Ties go to the alphabetically first kind, so the answer does not depend on row order.
    """
    met = work.filter(pl.col("_fault").is_not_null() & (pl.col("_fault") != "")).select("_tid", "_fault")
    if met.height == 0:
        return eligible.select("_tid", pl.lit(NO_FAULT).alias("_kind"))
    kinds = met["_fault"].unique().sort()
    code = met["_fault"].replace_strict(kinds, pl.Series(range(kinds.len())), return_dtype=pl.Int64)
    # one score per (ask, kind): count first, then the alphabetically first kind on a tie
    span = kinds.len()
    best = (
        met.select("_tid", code.alias("_code"))
        .join(eligible.select("_tid"), on="_tid", how="semi")
        .group_by("_tid", "_code").len()
        .group_by("_tid").agg((pl.col("len") * span + (span - 1 - pl.col("_code"))).max().alias("_score"))
        .select("_tid", (span - 1 - pl.col("_score") % span).alias("_code"))
    )
    names = pl.DataFrame({"_code": pl.Series(range(span), dtype=pl.Int64), "_kind": kinds})
    return (eligible.select("_tid").join(best.join(names, on="_code"), on="_tid", how="left")
            .select("_tid", pl.col("_kind").fill_null(NO_FAULT)))


def groups_within_target(sizes: np.ndarray, target: int | None, warnings: list[str]) -> int:
    """How many of the ordered groups (``sizes`` rows each) fit in ``target`` rows: at least one.

    Groups are never split: a first group larger than ``target`` is kept whole, with a warning.
    """
    if target is None:
        return len(sizes)
    if sizes[0] > target:
        warnings.append(f"the first group holds {int(sizes[0])} rows, more than target={target}; it was kept whole "
                        "(groups are never split). Raise target= to keep more than one group.")
    return max(1, int(np.searchsorted(np.cumsum(sizes), target, side="right")))


def order_groups(eligible: pl.DataFrame, order: str) -> pl.DataFrame:
    """Sort groups round-robin across fault kinds, then within a kind by pass rate.

    ``spread`` takes one ask per distinct pass rate in turn (lowest rate first); ``middle`` ranks
    by distance from 50%. Kinds are taken in first-seen order; ties go to the earlier first row.
    """
    g = eligible.with_columns(pl.col("_first").min().over("_kind").rank("dense").alias("_kind_idx"))
    if order == "spread":
        g = g.with_columns(pl.col("_rate").round(6).alias("_bucket"))
        g = g.with_columns(
            pl.col("_bucket").rank("dense").over("_kind").alias("_bucket_idx"),
            pl.col("_first").rank("ordinal").over("_kind", "_bucket").alias("_r1"),
        ).sort("_kind_idx", "_r1", "_bucket_idx")
    else:
        g = g.with_columns((pl.col("_rate") - 0.5).abs().round(9).alias("_dist")).sort("_kind_idx", "_dist", "_first")
    g = g.with_columns(pl.int_range(pl.len()).over("_kind_idx").alias("_r2"))
    return g.sort("_r2", "_kind_idx")


def _hack_scan(selected: pl.DataFrame, endorsed: list[str], hygiene: list[str]) -> Any:
    from whileai.guard import hack_scan

    try:
        scan = hack_scan(selected, endorsed=endorsed)
    except WaiError as exc:
        hygiene.append(f"hack scan could not run: {exc}")
        return None
    for w in _get(scan, "warnings") or []:
        hygiene.append(str(w))
    return scan


def _signal(selected: pl.DataFrame, band: tuple[float, float]) -> Signal:
    return Signal.model_validate(group_signal(selected, band=band).model_dump())
