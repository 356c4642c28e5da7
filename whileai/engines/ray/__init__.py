"""The Ray engine: whileai's steps on a ``ray.data.Dataset`` (the ``ray`` extra, ``docs/scale.md``).

A step given a Ray dataset computes per-task partial sums in ``map_batches`` on Arrow batches,
merges them with a Ray Data group-by on the task key, and hands the small per-task table to the
kernel the local path calls, so the same rows give the same numbers. Steps whose output is rows
(select, decontaminate) write them back as a Parquet folder from the workers and return the
report with the folder. ``ray`` is imported only when such a call runs.
"""

from whileai.engines.ray._measure import (
    compare_side,
    delta_cells,
    pass_at,
    side_from_cells,
    variance_values,
)

__all__ = [
    "compare_side",
    "delta_cells",
    "pass_at",
    "side_from_cells",
    "variance_values",
]
