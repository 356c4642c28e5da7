"""``spooled``: a JSONL file, or another writer's Parquet, read once in bounded batches into a temporary Parquet file.

A step that reads a Parquet file in pieces (select's decision columns first and the kept rows
last, export's row groups one at a time) holds a few batches, where the whole read of a JSONL
file holds every conversation at once (issue 20, "Fast from the file": convert JSONL to Parquet
once where a command reads the same file twice). The spool holds the rows ``frame`` gives:
each batch is read by the readers the whole read uses, normalised as the whole table would be,
and written as one row group; the columns ``frame`` derives from the whole table (``prompt``,
``final_text`` and ``system_prompt`` when a conversation gives them, ``task_key``) are left out
and derived again when the spool is read. Where the batches do not agree (a column typed in
one batch and null in another, a column only in a later batch) the file is read a second time
with the types the whole read unifies them to; where any doubt remains (a column nested in one
batch and text in another, batches that normalise to different types, a bad row, anything
Parquet does not hold as Polars does) there is no spool and the step reads the file whole, so
the rows and any error are the whole read's. docs/performance.md has the figures.

A single Parquet file whose conversations are not as whileai writes them (another writer's
nested shapes: whileai 0.131's rows through pyarrow, tool-call arguments as structs and ``steps``
a list of structs) of at least ``SPOOL_PARQUET_MIN_ROWS`` rows is spooled the same way, its row
groups read a batch at a time: the decision columns of such a file cannot be read apart from the
normalised conversations, so without the spool a step holds every normalised row at once (4 GB at
1M rows of 0.131's shape).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from whileai import defaults
from whileai.defaults import CHUNK_ROWS, SPOOL_COMPRESSION
from whileai.table import _formats, _frame_norm, _jsonl_plain, _row_reader
from whileai.table._parquet import parquet_file

if TYPE_CHECKING:
    import pyarrow.parquet as pq

__all__ = ["spooled"]

#: What a spooled file may be called (``.json`` is left to the format readers: inspect_ai logs).
_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
#: Columns ``frame`` derives from the whole table when the source lacks them (read again from the spool).
_DERIVED = ("prompt", "system_prompt", "final_text", "task_key")


@contextlib.contextmanager
def spooled(rows: Any) -> Iterator[Any]:
    """Yield a temporary Parquet file holding the rows of a JSONL path, else ``rows`` itself.

    ``frame`` of the yielded file gives the frame ``frame(rows)`` gives (same rows, columns,
    order and types). Only a ``.jsonl``/``.ndjson`` path (optionally ``.gz``) in no other tool's
    shape, or a single Parquet file whose conversations are not whileai's (``_foreign_parquet``),
    is spooled; anything else, and a file the spool cannot hold exactly (see the module
    docstring), comes back unchanged. The temporary folder is removed when the block ends, on
    an error too.
    """
    path = _jsonl_path(rows)
    foreign = _foreign_parquet(rows) if path is None else None
    if path is None and foreign is None:
        yield rows
        return
    with tempfile.TemporaryDirectory(prefix="whileai-spool-") as folder:
        target = Path(folder) / "rows.parquet"
        try:
            done = _spool(path, target) if path is not None else _spool_parquet(foreign, target)  # type: ignore[arg-type]
        except Exception:  # a bad row or an unreadable file: the whole read raises its own error
            done = False
        yield target if done else rows


def _jsonl_path(rows: Any) -> Path | None:
    """The path of a JSONL file ``frame`` reads line by line, else None."""
    if not isinstance(rows, (str, os.PathLike)) or str(rows) == "-":
        return None
    path = Path(rows)
    if not path.name.lower().endswith(_SUFFIXES) or not path.is_file():
        return None
    try:
        if _formats.sniff(path) is not None:
            return None
    except Exception:  # the whole read says what is wrong with it
        return None
    return path


def _foreign_parquet(rows: Any) -> Path | None:
    """A single Parquet file of rollouts whose nested columns are not as whileai writes them, else None.

    Such a file has a ``messages`` column of another type than whileai's, or ``steps`` held as
    a nested column rather than JSON text, which the whole read normalises row by row. It is
    spooled only where pyarrow's batches convert to the types Polars reads the file with.
    """
    path = parquet_file(rows)
    if path is None:
        return None
    from whileai.table.schema import MESSAGE

    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pl.scan_parquet(path).collect_schema()
        own = schema.get("messages", pl.List(MESSAGE)) == pl.List(MESSAGE) and schema.get("steps", pl.String) == pl.String
        if own or not ({"messages", "steps"} & set(schema)):
            return None  # whileai's own shape (read decision columns first as it is), or no conversation
        meta = pq.read_metadata(path)
        if meta.num_rows < defaults.SPOOL_PARQUET_MIN_ROWS:
            return None  # small enough to read whole (faster than a spool, in little memory)
        arrow = pl.from_arrow(pa.Table.from_batches([], schema=meta.schema.to_arrow_schema()))
    except Exception:  # not readable here: the whole read says why
        return None
    return path if isinstance(arrow, pl.DataFrame) and dict(arrow.schema) == dict(schema) else None


def _parquet_chunks(path: Path) -> Iterator[pl.DataFrame]:
    """The rows of a Parquet file, ``CHUNK_ROWS`` at a time (row groups decoded a batch at a time)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches(batch_size=CHUNK_ROWS):
        frame = pl.from_arrow(pa.Table.from_batches([batch]))
        assert isinstance(frame, pl.DataFrame)
        yield frame


def _spool_parquet(path: Path, target: Path) -> bool:
    """Write the normalised rows of a Parquet file to ``target``; False when the spool would not be exact."""
    sink = _Sink(path, target)
    try:
        for raw in _parquet_chunks(path):
            if not sink.write(raw):
                return False
        return sink.finish()
    finally:
        sink.close()


def _raw_chunks(path: Path) -> Iterator[pl.DataFrame]:
    """The batch frames the whole read stacks, by the same readers and in the same order."""
    source = f"file {str(path)!r}"
    gz = path.name.lower().endswith(".gz")
    if not _jsonl_plain._starts_with_array(path):
        yield from _jsonl_plain._plain_chunks(path, source)
        return
    opener: Any = gzip.open if gz else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for offset, batch in _jsonl_plain._jsonl_batches(handle, source):
            yield _row_reader._from_dicts(batch, source, offset)


def _spool(path: Path, target: Path) -> bool:
    """Write the normalised rows of ``path`` to ``target``; False when the spool would not be exact."""
    schemas: list[pl.Schema] = []
    sink: _Sink | None = _Sink(path, target)
    try:
        for raw in _raw_chunks(path):
            if not raw.width:
                continue
            schemas.append(raw.schema)
            if sink is not None and raw.schema != schemas[0]:
                sink.close()  # the batches differ: read on for their types, then again with them unified
                sink = None
            if sink is not None and not sink.write(raw):
                return False
        if sink is not None:
            return sink.finish()
        unified = _unified(schemas)
        if unified is None:
            return False
        sink = _Sink(path, target)
        for raw in _raw_chunks(path):
            if raw.width and not sink.write(pl.concat([unified, raw], how="diagonal_relaxed")):
                return False
        return sink.finish()
    finally:
        if sink is not None:
            sink.close()


def _unified(schemas: list[pl.Schema]) -> pl.DataFrame | None:
    """An empty frame with the columns and types the whole read's stacking gives every batch, or None.

    A column nested in one batch and plain in another (which the whole read turns into JSON
    text) gives None.
    """
    kinds: dict[str, set[bool]] = {}
    for schema in schemas:
        for name, dtype in schema.items():
            kinds.setdefault(name, set()).add(dtype.is_nested() and _jsonl_plain._held_as_read(name))
    if not schemas or any(len(k) > 1 for k in kinds.values()):
        return None
    return pl.concat([pl.DataFrame(schema=s) for s in schemas], how="diagonal_relaxed")


class _Sink:
    """The spool being written: one row group per normalised batch, every batch of one schema."""

    def __init__(self, path: Path, target: Path) -> None:
        self.source = f"file {str(path)!r}"
        self.target = target
        self.writer: pq.ParquetWriter | None = None
        self.schema: pl.Schema | None = None

    def write(self, raw: pl.DataFrame) -> bool:
        """Normalise one batch and append it; False when it does not match the batches before."""
        import pyarrow.parquet as pq

        if "prompt" in raw.columns and isinstance(raw.schema["prompt"], pl.List):
            return False  # a conversational prompt: its columns are rebuilt, the whole read takes it
        given = set(_frame_norm._apply_aliases(raw.clear()).columns)
        df = _frame_norm._normalize_frame(raw, self.source)
        df = df.drop([c for c in _DERIVED if c not in given and c in df.columns])
        if self.schema is not None and df.schema != self.schema:
            return False
        arrow = df.to_arrow()
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.target, arrow.schema, compression=SPOOL_COMPRESSION)
            self.schema = df.schema
        self.writer.write_table(arrow, row_group_size=max(arrow.num_rows, 1))
        return True

    def finish(self) -> bool:
        """Close the file; True when it holds rows that read back with the types written."""
        if self.writer is None:
            return False
        self.close()
        return pl.scan_parquet(self.target).collect_schema() == self.schema

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
