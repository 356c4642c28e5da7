"""Argument checks the selectors share (the general ones live in ``whileai._checks``)."""

from __future__ import annotations

import math
from typing import Any

from whileai._checks import check_choice as check_choice
from whileai._checks import check_fraction as check_fraction
from whileai._checks import check_int as check_positive_int
from whileai.errors import ArgumentError

__all__ = ["check_band", "check_choice", "check_fraction", "check_positive_int"]


def check_band(band: Any, name: str = "band") -> tuple[float, float]:
    """A ``(lo, hi)`` pass-rate band with 0 <= lo <= hi <= 1, else an ArgumentError."""
    try:
        lo, hi = (float(v) for v in band)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} must be a pair (lo, hi) of pass rates, got {band!r}. Pass for example {name}=(0.2, 0.8).",
                            argument=name, value=band) from None
    if not (0.0 <= lo <= hi <= 1.0) or math.isnan(lo) or math.isnan(hi):
        raise ArgumentError(f"{name} must satisfy 0 <= lo <= hi <= 1, got {band!r}. Pass for example {name}=(0.2, 0.8).",
                            argument=name, value=band)
    return lo, hi
