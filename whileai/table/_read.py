"""``frame``: every accepted input becomes one canonical Polars DataFrame.

The read runs in phases, each in its own module: loading the input as the source holds it
(``_load``: paths, Parquet in ``_parquet``, JSON lines in ``_jsonl_plain``, stdin, pandas, Arrow,
row dicts through the per-row reader ``_row_reader``, columns built in ``_cells``), the column
projection (``_project``), then the frame-level normalisation into the rollout table
(``_frame_norm``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from whileai import _shapes
from whileai.errors import EmptyInputError, InputFileError, SchemaError, WaiError, translate
from whileai.table import _formats, _mapping
from whileai.table._frame_norm import _normalize_frame, no_identity_error
from whileai.table._jsonl_plain import read_jsonl_rows
from whileai.table._kind import IntoRows
from whileai.table._load import _describe, _load
from whileai.table._parquet import _unreadable_parquet, parquet_files, scan_parquet_target
from whileai.table._project import _select

__all__ = ["IntoRows", "frame", "parquet_files", "read_jsonl_rows", "scan"]


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
        df = _load_mapped(rows, columns, scorer, mapping, source)
        # Rebuilding the conversation from prompt/final_text is only worth it when it was asked for.
        build_messages = not columns or "messages" in columns
        if df.height == 0:
            if allow_empty:
                return _normalize_frame(df, source, build_messages=build_messages)
            raise EmptyInputError(
                f"{source} holds no rows. Pass a file or list with at least one rollout.", source=source
            )
        out = _normalize_naming_columns(df, rows, columns, scorer, mapping, source, build_messages=build_messages)
        return _mapping.choose_scorer(out, scorer, source) if scorer else out


frame.__doc__ = (frame.__doc__ or "").replace("{SHAPES}", _shapes.summary())  # the registry's list


def _is_file(rows: IntoRows) -> bool:
    """Whether ``rows`` is a path other than stdin (one that can be read again)."""
    return isinstance(rows, (str, os.PathLike)) and str(rows) != "-"


def _load_mapped(rows: IntoRows, columns: Sequence[str] | None, scorer: str | None,
                 mapping: Mapping[str, str] | None, source: str) -> pl.DataFrame:
    """The input loaded (``_load``) and mapped; a projected read of a file holding none of the asked fields reads it whole."""
    df = _load(rows, columns, scorer, mapped=bool(mapping))
    if mapping:
        df = _mapping.apply(df, mapping, source)
    if df.height == 0 and df.width == 0 and columns and _is_file(rows):
        df = _load(rows, None, scorer, mapped=bool(mapping))  # no asked field in the file: read it whole to say what it holds
        if mapping:
            df = _mapping.apply(df, mapping, source)
    return df


def _normalize_naming_columns(df: pl.DataFrame, rows: IntoRows, columns: Sequence[str] | None, scorer: str | None,
                              mapping: Mapping[str, str] | None, source: str, *, build_messages: bool) -> pl.DataFrame:
    """``_normalize_frame``; rows without task identity from a projected read name every column the file has."""
    try:
        return _normalize_frame(df, source, build_messages=build_messages)
    except SchemaError as exc:
        if columns and exc.reason == "no_task_identity" and _is_file(rows):  # a projected read: name the columns the file has
            raise no_identity_error(source, _load(rows, None, scorer, mapped=bool(mapping)).columns) from None
        raise


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
