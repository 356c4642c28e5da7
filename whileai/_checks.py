"""Argument checks shared by every step: one message shape, raised before data is touched.

``"<name> must be <constraint>, got <value!r>. <what to do>."`` (docs/architecture.md, "Errors").
Step packages import these; ``check_rng`` lives beside the kernels in ``whileai.stats.rng``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal, overload

import numpy as np

from whileai.errors import ArgumentError

__all__ = ["check_choice", "check_fraction", "check_int", "check_number", "check_strings"]


def check_choice(name: str, value: Any, choices: Iterable[str], *, fix: str = "Pass one of those.") -> str:
    """``value`` if it is one of ``choices``, else an ArgumentError naming the allowed values.

    Examples:
        >>> check_choice("mode", "rl", ("rl", "sft"))
        'rl'
    """
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        listed = ", ".join(repr(c) for c in options)
        raise ArgumentError(f"{name} must be one of {listed}, got {value!r}. {fix}".rstrip(),
                            argument=name, value=value)
    return value


@overload
def check_int(name: str, value: Any, *, minimum: int = ..., allow_none: Literal[False] = ..., fix: str = ...) -> int: ...


@overload
def check_int(name: str, value: Any, *, minimum: int = ..., allow_none: bool, fix: str = ...) -> int | None: ...


def check_int(name: str, value: Any, *, minimum: int = 1, allow_none: bool = False, fix: str = "") -> int | None:
    """``value`` as an int at or above ``minimum`` (or None when allowed), else an ArgumentError.

    Examples:
        >>> check_int("k", 4)
        4
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        fix = fix or f"Pass for example {name}={max(minimum, 1) * 4}" + (", or None." if allow_none else ".")
        raise ArgumentError(f"{name} must be an integer >= {minimum}, got {value!r}. {fix}",
                            argument=name, value=value)
    return int(value)


def check_fraction(name: str, value: Any, *, open_low: bool = False, open_high: bool = False, fix: str = "") -> float:
    """``value`` as a float between 0 and 1 (either end excluded on request), else an ArgumentError.

    Examples:
        >>> check_fraction("overlap", 0.8)
        0.8
    """
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
        and math.isfinite(float(value))
    if ok:
        v = float(value)
        ok = (v > 0.0 if open_low else v >= 0.0) and (v < 1.0 if open_high else v <= 1.0)
    if not ok:
        ends = {(False, False): "", (True, False): " (above 0)", (False, True): " (below 1)",
                (True, True): " (both ends excluded)"}[(open_low, open_high)]
        fix = fix or f"Pass for example {name}=0.8."
        raise ArgumentError(f"{name} must be a number between 0 and 1{ends}, got {value!r}. {fix}",
                            argument=name, value=value)
    return float(value)


def check_strings(name: str, value: Any) -> tuple[str, ...]:
    """A string or a sequence of strings as a tuple (None gives ()), else an ArgumentError."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ArgumentError(f"{name} must be a string or a list of strings, got {value!r}. Pass for example {name}=['a', 'b'].",
                        argument=name, value=value)


@overload
def check_number(name: str, value: Any, *, low: float | None = ..., high: float | None = ..., open_low: bool = ...,
                 open_high: bool = ..., allow_none: Literal[False] = ..., allow_inf: bool = ..., fix: str = ...) -> float: ...


@overload
def check_number(name: str, value: Any, *, low: float | None = ..., high: float | None = ..., open_low: bool = ...,
                 open_high: bool = ..., allow_none: bool, allow_inf: bool = ..., fix: str = ...) -> float | None: ...


def check_number(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                 open_low: bool = False, open_high: bool = False, allow_none: bool = False,
                 allow_inf: bool = False, fix: str = "") -> float | None:
    """``value`` as a float within ``[low, high]`` (either end open on request), else an ArgumentError.

    ``None`` passes through when ``allow_none``; a bool, NaN, or (unless ``allow_inf``) an infinite
    value never does.

    Examples:
        >>> check_number("timeout", 30, low=0, open_low=True)
        30.0
        >>> check_number("min_kappa", 0.6, low=-1, high=1)
        0.6
    """
    if value is None and allow_none:
        return None
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = not math.isnan(v) and (allow_inf or math.isfinite(v))
        ok = ok and (low is None or (v > low if open_low else v >= low))
        ok = ok and (high is None or (v < high if open_high else v <= high))
    if not ok:
        if low is not None and high is not None:
            what = f"a number in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
        elif low == 0 and open_low:
            what = "a positive number"
        elif low is not None:
            what = f"a number {'>' if open_low else '>='} {low:g}"
        elif high is not None:
            what = f"a number {'<' if open_high else '<='} {high:g}"
        else:
            what = "a finite number"
        what += " or None" if allow_none else ""
        fix = fix or f"Pass for example {name}={high if low is None and high is not None else max(low or 0, 0) + 1:g}."
        raise ArgumentError(f"{name} must be {what}, got {value!r}. {fix}", argument=name, value=value)
    return float(value)
