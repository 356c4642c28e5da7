"""``frame``: every accepted input becomes one canonical Polars DataFrame."""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import itertools
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from whileai import _shapes, defaults
from whileai._lazy import module as deferred
from whileai.defaults import (
    CHUNK_ROWS,
    JSONL_NATIVE_BLOCK_BYTES,
)
from whileai.errors import EmptyInputError, InputFileError, SchemaError, WaiError, translate
from whileai.table import _columnar, _formats, _hf, _jsonl_engine, _mapping
from whileai.table import normalize as nz
from whileai.table._arrow import list_series
from whileai.table._kind import IntoRows
from whileai.table.derive import final_reply
from whileai.table.schema import (
    COLUMN_BY_NAME,
    COLUMNS,
    MESSAGE,
    ROLE_ALIASES,
    ROLES,
    TOOL_CALL,
    alias_map,
)

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = deferred("pyarrow")  # loads with the first Arrow input or output (whileai/_lazy.py)

__all__ = ["IntoRows", "frame", "read_jsonl_rows", "scan"]


_MESSAGES_DTYPE = pl.List(MESSAGE)


@functools.cache
def _arrow_messages() -> pa.DataType:
    """The Arrow type of a messages column (built on first use: it needs pyarrow)."""
    return pl.Series("m", [], dtype=_MESSAGES_DTYPE).to_arrow().type

_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz")


def frame(rows: IntoRows, /, *, columns: Sequence[str] | None = None, allow_empty: bool = False,
          mapping: Mapping[str, str] | None = None, scorer: str | None = None,
          shape: str | None = None) -> pl.DataFrame:
    """Read rows from any accepted source into the canonical rollout table.

    Accepts a Polars DataFrame or LazyFrame, a pyarrow Table, a pandas DataFrame, a list of row
    dicts, a fluent data object (``SimulationData``, ``ScoredData``, ``Selection``), a path, a
    folder, or a list of paths read as one table. A path is ``.jsonl``, ``.jsonl.gz``,
    ``.parquet``, ``-`` for stdin, a Hugging Face ``save_to_disk`` folder or ``.arrow`` file, or
    a file another tool wrote, recognised by its shape (``shape`` below lists them;
    docs/table.md says what maps to what). A folder of Parquet files is scanned lazily; any other folder is
    read file by file. Known fields are mapped onto the schema (aliases, tool-call arguments as
    canonical JSON, conversations rebuilt from 0.131 ``steps``); every unknown field is kept as
    an extra column. A ``task_key`` column is added (scenario_id, else task_id, else a prompt
    hash).

    Args:
        rows: The rows.
        columns: Read only these columns (plus what ``task_key`` needs) where the source allows
            it (Parquet and LazyFrames are scanned lazily). Columns absent from the source are
            skipped, not invented.
        allow_empty: Return an empty table instead of raising :class:`EmptyInputError`.
        mapping: Which source column fills which table column, for tables in no known shape:
            ``{"task": "doc_id", "reward": "acc"}``. Keys are table columns (``task`` is
            ``scenario_id``; ``markers.<name>`` makes a marker); values are source columns, a
            dotted ``a.b`` reaching into a struct column.
        scorer: Which score is the reward when the source has several: an inspect_ai scorer
            (``<scorer>.<key>`` for a dict-valued one), or any marker name.
        shape: Read every file as this shape instead of telling it from the file (a file
            told wrongly); ``rows`` reads plain rollout rows. One of: {SHAPES}.

    Returns:
        The rollout table as a ``polars.DataFrame``.

    Raises:
        SchemaError: A row cannot be read (the message names the file, line or row and the fix).
        EmptyInputError: There are no rows and ``allow_empty`` is False.
        InputFileError: A path that does not exist or holds no rows.

    Examples:
        >>> df = frame([{"scenario_id": "t1", "prompt": "hi", "reward": 1}])
        >>> df.select("task_key", "reward").row(0)
        ('t1', 1.0)
    """
    source = _describe(rows)
    if shape is not None:
        _formats.check_shape(shape)
    with translate(f"reading rows from {source}", path=rows if isinstance(rows, (str, os.PathLike)) else None), \
            _formats.forcing(shape):
        if mapping:
            _mapping.check(mapping)
            if columns:
                columns = [*columns, *(v.split(".")[0] for v in mapping.values())]
        df = _load(rows, columns, scorer, mapped=bool(mapping))
        if mapping:
            df = _mapping.apply(df, mapping, source)
        # Rebuilding the conversation from prompt/final_text is only worth it when it was asked for.
        build_messages = not columns or "messages" in columns
        if df.height == 0 and df.width == 0 and columns and isinstance(rows, (str, os.PathLike)) and str(rows) != "-":
            df = _load(rows, None, scorer, mapped=bool(mapping))  # no asked field in the file: read it whole to say what it holds
            if mapping:
                df = _mapping.apply(df, mapping, source)
        if df.height == 0:
            if allow_empty:
                return _normalize_frame(df, source, build_messages=build_messages)
            raise EmptyInputError(
                f"{source} holds no rows. Pass a file or list with at least one rollout.", source=source
            )
        try:
            out = _normalize_frame(df, source, build_messages=build_messages)
        except SchemaError as exc:
            if columns and exc.reason == "no_task_identity" and isinstance(rows, (str, os.PathLike)) \
                    and str(rows) != "-":  # a projected read: name the columns the file has
                raise no_identity_error(source, _load(rows, None, scorer, mapped=bool(mapping)).columns) from None
            raise
        return _mapping.choose_scorer(out, scorer, source) if scorer else out


frame.__doc__ = (frame.__doc__ or "").replace("{SHAPES}", _shapes.summary())  # the registry's list


def scan(path: str | os.PathLike[str], *, columns: Sequence[str] | None = None) -> pl.LazyFrame:
    """A lazy scan of a Parquet file or folder, for steps that read only a few columns.

    ``columns`` projects the scan onto what ``frame(..., columns=columns)`` would read (those
    columns, their aliases, and what ``task_key`` needs), so nothing else is decoded.
    """
    text = str(path)
    if not Path(text).exists():
        raise InputFileError(f"file {text!r} does not exist. Check the path.", path=text)
    try:
        lf = scan_parquet_target(Path(text))
        return _select(lf, columns) if columns else lf
    except WaiError:
        raise
    except Exception as exc:  # a footer that does not parse is found when the schema is read
        raise _unreadable_parquet(text, exc) from exc


def _unreadable_parquet(text: str, exc: BaseException) -> SchemaError:
    return SchemaError(f"file {text!r} is not a readable Parquet file ({type(exc).__name__}: {exc}). "
                       "Re-write it, or pass the JSONL it came from.", path=text)


# ------------------------------------------------------------------------------------------
# loading
# ------------------------------------------------------------------------------------------


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
        return _from_dicts(list(rows), "rows")
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
        return _from_dicts(df.to_dict("records"), "the pandas DataFrame given")
    return out


def _concat_frames(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Stack the frames of several files; a column nested in one and plain in another becomes JSON text."""
    frames = [f for f in frames if f.width]
    if not frames:
        return pl.DataFrame()
    if len(frames) == 1:
        return frames[0]
    return _concat_chunks(frames)


def _select(lf: pl.LazyFrame, columns: Sequence[str] | None) -> pl.LazyFrame:
    if not columns:
        return lf
    have = lf.collect_schema().names()
    wanted = _expand_columns(columns, have)
    return lf.select([c for c in have if c in wanted])


_CONVERSATION_PARTS = frozenset({"messages", "steps", "prompt", "completion", "system_prompt", "final_text"})


def _collect_projection(lf: pl.LazyFrame, columns: Sequence[str] | None) -> pl.DataFrame:
    """``_select`` collected; with the conversation too where a row leaves a field null that the full read fills from it.

    The full read gives a row without its prompt, reply or system prompt the conversation's
    (``_derive_content``): when a projection reads such a field with a null and the source has
    the conversation, it is read again with the conversation (and what it is built from).
    """
    df = _select(lf, columns).collect()
    if not columns:
        return df
    have = lf.collect_schema().names()
    filled = _filled_from_conversation(have, df.columns)
    if filled and not _CONVERSATION_FIELDS & set(_apply_aliases(df.head(0)).columns) and df.select(
            pl.any_horizontal(pl.col(filled).is_null()).any()).item():
        return _select(lf, [*columns, "messages"]).collect()
    return df


def _expand_columns(columns: Sequence[str], have: Sequence[str]) -> set[str]:
    """The requested columns plus what task_key needs (only as much identity as the source has)."""
    aliases = alias_map()
    present = {aliases.get(c, c) for c in have}
    # prompt too, since a row whose scenario_id is null falls back to the prompt hash
    wanted = set(columns) | {"scenario_id", "task_id", "prompt"}
    if "prompt" not in present and not {"scenario_id", "task_id"} & present:
        wanted |= {"messages", "steps"}
    if "messages" in wanted:
        # what the conversation is built from, and the fields the full read keeps as the row gives
        # them rather than taking them from the conversation
        wanted |= _CONVERSATION_PARTS
    if "final_text" in wanted:
        wanted.add("completion")  # TRL's standard format: a text completion is the reply
    for alias, canonical in aliases.items():
        if canonical in wanted:
            wanted.add(alias)
    return wanted


def _from_arrow(table: Any) -> pl.DataFrame:
    try:
        out = pl.from_arrow(table)
    except Exception as exc:  # arrow types polars cannot hold
        raise SchemaError(f"the Arrow table cannot be read into Polars: {exc}. Cast the offending column.") from exc
    assert isinstance(out, pl.DataFrame)
    return out


#: Names a dataset reader skips inside a folder, as pyarrow.dataset (``ignore_prefixes``), Spark and
#: Dask do: Spark's ``_temporary/`` and ``_SUCCESS``, its ``.crc`` checksums, hidden folders.
SKIPPED_PREFIXES = (".", "_")


def parquet_files(folder: Path) -> list[Path]:
    """The ``.parquet`` files under ``folder`` a dataset reader reads, in name order.

    A file is skipped when its name, or a folder between ``folder`` and it, starts with one of
    ``SKIPPED_PREFIXES``.
    """
    return sorted(p for p in folder.rglob("*.parquet") if p.is_file()
                  and not any(part.startswith(SKIPPED_PREFIXES) for part in p.relative_to(folder).parts))


def scan_parquet_target(path: Path) -> pl.LazyFrame:
    """``pl.scan_parquet`` of a Parquet file or of a folder's ``parquet_files``.

    A plain folder's files are scanned as a list, in name order. A folder written partitioned
    (``scenario_id=t0/part-0.parquet``, as pyarrow's ``write_to_dataset``, Spark, Dask and Ray
    write one) keeps its partition columns, parsed from the folders below ``path`` only:

    - through a glob rooted at the folder, one ``[!._]*`` per partition level, so Spark's
      ``_SUCCESS``, ``.crc`` checksums and ``_temporary/`` stay out as Spark's own reader leaves
      them (Polars' walk of the folder fails on a checksum file);
    - a ``key=value`` folder above ``path`` (which Polars reads from a glob or a list of files as
      a column too) is dropped from the glob's columns; where the folder holds nothing else, or
      its partitions are of uneven depth, Polars' own walk of the folder reads it.
    """
    if not path.is_dir():
        return pl.scan_parquet(path)
    files = parquet_files(path)
    if not files:
        raise InputFileError(
            f"folder {str(path)!r} holds no .parquet files. Point at a folder of Parquet files or at one file.",
            path=str(path),
        )
    folders = {f.relative_to(path).parts[:-1] for f in files}
    below = {part.split("=", 1)[0] for parts in folders for part in parts if "=" in part}
    if not below:
        return pl.scan_parquet([str(f) for f in files])
    depths = {len(parts) for parts in folders}
    above = {part.split("=", 1)[0] for part in Path(str(path)).parts if "=" in part} - below
    visible = set(files)
    stray = any(p not in visible for p in path.rglob("*") if p.is_file())
    if len(depths) > 1 or (above and not stray):
        return pl.scan_parquet(str(path))
    import glob

    pattern = os.path.join(glob.escape(str(path)), *(["[!._]*"] * depths.pop()), "[!._]*.parquet")
    lf = pl.scan_parquet(pattern, hive_partitioning=True)
    if above:
        if above & set(pl.scan_parquet(files[0]).collect_schema().names()):
            raise InputFileError(
                f"folder {str(path)!r} sits under a folder named like a partition ({', '.join(sorted(above))}=...) "
                "that is also a column of its files, and holds files other than its Parquet parts (Spark's "
                "_SUCCESS, checksums or _temporary/). Remove those files, or move the folder.", path=str(path))
        lf = lf.drop(sorted(above))
    return lf


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
        try:
            lf = scan_parquet_target(path)
            return _collect_projection(lf, columns)
        except InputFileError:
            raise
        except Exception as exc:
            raise _unreadable_parquet(text, exc) from exc
    shape = _formats.sniff(path)
    if shape == "openai_batch" and mapped:
        shape = None  # the mapping says which fields are the task and the reply
    if shape is not None:
        return _from_reader_rows(_formats.read(shape, path, scorer=scorer), f"file {text!r}")
    if columns and not _starts_with_array(path):
        projected = _jsonl_engine.read(path, columns, f"file {text!r}", _expand_columns, _from_dicts)
        if projected is not None:
            return projected
    if not _starts_with_array(path):
        return _read_plain_jsonl(path, f"file {text!r}", columns)
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            chunks = [_from_dicts(batch, f"file {text!r}", offset)
                      for offset, batch in _jsonl_batches(handle, f"file {text!r}")]
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise SchemaError(f"file {text!r} cannot be read as JSONL text ({exc}). Pass JSONL, JSONL.gz or Parquet.",
                          path=text) from exc
    out = _concat_chunks(chunks)
    return _select(out.lazy(), columns).collect() if columns else out  # the same projection as the native read


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
        unzipped = _from_dicts(read_jsonl_rows(text, "stdin (gzip)"), "stdin")
        return _select(unzipped.lazy(), columns).collect() if columns else unzipped
    if not columns or raw is None:
        return _from_dicts(read_jsonl_rows(sys.stdin, "stdin"), "stdin")
    with tempfile.TemporaryDirectory(prefix="whileai-stdin-") as folder:
        spool = Path(folder) / "stdin.jsonl"
        with open(spool, "wb") as out:
            shutil.copyfileobj(raw, out, JSONL_NATIVE_BLOCK_BYTES)
        projected = _jsonl_engine.read(spool, columns, "stdin", _expand_columns, _from_dicts)
        if projected is not None:
            return projected
        encoding = getattr(sys.stdin, "encoding", None) or "utf-8"
        errors = getattr(sys.stdin, "errors", None) or "strict"
        with open(spool, encoding=encoding, errors=errors, newline=None) as handle:
            return _select(_from_dicts(read_jsonl_rows(handle, "stdin"), "stdin").lazy(), columns).collect()


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
    return _from_dicts(rows, source)


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
                df = _from_dicts(rows, source, row_offset)
            if columns:  # the full read of each batch, narrowed
                df = _select(df.lazy(), columns).collect()
            yield df
            line_start += len(lines)
            row_offset += df.height




_CONVERSATION_FIELDS = frozenset({"messages", "steps"})


def _filled_from_conversation(have: Iterable[str], read: Sequence[str]) -> list[str]:
    """The fields among ``read`` that the full read fills from the conversation where a row leaves them null.

    A prompt (the first user turn) and a reply (the last assistant turn) come from either
    conversation, ``messages`` or 0.131 ``steps``; a system prompt only from ``messages`` (a
    0.131 row's system turn is its own ``system_prompt``). Empty when ``have`` holds no conversation.
    """
    aliases = alias_map()
    present = {aliases.get(n, n) for n in have}
    if not _CONVERSATION_FIELDS & present:
        return []
    fills = {"prompt", "final_text"} | ({"system_prompt"} if "messages" in present else set())
    return [n for n in read if aliases.get(n, n) in fills]


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


def _drop_none(value: Any) -> Any:
    """Drop the None fields a unified struct added to a row's nested dicts."""
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def read_jsonl_rows(handle: io.TextIOBase | Any, source: str) -> list[dict[str, Any]]:
    """Parse JSONL lines into dicts; a broken line raises SchemaError naming ``source:line``.

    A file holding one JSON array of rows is accepted too.
    """
    return list(_jsonl_engine.iter_jsonl(handle, source))


# ------------------------------------------------------------------------------------------
# dict rows -> columns
# ------------------------------------------------------------------------------------------


def _from_dicts(rows: list[Any], source: str, offset: int = 0) -> pl.DataFrame:
    aliases = alias_map()
    normalized: list[dict[str, Any]] = []
    for i, row in enumerate(rows, start=offset):
        if not isinstance(row, Mapping):
            raise SchemaError(f"{source}: row {i} is a {type(row).__name__}, not a dict. Pass one dict per rollout.", row=i)
        normalized.append(_normalize_row(row, aliases, source, i))
    order: dict[str, None] = {}
    for row in normalized:
        for key in row:
            order.setdefault(key, None)
    series = [_column(name, [row.get(name) for row in normalized], source) for name in order]
    return pl.DataFrame(series) if series else pl.DataFrame()


def _normalize_row(row: Mapping[str, Any], aliases: Mapping[str, str], source: str, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # a text column's alias holding an object or a list stays under its own name (a mapping may
    # read the text inside it; else the frame refuses it, ``_check_text_columns``), and the column
    # is not taken from the conversation either
    held: set[str] = set()
    for key, value in row.items():
        key = str(key)
        canonical = aliases.get(key)
        if canonical is not None and canonical not in row:
            if canonical in _TEXT_COLUMNS and isinstance(value, (dict, list)) and not _text_like(canonical, value):
                held.add(canonical)
            else:
                key = canonical
        out[key] = value
    # TRL-style conversational prompt/completion rows: two message lists make one conversation;
    # in TRL's standard format (text prompt, text completion) the completion is the reply.
    prompt = out.get("prompt")
    if (isinstance(prompt, str) and isinstance(out.get("completion"), str) and out.get("final_text") is None
            and "messages" not in out):
        out["final_text"] = out.pop("completion")
    if isinstance(prompt, list) and "messages" not in out:
        completion = out.pop("completion", None)
        out["messages"] = list(prompt) + (completion if isinstance(completion, list) else
                                          [{"role": "assistant", "content": completion}] if completion is not None else [])
        out["prompt"] = None
    for name in _TEXT_COLUMNS:
        value = out.get(name)
        if isinstance(value, (dict, list)) and not (name == "prompt" and _is_messages(value)):
            text = _system_blocks_text(value) if name == "system_prompt" else None
            if text is None:
                raise _nested_text(source, index, name, name, value, "custom_id" in row)
            out[name] = text
    if "messages" in out and out["messages"] is not None:
        try:
            out["messages"] = nz.normalize_messages(out["messages"])
        except nz.BadMessageError as exc:
            raise _bad_message(source, index, str(exc)) from exc
    elif out.get("steps") is not None or out.get("prompt") is not None or out.get("final_text") is not None:
        out["messages"] = nz.messages_from_steps(out.get("prompt"), out.get("steps"), out.get("final_text"),
                                                 out.get("system_prompt"))
    messages = out.get("messages")
    if messages:
        if out.get("prompt") is None and "prompt" not in held:
            out["prompt"] = next((m["content"] for m in messages if m["role"] == "user"), None)
        if out.get("final_text") is None and "final_text" not in held:
            last = messages[-1]
            if last["role"] == "assistant" and not last["tool_calls"]:
                out["final_text"] = last["content"]
        if out.get("system_prompt") is None and "system_prompt" not in held and messages[0]["role"] == "system":
            out["system_prompt"] = messages[0]["content"]
    seeded = out.get("seeded")
    if isinstance(seeded, (list, tuple)):
        out["seeded"] = bool(seeded)
        out.setdefault("seeded_kinds", [str(s) for s in seeded])
    for name in ("reward", "gold_reward"):
        if name in out:
            try:
                out[name] = nz.to_float(out[name])
            except (TypeError, ValueError) as exc:
                raise SchemaError(
                    f"{source}: row {index} has {name}={out[name]!r}, which is not a number. "
                    f"A {name} must be a number in [0, 1] or null.",
                    row=index, column=name,
                ) from exc
    markers = out.get("markers")
    if isinstance(markers, str):
        markers = nz.loads_or_raw(markers)
    if isinstance(markers, Mapping):
        try:
            out["markers"] = {str(k): nz.to_float(v) for k, v in markers.items()}
        except (TypeError, ValueError) as exc:
            raise SchemaError(
                f"{source}: row {index} has a non-numeric marker in {dict(markers)!r}. Marker values must be numbers.",
                row=index, column="markers",
            ) from exc
    elif markers is not None:
        raise SchemaError(f"{source}: row {index} has markers={markers!r}; markers must be a dict of name to number.",
                          row=index, column="markers")
    for name in ("lineage", "calibration"):
        value = out.get(name)
        if isinstance(value, str):
            out[name] = nz.loads_or_raw(value)
    for col in COLUMNS:
        if col.kind == "json" and col.name in out and out[col.name] is not None:
            out[col.name] = nz.json_cell(col.name, out[col.name])
    return out


#: The texts a conversation is built from and the task's identity: a nested value there is another
#: shape (an API envelope under ``response``), never a text to train on or a task, and is refused.
#: Any other text column (a ``world_state`` given as a dict) keeps a nested value as its JSON text.
_TEXT_COLUMNS = ("scenario_id", "task_id", "prompt", "final_text", "system_prompt")


def _text_like(name: str, value: Any) -> bool:
    """Whether a nested value is read under the text column ``name``: a prompt of messages, system text blocks."""
    return (name == "prompt" and (isinstance(value, list) or _is_messages(value))) or (
        name == "system_prompt" and _system_blocks_text(value) is not None)


def _is_messages(value: Any) -> bool:
    """A chat message (a dict with a role) or a list of them: a prompt given as the conversation's opening.

    Without a ``messages`` field a list of them is the conversation (TRL's conversational
    format); beside one, the prompt keeps their JSON text, as it always has.
    """
    if isinstance(value, Mapping):
        return "role" in value
    return isinstance(value, list) and bool(value) and all(isinstance(m, Mapping) and "role" in m for m in value)


def _messages_dtype(dtype: Any) -> bool:
    """A column type that holds chat messages: a struct with a ``role`` field, or a list of them."""
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    return isinstance(inner, pl.Struct) and "role" in {f.name for f in inner.fields}


def _system_blocks_text(value: Any) -> str | None:
    """A system prompt given as text blocks, joined; None when it is anything else.

    Anthropic's Messages API (https://docs.anthropic.com/en/api/messages) takes ``system`` as a
    string or as ``[{"type": "text", "text": ...}]`` blocks.
    """
    if not isinstance(value, list) or not value:
        return None
    texts = [b if isinstance(b, str) else b.get("text") if isinstance(b, Mapping) and b.get("type") == "text" else None
             for b in value]
    return "".join(texts) if all(isinstance(t, str) for t in texts) else None  # type: ignore[arg-type]


def _nested_text(source: str, row: int, name: str, field: str, value: Any, batch: bool) -> SchemaError:
    """The error for a JSON object or list where the table holds text (``field``: the name it was given under)."""
    kind = "object" if isinstance(value, dict) else "list"
    where = name if field == name else f"{name} (its field {field!r})"
    message = (f"{source}: row {row} has {where} holding a JSON {kind}, not text; {name} must be text. "
               f"Map the text inside it (--map {name}={field}.<field>, mapping={{{name!r}: '{field}.<field>'}}; "
               "a number reaches into a list: .0.) or give the field another name, which keeps it as an extra column.")
    if batch and field == "response" and isinstance(value, Mapping):
        message += " " + _formats.refusal("openai_batch", "This").message
    return SchemaError(message, row=row, column=name, source=source)


def _check_text_columns(df: pl.DataFrame, source: str) -> pl.DataFrame:
    """A nested column (struct or list) under a text column or its alias is refused, naming its first row.

    Two exceptions, read as the row reader reads them: TRL's conversational ``prompt`` (a list of
    messages, without a ``messages`` column) and a system prompt of text blocks (joined).
    """
    aliases = alias_map()
    names: dict[str, str] = {}  # canonical -> the column it is read from, as ``_apply_aliases`` renames
    for column in df.columns:
        if column in COLUMN_BY_NAME:
            names[column] = column
    for alias, canonical in aliases.items():
        if alias in df.columns and canonical not in names:
            names[canonical] = alias
    fixes: list[pl.Series] = []
    for name in _TEXT_COLUMNS:
        found = names.get(name)
        if found is None or not df.schema[found].is_nested():
            continue
        column = found
        if name == "prompt" and ((isinstance(df.schema[column], pl.List) and "messages" not in names)
                                 or _messages_dtype(df.schema[column])):
            continue  # TRL's conversational prompt (_conversational_prompt builds the conversation), or messages
        bad = df[column].is_not_null()
        if name == "system_prompt":  # text blocks are joined (a system prompt per row: a short Python pass)
            joined = pl.Series(column, [None if v is None else _system_blocks_text(v) for v in df[column].to_list()],
                               dtype=pl.String)
            bad = bad & joined.is_null()
            if not bad.any():
                fixes.append(joined.alias(column))
                continue
        if bad.any():
            index = int(bad.arg_true()[0])
            raise _nested_text(source, index, name, column, df[column][index], "custom_id" in df.columns)
        fixes.append(pl.Series(column, [None] * df.height, dtype=pl.String))
    return df.with_columns(fixes) if fixes else df


def _column(name: str, values: list[Any], source: str) -> pl.Series:
    spec = COLUMN_BY_NAME.get(name)
    if spec is not None and spec.kind in ("plain", "json", "messages"):
        dtype = spec.dtype
        if spec.kind == "plain" and dtype == pl.String:
            values = [v if v is None or isinstance(v, str) else (nz.dumps(v) if isinstance(v, (dict, list)) else str(v))
                      for v in values]
        try:
            if spec.kind == "messages":
                return _arrow_series(name, values, _arrow_messages())
            return pl.Series(name, values, dtype=dtype, strict=True)
        except (TypeError, ValueError, pl.exceptions.PolarsError, pa.ArrowException) as exc:
            bad = next((v for v in values if v is not None and not _fits(v, dtype)), None)
            raise SchemaError(
                f"{source}: column {name!r} must hold {dtype} values, got {bad!r}. Fix that field or rename it.",
                column=name,
            ) from exc
    if spec is not None and spec.kind == "struct":
        return _struct_column(name, values, source)
    return _extra_column(name, values)


def _fits(value: Any, dtype: Any) -> bool:
    if dtype == pl.Boolean:
        return isinstance(value, bool)
    if dtype in (pl.Int64, pl.Float64):
        return isinstance(value, (int, float)) and not isinstance(value, bool) or dtype == pl.Float64 and isinstance(value, bool)
    return True


def _struct_column(name: str, values: list[Any], source: str) -> pl.Series:
    if all(v is None for v in values):
        return pl.Series(name, values, dtype=pl.Struct({}))
    try:
        series = pl.Series(name, values, strict=False)
    except Exception as exc:
        raise SchemaError(f"{source}: column {name!r} cannot be read as a struct ({exc}). Each cell must be a dict.",
                          column=name) from exc
    if name == "markers" and isinstance(series.dtype, pl.Struct):
        series = series.cast(pl.Struct({f.name: pl.Float64 for f in series.dtype.fields}))
    return series


def _arrow_series(name: str, values: list[Any], arrow_type: pa.DataType | None = None) -> pl.Series:
    """Build a (nested) column through Arrow: much faster than Polars' per-row construction."""
    array = pa.array(values, type=arrow_type)
    series = pl.from_arrow(array)
    assert isinstance(series, pl.Series)
    return series.alias(name)


def _extra_column(name: str, values: list[Any]) -> pl.Series:
    nested = any(isinstance(v, (dict, list)) for v in values)
    if nested:
        try:
            return _arrow_series(name, values)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            # Heterogeneous nested values: keep them, nested ones as canonical JSON text.
            return pl.Series(name, [v if v is None or isinstance(v, str) else nz.dumps(v) for v in values],
                             dtype=pl.String)
    try:
        return pl.Series(name, values, strict=True)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        # Mixed scalars (int and float, number and text): the widest type that holds them all.
        return pl.Series(name, values, strict=False)


# ------------------------------------------------------------------------------------------
# frame-level normalisation (columnar; cheap when the source already has our dtypes)
# ------------------------------------------------------------------------------------------


def _normalize_frame(df: pl.DataFrame, source: str, *, build_messages: bool = True) -> pl.DataFrame:
    df = _check_text_columns(df, source)
    df = _apply_aliases(df)
    df = _conversational_prompt(df)
    df = _steps_conversation(df, build_messages=build_messages)
    if "seeded" in df.columns and isinstance(df.schema["seeded"], pl.List) and "seeded_kinds" not in df.columns:
        # whileai 0.131 wrote seeded as the list of planted behaviours: keep them as seeded_kinds
        df = df.with_columns(pl.col("seeded").cast(pl.List(pl.String)).alias("seeded_kinds"))
    fixes: list[pl.Series] = []
    for col in COLUMNS:
        if col.name not in df.columns:
            continue
        current = df.schema[col.name]
        if col.kind == "plain" and current != col.dtype:
            fixes.append(_cast_plain(df[col.name], col.dtype, source))
        elif col.kind == "json" and current != pl.String:
            fixes.append(json_column(df[col.name]))
        elif col.kind == "messages" and current != _MESSAGES_DTYPE:
            fixes.append(messages_column(df[col.name], source))
        elif col.kind == "struct" and not isinstance(current, pl.Struct):
            values = [nz.loads_or_raw(v) for v in df[col.name].to_list()]
            fixes.append(_struct_column(col.name, values, source))
        elif col.name == "markers" and isinstance(current, pl.Struct) and any(f.dtype != pl.Float64 for f in current.fields):
            fixes.append(df[col.name].cast(pl.Struct({f.name: pl.Float64 for f in current.fields})))
    if fixes:
        df = df.with_columns(fixes)
    df = _check_roles(df, source)
    df = _derive_content(df, build_messages=build_messages)
    if df.height and not ({"scenario_id", "task_id", "prompt"} & set(df.columns)):
        raise no_identity_error(source, df.columns)
    return _add_task_key(df, source)


def json_column(series: pl.Series, *, drop_none: bool = False) -> pl.Series:
    """A nested column as canonical JSON text per cell: columnar where ``_columnar`` reads its dtype, else row by row."""
    fast = _columnar.canonical_json(series, drop_none=drop_none) if defaults.FAST_READ else None
    return fast if fast is not None else json_rows(series, drop_none=drop_none)


def json_rows(series: pl.Series, *, drop_none: bool = False) -> pl.Series:
    """The row path of :func:`json_column`: ``nz.dumps`` of each cell's Python value."""
    if drop_none:
        values = [None if v is None else nz.dumps(_drop_none(v)) for v in series.to_list()]
    else:
        values = [None if v is None else nz.dumps(v) for v in series.to_list()]
    return pl.Series(series.name, values, dtype=pl.String)


def messages_column(series: pl.Series, source: str) -> pl.Series:
    """A conversation column as ``List(MESSAGE)``: columnar where ``_columnar`` reads its shape, else row by row."""
    fast = _columnar.messages(series) if defaults.FAST_READ else None
    return fast if fast is not None else messages_rows(series, source)


def messages_rows(series: pl.Series, source: str) -> pl.Series:
    """The row path of :func:`messages_column`: ``nz.normalize_messages`` of each cell."""
    values = series.to_list()
    if series.dtype == pl.String:
        values = [nz.loads_or_raw(v) for v in values]
    built = []
    for index, value in enumerate(values):
        try:
            built.append(nz.normalize_messages(value))
        except nz.BadMessageError as exc:
            raise _bad_message(source, index, str(exc)) from exc
    return pl.Series(series.name, built, dtype=_MESSAGES_DTYPE)


def no_identity_error(source: str, have: Sequence[str]) -> SchemaError:
    """Rows with no task identity: the error names the columns the source has and the mapping that fixes it."""
    return SchemaError(
        f"{source} has no scenario_id, task_id or prompt (columns: {', '.join(list(have)[:20]) or 'none'}), so rows "
        "cannot be grouped into tasks. Name the column that identifies the task with --map task=COLUMN "
        "(mapping={'task': 'COLUMN'} in Python), or add a scenario_id (or task_id) field, or a prompt / user message.",
        source=source, reason="no_task_identity")


def _bad_message(source: str, index: int, what: str) -> SchemaError:
    return SchemaError(f"{source}: row {index} has a message whose {what}. Give tool_calls as a list of "
                       '{"id", "type": "function", "function": {"name", "arguments"}} objects.',
                       row=index, column="messages")


def _check_roles(df: pl.DataFrame, source: str) -> pl.DataFrame:
    """Every message's role must be one of ``ROLES``: a null or unknown role names its row (columnar).

    A role of ``ROLE_ALIASES`` (OpenAI's ``developer``) is read as its alias; the frame is returned.
    """
    if "messages" not in df.columns or df.height == 0 or df.schema["messages"] != _MESSAGES_DTYPE:
        return df
    # one role per message: an empty or null conversation gives none (on every Polars version)
    flat = df["messages"].list.eval(pl.element().struct.field("role")).explode(empty_as_null=False, keep_nulls=False)
    if flat.null_count() == 0 and bool(flat.is_in(ROLES).all()):
        return df
    if bool(flat.is_in(list(ROLE_ALIASES)).any()):
        role = pl.field("role")
        df = df.with_columns(pl.col("messages").list.eval(pl.element().struct.with_fields(
            role.replace(ROLE_ALIASES).alias("role"))))
        return _check_roles(df, source)
    roles = (df.select(pl.int_range(pl.len()).alias("_row"), pl.col("messages"))
             .explode("messages", empty_as_null=False, keep_nulls=False)
             .select("_row", pl.col("messages").struct.field("role").alias("_role"),
                     pl.col("messages").struct.field("extra").alias("_extra")))
    bad = roles.filter(pl.col("_role").is_null() | ~pl.col("_role").is_in(ROLES)).head(1)
    if bad.height:
        row, role = bad["_row"][0], bad["_role"][0]
        extra = nz.loads_or_raw(bad["_extra"][0])
        if role is None and isinstance(extra, Mapping) and extra.get("type") in _formats.RESPONSES_ITEM_TYPES:
            raise _formats.refusal("openai_responses", f"{source}: row {row}", row=row)
        raise SchemaError(
            f"{source}: row {row} has a message with role {role!r}; role must be one of {', '.join(ROLES)}. "
            "Fix that row's messages (a missing role is not guessed).", row=row, column="messages", value=role)
    return df


def _conversational_prompt(df: pl.DataFrame) -> pl.DataFrame:
    """TRL prompt/completion columns become the table's.

    Lists of messages make one conversation; a text completion beside a text prompt (TRL's
    standard, not conversational, format; vf-eval's completion mode) is the reply, ``final_text``.
    """
    if ("completion" in df.columns and df.schema["completion"] == pl.String and "final_text" not in df.columns
            and "messages" not in df.columns and df.schema.get("prompt") == pl.String):
        return df.rename({"completion": "final_text"})
    if "messages" in df.columns or "prompt" not in df.columns or not isinstance(df.schema["prompt"], pl.List):
        return df
    prompts = df["prompt"].to_list()
    completions = df["completion"].to_list() if "completion" in df.columns else [None] * df.height
    conversations = []
    for prompt, completion in zip(prompts, completions):
        turns = list(prompt or [])
        if isinstance(completion, list):
            turns.extend(completion)
        elif completion is not None:
            turns.append({"role": "assistant", "content": completion})
        conversations.append(nz.normalize_messages(turns))
    messages = _arrow_series("messages", conversations, _arrow_messages())
    return df.drop([c for c in ("prompt", "completion") if c in df.columns]).with_columns(messages)


def _steps_conversation(df: pl.DataFrame, *, build_messages: bool) -> pl.DataFrame:
    """Rows of whileai 0.131 whose ``steps`` is a list column (a Parquet file or a DataFrame of them).

    ``steps`` becomes its canonical JSON text and, without a ``messages`` column, the
    conversation is rebuilt from it as the JSONL readers rebuild it (``_jsonl_full``). A list
    column gives every step every field any step has, the absent ones null: those nulls are
    dropped (a JSONL line that writes a step's field as an explicit null reads with it).
    """
    if "steps" not in df.columns or not df.schema["steps"].is_nested():
        return df
    df = df.with_columns(json_column(df["steps"], drop_none=True))
    # a projection builds it too where a row's prompt or reply is to come from it (``_collect_projection``)
    fills = [name for name in ("prompt", "final_text") if name in df.columns and df[name].null_count()]
    if "messages" in df.columns or not (build_messages or fills):
        return df
    from whileai.table import _jsonl_full  # loads pyarrow, which the other frames never need

    return df.with_columns(_jsonl_full.steps_conversation(df))


def _apply_aliases(df: pl.DataFrame) -> pl.DataFrame:
    renames: dict[str, str] = {}
    for alias, canonical in alias_map().items():
        if alias in df.columns and canonical not in df.columns and canonical not in renames.values():
            renames[alias] = canonical
    return df.rename(renames) if renames else df


def _cast_plain(series: pl.Series, dtype: Any, source: str) -> pl.Series:
    if series.dtype == pl.Null:
        return series.cast(dtype)
    if dtype == pl.Boolean and isinstance(series.dtype, pl.List):
        return series.list.len().fill_null(0).gt(0).alias(series.name)
    if dtype == pl.String and isinstance(series.dtype, (pl.Struct, pl.List)):
        return json_column(series)
    try:
        return series.cast(dtype, strict=True)
    except Exception as exc:
        raise SchemaError(
            f"{source}: column {series.name!r} must hold {dtype} values, got dtype {series.dtype}. "
            f"Convert it (for reward: numbers in [0, 1]) or rename the column.",
            column=series.name,
        ) from exc


def _derive_content(df: pl.DataFrame, *, build_messages: bool = True) -> pl.DataFrame:
    """Fill messages from prompt/final_text and prompt/final_text from messages, columnar.

    A column the frame lacks is derived from the conversation, and a null cell of one it has is
    filled from it (as the JSONL row reader, ``_normalize_row``, fills a row): from a file, a list
    of rows or a table in memory alike.
    """
    cols = set(df.columns)
    if build_messages and "messages" not in cols and ("prompt" in cols or "final_text" in cols):
        parts = [(role, name) for role, name in (("system", "system_prompt"), ("user", "prompt"),
                                                 ("assistant", "final_text")) if name in cols]
        df = df.with_columns(_messages_from_parts(df, parts))
        cols.add("messages")
    if "messages" in cols:
        msgs = pl.col("messages")
        first = msgs.list.first()
        derived = {
            "prompt": msgs.list.eval(pl.element().filter(pl.element().struct.field("role") == "user")
                                     .struct.field("content")).list.first(),
            "system_prompt": pl.when(first.struct.field("role") == "system").then(first.struct.field("content")),
            "final_text": final_reply(msgs),
        }
        additions = []
        for name, value in derived.items():
            if name not in cols:
                if name == "system_prompt":
                    system = df.select(value.alias(name))[name]
                    if system.null_count() < df.height:  # only when some conversation opens with a system turn
                        additions.append(pl.lit(system))
                else:
                    additions.append(value.alias(name))
            elif df[name].null_count():  # a row without it gets the conversation's, as row by row
                additions.append(pl.coalesce(pl.col(name).cast(pl.String), value).alias(name))
        if additions:
            df = df.with_columns(additions)
    return df


def _messages_from_parts(df: pl.DataFrame, parts: list[tuple[str, str]]) -> pl.Series:
    """The conversation [system, user, assistant] from text columns, built with Arrow offsets.

    Null texts are skipped. Vectorised: every message lands at its offset by a numpy scatter, so
    1M rows take well under a second (a Polars ``concat_list`` of structs took about 20 s).
    """
    n = df.height
    # an empty system prompt opens no turn (as ``normalize.messages_from_steps`` builds it row by row)
    present = (np.column_stack([(df[name].is_not_null() & (df[name].cast(pl.String) != "").fill_null(True)
                                 if role == "system" else df[name].is_not_null()).to_numpy() for role, name in parts])
               if n else np.zeros((0, len(parts)), bool))
    counts = present.sum(axis=1)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    before = np.cumsum(present, axis=1) - present  # messages ahead of each part within its row
    roles: list[pl.Series] = []
    contents: list[pl.Series] = []
    positions: list[np.ndarray] = []
    for i, (role, name) in enumerate(parts):
        mask = present[:, i]
        contents.append(df[name].cast(pl.String).filter(pl.Series(mask)))
        roles.append(pl.Series([role], dtype=pl.String).gather(np.zeros(int(mask.sum()), dtype=np.int64)))
        positions.append((offsets[:-1] + before[:, i])[mask])
    total = int(offsets[-1])
    order = np.empty(total, dtype=np.int64)
    order[np.concatenate(positions) if positions else np.zeros(0, np.int64)] = np.arange(total)
    flat = pl.DataFrame({
        "role": pl.concat(roles) if roles else pl.Series([], dtype=pl.String),
        "content": pl.concat(contents) if contents else pl.Series([], dtype=pl.String),
    })[order].select(
        pl.col("role"), pl.col("content"),
        pl.lit(None, pl.String).alias("name"), pl.lit(None, pl.String).alias("tool_call_id"),
        pl.lit([], pl.List(TOOL_CALL)).alias("tool_calls"), pl.lit(None, pl.String).alias("extra"),
    )
    return list_series("messages", flat.to_struct("m").cast(MESSAGE), offsets).cast(_MESSAGES_DTYPE)


def _add_task_key(df: pl.DataFrame, source: str) -> pl.DataFrame:
    parts = [pl.col(c).cast(pl.String) for c in ("scenario_id", "task_id") if c in df.columns]
    key = pl.coalesce(parts) if parts else pl.lit(None, pl.String)
    df = df.with_columns(key.alias("task_key")) if parts else df.with_columns(pl.lit(None, pl.String).alias("task_key"))
    missing = df["task_key"].is_null()
    if missing.any():
        if "prompt" not in df.columns:
            raise _no_key_error(source, int(missing.arg_true()[0]))
        prompts = df.filter(missing)["prompt"]
        if prompts.null_count():
            index = int(df.with_row_index("_i").filter(missing & pl.col("prompt").is_null())["_i"][0])
            raise _no_key_error(source, index)
        uniq = prompts.unique()
        mapping = pl.DataFrame({"prompt": uniq, "_hash": [nz.prompt_hash(p) for p in uniq.to_list()]})
        df = (
            df.join(mapping, on="prompt", how="left", maintain_order="left")
            .with_columns(pl.coalesce("task_key", "_hash").alias("task_key"))
            .drop("_hash")
        )
    return df


def _no_key_error(source: str, index: int) -> SchemaError:
    return SchemaError(
        f"{source}: row {index} has neither scenario_id, task_id nor prompt, so it belongs to no task. "
        "Add a scenario_id (or task_id) to every row, or a prompt / user message.",
        row=index,
    )
