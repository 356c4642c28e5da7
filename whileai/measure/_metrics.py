"""Per-task metric values: pass_at_1 and every marker, from the one ``task_stats`` group-by."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl

from whileai import table
from whileai.measure._tasks import task_stats

__all__ = ["MARKER_PREFIX", "PASS_AT_1", "marker_names", "metric_label", "rollouts_per_task", "task_values"]


PASS_AT_1 = "pass_at_1"


MARKER_PREFIX = "marker:"


def marker_names(df: pl.DataFrame) -> list[str]:
    """Marker names the table carries."""
    return table.markers_of(df)


def metric_label(name: str) -> str:
    """``marker:x`` and ``x`` name the same marker; pass_at_1 stays."""
    return name[len(MARKER_PREFIX):] if name.startswith(MARKER_PREFIX) else name


def task_values(df: pl.DataFrame | pl.LazyFrame, metrics: Sequence[str], *, keys: Sequence[str] = ("task_key",),
                maintain_order: bool = True, extra: Sequence[pl.Expr] = (),
                engine: Literal["in-memory", "streaming"] = "in-memory") -> pl.DataFrame:
    """Per-task (or per ``keys`` cell) mean of each metric: pass_at_1 and markers.

    One ``task_stats`` group-by: pass_at_1 is the task's mean reward over graded rollouts (its
    ``reward_mean``), and each marker is the mean of its non-null values, aggregated in the same
    pass. Columns: keys, ``n_graded`` (pass_at_1 rollouts), then one Float64 column per metric
    (null where the cell has no value), named by :func:`metric_label`, then ``extra`` (more
    aggregations of the same group-by). ``engine`` collects it (``task_stats``).
    """
    labels = [metric_label(m) for m in metrics]
    markers = [m for m in labels if m != PASS_AT_1]
    marker = pl.col("markers")
    means = [marker.struct.field(m).cast(pl.Float64).mean().alias(m) for m in markers]
    stats = task_stats(df, keys=list(keys), extra=[*means, *extra], maintain_order=maintain_order, engine=engine)
    names = [e.meta.output_name() for e in extra]
    return stats.select(*keys, "n_graded", pl.col("reward_mean").alias(PASS_AT_1), *markers, *names)


def rollouts_per_task(n_graded: np.ndarray) -> int:
    """The k a table was run at: the most graded rollouts any task has (0 when none)."""
    return int(n_graded.max()) if n_graded.size else 0
