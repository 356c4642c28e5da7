"""A column mapping for tables in no known shape, and the choice of which score is the reward.

``frame(source, mapping={"task": "doc_id", "reward": "acc"})`` renames source columns onto the
rollout table's before the table is normalised, so the mapped columns get the schema's dtypes
and ``task_key`` is built from them. ``frame(source, scorer="polite")`` makes a marker the reward.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from whileai.errors import SchemaError
from whileai.table.schema import COLUMN_BY_NAME, alias_map

__all__ = ["MAPPING_TARGETS", "apply", "check", "choose_scorer", "parse_pairs"]

#: Mapping keys that are not column names: what they stand for.
MAPPING_TARGETS: dict[str, str] = {"task": "scenario_id", "rollout": "rollout_index", "model": "model_version"}

_MARKER = "markers."


def _target(key: str) -> str:
    return MAPPING_TARGETS.get(key, key)


def check(mapping: Mapping[str, str]) -> None:
    """Raise SchemaError unless every key names a table column (or ``task``, ``markers.<name>``)."""
    if not isinstance(mapping, Mapping):
        raise SchemaError(f"mapping must be a dict of table column to source column, got {type(mapping).__name__}. "
                          'Pass e.g. {"task": "doc_id", "reward": "acc"}.')
    for key, value in mapping.items():
        target = _target(str(key))
        if not (target in COLUMN_BY_NAME or (target.startswith(_MARKER) and len(target) > len(_MARKER))):
            known = ", ".join(sorted([*MAPPING_TARGETS, *COLUMN_BY_NAME]))
            raise SchemaError(f"mapping key must be a table column, 'task' or 'markers.<name>', got {key!r}. "
                              f"Use one of: {known}.")
        if not isinstance(value, str) or not value:
            raise SchemaError(f"mapping[{key!r}] must be a source column name, got {value!r}. "
                              "Pass the name of a column of the source.")


def parse_pairs(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``["task=doc_id", "reward=acc"]`` (the CLI's repeated ``--map``) as a mapping dict.

    Examples:
        >>> parse_pairs(["task=doc_id", "reward=acc"])
        {'task': 'doc_id', 'reward': 'acc'}
    """
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise SchemaError(f"a mapping must be COLUMN=SOURCE, got {pair!r}. Write e.g. --map task=doc_id.")
        out[key.strip()] = value.strip()
    check(out)
    return out


def _source_expr(df: pl.DataFrame, name: str, source: str) -> pl.Expr:
    if name in df.columns:
        return pl.col(name)
    head, _, rest = name.partition(".")
    if rest and head in df.columns and isinstance(df.schema[head], (pl.Struct, pl.List, pl.Array)):
        expr = pl.col(head)
        dtype: Any = df.schema[head]
        for part in rest.split("."):
            if isinstance(dtype, (pl.List, pl.Array)):
                if not part.isdigit():
                    raise SchemaError(f"{source}: mapping source {name!r} must give a position (0, 1...) where "
                                      f"{head!r} holds a list, got {part!r}. Fix the mapping: e.g. {head}.0.")
                expr, dtype = expr.list.get(int(part), null_on_oob=True), dtype.inner
                continue
            fields: dict[str, Any] = {f.name: f.dtype for f in dtype.fields} if isinstance(dtype, pl.Struct) else {}
            if part not in fields:
                raise SchemaError(f"{source}: mapping source {name!r} must name a field of {head!r}, "
                                  f"got {part!r} (fields: {', '.join(fields) or 'none'}). Fix the mapping.")
            expr, dtype = expr.struct.field(part), fields[part]
        return expr
    renamed = alias_map().get(name)
    if renamed is not None and renamed in df.columns:
        return pl.col(renamed)  # a reader already moved this alias (question, score...) onto its column
    markers = df.schema.get("markers")
    if isinstance(markers, pl.Struct) and name in {f.name for f in markers.fields}:
        return pl.col("markers").struct.field(name)  # a score a reader put on markers
    raise SchemaError(f"{source}: mapping source {name!r} must be a column of the source, "
                      f"got none by that name (columns: {', '.join(df.columns[:20])}). Fix the mapping.")


def apply(df: pl.DataFrame, mapping: Mapping[str, str], source: str) -> pl.DataFrame:
    """Fill the mapped table columns from their source columns (the source columns stay)."""
    plain: dict[str, pl.Expr] = {}
    markers: dict[str, pl.Expr] = {}
    for key, value in mapping.items():
        target = _target(key)
        expr = _source_expr(df, value, source)
        if target.startswith(_MARKER):
            markers[target[len(_MARKER):]] = expr.cast(pl.Float64, strict=False)
        else:
            plain[target] = expr
    if plain:
        df = df.with_columns(expr.alias(name) for name, expr in plain.items())
        if "reward" in plain:
            reward = pl.col("reward").cast(pl.Float64, strict=False) if df.schema["reward"] == pl.Boolean else pl.col("reward")
            status = [] if "judge_status" in plain else [_status(df, pl.col("reward"))]
            name = [] if "judge_name" in plain else [pl.lit(mapping[next(k for k in mapping if _target(k) == "reward")])
                                                     .alias("judge_name")]
            df = df.with_columns(reward.alias("reward"), *status, *name)
        if "scenario_id" in plain or "task_id" in plain:
            # the mapped identity replaces whatever key a reader derived
            df = df.drop([c for c in ("scenario_id", "task_id") if c not in plain and c in df.columns])
    if markers:
        have: Any = df.schema.get("markers")
        old = ([pl.col("markers").struct.field(f.name).alias(f.name) for f in have.fields
                if f.name not in markers] if isinstance(have, pl.Struct) else [])
        df = df.with_columns(pl.struct([*old, *(e.alias(n) for n, e in markers.items())]).alias("markers"))
    return df


#: The ``judge_status`` values that state why a row has no reward other than a score it lacks
#: (table/schema.py: the agent's own failure, a judge call that errored or timed out).
_STATED_CAUSES = ("agent_error", "error", "timeout", "invalid_result")


def choose_scorer(df: pl.DataFrame, scorer: str, source: str) -> pl.DataFrame:
    """Make the marker ``scorer`` the reward (a reader that already chose it is left as it is)."""
    if "judge_name" in df.columns and df["judge_name"].drop_nulls().eq(scorer).all() \
            and df["judge_name"].null_count() < df.height:
        return df
    markers: Any = df.schema.get("markers")
    fields = [f.name for f in markers.fields] if isinstance(markers, pl.Struct) else []
    if scorer not in fields:
        raise SchemaError(f"{source}: scorer must be one of the scores it holds ({', '.join(fields) or 'none'}), "
                          f"got {scorer!r}. Pass one of those, or map a column with mapping={{'reward': ...}}.")
    reward = pl.col("markers").struct.field(scorer)
    return df.with_columns(
        reward.alias("reward"),
        pl.when(reward.is_null()).then(pl.lit(None, pl.String)).otherwise(pl.lit(scorer)).alias("judge_name"),
        _status(df, reward),
    )


def _status(df: pl.DataFrame, reward: pl.Expr) -> pl.Expr:
    """``judge_status`` for a new reward: ``ok`` where it has one; where not, the cause the source stated.

    A row the reader marked ``agent_error``, ``error`` or ``timeout`` (a provider or agent that
    failed, as the source file says) keeps that cause, so a report does not blame the judge for
    it; any other row without the reward is ``missing_reward``.
    """
    missing = pl.lit("missing_reward")
    if "judge_status" in df.columns:
        before = pl.col("judge_status")
        missing = pl.when(before.is_in(list(_STATED_CAUSES))).then(before).otherwise(missing)
    return pl.when(reward.is_null()).then(missing).otherwise(pl.lit("ok")).alias("judge_status")
