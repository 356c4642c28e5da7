"""JSON lines read in batches: the columnar batch reader where a batch is in a known shape, else row by row.

A JSONL (or JSONL.gz) file, or one JSON array of rows, is read ``CHUNK_ROWS`` lines at a time,
so only one batch's Python objects are alive at once; the batches' frames are stacked.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from whileai import defaults
from whileai.defaults import CHUNK_ROWS
from whileai.errors import SchemaError
from whileai.table import _jsonl_engine, _row_reader
from whileai.table._cells import json_column
from whileai.table._project import _expand_columns, _select
from whileai.table.schema import COLUMN_BY_NAME

__all__ = ["read_jsonl_rows"]


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[Any]:
    """The file's bytes, decompressed when its name ends in ``.gz``."""
    if not path.name.lower().endswith(".gz"):
        with open(path, "rb") as handle:
            yield handle
        return
    with gzip.open(path, "rb") as handle:
        yield handle


def _starts_with_array(path: Path) -> bool:
    """Whether the file (decompressed when ``.gz``) holds one JSON array rather than lines."""
    try:
        with _opened(path) as handle:
            return bool(handle.read(4096).lstrip()[:1] == b"[")
    except (OSError, EOFError):  # a corrupt gzip stream: the line reader says so
        return True


def _read_plain_jsonl(path: Path, source: str, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """The full read of a JSONL file, in batches of CHUNK_ROWS lines (narrowed to ``columns`` when given).

    A batch in a known shape is read columnar (``_jsonl_fast``), any other by the row reader,
    which names a bad line. A projected read goes through ``_jsonl_engine`` first and comes here
    only when DuckDB cannot parse the file (a broken line, to be named).
    """
    chunks = list(_plain_chunks(path, source, columns))
    return _concat_chunks(chunks) if chunks else pl.DataFrame()


def _plain_chunks(path: Path, source: str, columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
    """The frames of a JSONL (or JSONL.gz) file's batches of CHUNK_ROWS lines, as ``_read_plain_jsonl`` stacks them."""
    line_start, row_offset = 1, 0
    with _opened(path) as handle:
        while True:
            try:
                lines = list(itertools.islice(handle, CHUNK_ROWS))
            except (OSError, EOFError) as exc:  # a truncated or corrupt gzip stream
                raise SchemaError(f"{source} cannot be read as JSONL text ({exc}). Pass JSONL, JSONL.gz or Parquet.",
                                  path=str(path)) from exc
            if not lines:
                break
            data = b"".join(lines)
            df = _jsonl_fast(data)
            if df is None:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise SchemaError(f"{source} is not UTF-8 text ({exc}). Pass JSONL, JSONL.gz or Parquet.") from exc
                rows = list(_jsonl_engine.iter_jsonl(io.StringIO(text), source, first_line=line_start))
                df = _row_reader._from_dicts(rows, source, row_offset)
            if columns:  # the full read of each batch, narrowed
                df = _select(df.lazy(), columns).collect()
            yield df
            line_start += len(lines)
            row_offset += df.height


def _jsonl_fast(data: bytes | Path) -> pl.DataFrame | None:
    """A batch of rows in a known shape read columnar, conversation included.

    OpenAI rows, the flat rows Polars writes of a table and whileai 0.131 rows are read by
    ``_jsonl_full.read_batch`` (pyarrow's strict JSON reader, free-form JSON columns decoded
    from the lines). Returns None whenever anything is outside those shapes (a broken line,
    multi-part content, tool calls without ids, extra message keys, a non-numeric reward): the
    per-row reader then handles the batch and names any bad line. Polars' own reader is not
    used here: it reads a field of two kinds (text in one row, a list or a number in another)
    as text without a word. Tests check that both readers give the same rows.
    """
    if not defaults.FAST_READ:
        return None  # the switch off: the per-row reader reads every batch
    if isinstance(data, Path):
        data = data.read_bytes()
    # imported here: it loads pyarrow, which a projected read never needs
    from whileai.table import _jsonl_full

    return _jsonl_full.read_batch(data)


def _jsonl_batches(handle: io.TextIOBase | Any, source: str,
                   size: int | None = None) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Parse JSONL in batches of ``size`` rows, yielding (row offset, rows).

    Only one batch's Python objects are alive at a time, never the whole file's.
    """
    size = size or CHUNK_ROWS
    batch: list[dict[str, Any]] = []
    offset = 0
    for row in _jsonl_engine.iter_jsonl(handle, source):
        batch.append(row)
        if len(batch) >= size:
            yield offset, batch
            offset += len(batch)
            batch = []
    if batch or offset == 0:
        yield offset, batch


def _held_as_read(name: str) -> bool:
    """Whether a column keeps the reader's type (an extra column, or one of kind ``as_read``)."""
    spec = COLUMN_BY_NAME.get(name)
    return spec is None or spec.kind == "as_read"


def _concat_chunks(chunks: list[pl.DataFrame]) -> pl.DataFrame:
    """Stack per-batch frames; a column nested in one batch and text in another becomes JSON text."""
    chunks = [c for c in chunks if c.width] or chunks[:1]
    if len(chunks) == 1:
        return chunks[0]
    kinds: dict[str, set[bool]] = {}
    for chunk in chunks:
        for name, dtype in chunk.schema.items():
            kinds.setdefault(name, set()).add(dtype.is_nested() and _held_as_read(name))
    mixed = [n for n, k in kinds.items() if len(k) > 1]
    if mixed:
        chunks = [c.with_columns(json_column(c[n], drop_none=True)  # a nested column holds no text
                                 for n in mixed if n in c.columns and c.schema[n].is_nested())
                  for c in chunks]
    return pl.concat(chunks, how="diagonal_relaxed")


def _read_jsonl_file(path: Path, text: str, columns: Sequence[str] | None) -> pl.DataFrame:
    """A JSONL (or JSONL.gz) file, or one holding a JSON array of rows, as ``frame`` loads it.

    A projected read of lines goes through ``_jsonl_engine`` first; the full read of lines is
    ``_read_plain_jsonl``; an array is parsed by the row reader (``_read_json_array``).
    """
    if columns and not _starts_with_array(path):
        projected = _jsonl_engine.read(path, columns, f"file {text!r}", _expand_columns, _row_reader._from_dicts)
        if projected is not None:
            return projected
    if not _starts_with_array(path):
        return _read_plain_jsonl(path, f"file {text!r}", columns)
    return _read_json_array(path, text, columns)


def _read_json_array(path: Path, text: str, columns: Sequence[str] | None) -> pl.DataFrame:
    """A file (decompressed when ``.gz``) holding one JSON array of rows, read in batches by the row reader."""
    name = path.name.lower()
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            chunks = [_row_reader._from_dicts(batch, f"file {text!r}", offset)
                      for offset, batch in _jsonl_batches(handle, f"file {text!r}")]
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise SchemaError(f"file {text!r} cannot be read as JSONL text ({exc}). Pass JSONL, JSONL.gz or Parquet.",
                          path=text) from exc
    out = _concat_chunks(chunks)
    return _select(out.lazy(), columns).collect() if columns else out  # the same projection as the native read


def read_jsonl_rows(handle: io.TextIOBase | Any, source: str) -> list[dict[str, Any]]:
    """Parse JSONL lines into dicts; a broken line raises SchemaError naming ``source:line``.

    A file holding one JSON array of rows is accepted too.
    """
    return list(_jsonl_engine.iter_jsonl(handle, source))
