"""The report base: a pydantic model that prints itself, indexes like a dict and dumps to JSON.

Every measure, select and guard call returns a subclass. ``str(report)`` is the line or table a
person reads; ``report["ok"]`` reads a field; ``report.to_json()`` is what the CLI's ``--json``
prints. Warnings are data on the report (``report.warnings``), named after what to do.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Report", "fmt_ci", "fmt_num"]


class Report(BaseModel):
    """Base of every typed report.

    Subclasses declare their fields (with attribute docstrings) and override :meth:`render`. An
    undeclared field is refused (``extra="forbid"``), so a misspelt key fails where it is written.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", use_attribute_docstrings=True)

    warnings: list[str] = Field(default_factory=list)
    """What to look at or do, one sentence each."""

    def render(self) -> str:
        """The text a person reads; subclasses override."""
        lines = [f"{type(self).__name__}"]
        for key, value in self.to_dict().items():
            if key != "warnings":
                lines.append(f"  {key}: {value}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields:
            return getattr(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in type(self).model_fields

    def get(self, key: str, default: Any = None) -> Any:
        """Read a field like ``dict.get``."""
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        """The field names, as a dict's keys."""
        return list(self.to_dict().keys())

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return iter(self.keys())

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data (NaN becomes None)."""
        return _jsonable(self.model_dump(mode="python"))

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON text, what ``--json`` prints."""
        return json.dumps(self.to_dict(), indent=indent, default=str)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, BaseModel):
        return _jsonable(value.model_dump(mode="python"))
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _jsonable(value.item())
    return value


def fmt_num(value: float | None, digits: int = 2) -> str:
    """A number for a report line; NaN or None prints as ``n/a``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def fmt_ci(ci: tuple[float, float] | None, digits: int = 2) -> str:
    """An interval as ``[lo..hi]``; a missing one prints ``[n/a]``."""
    if ci is None or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in ci):
        return "[n/a]"
    return f"[{ci[0]:.{digits}f}..{ci[1]:.{digits}f}]"
