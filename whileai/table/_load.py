"""Loading: any accepted input (a frame, Arrow, pandas, row dicts, a path, stdin) as a Polars frame.

The frame is loaded as the source holds it; ``_frame_norm`` makes it the rollout table.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from whileai._lazy import module as deferred
from whileai.defaults import JSONL_NATIVE_BLOCK_BYTES
from whileai.errors import InputFileError, SchemaError, WaiError
from whileai.table import _formats, _hf, _jsonl_engine, _row_reader
from whileai.table._jsonl_plain import _concat_chunks, _read_jsonl_file, read_jsonl_rows
from whileai.table._parquet import _unreadable_parquet, parquet_files, scan_parquet_target
from whileai.table._project import _collect_projection, _expand_columns, _select

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = deferred("pyarrow")  # loads with the first Arrow input or output (whileai/_lazy.py)


def _describe(rows: Any) -> str:
    if isinstance(rows, (str, os.PathLike)):
        return "stdin" if str(rows) == "-" else f"file {str(rows)!r}"
    if _is_path_list(rows):
        return f"files {[str(r) for r in rows][:3]!r}" + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")
    return f"the {type(rows).__name__} given"


def _is_path_list(rows: Any) -> bool:
    return (isinstance(rows, (list, tuple)) and bool(rows)
            and all(isinstance(r, (str, os.PathLike)) for r in rows))


def _is_pandas(rows: Any) -> bool:
    """A pandas DataFrame, told by its type's module so pandas is never imported here."""
    return type(rows).__module__.split(".")[0] == "pandas" and type(rows).__name__ == "DataFrame"


def _load(rows: Any, columns: Sequence[str] | None, scorer: str | None = None, *, mapped: bool = False) -> pl.DataFrame:
    if hasattr(rows, "df") and isinstance(getattr(rows, "df", None), pl.DataFrame):
        return rows.df
    if isinstance(rows, pl.DataFrame):
        return _collect_projection(rows.lazy(), columns) if columns else rows
    if isinstance(rows, pl.LazyFrame):
        return _collect_projection(rows, columns)
    if isinstance(rows, (str, os.PathLike)):  # first: the Arrow check below would load pyarrow
        return _load_path(rows, columns, scorer, mapped=mapped)
    if isinstance(rows, (pa.Table, pa.RecordBatch)):
        return _from_arrow(rows)
    if _is_pandas(rows):
        return _from_pandas(rows)
    if _is_path_list(rows):
        return _concat_frames([_load_path(r, columns, scorer, mapped=mapped) for r in rows])
    if isinstance(rows, Mapping):
        raise SchemaError(
            "rows must be a list of row dicts, a table or a path, got a single dict. "
            "Wrap it in a list: frame([row]).",
        )
    if isinstance(rows, Iterable):
        return _row_reader._from_dicts(list(rows), "rows")
    raise SchemaError(
        f"rows must be a DataFrame, LazyFrame, pyarrow Table, list of dicts or a path, got {type(rows).__name__}. "
        "Pass one of those.",
    )


def _from_pandas(df: Any) -> pl.DataFrame:
    """A pandas DataFrame: through Arrow when its columns allow, else row by row.

    A named index (``set_index("scenario_id")``) is a column, as ``df.to_parquet()`` writes it; an
    unnamed one (the default RangeIndex) is dropped.
    """
    names = [n for n in getattr(getattr(df, "index", None), "names", None) or [] if n is not None]
    if names and not {str(n) for n in names} & {str(c) for c in df.columns}:
        df = df.reset_index()
    try:
        out = pl.from_pandas(df)
    except Exception:  # object columns Arrow cannot type (mixed nested values)
        return _row_reader._from_dicts(df.to_dict("records"), "the pandas DataFrame given")
    return out


def _concat_frames(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Stack the frames of several files; a column nested in one and plain in another becomes JSON text."""
    frames = [f for f in frames if f.width]
    if not frames:
        return pl.DataFrame()
    if len(frames) == 1:
        return frames[0]
    return _concat_chunks(frames)


def _from_arrow(table: Any) -> pl.DataFrame:
    try:
        out = pl.from_arrow(table)
    except Exception as exc:  # arrow types polars cannot hold
        raise SchemaError(f"the Arrow table cannot be read into Polars: {exc}. Cast the offending column.") from exc
    assert isinstance(out, pl.DataFrame)
    return out


def _load_path(path_like: str | os.PathLike[str], columns: Sequence[str] | None,
               scorer: str | None = None, *, mapped: bool = False) -> pl.DataFrame:
    """Read a path; any filesystem error (a file that cannot be opened) is an InputFileError naming it.

    ``mapped``: a mapping will name the columns, so a file recognised only to be refused for
    want of one (OpenAI Batch API output) is read as plain rows instead.
    """
    try:
        return _load_path_unchecked(path_like, columns, scorer, mapped=mapped)
    except WaiError:
        raise
    except OSError as exc:
        text = str(path_like)
        raise InputFileError(f"file {text!r} cannot be read ({exc.strerror or exc}). Check its permissions, "
                             "or pass another path.", path=text) from exc


def _load_path_unchecked(path_like: str | os.PathLike[str], columns: Sequence[str] | None,
                         scorer: str | None = None, *, mapped: bool = False) -> pl.DataFrame:
    text = str(path_like)
    if text == "-":
        return _read_stdin(columns)
    path = Path(text)
    if not path.exists():
        raise InputFileError(f"file {text!r} does not exist. Check the path.", path=text)
    name = path.name.lower()
    if (path.is_dir() and _hf.is_saved_dataset(path)) or name.endswith(".arrow"):  # Hugging Face datasets on disk
        table = _hf.read_saved(path) if path.is_dir() else _hf.read_arrow_file(path)
        return _collect_projection(_from_arrow(table).lazy(), columns)
    if path.is_dir() and not parquet_files(path):
        files = _formats.folder_files(path)
        return _concat_frames([_load_path(f, columns, scorer, mapped=mapped) for f in files])
    if path.is_dir() or name.endswith(".parquet") or name.endswith(".pq"):
        return _read_parquet(path, text, columns)
    shaped = _read_shaped(path, text, scorer, mapped=mapped)
    return shaped if shaped is not None else _read_jsonl_file(path, text, columns)


def _read_parquet(path: Path, text: str, columns: Sequence[str] | None) -> pl.DataFrame:
    """A Parquet file or folder (``scan_parquet_target``), projected; a file that does not parse is named."""
    try:
        lf = scan_parquet_target(path)
        return _collect_projection(lf, columns)
    except InputFileError:
        raise
    except Exception as exc:
        raise _unreadable_parquet(text, exc) from exc


def _read_shaped(path: Path, text: str, scorer: str | None, *, mapped: bool) -> pl.DataFrame | None:
    """A file another tool wrote, read by its shape's reader (``_formats``); None for rollout rows."""
    shape = _formats.sniff(path)
    if shape == "openai_batch" and mapped:
        shape = None  # the mapping says which fields are the task and the reply
    if shape is not None:
        return _from_reader_rows(_formats.read(shape, path, scorer=scorer), f"file {text!r}")
    return None


def _read_stdin(columns: Sequence[str] | None) -> pl.DataFrame:
    """Rows from stdin; a projected read spools it to a temporary file the native reader can take.

    The copy goes through a buffer of ``JSONL_NATIVE_BLOCK_BYTES``. When the native reader
    declines (or stdin is a text stream without bytes underneath), the rows are parsed as
    before, so the frame and any error (``stdin: line N``) are the same.
    """
    raw = getattr(sys.stdin, "buffer", None)
    if raw is not None and hasattr(raw, "peek") and raw.peek(2)[:2] == b"\x1f\x8b":  # gzip magic (RFC 1952)
        import gzip
        import io

        text = io.TextIOWrapper(gzip.GzipFile(fileobj=raw, mode="rb"), encoding="utf-8")
        unzipped = _row_reader._from_dicts(read_jsonl_rows(text, "stdin (gzip)"), "stdin")
        return _select(unzipped.lazy(), columns).collect() if columns else unzipped
    if not columns or raw is None:
        return _row_reader._from_dicts(read_jsonl_rows(sys.stdin, "stdin"), "stdin")
    with tempfile.TemporaryDirectory(prefix="whileai-stdin-") as folder:
        spool = Path(folder) / "stdin.jsonl"
        with open(spool, "wb") as out:
            shutil.copyfileobj(raw, out, JSONL_NATIVE_BLOCK_BYTES)
        projected = _jsonl_engine.read(spool, columns, "stdin", _expand_columns, _row_reader._from_dicts)
        if projected is not None:
            return projected
        encoding = getattr(sys.stdin, "encoding", None) or "utf-8"
        errors = getattr(sys.stdin, "errors", None) or "strict"
        with open(spool, encoding=encoding, errors=errors, newline=None) as handle:
            return _select(_row_reader._from_dicts(read_jsonl_rows(handle, "stdin"), "stdin").lazy(), columns).collect()


def _from_reader_rows(rows: list[dict[str, Any]], source: str) -> pl.DataFrame:
    """Rows a format reader built: columnar when they carry no conversation, else row by row.

    Without ``messages`` (lm-eval, promptfoo, plain-text Braintrust or LangSmith rows) Polars
    builds the columns at once and the frame step builds the conversation from prompt and reply
    columnar; a column whose values Polars cannot type together takes the row path.
    """
    if rows and not any("messages" in r for r in rows):
        try:
            return pl.from_dicts(rows, infer_schema_length=None)
        except (TypeError, ValueError, pl.exceptions.PolarsError, OverflowError):
            pass
    return _row_reader._from_dicts(rows, source)
