"""One comparison of nested reports for the tests: equal numbers, NaN equal to NaN, key by key."""

from __future__ import annotations

import math
from typing import Any


def same(a: Any, b: Any, path: str = "") -> None:
    """Assert ``a`` equals ``b`` (dicts, lists, tuples, numbers); a failure names the key path."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), path
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"
