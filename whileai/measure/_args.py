"""Argument checks of the measure step, run before any data is touched."""

from __future__ import annotations

from typing import Any

from whileai._checks import check_choice, check_fraction
from whileai.errors import ArgumentError
from whileai.stats.intervals import INTERVAL_METHODS

__all__ = ["check_ci_method", "check_level", "check_probability"]


def check_level(level: Any) -> float:
    """A confidence level strictly between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < float(level) < 1.0:
        raise ArgumentError(f"level must be a number between 0 and 1, got {level!r}. Pass level=0.95 for a 95% interval.")
    return float(level)


def check_ci_method(value: Any, name: str = "ci_method") -> str:
    """An interval method name."""
    return check_choice(name, value, INTERVAL_METHODS)


def check_probability(name: str, value: Any, *, open_low: bool = True, open_high: bool = True) -> float:
    """A number between 0 and 1, ends open unless asked (a test size, a power, an effect)."""
    return check_fraction(name, value, open_low=open_low, open_high=open_high, fix="Pass a share such as 0.05.")
