"""Curriculum: order trainable tasks easy to hard, retire the solved, hold the not ready.

Lambert 2025, chapter Reasoning: a curriculum needs per-prompt difficulty, which is each task's
pass rate over its k rollouts (``whileai.measure.task_stats``). The two default edges are the
difficulty band's own, so ``curriculum`` and ``select(mode="rl")`` agree on what is trainable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, overload

import polars as pl
from pydantic import Field

from whileai import table
from whileai.defaults import CURRICULUM_TIERS, DIFFICULTY_BAND, MIN_GROUP_ROLLOUTS
from whileai.measure import task_stats
from whileai.report import ChartedReport, Part, Report
from whileai.selection._args import check_band, check_fraction, check_positive_int
from whileai.selection._rows import has, require_graded
from whileai.table import FluentT, IntoRows

__all__ = ["CurriculumReport", "CurriculumTask", "curriculum", "retire_solved"]

_SOLVED, _FLOOR = DIFFICULTY_BAND[1], DIFFICULTY_BAND[0]


class Thresholds(Part):
    """The cut points a curriculum was split at."""

    solved: float = _SOLVED
    """Tasks above this pass rate are retired."""
    floor: float = _FLOOR
    """Tasks below this pass rate are not ready."""
    band: list[float] = Field(default_factory=lambda: list(DIFFICULTY_BAND))
    """The difficulty band ``[lo, hi]`` the trainable tasks are counted in."""
    min_rollouts: int = MIN_GROUP_ROLLOUTS
    """Graded rollouts a task needs to have a difficulty."""
    tiers: int = CURRICULUM_TIERS
    """Buckets the trainable tasks are cut into."""


class CurriculumTask(Part):
    """One graded task of a curriculum and its measured difficulty."""

    task_id: str = ""
    """The task (``task_key``)."""
    prompt: str | None = None
    """Its first prompt seen (the task id when it has none)."""
    n: int = 0
    """Graded rollouts the pass rate is over."""
    pass_rate: float = 0.0
    """Share of them with reward >= 0.5."""


class CurriculumReport(ChartedReport):
    """Graded tasks split into trainable (easy to hard, in tiers), retired, not ready and thin.

    Each task entry is ``{task_id, prompt, n, pass_rate}`` (n = graded rollouts).
    """

    n_tasks: int = 0
    """Tasks with at least one graded rollout."""
    n_trainable: int = 0
    """Tasks with pass rate from ``floor`` to ``solved`` inclusive."""
    n_solved: int = 0
    """Tasks retired: pass rate above ``solved`` (an all-pass task is dead gradient)."""
    n_not_ready: int = 0
    """Tasks held: pass rate below ``floor`` (no signal until the policy improves)."""
    n_thin: int = 0
    """Tasks with fewer than ``min_rollouts`` graded rollouts: no difficulty yet."""
    n_in_band: int = 0
    """Trainable tasks inside ``band`` (inclusive)."""
    thresholds: Thresholds = Field(default_factory=Thresholds)
    """``solved``, ``floor``, ``band``, ``min_rollouts``, ``tiers``."""
    schedule: list[str] = Field(default_factory=list)
    """Trainable task ids, easy to hard."""
    trainable: list[CurriculumTask] = Field(default_factory=list)
    """Trainable tasks, easy to hard (highest pass rate first, ties by task id)."""
    retired: list[CurriculumTask] = Field(default_factory=list)
    """Solved tasks."""
    not_ready: list[CurriculumTask] = Field(default_factory=list)
    """Tasks below the floor."""
    thin: list[CurriculumTask] = Field(default_factory=list)
    """Tasks with too few graded rollouts."""
    tiers: list[list[CurriculumTask]] = Field(default_factory=list)
    """The trainable tasks cut into ``tiers`` consecutive buckets of near-equal size, easy first."""

    def render(self) -> str:
        """The counts, then one line per tier."""
        return _render_curriculum(self)

    def figure_spec(self) -> dict[str, Any]:
        """Every graded task's pass rate as a histogram, the 20-80% band shaded (whileai.charts)."""
        from whileai.charts import difficulty_histogram, histogram_counts

        rates = [t.pass_rate for part in (self.trainable, self.retired, self.not_ready) for t in part]
        band = (self.thresholds.band[0], self.thresholds.band[1])
        return difficulty_histogram(histogram_counts([r for r in rates if r is not None]), band=band,
                                    title=f"{self.n_trainable} trainable, {self.n_solved} retired, "
                                          f"{self.n_not_ready} not ready of {self.n_tasks} tasks")


def curriculum(
    rows: IntoRows,
    /,
    *,
    solved: float = _SOLVED,
    floor: float = _FLOOR,
    band: tuple[float, float] = DIFFICULTY_BAND,
    tiers: int = CURRICULUM_TIERS,
    min_rollouts: int = MIN_GROUP_ROLLOUTS,
) -> CurriculumReport:
    """Split graded tasks into a curriculum by measured difficulty (Lambert 2025, chapter Reasoning).

    A task's difficulty is its pass rate over its graded rollouts (``task_stats``: reward >= 0.5
    passes). Above ``solved`` it is retired; below ``floor`` it is not ready; from ``floor`` to
    ``solved`` inclusive it is trainable, ordered easy to hard and cut into ``tiers`` buckets for
    a staged schedule. ``band`` only counts how many trainable tasks sit in the 20-80% band.
    Tasks with fewer than ``min_rollouts`` graded rollouts are reported as thin. Nothing is
    mutated.

    Args:
        rows: A graded rollout table or anything ``table.frame`` reads.
        solved: Retire tasks whose pass rate is above this (default: the band's upper edge).
        floor: Hold tasks whose pass rate is below this (default: the band's lower edge).
        band: The band counted in ``n_in_band``.
        tiers: Difficulty buckets in the schedule.
        min_rollouts: Graded rollouts a task needs to have a difficulty.

    Returns:
        A :class:`CurriculumReport` (the whileai 0.131 keys); ``print`` it for the summary.

    Raises:
        ArgumentError: ``floor`` above ``solved``, or a value out of range.
        TrainingSelectionError: No row is graded.
    """
    solved_f = check_fraction("solved", solved)
    floor_f = check_fraction("floor", floor)
    if floor_f > solved_f:
        from whileai.errors import ArgumentError

        raise ArgumentError(f"floor must be at most solved, got floor={floor!r} and solved={solved!r}. "
                            "Pass for example floor=0.2, solved=0.8.", argument="floor")
    lo, hi = check_band(band)
    n_tiers = check_positive_int("tiers", tiers)
    min_k = check_positive_int("min_rollouts", min_rollouts)
    assert n_tiers is not None and min_k is not None

    df = table.frame(rows)
    require_graded(df, "curriculum")
    tasks = _tasks(df)
    rate = pl.col("pass_rate")
    thick = pl.col("n") >= min_k
    status = (
        pl.when(~thick).then(pl.lit("thin"))
        .when(rate > solved_f).then(pl.lit("retired"))
        .when(rate < floor_f).then(pl.lit("not_ready"))
        .otherwise(pl.lit("trainable"))
    )
    tasks = tasks.with_columns(status.alias("_status"))
    trainable = tasks.filter(pl.col("_status") == "trainable").sort(["pass_rate", "task_id"], descending=[True, False])
    n_train = trainable.height
    trainable = trainable.with_columns(
        ((pl.int_range(pl.len(), dtype=pl.Int64) * n_tiers) // max(n_train, 1)).alias("_tier"))

    def entries(frame: pl.DataFrame) -> list[CurriculumTask]:
        return [CurriculumTask(**task) for task in frame.select("task_id", "prompt", "n", "pass_rate").to_dicts()]

    buckets = [entries(trainable.filter(pl.col("_tier") == i)) for i in range(n_tiers)]
    return CurriculumReport(
        n_tasks=tasks.height,
        n_trainable=n_train,
        n_solved=int((tasks["_status"] == "retired").sum()),
        n_not_ready=int((tasks["_status"] == "not_ready").sum()),
        n_thin=int((tasks["_status"] == "thin").sum()),
        n_in_band=int(trainable.select(((rate >= lo) & (rate <= hi)).sum()).item()),
        thresholds=Thresholds(solved=solved_f, floor=floor_f, band=[lo, hi], min_rollouts=min_k, tiers=n_tiers),
        schedule=trainable["task_id"].to_list(),
        trainable=entries(trainable),
        retired=entries(tasks.filter(pl.col("_status") == "retired").sort(["pass_rate", "task_id"], descending=[True, False])),
        not_ready=entries(tasks.filter(pl.col("_status") == "not_ready").sort(["pass_rate", "task_id"], descending=[True, False])),
        thin=entries(tasks.filter(pl.col("_status") == "thin").sort("task_id")),
        tiers=buckets,
    )


def _tasks(df: pl.DataFrame) -> pl.DataFrame:
    """Per graded task: task_id, the first prompt seen, n graded, pass rate (from task_stats)."""
    stats = task_stats(df).filter(pl.col("n_graded") > 0)
    if has(df, "prompt"):
        prompts = (df.lazy().select("task_key", "prompt").filter(pl.col("prompt").is_not_null())
                   .unique("task_key", keep="first").collect())
    else:
        prompts = stats.select("task_key", pl.lit(None, pl.String).alias("prompt"))
    return stats.join(prompts, on="task_key", how="left", maintain_order="left").select(
        pl.col("task_key").alias("task_id"),
        pl.coalesce(pl.col("prompt"), pl.col("task_key")).alias("prompt"),
        pl.col("n_graded").alias("n"),
        (pl.col("c") / pl.col("n_graded")).alias("pass_rate"),
    )


def _render_curriculum(report: CurriculumReport | dict[str, Any]) -> str:
    """The curriculum as a few terminal lines: the counts, then one line per tier.

    Examples:
        >>> print(_render_curriculum({"n_tasks": 3, "n_trainable": 2, "n_in_band": 2, "n_solved": 1,
        ...     "n_not_ready": 0, "n_thin": 0, "tiers": [[{"pass_rate": 0.75}], [{"pass_rate": 0.5}]]}))
        tasks 3  trainable 2 (in band 2)  retired 1  not ready 0  thin 0
          tier 1: 1 tasks, pass 0.75 -> 0.75
          tier 2: 1 tasks, pass 0.50 -> 0.50
    """
    r = report.to_dict() if isinstance(report, Report) else dict(report)
    lines = [f"tasks {r['n_tasks']}  trainable {r['n_trainable']} (in band {r['n_in_band']})  retired {r['n_solved']}  "
             f"not ready {r['n_not_ready']}  thin {r['n_thin']}"]
    for i, bucket in enumerate(r.get("tiers") or [], start=1):
        if bucket:
            rates = [t["pass_rate"] for t in bucket]
            lines.append(f"  tier {i}: {len(bucket)} tasks, pass {max(rates):.2f} -> {min(rates):.2f}")
    lines.extend(f"! {w}" for w in r.get("warnings") or [])
    return "\n".join(lines)


@overload
def retire_solved(rows: FluentT, /, *, solved: float = _SOLVED, min_rollouts: int = MIN_GROUP_ROLLOUTS) -> FluentT: ...
@overload
def retire_solved(rows: pl.DataFrame | pl.LazyFrame | str | os.PathLike[str], /, *, solved: float = _SOLVED, min_rollouts: int = MIN_GROUP_ROLLOUTS) -> pl.DataFrame: ...
@overload
def retire_solved(rows: Iterable[Mapping[str, Any]], /, *, solved: float = _SOLVED, min_rollouts: int = MIN_GROUP_ROLLOUTS) -> list[dict[str, Any]]: ...
@overload
def retire_solved(rows: IntoRows, /, *, solved: float = _SOLVED, min_rollouts: int = MIN_GROUP_ROLLOUTS) -> Any: ...
def retire_solved(rows: IntoRows, /, *, solved: float = _SOLVED, min_rollouts: int = MIN_GROUP_ROLLOUTS) -> Any:
    """Drop every row of a solved task: pass rate above ``solved`` over at least ``min_rollouts``.

    A solved task teaches a grouped update nothing (Lambert 2025, chapter Reasoning). Tasks with
    too few graded rollouts to judge are kept, and so are ungraded rows of unsolved tasks.

    Args:
        rows: A graded rollout table or anything ``table.frame`` reads.
        solved: The pass rate above which a task is retired.
        min_rollouts: Graded rollouts a task needs before it can be retired.

    Returns:
        The remaining rows in the kind they came in (``table.like_input``: the same fluent
        type with its ``meta``, a DataFrame, an Arrow table or a list of row dicts).
    """
    solved_f = check_fraction("solved", solved)
    min_k = check_positive_int("min_rollouts", min_rollouts)
    df = table.frame(rows)
    require_graded(df, "retire_solved")
    stats = task_stats(df)
    done = stats.filter((pl.col("n_graded") >= min_k) & (pl.col("c") / pl.col("n_graded") > solved_f)).select("task_key")
    kept = df.join(done, on="task_key", how="anti", maintain_order="left")
    return table.like_input(rows, kept)
