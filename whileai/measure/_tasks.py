"""Per-task aggregates: the one group-by every measure, select and guard step starts from.

``group_stats`` (the k, n0/n1, mean and spread a grouped trainer reads) sits here so select and
export read the same numbers from one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl

from whileai import table
from whileai.defaults import PASS_THRESHOLD
from whileai.table import IntoRows

__all__ = ["group_stats", "task_stats"]


def task_stats(df: pl.DataFrame | pl.LazyFrame, *, threshold: float = PASS_THRESHOLD,
               keys: str | Sequence[str] = "task_key", extra: Sequence[pl.Expr] = (),
               maintain_order: bool = True, engine: Literal["in-memory", "streaming"] = "in-memory") -> pl.DataFrame:
    """One row per task: rollouts, graded rollouts, passes and the reward sum and mean.

    Args:
        df: A rollout table (``table.frame`` output; needs ``task_key`` and ``reward``).
        threshold: A graded rollout passes at ``reward >= threshold`` (partial credit splits at
            0.5, ``PASS_THRESHOLD``).
        keys: The grouping (default ``task_key``; measure groups by ``[group, task_key]`` for by=).
        extra: More aggregations computed in the same group-by (marker means, for example).
        maintain_order: Groups in first-seen order (the default); False is faster when the caller
            joins on the key anyway.
        engine: The Polars engine that collects the group-by. ``"in-memory"`` (the default) sums
            each task's rewards in the same order on every call. ``"streaming"`` on a Parquet scan
            holds only the groups in memory, never the rows, but adds its partial sums in the order
            its threads finish, so the last bit of a float sum can change from one call to the
            next: use it only where every sum is exact (``measure._stream`` checks that first).

    Returns:
        Columns ``task_key`` (or ``keys``), ``n`` (rows), ``n_graded`` (rewards neither null nor NaN), ``c``
        (passes), ``reward_sum``, ``reward_mean`` (mean over graded rows; null when none), then
        ``extra``; in first-seen task order unless ``maintain_order`` is False.

    Examples:
        >>> import polars as pl
        >>> df = pl.DataFrame({"task_key": ["a", "a", "b"], "reward": [1.0, 0.0, None]})
        >>> task_stats(df).rows()
        [('a', 2, 2, 1, 1.0, 0.5), ('b', 1, 0, 0, 0.0, None)]
    """
    reward = pl.col("reward").cast(pl.Float64).fill_nan(None)  # NaN is ungraded (nan_as_ungraded), never a pass
    by = [keys] if isinstance(keys, str) else list(keys)
    return (
        df.lazy()
        .group_by(by, maintain_order=maintain_order)
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            reward.count().cast(pl.Int64).alias("n_graded"),
            (reward >= threshold).sum().cast(pl.Int64).alias("c"),
            reward.sum().alias("reward_sum"),
            reward.mean().alias("reward_mean"),
            *extra,
        )
        .collect(engine=engine)
    )


def _population_std(df: pl.DataFrame) -> pl.DataFrame:
    """Per task: the population standard deviation (ddof 0) of its graded rewards, bit-stable.

    Polars' grouped ``std`` takes another path for one group than for many, and a float sum
    depends on its order, so the last bit moved between a whole file and a task on its own (a Ray
    worker's group). Here each task's rewards are sorted and summed in that order by one numpy
    kernel (two passes: the mean, then the squared deviations), the same bits on any engine and
    for any row order.
    """
    lists = (df.lazy().group_by("task_key")
             .agg(pl.col("reward").cast(pl.Float64).fill_nan(None).drop_nulls().sort().alias("_r")).collect())
    sizes = lists["_r"].list.len().to_numpy().astype(np.int64)
    flat = lists["_r"].explode().drop_nulls().to_numpy().astype(np.float64) if sizes.sum() else np.zeros(0)
    std = np.full(sizes.size, np.nan)
    has = sizes > 0
    if has.any():
        starts = (np.cumsum(sizes) - sizes)[has]
        n = sizes[has].astype(np.float64)
        mean = np.add.reduceat(flat, starts) / n
        dev = flat - np.repeat(mean, sizes[has])
        std[has] = np.sqrt(np.add.reduceat(dev * dev, starts) / n)
    return pl.DataFrame({"task_key": lists["task_key"],
                         "reward_std": pl.Series(std, dtype=pl.Float64, nan_to_null=True)})


def group_stats(rows: IntoRows, /) -> pl.DataFrame:
    """Per-task group statistics a grouped trainer reads: k, n0/n1, reward mean and std.

    The counts come from ``whileai.measure.task_stats`` (a graded rollout passes at reward >= 0.5,
    so partial credit splits there, docs/select.md, "the difficulty band"); ``reward_std`` is the
    population standard deviation (ddof 0) of the graded rewards (sorted, then summed by one numpy
    kernel, so neither row order nor engine changes its last bit), the spread a group-relative
    advantage divides by (Shao et al. 2024, DeepSeekMath GRPO, arXiv:2402.03300, eq. 3).

    Args:
        rows: A rollout table or anything ``table.frame`` reads.

    Returns:
        One row per task, in first-seen order: ``task_key``, ``k`` (graded rollouts), ``n0``
        (graded fails), ``n1`` (passes), ``reward_mean`` and ``reward_std`` (null for a task
        with no graded rollout).

    Examples:
        >>> import polars as pl
        >>> df = pl.DataFrame({"task_key": ["a", "a", "a", "b"], "reward": [1.0, 0.0, 1.0, None]})
        >>> group_stats(df).rows()
        [('a', 3, 1, 2, 0.6666666666666666, 0.4714045207910317), ('b', 0, 0, 0, None, None)]
    """
    df = rows if isinstance(rows, pl.DataFrame) and "task_key" in rows.columns else table.frame(rows)
    if "reward" not in df.columns or df.schema["reward"] == pl.Null:
        df = df.with_columns(pl.lit(None, pl.Float64).alias("reward"))
    stats = task_stats(df)
    spread = _population_std(df)
    return (
        stats.join(spread, on="task_key", how="left", maintain_order="left")
        .select(
            "task_key",
            pl.col("n_graded").alias("k"),
            (pl.col("n_graded") - pl.col("c")).alias("n0"),
            pl.col("c").alias("n1"),
            "reward_mean",
            "reward_std",
        )
    )
