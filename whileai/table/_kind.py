"""What a step hands back: rows in the kind they came in, and the run context they carry.

The fluent data objects (``whileai.data``) sit above the steps, so steps never import them: a
step that stamps rows returns them in the kind it was given, recognised by shape (a ``.df``
DataFrame and a ``.meta`` mapping), and a step that makes new rows returns a
:class:`StepResult` that the fluent layer wraps.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, Union, overload

import polars as pl

if TYPE_CHECKING:  # pragma: no cover - pandas is optional, never imported at run time; pyarrow loads with Arrow rows
    import pandas as pd
    import pyarrow as pa

__all__ = ["Fluent", "FluentT", "HasFrame", "IntoRows", "StepResult", "is_fluent", "is_ray_dataset", "like_input", "meta_of"]


class HasFrame(Protocol):
    """Anything holding its rows as a DataFrame in ``.df`` (the fluent objects, ``PreferencePairs``)."""

    @property
    def df(self) -> pl.DataFrame: ...  # noqa: D102 - the rows


class Fluent(HasFrame, Protocol):
    """A fluent data object as the steps recognise it: ``.df`` plus the run context in ``.meta``."""

    @property
    def meta(self) -> Mapping[str, Any]: ...  # noqa: D102 - the run context


FluentT = TypeVar("FluentT", bound=Fluent)
"""A fluent object's own class, which a stamping step hands back."""

#: Everything a step accepts as rows: a frame (Polars or pandas), an Arrow table, a path (``-`` is
#: stdin), row dicts or an object holding its rows in ``.df``.
IntoRows = Union[pl.DataFrame, pl.LazyFrame, "pa.Table", "pa.RecordBatch", "pd.DataFrame", str, "os.PathLike[str]",
                 Iterable[Mapping[str, Any]], HasFrame]


class StepResult(NamedTuple):
    """Rows a step produced, the report that says what it did, and the run context it adds."""

    df: pl.DataFrame
    """The rollout table the step produced."""
    report: Any = None
    """The step's typed report (a ``whileai.report.Report``)."""
    meta: Mapping[str, Any] | None = None
    """Run context the step adds (``system_prompt``, ``tools``, ``mode``...), merged over the input's."""
    lost: pl.DataFrame | None = None
    """Rows that never landed (simulate's lost rollouts), kept out of ``df``."""


def is_fluent(source: Any) -> bool:
    """Whether ``source`` is a fluent data object (a ``.df`` DataFrame and a ``.meta`` mapping)."""
    return isinstance(getattr(source, "df", None), pl.DataFrame) and isinstance(getattr(source, "meta", None), Mapping)


def meta_of(source: Any) -> dict[str, Any]:
    """The run context a fluent data object carries (``system_prompt``, ``tools``), else empty."""
    meta = getattr(source, "meta", None)
    return dict(meta) if isinstance(meta, Mapping) else {}


@overload
def like_input(source: FluentT, df: pl.DataFrame, report: Any = None) -> FluentT: ...
@overload
def like_input(source: pl.DataFrame | pl.LazyFrame | str | os.PathLike[str], df: pl.DataFrame,
               report: Any = None) -> pl.DataFrame: ...
@overload
def like_input(source: Iterable[Mapping[str, Any]], df: pl.DataFrame, report: Any = None) -> list[dict[str, Any]]: ...
@overload
def like_input(source: pa.Table | pa.RecordBatch | HasFrame, df: pl.DataFrame, report: Any = None) -> Any: ...
def like_input(source: Any, df: pl.DataFrame, report: Any = None) -> Any:
    """Return ``df`` in the kind ``source`` came as: the one rule for steps that stamp rows.

    The same fluent class (meta and warnings carried, ``report`` attached when given), a
    DataFrame, a pyarrow Table, or a list of row dicts (wire shape). Paths and LazyFrames come
    back as DataFrames. ``source`` itself is never changed.
    """
    from whileai.table._write import rows, to_arrow

    if is_fluent(source):
        return type(source)(df, meta=source.meta, report=report if report is not None else getattr(source, "report", None),
                            warnings=list(getattr(source, "warnings", []) or []))
    if _is_arrow(source):
        return to_arrow(df)
    if isinstance(source, (pl.DataFrame, pl.LazyFrame, str)) or hasattr(source, "__fspath__"):
        return df
    if isinstance(source, Sequence) or (hasattr(source, "__iter__") and not isinstance(source, Mapping)):
        return rows(df)
    return df


def is_ray_dataset(obj: Any) -> bool:
    """True when ``obj`` is a ``ray.data.Dataset`` (checked by type name, without importing ray).

    Examples:
        >>> is_ray_dataset([{"task_id": "a", "reward": 1.0}])
        False
    """
    return any(cls.__name__ in ("Dataset", "MaterializedDataset") and cls.__module__.startswith("ray.data")
               for cls in type(obj).__mro__)


def _is_arrow(obj: Any) -> bool:
    """True for a pyarrow Table or RecordBatch; never imports pyarrow (none exists before it loads)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(obj, (pa.Table, pa.RecordBatch))
