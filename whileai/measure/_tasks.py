"""Per-task aggregates: the one group-by every measure, select and guard step starts from."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from whileai.defaults import PASS_THRESHOLD

__all__ = ["task_stats"]


def task_stats(df: pl.DataFrame | pl.LazyFrame, *, threshold: float = PASS_THRESHOLD,
               keys: str | Sequence[str] = "task_key", extra: Sequence[pl.Expr] = (),
               maintain_order: bool = True) -> pl.DataFrame:
    """One row per task: rollouts, graded rollouts, passes and the reward sum and mean.

    Args:
        df: A rollout table (``table.frame`` output; needs ``task_key`` and ``reward``).
        threshold: A graded rollout passes at ``reward >= threshold`` (partial credit splits at
            0.5, ``PASS_THRESHOLD``).
        keys: The grouping (default ``task_key``; measure groups by ``[group, task_key]`` for by=).
        extra: More aggregations computed in the same group-by (marker means, for example).
        maintain_order: Groups in first-seen order (the default); False is faster when the caller
            joins on the key anyway.

    Returns:
        Columns ``task_key`` (or ``keys``), ``n`` (rows), ``n_graded`` (non-null rewards), ``c``
        (passes), ``reward_sum``, ``reward_mean`` (mean over graded rows; null when none), then
        ``extra``; in first-seen task order unless ``maintain_order`` is False.

    Examples:
        >>> import polars as pl
        >>> df = pl.DataFrame({"task_key": ["a", "a", "b"], "reward": [1.0, 0.0, None]})
        >>> task_stats(df).rows()
        [('a', 2, 2, 1, 1.0, 0.5), ('b', 1, 0, 0, 0.0, None)]
    """
    reward = pl.col("reward")
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
        .collect()
    )
