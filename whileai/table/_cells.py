"""Column building: a list of cells, or a column of another type, as the table's column.

The row reader (``_row_reader``) builds each column of its normalised rows here; the frame step
(``_frame_norm``) casts a column it was given here too. ``json_column`` and ``messages_column``
take the columnar path (``_columnar``) where it reads the column's type, else the row path.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import polars as pl

from whileai import defaults
from whileai._lazy import module as deferred
from whileai.errors import SchemaError
from whileai.table import _columnar, _rowdicts
from whileai.table import normalize as nz
from whileai.table.schema import COLUMN_BY_NAME, MESSAGE

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = deferred("pyarrow")  # loads with the first Arrow input or output (whileai/_lazy.py)

__all__ = ["json_column", "json_rows", "messages_column", "messages_rows"]


_MESSAGES_DTYPE = pl.List(MESSAGE)


@functools.cache
def _arrow_messages() -> pa.DataType:
    """The Arrow type of a messages column (built on first use: it needs pyarrow)."""
    return pl.Series("m", [], dtype=_MESSAGES_DTYPE).to_arrow().type


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


def json_column(series: pl.Series, *, drop_none: bool = False) -> pl.Series:
    """A nested column as canonical JSON text per cell: columnar where ``_columnar`` reads its dtype, else row by row."""
    fast = _columnar.canonical_json(series, drop_none=drop_none) if defaults.FAST_READ else None
    return fast if fast is not None else json_rows(series, drop_none=drop_none)


def json_rows(series: pl.Series, *, drop_none: bool = False) -> pl.Series:
    """The row path of :func:`json_column`: ``nz.dumps`` of each cell's Python value."""
    if drop_none:
        values = [None if v is None else nz.dumps(_rowdicts.drop_none(v)) for v in series.to_list()]
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


def _bad_message(source: str, index: int, what: str) -> SchemaError:
    return SchemaError(f"{source}: row {index} has a message whose {what}. Give tool_calls as a list of "
                       '{"id", "type": "function", "function": {"name", "arguments"}} objects.',
                       row=index, column="messages")
