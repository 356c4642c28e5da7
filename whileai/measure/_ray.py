"""The measure steps on Ray Data: per-task partial sums in ``map_batches``, merged by task key.

A task's pass rate, its graded count and each marker mean are sums over its rows, so every
Arrow batch is reduced to one row per (eval run, task) of sums, counts, minima and maxima; a Ray
Data group-by merges them exactly, and the small merged table is handed to the same kernel the
local path calls (``pass_at_from_stats``, ``compare_values``, ``delta_from_sides``,
``eval_variance_from_values``). Nothing row-sized reaches the driver.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import polars as pl
import pyarrow as pa

from whileai.defaults import PASS_THRESHOLD
from whileai.table.raydata import (
    NO_RUN,
    batch_frame,
    collect_small,
    marker_fields,
    require_ray,
    translated,
)

SEP = "::"

#: Partial sums per (run, task): column -> how partitions merge.
_SUMS = ("n", "n_graded", "c", "reward_sum", "n_partial", "n_judge_failed", "n_agent_crashed", "n_nan")
_MINS = ("r_min",)
_MAXS = ("r_max",)


def _partials(batch: pa.Table, *, markers: Sequence[str], run_by: str | None, runs: bool) -> pa.Table:
    """One batch's partial sums per (``_run``, ``task_key``); runs in a Ray worker."""
    from whileai.measure._rows import MEASURE_COLUMNS, clean_rewards, failure_exprs
    from whileai.measure._runs import run_labels

    df = batch_frame(batch, [*MEASURE_COLUMNS, *([run_by] if run_by else [])])
    if df.height and "reward" in df.columns and df.schema["reward"] in (pl.Float32, pl.Float64):
        n_nan_expr = pl.col("reward").is_nan()
    else:
        n_nan_expr = pl.lit(False)
    df = df.with_columns(n_nan_expr.fill_null(False).alias("_nan")) if df.height else df
    df = clean_rewards(df, [])
    run_expr = run_labels(df, run_by)[0] if runs and df.height else None
    df = df.with_columns((run_expr if run_expr is not None else pl.lit(None, pl.String)).fill_null(NO_RUN).alias("_run"))
    reward = pl.col("reward")
    crashed, failed = failure_exprs(df)
    markers_dtype = df.schema.get("markers")
    have = {f.name for f in markers_dtype.fields} if isinstance(markers_dtype, pl.Struct) else set()
    extra: list[pl.Expr] = []
    for m in markers:
        col = pl.col("markers").struct.field(m).cast(pl.Float64) if m in have else pl.lit(None, pl.Float64)
        extra += [col.sum().alias(f"{m}{SEP}sum"), col.count().cast(pl.Int64).alias(f"{m}{SEP}n"),
                  col.min().alias(f"{m}{SEP}lo"), col.max().alias(f"{m}{SEP}hi")]
    out = (
        df.lazy().group_by("_run", "task_key")
        .agg(pl.len().cast(pl.Int64).alias("n"), reward.count().cast(pl.Int64).alias("n_graded"),
             (reward >= PASS_THRESHOLD).sum().cast(pl.Int64).alias("c"),
             reward.sum().cast(pl.Float64).alias("reward_sum"),
             (reward.is_not_null() & (reward != 0.0) & (reward != 1.0)).sum().cast(pl.Int64).alias("n_partial"),
             failed.sum().cast(pl.Int64).alias("n_judge_failed"),
             crashed.sum().cast(pl.Int64).alias("n_agent_crashed"),
             pl.col("_nan").sum().cast(pl.Int64).alias("n_nan"),
             reward.min().cast(pl.Float64).alias("r_min"), reward.max().cast(pl.Float64).alias("r_max"), *extra)
        .collect(engine="in-memory")  # the streaming engine adds partial float sums in thread order
    )
    return out.to_arrow()


def _aggregations(markers: Sequence[str]) -> list[Any]:
    from ray.data.aggregate import Max, Min, Sum

    aggs: list[Any] = [Sum(c, alias_name=c) for c in _SUMS]
    aggs += [Min(c, alias_name=c) for c in _MINS] + [Max(c, alias_name=c) for c in _MAXS]
    for m in markers:
        aggs += [Sum(f"{m}{SEP}sum", alias_name=f"{m}{SEP}sum"), Sum(f"{m}{SEP}n", alias_name=f"{m}{SEP}n"),
                 Min(f"{m}{SEP}lo", alias_name=f"{m}{SEP}lo"), Max(f"{m}{SEP}hi", alias_name=f"{m}{SEP}hi")]
    return aggs


def cells(ds: Any, *, run_by: str | None = None, runs: bool = False) -> tuple[pl.DataFrame, list[str]]:
    """Merged partial sums per (``_run``, ``task_key``) of a Ray dataset, and its marker names.

    ``runs`` keys the cells by the eval-run label ``run_labels`` reads (``run_by``, else
    ``lineage.eval_run``); otherwise every row is in one run. ``_run`` is null for no label.
    """
    require_ray("the Ray engine")
    markers = marker_fields(ds)
    fn = functools.partial(_partials, markers=markers, run_by=run_by, runs=runs)
    with translated():
        merged = ds.map_batches(fn, batch_format="pyarrow").groupby(["_run", "task_key"]).aggregate(*_aggregations(markers))
    out = collect_small(merged)
    if out.height == 0:
        schema = {"_run": pl.String, "task_key": pl.String, **{c: pl.Int64 for c in _SUMS}, "reward_sum": pl.Float64,
                  "r_min": pl.Float64, "r_max": pl.Float64}
        for m in markers:
            schema.update({f"{m}{SEP}sum": pl.Float64, f"{m}{SEP}n": pl.Int64, f"{m}{SEP}lo": pl.Float64,
                           f"{m}{SEP}hi": pl.Float64})
        return pl.DataFrame(schema=schema), markers
    out = out.with_columns(pl.when(pl.col("_run") == NO_RUN).then(None).otherwise(pl.col("_run")).alias("_run"))
    return out, markers


def per_task(c: pl.DataFrame, markers: Sequence[str], keys: Sequence[str] = ("task_key",)) -> pl.DataFrame:
    """Collapse cells to ``keys`` (sums add, minima and maxima take theirs)."""
    aggs = [pl.col(x).sum() for x in _SUMS] + [pl.col("r_min").min(), pl.col("r_max").max()]
    for m in markers:
        aggs += [pl.col(f"{m}{SEP}sum").sum(), pl.col(f"{m}{SEP}n").sum(), pl.col(f"{m}{SEP}lo").min(),
                 pl.col(f"{m}{SEP}hi").max()]
    return c.group_by(list(keys)).agg(aggs)


def stats_of(t: pl.DataFrame) -> pl.DataFrame:
    """``task_stats``'s columns from merged sums: the mean is the sum over the graded count."""
    return t.select("task_key", "n", "n_graded", "c", "reward_sum",
                    pl.when(pl.col("n_graded") > 0).then(pl.col("reward_sum") / pl.col("n_graded")).otherwise(None)
                    .alias("reward_mean"))


def values_of(t: pl.DataFrame, metrics: Sequence[str], keys: Sequence[str] = ("task_key",)) -> pl.DataFrame:
    """``task_values``'s columns from merged sums: keys, n_graded, one mean a metric."""
    from whileai.measure._metrics import PASS_AT_1

    cols: list[pl.Expr] = []
    for m in metrics:
        if m == PASS_AT_1:
            s, n = pl.col("reward_sum"), pl.col("n_graded")
        else:
            s, n = pl.col(f"{m}{SEP}sum"), pl.col(f"{m}{SEP}n")
        cols.append(pl.when(n > 0).then(s / n).otherwise(None).cast(pl.Float64).alias(m))
    return t.select(*keys, "n_graded", *cols)


def facts_of(t: pl.DataFrame) -> dict[str, Any]:
    """``pass_at``'s row facts from merged cells."""
    if t.height == 0:
        return {"n_rows": 0, "n_partial": 0, "lo": None, "hi": None, "n_reward": 0, "n_judge_failed": 0,
                "n_agent_crashed": 0}
    row = t.select(pl.col("n").sum(), pl.col("n_partial").sum(), pl.col("r_min").min(), pl.col("r_max").max(),
                   pl.col("n_graded").sum(), pl.col("n_judge_failed").sum(), pl.col("n_agent_crashed").sum()).row(0)
    return {"n_rows": int(row[0]), "n_partial": int(row[1]), "lo": row[2], "hi": row[3], "n_reward": int(row[4]),
            "n_judge_failed": int(row[5]), "n_agent_crashed": int(row[6])}


def nan_warning(t: pl.DataFrame, warnings: list[str]) -> None:
    """The NaN-reward warning ``clean_rewards`` gives, from merged counts."""
    n_nan = int(t["n_nan"].sum()) if t.height else 0
    if n_nan:
        warnings.append(f"{n_nan} row(s) have reward NaN; they are read as ungraded. "
                        "Return None from the judge for a row it could not grade.")


def ray_config(t: pl.DataFrame) -> dict[str, Any]:
    """What the report's ``config`` holds on the Ray engine: rows and the graded share."""
    n = int(t["n"].sum()) if t.height else 0
    out: dict[str, Any] = {"mixed": [], "n_rows": n, "engine": "ray"}
    if n:
        out["graded_share"] = round(float(t["n_graded"].sum()) / n, 4)
    return out


# ------------------------------------------------------------------------------------------
# the steps
# ------------------------------------------------------------------------------------------


def run_source(ds: Any, by: str | None) -> str:
    """Where ``run_labels`` would read the re-run label, from the dataset's schema."""
    from whileai.errors import ArgumentError
    from whileai.measure._runs import RUN_FIELDS

    schema = ds.schema()
    names = list(schema.names) if schema is not None else []
    lineage: list[str] = []
    if "lineage" in names and pa.types.is_struct(schema.types[names.index("lineage")]):
        lineage = [f.name for f in schema.types[names.index("lineage")]]
    if by is not None:
        if by in names:
            return by
        if by in lineage:
            return f"lineage.{by}"
        raise ArgumentError(f"by must name a column or lineage field that labels the re-runs, got {by!r}. "
                            f"Columns: {', '.join(names[:12])}.")
    for name in RUN_FIELDS:
        if name in lineage:
            return f"lineage.{name}"
    return "one row set with no re-run label"
