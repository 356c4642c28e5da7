"""One run read from Parquet by the streaming engine: the per-task values, never the rows.

compare, delta_report and holdout_size need one group-by over a few columns. For a Parquet path
the projection, the reward checks and the per-task group-by run as Polars lazy queries collected
with ``engine="streaming"``, so memory holds one row per task (1.25M at 10M rows), not 10M rows
of strings (docs/performance.md, "10M rows").

Same rows, same numbers: the streaming engine sums a task's rows in an order of its own, so a
float sum could move in its last bit. It is taken only where every sum is exact in any order:
each reward and marker a multiple of 2^-24 in [-1, 1] (0/1 grades and quarters are; a score in
hundredths is not, 0.01 being no such multiple; nor is a NaN marker) and fewer than 2^29 rows, so
every partial sum is an integer multiple of 2^-24 below 2^53, held exactly. Any other input, and
every input whose eager read would do more than a cast (``table.lazy_frame``), is read eagerly as
before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import polars as pl

from whileai.measure._metrics import PASS_AT_1, task_values
from whileai.measure._rows import MEASURE_COLUMNS
from whileai.measure._runs import RUN_FIELDS, run_config
from whileai.table import lazy_frame

__all__ = ["StreamSide", "stream_side"]

#: Fraction bits a value may carry for its sums to be exact in any order (see the module docstring).
_EXACT_BITS = 24
#: Rows under which a sum of such values stays below 2^53 (53 - 24 bits).
_EXACT_ROWS = 2 ** (53 - _EXACT_BITS)
_DUP_N, _DUP_UNIQUE, _PAIR = "_ri_n", "_ri_unique", "_ri_pair"


class StreamSide(NamedTuple):
    """One run's per-task values and row facts, read by the streaming engine."""

    lf: pl.LazyFrame
    """The scan (casts, ``task_key``, NaN rewards as null) the queries ran on."""
    values: pl.DataFrame
    """``task_values`` over pass_at_1 and the markers asked for: task_key, n_graded, one column a metric."""
    markers: list[str]
    """Marker names the run carries."""
    n_rows: int
    """Rows in the run."""
    n_graded: int
    """Rows with a reward."""
    marker_range: dict[str, tuple[Any, Any]]
    """Each marker asked for: its (min, max) over the rows."""
    run_label: str | None
    """The lineage field ``run_labels`` reads as the eval-run label, or None."""
    warnings: list[str]
    """What ``clean_rewards`` warns about these rows, in its order."""

    def config(self) -> dict[str, Any]:
        """``run_config`` of the rows."""
        return run_config(self.lf)

    def run_values(self, metrics: Sequence[str]) -> pl.DataFrame | None:
        """``task_values`` keyed by (``_run``, task_key), as ``delta_side`` reads them; None without a label."""
        if self.run_label is None:
            return None
        run = pl.col("lineage").struct.field(self.run_label).cast(pl.String).alias("_run")
        return task_values(self.lf.with_columns(run), list(metrics), keys=("_run", "task_key"), maintain_order=False,
                           engine="streaming")


def _exact(x: pl.Expr) -> pl.Expr:
    """True where a value's sums are exact in any order (a null passes: it never enters a sum; NaN does not)."""
    scaled = x * float(2 ** _EXACT_BITS)
    return x.is_null() | ((x.abs() <= 1.0) & (scaled.floor() == scaled))


def stream_side(rows: Any, metrics: Sequence[str] | None = None) -> StreamSide | None:
    """``clean_rewards(read_rows(rows))`` and its per-task values, without holding the rows.

    Args:
        rows: A run; only a Parquet file or folder whose sums are exact in any order is streamed.
        metrics: The markers to aggregate (pass_at_1 always is); None for every marker.

    Returns:
        The side, or None: the caller reads the rows eagerly (which also raises every error a
        bad reward or key gives, with its message).
    """
    lf = lazy_frame(rows, MEASURE_COLUMNS)
    if lf is None:
        return None
    schema = lf.collect_schema()
    if "reward" not in schema:
        lf = lf.with_columns(pl.lit(None, pl.Float64).alias("reward"))
    reward = pl.col("reward")
    markers_dtype, lineage_dtype = schema.get("markers"), schema.get("lineage")
    markers = [f.name for f in markers_dtype.fields] if isinstance(markers_dtype, pl.Struct) else []
    used = [m for m in markers if metrics is None or m in metrics]
    lineage = {f.name for f in lineage_dtype.fields} if isinstance(lineage_dtype, pl.Struct) else set()
    runs = [r for r in RUN_FIELDS if r in lineage]
    has_index = "rollout_index" in schema

    facts = [pl.len().alias("n"), pl.col("task_key").null_count().alias("no_key"),
             reward.is_nan().sum().alias("nan"),
             (reward.is_not_nan() & ((reward < 0.0) | (reward > 1.0))).sum().alias("bad"),
             (~(_exact(reward) | reward.is_nan())).sum().alias("inexact"),  # a NaN reward is read as null
             (reward.is_not_null() & reward.is_not_nan()).sum().alias("graded"),
             (pl.col("rollout_index").count() if has_index else pl.lit(0)).alias("indexed")]
    for m in used:
        field = pl.col("markers").struct.field(m)
        facts += [(~_exact(field)).sum().alias(f"inexact:{m}"), field.min().alias(f"lo:{m}"), field.max().alias(f"hi:{m}")]
    facts += [pl.col("lineage").struct.field(r).is_not_null().any().alias(f"run:{r}") for r in runs]
    row = lf.select(facts).collect(engine="streaming").row(0, named=True)
    if (not row["n"] or row["n"] >= _EXACT_ROWS or row["no_key"] or row["bad"] or row["inexact"]
            or any(row[f"inexact:{m}"] for m in used)):
        return None
    lf = lf.with_columns(pl.when(reward.is_nan()).then(None).otherwise(reward).alias("reward"))

    dup = has_index and row["indexed"] > 0
    grouped, extra = lf, []
    if dup:  # distinct (rollout_index, eval_run) pairs a task: its non-null values less the one null value
        index = pl.col("rollout_index")
        pair = pl.struct(index, pl.col("lineage").struct.field("eval_run")) if "eval_run" in lineage else index
        grouped = lf.with_columns(pl.when(index.is_not_null()).then(pair).otherwise(None).alias(_PAIR))
        extra = [index.count().cast(pl.Int64).alias(_DUP_N),
                 (pl.col(_PAIR).n_unique() - (pl.col(_PAIR).null_count() > 0)).cast(pl.Int64).alias(_DUP_UNIQUE)]
    values = task_values(grouped, [PASS_AT_1, *used], maintain_order=False, extra=extra, engine="streaming")
    warnings: list[str] = []
    if dup:
        _duplicates(lf, values, "eval_run" in lineage, warnings)
        values = values.drop(_DUP_N, _DUP_UNIQUE)
    if row["nan"]:
        warnings.append(f"{row['nan']} row(s) have reward NaN; they are read as ungraded. "
                        "Return None from the judge for a row it could not grade.")
    label = next((r for r in runs if row[f"run:{r}"]), None)
    return StreamSide(lf, values, markers, int(row["n"]), int(row["graded"]),
                      {m: (row[f"lo:{m}"], row[f"hi:{m}"]) for m in used}, label, warnings)


def _duplicates(lf: pl.LazyFrame, values: pl.DataFrame, eval_run: bool, warnings: list[str]) -> None:
    """``warn_duplicates`` from per-task counts: repeats are rows less distinct (task, rollout_index) pairs.

    The example (the first repeated pair by task, then rollout_index) is read off the one task
    it is in.
    """
    repeats = values.filter(pl.col(_DUP_N) > pl.col(_DUP_UNIQUE))
    if repeats.height == 0:
        return
    extra = int((repeats[_DUP_N] - repeats[_DUP_UNIQUE]).sum())
    task = repeats["task_key"].min()
    keys = [pl.col("task_key"), pl.col("rollout_index")]
    if eval_run:
        keys.append(pl.col("lineage").struct.field("eval_run").alias("_eval_run"))
    first = (lf.filter((pl.col("task_key") == task) & pl.col("rollout_index").is_not_null()).group_by(keys).len()
             .filter(pl.col("len") > 1).sort("task_key", "rollout_index").collect(engine="streaming").row(0, named=True))
    warnings.append(
        f"{extra:,} row(s) repeat a (task, rollout_index) pair already seen, e.g. task {first['task_key']!r} rollout "
        f"{first['rollout_index']} appears {first['len']} times; k and the interval count them as new rollouts. "
        "Drop the duplicates (df.unique(['scenario_id', 'rollout_index'])) unless they are separate runs.")

