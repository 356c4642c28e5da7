"""Row dicts for user callbacks, built column by column.

A judge takes one row as a dict, so grading has to hand a million dicts to user code. Polars'
own ``iter_rows``/``to_list`` on a list-of-struct column (the conversation) costs tens of
microseconds per row; here every column becomes a flat Python list first (the conversation is
flattened with Arrow-style offsets: one ``to_list`` per message field, not per message), and the
dicts are zipped from those lists (``whileai.table.row_dicts``, what ``table.rows`` uses).

For the judge loop, :func:`lazy_rows` goes further: each row is a :class:`LazyRow` that converts
a column (for its whole chunk, once) only when some row of the chunk reads it, so a judge that
reads ``row["seeded"]`` never pays for the conversation.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import polars as pl

from whileai.defaults import CHUNK_ROWS
from whileai.table import JSON_COLUMNS, column_values, no_gc, row_dicts
from whileai.table.schema import DERIVED_COLUMNS

__all__ = ["LazyRow", "iter_row_chunks", "lazy_rows", "row_dicts"]


class _Chunk:
    """The columns of one slice of the table, each converted to a Python list on first demand.

    Thread-safe: a slow judge's worker threads may read the same chunk.
    """

    __slots__ = ("_lock", "_series", "_values", "names", "name_set")

    def __init__(self, df: pl.DataFrame, names: list[str]) -> None:
        self.names = names
        self.name_set = frozenset(names)
        self._series = {name: df[name] for name in names}
        self._values: dict[str, list[Any]] = {}
        self._lock = threading.Lock()

    def column(self, name: str) -> list[Any]:
        values = self._values.get(name)
        if values is None:
            with self._lock:
                values = self._values.get(name)
                if values is None:
                    with no_gc():
                        values = column_values(self._series[name])
                    self._values[name] = values
        return values


class LazyRow(dict):
    """A row dict whose values are read from the table only when something asks for them.

    ``row["final_text"]`` converts that one column for the chunk (once) and stores the value, so
    a judge that reads two fields pays for two; ``get`` and ``in`` work the same way. Anything
    that needs the whole row (iteration, ``len``, ``items``, equality, writes, copying, JSON
    encoding) first fills in every column, after which the object is an ordinary dict with the same content as
    ``table.rows`` gives (null values are absent, as there). Copies and pickles are plain dicts.
    """

    __slots__ = ("_chunk", "_index")
    _chunk: _Chunk | None
    _index: int

    def _load(self) -> None:
        chunk = getattr(self, "_chunk", None)
        if chunk is None:
            return
        self._chunk = None
        index = self._index
        setitem = dict.__setitem__
        contains = dict.__contains__
        for name in chunk.names:
            if not contains(self, name):
                value = chunk.column(name)[index]
                if value is not None:
                    setitem(self, name, value)

    def __missing__(self, key: Any) -> Any:
        chunk = getattr(self, "_chunk", None)
        if chunk is not None and key in chunk.name_set:
            value = chunk.column(key)[self._index]
            if value is not None:
                dict.__setitem__(self, key, value)
                return value
        raise KeyError(key)

    def _one(self, key: Any) -> bool:
        """Fill ``key`` alone if it is a column not read yet; True when the row now holds it."""
        if dict.__contains__(self, key):
            return True
        chunk = getattr(self, "_chunk", None)
        if chunk is not None and key in chunk.name_set:
            value = chunk.column(key)[self._index]
            if value is not None:
                dict.__setitem__(self, key, value)
                return True
        return False

    def get(self, key: Any, default: Any = None) -> Any:  # noqa: D102
        return dict.__getitem__(self, key) if self._one(key) else default

    def __contains__(self, key: object) -> bool:
        return self._one(key)

    def __iter__(self) -> Iterator[Any]:
        self._load()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator[Any]:
        self._load()
        return dict.__reversed__(self)

    def __len__(self) -> int:
        self._load()
        return dict.__len__(self)

    def keys(self):  # noqa: D102
        self._load()
        return dict.keys(self)

    def values(self):  # noqa: D102
        self._load()
        return dict.values(self)

    def items(self):  # noqa: D102
        self._load()
        return dict.items(self)

    def __repr__(self) -> str:
        self._load()
        return dict.__repr__(self)

    def __eq__(self, other: object) -> bool:
        self._load()
        if isinstance(other, LazyRow):
            other._load()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __setitem__(self, key: Any, value: Any) -> None:
        self._load()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        self._load()
        dict.__delitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:  # noqa: D102
        self._load()
        return dict.pop(self, key, *default)

    def popitem(self) -> tuple[Any, Any]:  # noqa: D102
        self._load()
        return dict.popitem(self)

    def setdefault(self, key: Any, default: Any = None) -> Any:  # noqa: D102
        self._load()
        return dict.setdefault(self, key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:  # noqa: D102
        self._load()
        dict.update(self, *args, **kwargs)

    def clear(self) -> None:  # noqa: D102
        self._chunk = None
        dict.clear(self)

    def copy(self) -> dict[str, Any]:  # noqa: D102
        self._load()
        return dict(dict.items(self))

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        import copy as _copy

        return _copy.deepcopy(self.copy(), memo)

    def __reduce__(self) -> Any:
        return (dict, (self.copy(),))

    def __reduce_ex__(self, protocol: Any) -> Any:
        return self.__reduce__()

    def __or__(self, other: Any) -> Any:
        return self.copy() | other

    def __ror__(self, other: Any) -> Any:
        return other | self.copy()

    def __ior__(self, other: Any) -> Any:
        self.update(other)
        return self


def _anchor(df: pl.DataFrame, names: list[str]) -> str | None:
    """A cheap column with no nulls, set on every lazy row up front (see :func:`lazy_rows`)."""
    best = None
    for name in names:
        dtype = df.schema[name]
        if df[name].null_count() == 0 and not dtype.is_nested() and name not in JSON_COLUMNS:
            if dtype.is_numeric() or dtype == pl.Boolean:
                return name
            best = best or name
    return best


def lazy_rows(df: pl.DataFrame) -> list[dict[str, Any]]:
    """Row dicts for user code, each filled from the table only as far as it is read.

    One column with no nulls is set on every row up front: C code that special-cases an empty
    dict (``json.dumps`` prints ``{}`` without asking for items) then sees a non-empty one and
    goes through ``items()``, which fills the rest.
    """
    names = [c for c in df.columns if c not in DERIVED_COLUMNS]
    chunk = _Chunk(df, names)
    anchor = _anchor(df, names)
    out: list[dict[str, Any]] = []
    append = out.append
    new = LazyRow
    with no_gc():
        if anchor is None:  # every column has a null somewhere: fill eagerly
            rows = row_dicts(df)
            return rows
        values = chunk.column(anchor)
        for i, value in enumerate(values):
            row = new(((anchor, value),))
            row._chunk = chunk
            row._index = i
            append(row)
    return out


def iter_row_chunks(df: pl.DataFrame, *, chunk_rows: int = CHUNK_ROWS, lazy: bool = True) -> Iterator[list[dict[str, Any]]]:
    """Yield the rows as lists of dicts, ``chunk_rows`` at a time (bounded memory)."""
    build = lazy_rows if lazy else row_dicts
    for start in range(0, df.height, chunk_rows):
        yield build(df.slice(start, chunk_rows))
