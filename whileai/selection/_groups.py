"""Per-task group statistics: n0/n1, reward mean and spread, and the group signal summary.

Everything here starts from ``whileai.measure.task_stats``, the one place pass counts come from.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from whileai import table
from whileai.defaults import DIFFICULTY_BAND
from whileai.measure import pass_at_numbers, task_stats
from whileai.report import NanFloat, Part, Report, fmt_num
from whileai.selection._args import check_band
from whileai.selection._rows import has
from whileai.table import IntoRows

__all__ = ["GroupSignal", "Signal", "group_signal"]


class GroupSignal(Report):
    """Within-ask contrast: how many tasks a grouped RL update can learn from.

    A grouped update learns from a task whose graded rollouts disagree (some pass, some fail);
    unanimous tasks are dead gradient and a task with one graded rollout cannot mix at all.
    """

    n_groups: int = 0
    """Tasks with at least one graded rollout."""
    n_single: int = 0
    """Tasks with exactly one graded rollout (no contrast possible; not counted as unanimous)."""
    n_mixed: int = 0
    """Tasks with both a pass and a fail."""
    n_all_zero: int = 0
    """Tasks with two or more graded rollouts, every one a fail."""
    n_all_one: int = 0
    """Tasks with two or more graded rollouts, every one a pass."""
    n_in_band: int = 0
    """Mixed tasks whose pass rate lies inside ``band`` (inclusive)."""
    band: tuple[float, float] = DIFFICULTY_BAND
    """The difficulty band counted against."""
    mixed_rate: NanFloat = math.nan
    """n_mixed over the tasks with two or more graded rollouts (NaN when there are none)."""
    k: int | None = None
    """The k pass^k and pass@k are taken at (from ``whileai.measure.pass_at``)."""
    pass_at_1: NanFloat = math.nan
    """Mean over tasks of the task pass rate."""
    pass_pow_k: NanFloat = math.nan
    """pass^k: every one of k tries passes (from ``whileai.measure.pass_at``)."""
    pass_at_k: NanFloat = math.nan
    """pass@k: at least one of k tries passes (from ``whileai.measure.pass_at``)."""
    headroom: NanFloat = math.nan
    """pass@k minus pass@1: what an RL update could close."""

    def render(self) -> str:
        """One line: the group counts, then the k-way numbers."""
        line = (f"groups {self.n_groups}: mixed {self.n_mixed} (in band {self.n_in_band}), all fail {self.n_all_zero}, "
                f"all pass {self.n_all_one}, single {self.n_single}; mixed rate {fmt_num(self.mixed_rate)}")
        line += (f" | pass@1 {fmt_num(self.pass_at_1)}, pass^k {fmt_num(self.pass_pow_k)}, pass@k {fmt_num(self.pass_at_k)}"
                 f", headroom {fmt_num(self.headroom)} (k={self.k if self.k is not None else 'n/a'})")
        return "\n".join([line, *(f"! {w}" for w in self.warnings)])


class Signal(Part, GroupSignal):
    """``group_signal``'s report as a block of the gate's and the RL selection's reports.

    The same fields, read and printed the same way; as a block it dumps the keys it was given
    (its warnings first), and an empty one (a report built before the signal was counted) dumps
    ``{}`` as the dict it replaced did.
    """


def group_signal(rows: IntoRows, /, *, band: tuple[float, float] = DIFFICULTY_BAND) -> GroupSignal:
    """Count the tasks whose rollouts disagree, and how many of those sit in the difficulty band.

    Per task (``task_key``), from ``whileai.measure.task_stats``: mixed when it has a pass and a
    fail, all zero / all one when two or more graded rollouts agree, single with one graded
    rollout. pass@1 is the mean task pass rate; pass^k, pass@k and headroom are read from
    ``whileai.measure.pass_at`` (Yao et al. 2024, tau-bench, arXiv:2406.12045) so every k-way
    number in the library has one source.

    Args:
        rows: A graded rollout table or anything ``table.frame`` reads.
        band: The difficulty band (``DIFFICULTY_BAND``, Lambert 2025, chapter Reasoning).

    Returns:
        A :class:`GroupSignal` report (the whileai 0.131 ``group_signal`` keys).
    """
    lo, hi = check_band(band)
    df = table.frame(rows, allow_empty=True)
    if not has(df, "reward"):
        df = df.with_columns(pl.lit(None, pl.Float64).alias("reward"))
    stats = task_stats(df).filter(pl.col("n_graded") > 0)
    warnings: list[str] = []
    if stats.height == 0:
        warnings.append("no row carries a reward; grade first (data.grade(judge=...))")
        return GroupSignal(band=(lo, hi), warnings=warnings)
    rate = pl.col("c") / pl.col("n_graded")
    multi = pl.col("n_graded") >= 2
    mixed = multi & (pl.col("c") > 0) & (pl.col("c") < pl.col("n_graded"))
    counts = stats.select(
        (~multi).sum().alias("single"),
        mixed.sum().alias("mixed"),
        (multi & (pl.col("c") == 0)).sum().alias("zero"),
        (multi & (pl.col("c") == pl.col("n_graded"))).sum().alias("one"),
        (mixed & (rate >= lo) & (rate <= hi)).sum().alias("in_band"),
        multi.sum().alias("multi"),
        rate.mean().alias("p1"),
    ).row(0, named=True)
    out: dict[str, Any] = {
        "n_groups": stats.height,
        "n_single": int(counts["single"]),
        "n_mixed": int(counts["mixed"]),
        "n_all_zero": int(counts["zero"]),
        "n_all_one": int(counts["one"]),
        "n_in_band": int(counts["in_band"]),
        "band": (lo, hi),
        "mixed_rate": counts["mixed"] / counts["multi"] if counts["multi"] else math.nan,
        "pass_at_1": float(counts["p1"]),
    }
    out.update(_k_way(df, warnings))
    if math.isnan(out["mixed_rate"]):
        warnings.append("every task has one graded rollout, so no task can mix; simulate with repeats >= 2")
    return GroupSignal(**out, warnings=warnings)


def _k_way(df: pl.DataFrame, warnings: list[str]) -> dict[str, Any]:
    """k, pass^k, pass@k and headroom from ``whileai.measure.pass_at`` (NaN when it cannot run).

    Its numbers without its intervals (``pass_at_numbers``): the report carries no interval.
    """
    try:
        result = pass_at_numbers(df)
    except Exception as exc:  # a measure failure must not hide the group counts
        warnings.append(f"pass^k and pass@k are n/a: pass_at failed ({type(exc).__name__}: {exc})")
        return {}
    out: dict[str, Any] = {}
    k = _field(result, "k")
    out["k"] = int(k) if isinstance(k, (int, float)) and not (isinstance(k, float) and math.isnan(k)) else None
    for name in ("pass_pow_k", "pass_at_k", "headroom"):
        value = _field(result, name)
        out[name] = float(value) if isinstance(value, (int, float)) else math.nan
    return out


def _field(obj: Any, name: str) -> Any:
    value = getattr(obj, name, None)
    if value is None and hasattr(obj, "get"):
        try:
            value = obj.get(name)
        except Exception:
            value = None
    return value
