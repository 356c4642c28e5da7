"""RL selection: prune a graded rollout table to the groups a grouped update learns from.

docs/select.md, "the difficulty band": drop, in this order, junk rows; duplicate rollouts within an ask;
truncated rollouts; unanimous asks; asks outside the difficulty band. Then keep whole groups
round-robin across fault kinds and, within a fault kind, across pass rates. Every step is a
Polars expression or group-by over the table; nothing loops over rows or tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

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
from whileai.guard._hygiene import trajectory_signature
from whileai.measure import task_stats
from whileai.measure._rows import check_reward_range, nan_as_ungraded, nan_rewards_unset
from whileai.report import ChartedReport
from whileai.selection._calibration import stamp_calibration
from whileai.selection._common import (
    check_band,
    check_choice,
    check_positive_int,
    correlation_warnings,
    correlations,
    eval_sourced,
    eval_sourced_warning,
    has,
    junk_flag,
    junk_split,
    privileged_leaks,
    read_columns,
    require_graded,
    truncated_flag,
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


class RLSelectionReport(ChartedReport):
    """What ``select(mode="rl")`` dropped, in order and per reason, and what it kept.

    Keys follow whileai 0.131's RL selection report where the two overlap.
    """

    mode: str = "rl"
    """Always ``"rl"``."""
    n: int = 0
    """Rows given."""
    n_tasks: int = 0
    """Tasks given (by ``task_key``)."""
    privileged_leaks_dropped: int = 0
    """Rows whose reply quotes their own privileged context (``whileai.guard.leak_report``)."""
    privileged_leaks: dict[str, Any] = Field(default_factory=dict)
    """``checked``, ``n_checked``, ``n_dropped`` and the first ``leaked`` rows."""
    gates: dict[str, int] = Field(default_factory=dict)
    """Junk rows dropped, per reason: ``no_output`` (no reply and no tool call), ``garbage`` (a
    reply with no letter or digit and no tool call), ``ungraded`` (no reward). Each row counts once."""
    junk_dropped: int = 0
    """Sum of ``gates``."""
    n_after_gates: int = 0
    """Rows left after the junk gates."""
    duplicates: dict[str, Any] = Field(default_factory=dict)
    """Duplicate rollouts within an ask: ``n``, ``n_kept``, ``n_dropped``, ``groups_affected``,
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
    unanimous: dict[str, int] = Field(default_factory=dict)
    """``all_pass``, ``all_fail`` and ``single`` (one rollout left) among those."""
    collapsed_groups_dropped: int = 0
    """Unanimous asks that were mixed as graded and lost their contrast to the dedupe or the trims."""
    band: tuple[float, float] = DIFFICULTY_BAND
    """The difficulty band (inclusive)."""
    enforce_band: bool = True
    """Whether the band was applied."""
    band_groups_dropped: int = 0
    """Asks dropped for a pass rate outside the band."""
    band_dropped: dict[str, int] = Field(default_factory=dict)
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
    correlations: dict[str, Any] = Field(default_factory=dict)
    """Pooled reward correlation with reply length, tool calls and turns over the selection,
    flagged at ``HACK_THRESHOLD``."""
    hack_scan: Any = None
    """``whileai.guard.hack_scan`` over the selection, when ``endorsed=`` was given."""
    signal: dict[str, Any] = Field(default_factory=dict)
    """``group_signal`` over the selection."""
    eval_sourced: int = 0
    """Selected rows whose reward came from evaluate() (``lineage.source == "eval"``)."""
    eval_sourced_input: int = 0
    """The same count over the rows given."""
    calibration: dict[str, Any] = Field(default_factory=dict)
    """The stamps: ``n_tasks``, ``n_stamped``, ``n_carried``, ``k_median`` (k as graded)."""
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
                                    title=f"kept {self.groups_selected} of {self.n_tasks} tasks ({self.n_selected} of {self.n} rows)")

    def render(self) -> str:
        """The printed block, first line as in whileai 0.131."""
        lo, hi = self.band
        lines = [f"rl selection: kept {self.n_selected} of {self.n} rows"]
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
            parts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in self.gates.items() if v)
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
    truncated = check_choice("truncated", truncated, TRUNCATED_POLICIES)  # type: ignore[assignment]
    order = check_choice("order", order, RL_ORDERS)  # type: ignore[assignment]
    lo, hi = check_band(band)
    target = check_positive_int("target", target, allow_none=True)
    endorsed_list = None if endorsed is None else _check_endorsed(endorsed)

    # The decision columns first (from a whileai Parquet file: the tool calls only), the kept rows last.
    with table.source(rows) as src:
        df = src.read(read_columns(_DECISION_COLUMNS), calls=("name", "arguments"))
        require_graded(df, 'select(mode="rl")')
        check_reward_range(df)  # a pass rate, a pass threshold: rewards on another scale read as nonsense
        warnings: list[str] = []
        df = nan_as_ungraded(df, warnings)  # NaN passes every threshold in Polars' order
        report: dict[str, Any] = {"n": df.height, "truncated_policy": truncated, "band": (lo, hi),
                                  "enforce_band": bool(enforce_band), "target": target, "order": order}
        hygiene: list[str] = []

        # Pass rates as graded: before any dedupe or trim (docs/select.md, "The calibration stamp": k is the repeats the grader saw).
        stats = task_stats(df)
        graded_stats = stats.filter(pl.col("n_graded") > 0)
        report["n_tasks"] = stats.height
        k_in = float(graded_stats["n_graded"].median())  # type: ignore[arg-type]
        report["band_rollouts"] = k_in

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
        leak_mask, leak_info = privileged_leaks(src, warnings)
        report["privileged_leaks"] = leak_info
        report["privileged_leaks_dropped"] = leak_info["n_dropped"]
        if leak_mask is not None and leak_info["n_dropped"]:
            work = work.with_columns(pl.col("_junk") & ~leak_mask)
            keep = ~leak_mask
        else:
            keep = None
        no_output, garbage = junk_split(df, work["_junk"])
        if keep is not None:
            work = work.filter(keep)
        ungraded = int((~work["_junk"] & work["reward"].is_null()).sum())
        report["gates"] = {"no_output": no_output, "garbage": garbage, "ungraded": ungraded}
        report["junk_dropped"] = no_output + garbage + ungraded
        work = work.filter(~pl.col("_junk") & pl.col("reward").is_not_null())
        report["n_after_gates"] = work.height

        # 2. duplicate trajectories within an ask (the hash includes the task)
        first, in_set = _first_and_duplicated(work["_traj"])
        dup_stats = _duplicate_stats(work, first, in_set)
        report["duplicates"] = dup_stats
        work = work.filter(first)
        if dup_stats["n_dropped"]:
            hygiene.append(f"{dup_stats['n_dropped']} duplicate rollout(s) within {dup_stats['groups_affected']} ask(s) dropped")
        if dup_stats["conflicting_rewards"]:
            hygiene.append(f"{dup_stats['conflicting_rewards']} set(s) of identical rollouts got different rewards; "
                           "the judge is not deterministic on the same trajectory; check it before training")

        # 3. truncated rollouts
        work = _apply_truncated(work, truncated, report)
        report["n_after_trim"] = work.height

        # 4. unanimous asks, on what is left; 5. the band, on the rate as graded
        groups, counts, keep_group = _group_filters(work, stats, lo, hi, enforce_band)
        report["unanimous_groups_dropped"] = int(counts["unanimous"])
        report["unanimous"] = {"all_pass": int(counts["all_pass"]), "all_fail": int(counts["all_fail"]),
                               "single": int(counts["single"])}
        report["collapsed_groups_dropped"] = int(counts["collapsed"])
        if enforce_band:
            report["band_dropped"] = {"too_easy": int(counts["too_easy"]), "too_hard": int(counts["too_hard"])}
            report["band_groups_dropped"] = int(counts["too_easy"]) + int(counts["too_hard"])
        else:
            report["band_dropped"] = {"too_easy": 0, "too_hard": 0}
        eligible = groups.filter(keep_group)
        report["groups_eligible"] = eligible.height
        dropped = {
            "privileged_leak": report["privileged_leaks_dropped"],
            "junk": report["junk_dropped"],
            "duplicate": dup_stats["n_dropped"],
            "truncated": report["truncated_dropped"],
            "unanimous": int(counts["unanimous_rows"]),
            "band": int(counts["band_rows"]) if enforce_band else 0,
        }
        if eligible.height == 0:
            raise TrainingSelectionError(_empty_message(report, dropped, lo, hi), report=report, counts=dropped)

        # 6. order whole groups and take them up to target
        eligible = eligible.join(_group_fault_kinds(work, eligible), on="_tid", how="left")
        ordered = _order_groups(eligible, order)
        sizes = ordered["_size"].to_numpy()
        n_keep = _groups_within_target(sizes, target, warnings)
        chosen = ordered.head(n_keep).select("_tid", "_kind", pl.int_range(pl.len(), dtype=pl.Int64).alias("_order"))
        dropped["target"] = int(sizes[n_keep:].sum())
        report["dropped"] = dropped
        report["groups_selected"] = chosen.height
        report["difficulty"] = histogram_counts((graded_stats["c"] / graded_stats["n_graded"]).to_numpy())
        report["difficulty_kept"] = histogram_counts(
            ordered.head(n_keep)["_rate"].to_numpy() if "_rate" in ordered.columns else np.array([]))
        kinds = chosen.group_by("_kind", maintain_order=True).len()
        report["fault_kinds"] = dict(zip(kinds["_kind"].to_list(), (int(v) for v in kinds["len"].to_list())))

        selected = _gather(src, work, chosen, truncated)
        report["truncated_selected"] = int(selected["overlong"].sum()) if truncated == "keep" else (
            int(selected["reward_before_penalty"].is_not_null().sum()) if truncated == "penalize" else 0)
        selected, n_carried = stamp_calibration(selected, stats)
        report["n_selected"] = selected.height
        report["calibration"] = {"n_tasks": chosen.height, "n_stamped": int(selected["calibration"].is_not_null().sum()),
                                 "n_carried": n_carried, "k_median": k_in, "level": CI_LEVEL}

        # hygiene: correlations, hack scan, band resolution, k-way numbers, eval-sourced rewards
        _hygiene(selected, k_in, endorsed_list, report, hygiene)
        report["eval_sourced_input"] = int(df.select(eval_sourced(df).sum()).item())
        report["eval_sourced"] = int(selected.select(eval_sourced(selected).sum()).item())
        if report["eval_sourced"]:
            warnings.append(eval_sourced_warning(report["eval_sourced"], "selected row(s)"))
        report["signal"] = _signal(selected, (lo, hi))
        report["hygiene_warnings"] = hygiene
        out_report = RLSelectionReport(**report, warnings=[*hygiene, *warnings])
        return table.StepResult(selected, out_report, {"mode": "rl"})


# ------------------------------------------------------------------------------------------
# pieces
# ------------------------------------------------------------------------------------------


def _apply_truncated(work: pl.DataFrame, truncated: str, report: dict[str, Any]) -> pl.DataFrame:
    """The truncated rows dropped, kept or given reward 0 (the reward before it kept in ``_before``), counted in ``report``."""
    n_trunc = int(work["_trunc"].sum())
    report["truncated_found"] = n_trunc
    report["truncated_dropped"] = n_trunc if truncated == "drop" else 0
    report["truncated_kept"] = n_trunc if truncated == "keep" else 0
    report["truncated_penalized"] = n_trunc if truncated == "penalize" else 0
    if truncated == "drop":
        return work.filter(~pl.col("_trunc"))
    if truncated == "penalize":
        return work.with_columns(
            pl.when(pl.col("_trunc")).then(pl.col("reward")).otherwise(None).alias("_before"),
            pl.when(pl.col("_trunc")).then(pl.lit(0.0)).otherwise(pl.col("reward")).alias("reward"),
        )
    return work


def _hygiene(selected: pl.DataFrame, k_in: float, endorsed: list[str] | None, report: dict[str, Any],
             hygiene: list[str]) -> None:
    """The kept rows' reward correlations and hack scan into ``report``, their notes into ``hygiene``.

    Also the notes on the band's resolution at ``k_in`` rollouts a task and on pass^k after the prune.
    """
    corr = correlations(selected, threshold=HACK_THRESHOLD)
    report["correlations"] = corr
    hygiene.extend(correlation_warnings(corr))
    if endorsed is not None:
        report["hack_scan"] = _hack_scan(selected, endorsed, hygiene)
    if k_in < BAND_MIN_ROLLOUTS:
        lo_w, hi_w = wilson(np.array([k_in / 2.0]), np.array([k_in]))
        half = float(hi_w[0] - lo_w[0]) / 2.0
        hygiene.append(
            f"difficulty was measured from {k_in:g} rollouts per task (median), fewer than {BAND_MIN_ROLLOUTS}: a task's "
            f"pass rate carries a 95% interval of about +/-{half:.2f} at that k, so its band assignment can be off by that "
            f"much. Simulate with repeats={BAND_MIN_ROLLOUTS} for a firmer band (Lambert 2025, chapter Reasoning).")
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
        unanimous.sum().alias("unanimous"),
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


def _duplicate_stats(work: pl.DataFrame, first: pl.Series, in_set: pl.Series) -> dict[str, Any]:
    n = work.height
    n_dup = int((~first).sum())
    groups_affected = conflicting = 0
    if n_dup:
        sets = work.select("_tid", "reward", "_traj").filter(in_set)
        groups_affected = sets["_tid"].n_unique()
        conflicting = int(sets.group_by("_traj").agg(pl.col("reward").n_unique().alias("u"))
                          .select((pl.col("u") > 1).sum()).item())
    return {"n": n, "n_kept": n - n_dup, "n_dropped": n_dup, "groups_affected": int(groups_affected),
            "duplicate_rate": round(n_dup / n, 4) if n else 0.0, "conflicting_rewards": conflicting}


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


def _groups_within_target(sizes: np.ndarray, target: int | None, warnings: list[str]) -> int:
    """How many of the ordered groups (``sizes`` rows each) fit in ``target`` rows: at least one.

    Groups are never split: a first group larger than ``target`` is kept whole, with a warning.
    """
    if target is None:
        return len(sizes)
    if sizes[0] > target:
        warnings.append(f"the first group holds {int(sizes[0])} rows, more than target={target}; it was kept whole "
                        "(groups are never split). Raise target= to keep more than one group.")
    return max(1, int(np.searchsorted(np.cumsum(sizes), target, side="right")))


def _order_groups(eligible: pl.DataFrame, order: str) -> pl.DataFrame:
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


def _empty_message(report: dict[str, Any], dropped: dict[str, int], lo: float, hi: float) -> str:
    parts = ", ".join(f"{reason} {n}" for reason, n in dropped.items() if n)
    band = report.get("band_dropped", {})
    return (
        f'select(mode="rl") must keep at least one group, got none of {report["n_tasks"]} asks '
        f"(rows dropped: {parts or 'none'}; {report['unanimous_groups_dropped']} unanimous asks, "
        f"{band.get('too_easy', 0)} too easy and {band.get('too_hard', 0)} too hard for the "
        f"{lo:.0%}..{hi:.0%} band). Grade more rollouts per ask (repeats >= 4) so asks can mix, use harder or "
        "easier situations, or widen band=."
    )


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


def _signal(selected: pl.DataFrame, band: tuple[float, float]) -> dict[str, Any]:
    from whileai.selection._groups import group_signal

    return group_signal(selected, band=band).to_dict()
