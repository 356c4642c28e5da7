"""The base of the typed blocks nested in the selection reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ConfigDict

from whileai.report import Documented

__all__ = ["Block"]


class Block(Documented):
    """A nested report block with a fixed shape that also reads like the dict it replaced.

    ``block["key"]``, ``block.get("key")``, ``block.keys()`` and ``block.items()`` read its fields,
    and a block equals the dict of its fields, so code written against the dict keeps working; it
    serialises (``model_dump``, a report's JSON) to the same keys.
    """

    model_config = ConfigDict(extra="forbid")

    #: Old field names that still read (``block["n"]``), each mapped to the field that replaced it.
    renamed: ClassVar[dict[str, str]] = {}

    def __getitem__(self, key: str) -> Any:
        fields = type(self).model_fields
        if key in fields:
            return getattr(self, key)
        if key in self.renamed and self.renamed[key] in fields:  # an old name reads the field that replaced it
            return getattr(self, self.renamed[key])
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in type(self).model_fields or key in self.renamed)

    def get(self, key: str, default: Any = None) -> Any:
        """Read a field like ``dict.get``."""
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        """The field names, as a dict's keys."""
        return list(type(self).model_fields)

    def items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` per field, as a dict's items."""
        return [(name, getattr(self, name)) for name in type(self).model_fields]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.model_dump() == dict(other)
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dict it replaced
