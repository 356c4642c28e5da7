"""``lazy_frame``: a Parquet path as the LazyFrame ``frame(path, columns=...)`` would collect.

A step that needs one group-by over a few columns (compare, delta_report, holdout_size) can then
push the projection and the group-by into one query the streaming engine runs, so only the
per-task rows reach memory. Only what the eager reader does by a column cast is done here; a
source that needs more of it (a column held as JSON text, a conversation to rebuild, a prompt or
reply to take from it, a task key that falls back to a prompt hash) gets None, and the caller reads it with ``frame``, which also
gives every error its message.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from whileai.table._parquet import parquet_files, scan_parquet_target
from whileai.table._project import _expand_columns, _filled_from_conversation
from whileai.table.schema import COLUMN_BY_NAME, alias_map

__all__ = ["lazy_frame"]

_INTS = (pl.Int8, pl.Int16, pl.Int32, pl.UInt8, pl.UInt16, pl.UInt32, pl.Boolean)
_FLOATS = (pl.Float32, pl.Float64, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32,
           pl.UInt64, pl.Boolean)


def parquet_path(rows: Any) -> Path | None:
    """``rows`` as a Parquet file or a folder of Parquet files (``parquet_files``), else None."""
    if not isinstance(rows, (str, os.PathLike)) or str(rows) == "-":
        return None
    path = Path(str(rows))
    name = path.name.lower()
    if path.is_dir():
        return path if parquet_files(path) else None
    if path.is_file() and (name.endswith(".parquet") or name.endswith(".pq")):
        return path
    return None


def lazy_frame(rows: Any, columns: Sequence[str]) -> pl.LazyFrame | None:
    """``frame(rows, columns=columns)`` as a LazyFrame, for a Parquet path that needs only casts.

    The same columns as the eager read (the ones asked for that the file has, plus what the task
    key needs), renamed from their aliases, cast to the table's dtypes, with ``task_key`` the
    coalesced ``scenario_id`` / ``task_id``. Rows whose key is null there are keyed by a prompt
    hash in the eager reader; the caller checks ``task_key`` for nulls and reads such a file
    eagerly. In a file with a conversation, a prompt not asked for is left out (a null one is
    the conversation's in the eager read), and one asked for with a null gives None.

    Args:
        rows: Anything ``frame`` accepts; only a Parquet file or folder gives a LazyFrame.
        columns: The columns the step reads.

    Returns:
        The LazyFrame, or None when ``frame`` must read the rows (not Parquet, unreadable, a
        column that needs more than a cast, or no scenario_id / task_id).
    """
    target = parquet_path(rows)
    if target is None:
        return None
    try:
        lf = scan_parquet_target(target)
        have = lf.collect_schema().names()
    except Exception:  # an unreadable file: frame raises the error that names it
        return None
    wanted = _expand_columns(columns, have)
    lf = lf.select([c for c in have if c in wanted])
    schema = lf.collect_schema()
    renames = _renames(list(schema.names()))
    if (schema.get("completion") == pl.String and schema.get("prompt") == pl.String
            and not {"final_text", "messages"} & set(schema.names())):
        renames["completion"] = "final_text"  # TRL's standard format, as the eager reader reads it
    if renames:
        lf = lf.rename(renames)
        schema = lf.collect_schema()
    casts = []
    for name, dtype in schema.items():
        cast = _cast(name, dtype)
        if cast is False:
            return None
        if cast is not None:
            casts.append(cast)
    if casts:
        lf = lf.with_columns(casts)
    keys = [pl.col(c).cast(pl.String) for c in ("scenario_id", "task_id") if c in schema.names()]
    if not keys or ("messages" in columns and "messages" not in schema.names()):
        return None  # a conversation the eager reader builds from the row's text or steps
    filled = _filled_from_conversation(have, list(schema.names()))
    asked = [name for name in filled if name in columns]
    if asked and lf.select(pl.any_horizontal(pl.col(asked).is_null()).any()).collect().item():
        return None  # a prompt, reply or system prompt the eager reader takes from the conversation
    if len(asked) < len(filled):  # read only for a task key of last resort, which sends the caller to frame
        lf = lf.drop([name for name in filled if name not in asked])
    return lf.with_columns(pl.coalesce(keys).alias("task_key"))


def _renames(names: list[str]) -> dict[str, str]:
    """Alias -> canonical name, as the eager reader renames them."""
    out: dict[str, str] = {}
    for alias, canonical in alias_map().items():
        if alias in names and canonical not in names and canonical not in out.values():
            out[alias] = canonical
    return out


def _cast(name: str, dtype: Any) -> pl.Expr | None | bool:
    """The cast that gives ``name`` its table dtype: None when it has it, False when a cast cannot do it.

    Only casts that cannot fail are taken (a wider number, a Null column); every other mismatch
    is left to the eager reader, which converts it or says why it cannot.
    """
    col = COLUMN_BY_NAME.get(name)
    if col is None or col.kind == "as_read":
        return None
    if name == "markers":
        if not isinstance(dtype, pl.Struct):
            return False
        if all(f.dtype == pl.Float64 for f in dtype.fields):
            return None
        if not all(f.dtype in _FLOATS or f.dtype == pl.Null for f in dtype.fields):
            return False
        return pl.col(name).cast(pl.Struct({f.name: pl.Float64 for f in dtype.fields}))
    if col.kind == "struct":
        return None if isinstance(dtype, pl.Struct) else False
    if col.kind != "plain":
        return None if dtype == pl.String else False  # JSON text held as nested values, or a conversation
    if dtype == col.dtype:
        return None
    widen = dtype == pl.Null or (col.dtype == pl.Float64 and dtype in _FLOATS) or (col.dtype == pl.Int64 and dtype in _INTS)
    return pl.col(name).cast(col.dtype) if widen else False
