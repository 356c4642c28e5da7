"""Rows out: the table as dicts, JSONL and Parquet, written atomically."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from whileai.defaults import CHUNK_ROWS, SCHEMA_VERSION
from whileai.errors import InputFileError, translate
from whileai.table._rowdicts import _row_out, message_out, row_dicts
from whileai.table.schema import DERIVED_COLUMNS

__all__ = ["atomic_path", "iter_rows", "message_out", "rows", "write", "write_jsonl", "write_parquet"]



@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds.

    A failure mid-write leaves nothing behind and never a half-written file at ``path``.
    """
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.exists():
        raise InputFileError(
            f"folder {str(parent)!r} does not exist, so {str(target)!r} cannot be written. Create the folder first.",
            path=str(target),
        )
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp creates 0600; give the file the mode a plain open() would (0666 less the umask)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_path, 0o666 & ~umask)
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


def iter_rows(df: pl.DataFrame, *, chunk_rows: int = CHUNK_ROWS) -> Iterator[dict[str, Any]]:
    """Yield the table's rows as plain dicts (the wire shape: None dropped, JSON decoded).

    Built column by column one chunk at a time, so memory stays at one chunk of dicts.
    """
    for chunk in df.iter_slices(chunk_rows):
        yield from row_dicts(chunk)


def rows(df: pl.DataFrame) -> list[dict[str, Any]]:
    """The table as a list of row dicts (the wire shape: None dropped, JSON columns decoded)."""
    return row_dicts(df)


def _row_out_slow(row: dict[str, Any]) -> dict[str, Any]:
    """The per-row reference for ``rows`` (tests check the column-wise builder against it)."""
    return _row_out(row)


def write_jsonl(df: pl.DataFrame, path: str | os.PathLike[str], *, schema_version: bool = True) -> Path:
    """Write rows as JSONL (``.gz`` compresses), atomically, stamping ``schema_version``."""
    target = Path(path)
    with atomic_path(target) as tmp:
        opener = gzip.open if target.name.endswith(".gz") else open
        with opener(tmp, "wt", encoding="utf-8") as handle:  # type: ignore[operator]
            dumps = json.dumps
            for row in iter_rows(df):
                if schema_version:
                    row.setdefault("schema_version", SCHEMA_VERSION)
                handle.write(dumps(row, ensure_ascii=False, default=str))
                handle.write("\n")
    return target


def write_parquet(df: pl.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write the table as Parquet, atomically, with ``whileai.schema_version`` in the metadata."""
    target = Path(path)
    table = df.drop([c for c in DERIVED_COLUMNS if c in df.columns]).to_arrow()
    meta = dict(table.schema.metadata or {})
    meta[b"whileai.schema_version"] = SCHEMA_VERSION.encode()
    table = table.replace_schema_metadata(meta)
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return target


def write(df: pl.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write to JSONL or Parquet by the path's suffix (``.parquet``/``.pq``, else JSONL)."""
    name = str(path).lower()
    with translate(f"writing {str(path)!r}", path=path):
        if name.endswith((".parquet", ".pq")):
            return write_parquet(df, path)
        return write_jsonl(df, path)


def to_arrow(df: pl.DataFrame) -> pa.Table:
    """The table as a pyarrow Table (derived columns dropped)."""
    return df.drop([c for c in DERIVED_COLUMNS if c in df.columns]).to_arrow()
