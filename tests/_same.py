"""One comparison of nested reports for the tests: equal numbers, NaN equal to NaN, key by key."""

from __future__ import annotations

import math
from typing import Any


def same(a: Any, b: Any, path: str = "", *, rel: float = 0.0) -> None:
    """Assert ``a`` equals ``b`` (dicts, lists, tuples, numbers); a failure names the key path.

    ``rel`` > 0 lets two floats differ by that relative amount (last-bit drift, below).
    """
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            same(a[k], b[k], f"{path}.{k}", rel=rel)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]", rel=rel)
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), path
    elif rel and isinstance(a, float) and isinstance(b, (int, float)):
        assert math.isclose(a, b, rel_tol=rel, abs_tol=rel), f"{path}: {a!r} != {b!r} (rel {rel:g})"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"
