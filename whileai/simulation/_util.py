"""Small helpers shared by the simulate modules: stable hashes and argument checks.

Every draw in the simulator is a hash of named parts (the seed, a cell, a rollout index), never a
shared random stream, so a rollout's fate does not depend on which thread ran it or in what order,
and the same seed gives the same run at any concurrency.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable
from typing import Any

from whileai._checks import check_choice as check_choice
from whileai._checks import check_fraction as check_share
from whileai._checks import check_int as check_int
from whileai.errors import UnknownArgumentError, WaiError
from whileai.table.normalize import dumps as canonical_json

__all__ = [
    "UnknownArgumentError",
    "check_choice",
    "check_int",
    "check_share",
    "h01",
    "hint",
    "hkey",
    "reject_unknown",
    "short_hash",
]

_SEP = "\x1f"


def hint(*parts: Any) -> int:
    """A stable 64-bit integer hash of the parts (blake2b; the same on every machine and run)."""
    text = _SEP.join(map(str, parts))
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def h01(*parts: Any) -> float:
    """A stable uniform draw in [0, 1) from the parts."""
    return hint(*parts) / 18446744073709551616.0


def hkey(*parts: Any, chars: int = 16) -> str:
    """A stable hex key of the parts, ``chars`` characters long."""
    text = _SEP.join(str(p) for p in parts)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()[:chars]


def short_hash(text: str, chars: int = 16) -> str:
    """The first ``chars`` hex characters of sha256 of ``text`` (system prompt fingerprints)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def canonical(value: Any) -> str:
    """Canonical JSON text (``table.canonical_json``), the form every JSON column holds."""
    return canonical_json(value)


def reject_unknown(function: str, unknown: dict[str, Any], known: Iterable[str]) -> None:
    """Raise :class:`UnknownArgumentError` naming every unknown keyword and the nearest known one."""
    if not unknown:
        return
    known = sorted(known)
    parts = []
    for name in sorted(unknown):
        near = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    raise UnknownArgumentError(
        f"{function}() got unexpected keyword argument{'s' if len(parts) > 1 else ''} {', '.join(parts)}. "
        f"It takes: {', '.join(known)}.",
        value=sorted(unknown),
    )


def describe_error(exc: BaseException) -> str:
    """``TypeName: message`` for an exception, one line, at most 300 characters."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def is_wai_error(exc: BaseException) -> bool:
    """True for an error whileai raised on purpose."""
    return isinstance(exc, WaiError)
