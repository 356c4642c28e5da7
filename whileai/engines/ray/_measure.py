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
from whileai.engines.ray._common import (
    NO_RUN,
    batch_frame,
    collect_small,
    marker_fields,
    require_ray,
    translated,
)

SEP = "::"

#: Partial sums per (run, task): column -> how partitions merge.
_SUMS = ("n", "n_graded", "c", "reward_sum", "n_partial", "n_judge_failed", "n_nan")
_MINS = ("r_min",)
_MAXS = ("r_max",)


def _partials(batch: pa.Table, *, markers: Sequence[str], run_by: str | None, runs: bool) -> pa.Table:
    """One batch's partial sums per (``_run``, ``task_key``); runs in a Ray worker."""
    from whileai.measure._common import MEASURE_COLUMNS, clean_rewards
    from whileai.measure._variance import run_labels

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
    failed = (reward.is_null() & pl.col("judge_status").is_not_null() & (pl.col("judge_status") != "ok")) \
        if "judge_status" in df.columns else pl.lit(False)
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
             pl.col("_nan").sum().cast(pl.Int64).alias("n_nan"),
             reward.min().cast(pl.Float64).alias("r_min"), reward.max().cast(pl.Float64).alias("r_max"), *extra)
        .collect()
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
    require_ray("whileai.engines.ray")
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
    from whileai.measure._common import PASS_AT_1

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
        return {"n_rows": 0, "n_partial": 0, "lo": None, "hi": None, "n_reward": 0, "n_judge_failed": 0}
    row = t.select(pl.col("n").sum(), pl.col("n_partial").sum(), pl.col("r_min").min(), pl.col("r_max").max(),
                   pl.col("n_graded").sum(), pl.col("n_judge_failed").sum()).row(0)
    return {"n_rows": int(row[0]), "n_partial": int(row[1]), "lo": row[2], "hi": row[3], "n_reward": int(row[4]),
            "n_judge_failed": int(row[5])}


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


def pass_at(ds: Any, **options: Any) -> Any:
    """``whileai.pass_at`` on a Ray dataset: merged per-task sums into ``pass_at_from_stats``."""
    from whileai.measure._passat import pass_at_from_stats

    c, _ = cells(ds)
    warnings: list[str] = []
    nan_warning(c, warnings)
    return pass_at_from_stats(stats_of(per_task(c, [])), facts_of(c), warnings=warnings, config=ray_config(c),
                              **options)


def compare_side(ds: Any) -> tuple[pl.DataFrame, list[str], list[str]]:
    """One ``compare_runs`` side: per-task values of pass_at_1 and every marker, marker names, warnings."""
    from whileai.measure._common import PASS_AT_1

    c, markers = cells(ds)
    warnings: list[str] = []
    nan_warning(c, warnings)
    return values_of(per_task(c, markers), [PASS_AT_1, *markers]), markers, warnings


def delta_cells(ds: Any) -> tuple[pl.DataFrame, list[str], list[str]]:
    """One ``delta_report`` arm: merged cells keyed by eval run, marker names, warnings."""
    c, markers = cells(ds, runs=True)
    warnings: list[str] = []
    nan_warning(c, warnings)
    return c, markers, warnings


def side_from_cells(c: pl.DataFrame, metrics: list[str]) -> Any:
    """A ``DeltaSide`` from merged cells: what ``delta_side`` reads off the rows, from sums."""
    from whileai.measure._common import PASS_AT_1
    from whileai.measure._delta import DeltaSide, _empty_values

    if c.height == 0:
        return DeltaSide(_empty_values(metrics), None, 0, 0, {}, {})
    markers = [m for m in metrics if m != PASS_AT_1]
    t = per_task(c, markers)
    run_values = None
    if c["_run"].null_count() < c.height:
        run_values = values_of(per_task(c, markers, ("_run", "task_key")), metrics, ("_run", "task_key"))
    ranges: dict[str, tuple[Any, Any]] = {}
    if markers:
        row = t.select([e for m in markers for e in (pl.col(f"{m}{SEP}lo").min(), pl.col(f"{m}{SEP}hi").max())]).row(0)
        ranges = {m: (row[2 * i], row[2 * i + 1]) for i, m in enumerate(markers)}
    return DeltaSide(values_of(t, metrics), run_values, int(c["n"].sum()), int(c["n_graded"].sum()), ranges,
                     ray_config(c))


def variance_values(runs: Sequence[Any], *, label: str, by: str | None,
                    warnings: list[str]) -> tuple[pl.DataFrame | None, list[str], str]:
    """``eval_variance``'s per-(run, task) values when a run is a Ray dataset; metrics; the run source."""
    from whileai.measure._common import clean_rewards, marker_names, read_rows
    from whileai.measure._common import task_values as local_values
    from whileai.measure._variance import _metrics

    if len(runs) == 1:
        ds = runs[0]
        source = _run_source(ds, by)
        c, markers = cells(ds, run_by=by, runs=True)
        nan_warning(c, warnings)
        metrics = _metrics([markers], label)
        if c.height == 0:
            return None, metrics, source
        if c["_run"].null_count() == c.height and by is None:
            vals = values_of(per_task(c, markers), metrics).with_columns(pl.lit("0").alias("_run"))
            return vals, metrics, "one row set with no re-run label"
        return values_of(per_task(c, markers, ("_run", "task_key")), metrics, ("_run", "task_key")), metrics, source
    parts: list[tuple[str, Any]] = []
    names: list[list[str]] = []
    for i, rows in enumerate(runs, start=1):
        if is_ray(rows):
            c, markers = cells(rows)
            nan_warning(c, warnings)
            parts.append((f"run_{i}", (c, markers)))
            names.append(markers)
        else:
            df = clean_rewards(read_rows(rows, extra=[by] if by else []), warnings)
            parts.append((f"run_{i}", df))
            names.append(marker_names(df))
    metrics = _metrics(names, label)
    frames = []
    for run, part in parts:
        if isinstance(part, pl.DataFrame):
            if part.height:
                frames.append(local_values(part, metrics, maintain_order=False).with_columns(pl.lit(run).alias("_run")))
        elif part[0].height:
            frames.append(values_of(per_task(part[0], part[1]), metrics).with_columns(pl.lit(run).alias("_run")))
    if not frames:
        return None, metrics, "separate row sets"
    return pl.concat([f.select("_run", "task_key", *metrics) for f in frames], how="vertical_relaxed"), metrics, \
        "separate row sets"


def is_ray(obj: Any) -> bool:
    """``whileai.engines.is_ray_dataset``."""
    from whileai.engines import is_ray_dataset

    return is_ray_dataset(obj)


def _run_source(ds: Any, by: str | None) -> str:
    """Where ``run_labels`` would read the re-run label, from the dataset's schema."""
    from whileai.errors import ArgumentError
    from whileai.measure._variance import RUN_FIELDS

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
