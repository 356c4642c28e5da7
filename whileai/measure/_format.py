"""How a measure report prints a signed number and an interval."""

from __future__ import annotations

import math

__all__ = ["fmt_interval", "fmt_signed", "nan_to_none"]


def fmt_signed(value: float, digits: int = 3) -> str:
    """``+0.123`` / ``-0.050`` / ``n/a``."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:+.{digits}f}"


def fmt_interval(ci: tuple[float, float] | None, digits: int = 3, *, signed: bool = False) -> str:
    """``[lo..hi]`` (signed when asked) or ``[n/a]``."""
    if ci is None or any(v is None or not math.isfinite(v) for v in ci):
        return "[n/a]"
    if signed:
        return f"[{ci[0]:+.{digits}f}..{ci[1]:+.{digits}f}]"
    return f"[{ci[0]:.{digits}f}..{ci[1]:.{digits}f}]"


def nan_to_none(ci: tuple[float, float]) -> tuple[float, float] | None:
    """An interval with a NaN end becomes None (JSON-able, prints n/a)."""
    return None if any(not math.isfinite(v) for v in ci) else (float(ci[0]), float(ci[1]))
