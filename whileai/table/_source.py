"""``source``: the one boundary every step reads rows through.

A step decides from a few columns (task, reward, reply, flags) and needs whole rows only for
the rows it keeps or writes. ``table.source(rows)`` gives it two verbs for any input
``table.frame`` reads (a frame in memory, a Parquet file or folder, JSONL or JSONL.gz, ``-``
for stdin, other tools' logs): ``read(columns)``, the columns it decides on, and
``take(positions)``, whole rows at given positions. The step has one code path; whether the
rows came from a file, and how the file is read, is decided here.

The speed paths sit behind one switch (``whileai.defaults.FAST_READ``, read at each call,
which also governs the columnar readers under ``table.frame``; ``source(rows,
decisions_first=...)`` overrides it here): a Parquet file whileai writes (and a JSONL file, spooled
once to a temporary Parquet file by ``table.spooled``) is read decision columns first, the
conversations reduced to their tool calls, and the kept rows' whole conversations last
(``whileai.table._decisions``). Off, or where that path does not apply, ``read`` is
``table.frame`` of the input (projected to ``columns`` for a file) and ``take`` gathers from
``table.frame`` of the whole input. Both give the same rows, reports and written bytes
(tests/table/test_source_same_rows.py); docs/performance.md has the measured gain.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import polars as pl

from whileai import defaults
from whileai.table import _read
from whileai.table._decisions import Fetch, parquet_decisions, take_rows
from whileai.table._kind import IntoRows
from whileai.table._parquet import parquet_file

__all__ = ["Source", "source"]

class Source:
    """Rows to read from: the decision columns (``read``), then whole rows at positions (``take``).

    Made by :func:`whileai.table.source`. Use it as a context manager: a JSONL input spooled to
    a temporary Parquet file is removed when the block ends, and an error raised while the step
    decides (no graded row, nothing eligible) waits for the check every message's role gets in
    the whole read, so a file with an unknown role raises the whole read's ``SchemaError``
    rather than a step's complaint about its rows.

    Attributes:
        rows: The input as given.
        decisions_first: Whether the decision-columns-first path may be taken (the switch).
        allow_empty: Whether no rows at all is a table (else ``table.frame``'s error).
    """

    def __init__(self, rows: IntoRows, *, decisions_first: bool | None = None, allow_empty: bool = False) -> None:
        """Wrap ``rows``; nothing is read until ``read``, ``take`` or ``frame`` is called."""
        self.rows = rows
        self.allow_empty = bool(allow_empty)
        self.decisions_first = defaults.FAST_READ if decisions_first is None else bool(decisions_first)
        self._stack = contextlib.ExitStack()
        self._spool: Any = None
        self._fetch: Fetch | None = None
        self._whole: pl.DataFrame | None = None
        self._groups: tuple[pl.LazyFrame, list[tuple[int, int]] | None] | None = None
        self._block: tuple[int, pl.DataFrame] | None = None
        self._projected: dict[tuple[str, ...], pl.DataFrame] = {}

    # -------------------------------------------------------------------------------- lifecycle

    def __enter__(self) -> Source:
        """The source itself; the block's end removes any temporary file."""
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Remove any temporary file; an error raised inside waits for the whole read's role check."""
        try:
            if exc is not None and isinstance(exc, Exception) and self._fetch is not None:
                try:
                    self._fetch.check_roles()
                except Exception as whole_read:
                    raise whole_read from None
        finally:
            self.close()

    def close(self) -> None:
        """Remove the temporary Parquet file a JSONL input was spooled to, if any."""
        self._stack.close()

    # -------------------------------------------------------------------------------- the verbs

    def read(self, columns: Sequence[str] | None, *, calls: Sequence[str] | None = None,
             calls_where: Callable[[pl.DataFrame], pl.Expr] | None = None) -> pl.DataFrame:
        """The rows' decision columns: a frame with at least ``columns`` (those the rows have) and ``task_key``.

        Every row is there, in input order, so a row's position here is its position for
        ``take``. With ``calls`` given, the switch on and ``messages`` among ``columns``, a
        Parquet file whileai writes (or a JSONL file, spooled to one) is read as those columns
        only, and its ``messages`` hold only the ``calls`` fields of each message's tool calls
        (``("name",)`` to count calls, ``("name", "arguments")`` to tell trajectories apart);
        ``take`` then reads the kept rows' whole conversations. With ``calls_where`` (an expression over the other columns) the
        tool calls are read only when some row it marks needs them, else ``messages`` is left
        out. Otherwise a file is read through ``table.frame(path, columns=columns)``, except that
        whole conversations (``messages`` without ``calls``) read every column once, which
        ``take`` then gathers from; rows in memory are ``table.frame(rows)`` (every column).

        Args:
            columns: The columns the step decides on (canonical names); None reads every column.
            calls: The tool-call fields a decision-columns read keeps in ``messages``; None keeps
                whole conversations (no decision-columns read).
            calls_where: Which rows need their tool calls (None: every row).

        Returns:
            A Polars DataFrame, as ``table.frame`` gives it.

        Raises:
            SchemaError: The rows cannot be read (``table.frame``'s message).
        """
        if columns is None:
            return self.frame()
        if calls is not None and self.decisions_first and self._fetch is None and "messages" in columns:
            found = parquet_decisions(self._spooled(), list(columns), calls=calls, calls_where=calls_where)
            if found is not None:
                narrow, self._fetch = found
                return narrow
        target = self._input()
        if not _is_file(target) or "messages" in columns or self._whole is not None:
            # whole conversations asked for: the whole read, once (take gathers from it too)
            return self.frame()
        return self._projection(target, columns)

    def take(self, positions: pl.Series | Sequence[int] | np.ndarray, *,
             columns: Sequence[str] | None = None) -> pl.DataFrame:
        """Whole rows at ``positions`` (ascending row numbers), as ``table.frame`` of every row gives them.

        After a decision-columns ``read``, the rows are read from the file at those positions
        only. A run of consecutive positions from a Parquet file (a chunk an export writes) is
        read row group by row group, decoding each once; with ``columns`` only those columns
        (plus what ``task_key`` needs) are decoded. Otherwise, and once the whole input has been
        read, the rows are gathered from ``table.frame`` of the whole input (read once and kept).

        Args:
            positions: Row numbers, ascending.
            columns: Only these columns (None: every column).

        Returns:
            The rows, in position order.
        """
        pos = positions if isinstance(positions, pl.Series) else pl.Series("_pos", np.asarray(positions, dtype=np.int64))
        if self._fetch is not None and columns is None:
            return self._fetch(pos)
        run = _run(pos)
        if run is not None and columns is not None and self._whole is None:
            groups = self._row_groups(self._spooled(), columns)
            if groups is not None:
                return self._slice(groups, columns, *run)
        target = self._input()
        whole = (self.frame() if columns is None or not _is_file(target) or self._whole is not None
                 else self._projection(target, columns))
        if run is not None:
            return whole.slice(run[0], run[1] - run[0])
        return take_rows(whole, pos)

    def frame(self) -> pl.DataFrame:
        """Every row and column: ``table.frame`` of the input, read once and kept."""
        if self._whole is None:
            self._whole = _read.frame(self._input(), allow_empty=self.allow_empty)
        return self._whole

    # -------------------------------------------------------------------------------- the input

    def _input(self) -> Any:
        """The input as read: the temporary Parquet file a JSONL input was spooled to, once made, else the rows."""
        return self._spool if self._spool is not None else self.rows

    def _spooled(self) -> Any:
        """A JSONL input spooled to a temporary Parquet file (switch on; ``table.spooled``), else the rows."""
        if self._spool is None:
            if not self.decisions_first:
                return self.rows
            from whileai.table._spool import spooled

            self._spool = self._stack.enter_context(spooled(self.rows))
        return self._spool

    def _projection(self, target: Any, columns: Sequence[str]) -> pl.DataFrame:
        key = tuple(columns)
        if key not in self._projected:
            self._projected[key] = _read.frame(target, columns=list(columns), allow_empty=self.allow_empty)
        return self._projected[key]

    def _row_groups(self, target: Any, columns: Sequence[str]) -> tuple[pl.LazyFrame, list[tuple[int, int]] | None] | None:
        """A lazy scan of a Parquet file, and its row groups where each is small enough to decode whole."""
        if self._groups is None:
            path = parquet_file(target)
            if path is None:
                return None
            self._groups = (_read.scan(path, columns=list(columns)), _row_group_bounds(path))
        return self._groups

    def _slice(self, groups: tuple[pl.LazyFrame, list[tuple[int, int]] | None], columns: Sequence[str], start: int,
               end: int) -> pl.DataFrame:
        """Rows ``start`` to ``end`` of a Parquet file, read row group by row group (each decoded once).

        A file whose row groups are at most ``EXPORT_BLOCK_ROWS`` rows is read one row group at a
        time (a chunk that straddles two takes the end of one and the start of the next), larger
        row groups chunk by chunk. The raw rows go through ``table.frame``, so the rows do not
        depend on the file's layout.
        """
        scan, bounds = groups
        if bounds is None:
            return _read.frame(scan.slice(start, end - start), columns=list(columns), allow_empty=True)
        pieces = []
        for g_start, g_len in bounds:
            if g_start + g_len <= start or g_start >= end:
                continue
            if self._block is None or self._block[0] != g_start:
                self._block = None  # let the last row group go before the next is decoded
                self._block = (g_start, scan.slice(g_start, g_len).collect())
            lo = max(start, g_start) - g_start
            pieces.append(self._block[1].slice(lo, min(end, g_start + g_len) - g_start - lo))
        if not pieces:
            return _read.frame(scan.head(0), columns=list(columns), allow_empty=True)
        raw = pl.concat(pieces, how="vertical") if len(pieces) > 1 else pieces[0]
        return _read.frame(raw, columns=list(columns), allow_empty=True)


def source(rows: IntoRows, /, *, decisions_first: bool | None = None, allow_empty: bool = False) -> Source:
    """The rows as a :class:`Source`: ``read(columns)`` to decide, ``take(positions)`` for whole rows.

    Every step reads its input through this one boundary (docs/architecture.md, "Reading
    rows"): a frame in memory, a Parquet file or folder, a JSONL/JSONL.gz file, ``-`` for
    stdin, and the other tools' logs ``table.frame`` reads.

    Args:
        rows: Anything ``table.frame`` reads.
        decisions_first: The switch of the one speed path: read a Parquet file (a JSONL file
            spooled to one) decision columns first and the kept rows last. Off, every input is
            read through ``table.frame``; the rows are the same. None (the default) takes
            ``whileai.defaults.FAST_READ`` as it is at the call, so setting that constant
            turns the path off for every step.
        allow_empty: Read no rows at all as an empty table instead of raising.

    Returns:
        A :class:`Source`; use it in a ``with`` block.

    Examples:
        >>> import polars as pl
        >>> rows = pl.DataFrame({"scenario_id": ["a", "a", "b"], "reward": [1.0, 0.0, 1.0]})
        >>> with source(rows) as src:
        ...     decided = src.read(["reward"])
        ...     src.take([0, 2])["reward"].to_list()
        [1.0, 1.0]
    """
    return Source(rows, decisions_first=decisions_first, allow_empty=allow_empty)


def _is_file(target: Any) -> bool:
    """Whether ``target`` names rows on disk, read again for each projection (stdin is read once, whole)."""
    return isinstance(target, (str, os.PathLike)) and str(target) != "-"


def _row_group_bounds(path: Path) -> list[tuple[int, int]] | None:
    """``(first row, rows)`` of each row group of a Parquet file, or None when one is over ``EXPORT_BLOCK_ROWS``."""
    import pyarrow.parquet as pq

    from whileai.defaults import EXPORT_BLOCK_ROWS

    try:
        meta = pq.ParquetFile(path).metadata
    except Exception:  # not readable here: table.frame says why
        return None
    out, start = [], 0
    for g in range(meta.num_row_groups):
        n = meta.row_group(g).num_rows
        if n > EXPORT_BLOCK_ROWS:
            return None
        out.append((start, n))
        start += n
    return out


def _run(positions: pl.Series) -> tuple[int, int] | None:
    """``(start, end)`` when ``positions`` are consecutive rows, else None."""
    n = positions.len()
    if n == 0:
        return None
    first, last = int(positions[0]), int(positions[-1])
    if last - first + 1 != n:
        return None
    if n > 1 and not bool((positions.diff().drop_nulls() == 1).all()):
        return None
    return first, last + 1
