"""What the rows were produced with (``config``) and which eval re-run each row belongs to."""

from __future__ import annotations

import hashlib
from typing import Any

import polars as pl

from whileai.defaults import SHORT_HASH_CHARS
from whileai.errors import ArgumentError

__all__ = ["CONFIG_KEYS", "RUN_FIELDS", "run_config", "run_labels"]


#: Columns (or lineage fields) read into ``config``: what the rows were produced with.
CONFIG_KEYS: tuple[str, ...] = (
    "temperature",
    "top_p",
    "max_tokens",
    "provider",
    "base_url",
    "policy_version",
    "model_version",
    "judge_name",
    "judge_version",
    "user_model",
    "writer_model",
)


def run_config(df: pl.DataFrame | pl.LazyFrame) -> dict[str, Any]:
    """What the rows were produced with: one value per key, a list when mixed (named in ``mixed``).

    A LazyFrame (a Parquet scan) is read by the streaming engine: each key's distinct values and
    the shares are reductions, so no column is held whole.
    """
    schema = df.collect_schema() if isinstance(df, pl.LazyFrame) else df.schema
    out: dict[str, Any] = {}
    exprs: dict[str, pl.Expr] = {}
    lineage_fields = set()
    if "lineage" in schema and isinstance(schema["lineage"], pl.Struct):
        lineage_fields = {f.name for f in schema["lineage"].fields}
    for key in CONFIG_KEYS:
        if key in schema:
            expr = pl.col(key)
        elif key in lineage_fields:
            expr = pl.col("lineage").struct.field(key)
        else:
            continue
        exprs[key] = expr.cast(pl.String).alias(key)
    if "system_prompt" in schema:
        exprs["system_prompt_hash"] = pl.col("system_prompt").alias("system_prompt_hash")
    agg = [pl.len().alias("_n")]
    if "reward" in schema:
        agg.append(pl.col("reward").is_not_null().mean().alias("graded_share"))
    if "truncated" in schema:
        agg.append(pl.col("truncated").cast(pl.Float64).mean().alias("truncated_share"))
    firsts = [e.drop_nulls().unique().sort().head(6).implode() for e in exprs.values()]
    if isinstance(df, pl.LazyFrame):  # one small query a key (its distinct values), one for the counts
        parts = pl.collect_all([df.select(e).drop_nulls().unique() for e in exprs.values()] + [df.select(agg)],
                               engine="streaming")
        shares = parts.pop().row(0, named=True)
        values = {k: p.to_series().sort().head(6).to_list() for k, p in zip(exprs, parts, strict=True)}
    else:
        shares = df.select(agg).row(0, named=True)
        values = df.select(firsts).row(0, named=True) if firsts else {}
    n_rows = int(shares.pop("_n"))
    mixed: list[str] = []
    if exprs and n_rows:
        for key in exprs:
            vals = values[key] or []
            if key == "system_prompt_hash":
                vals = [hashlib.sha256(v.encode("utf-8")).hexdigest()[:SHORT_HASH_CHARS] for v in vals]
            if not vals:
                continue
            if len(vals) == 1:
                out[key] = vals[0]
            else:
                out[key] = vals
                mixed.append(key)
    out["mixed"] = mixed
    out["n_rows"] = n_rows
    if n_rows:
        out.update({k: (None if v is None else round(float(v), 4)) for k, v in shares.items()})
    return out


#: Lineage fields that label an eval re-run, in the order ``run_labels`` tries them.
RUN_FIELDS = ("eval_run", "scoring_run_id")


def run_labels(df: pl.DataFrame, by: str | None = None) -> tuple[pl.Expr | None, str]:
    """The expression naming each row's re-run, and where it came from.

    ``by`` (a column or lineage field), else ``lineage.eval_run``, else ``lineage.scoring_run_id``;
    None when the rows carry none.
    """
    lineage = set()
    if "lineage" in df.columns and isinstance(df.schema["lineage"], pl.Struct):
        lineage = {f.name for f in df.schema["lineage"].fields}
    if by is not None:
        if by in df.columns:
            return pl.col(by).cast(pl.String), by
        if by in lineage:
            return pl.col("lineage").struct.field(by).cast(pl.String), f"lineage.{by}"
        raise ArgumentError(f"by must name a column or lineage field that labels the re-runs, got {by!r}. "
                            f"Columns: {', '.join(df.columns[:12])}.")
    for name in RUN_FIELDS:
        if name in lineage:
            expr = pl.col("lineage").struct.field(name)
            if df.select(expr.is_not_null().any()).item():
                return expr.cast(pl.String), f"lineage.{name}"
    return None, ""
