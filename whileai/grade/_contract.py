"""The judge contract: what a judge may return, and what each return becomes on the row.

A judge is any callable taking one row dict. It returns a number in [0, 1], a bool, or a dict
``{"reward": ..., "markers": {...}, "reason": ..., ...}``. Every outcome maps to one
``judge_status`` (the whileai 0.131 table, reference section 2.2):

========================================  =================  ===================================
judge returns                             judge_status       reward / judge_meta
========================================  =================  ===================================
0, 1, True, any float in [0, 1]           ok                 that number (bool as 1.0 / 0.0, any scale)
{"reward": x, "reason", "markers", ...}   ok                 x; extras go to judge_meta
{"score": x}                              ok                 x
a dict with no reward                     missing_reward     null; {"returned_keys": [...]}
"abc", None, [1], ...                     invalid_result     null; {"returned_type": "str"}
2.0, -1, nan                              invalid_result     null; {"reward_out_of_range": 2.0}
{"reward": "yes"}                         invalid_result     null; {"reward_type": "str"}
raises                                    error              null; {"error": "RuntimeError: ..."}
runs past ``timeout``                     timeout            null; {"timeout_s": t}
========================================  =================  ===================================

A failed row keeps ``reward`` null: it is never coerced to 0, so a judge outage cannot read as
a wave of failures.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from whileai.errors import ArgumentError, JudgeError

__all__ = [
    "STATUSES",
    "Verdict",
    "check_judge",
    "check_scale",
    "error_verdict",
    "judge_name_of",
    "normalize_judge_result",
    "timeout_verdict",
]

#: Every judge_status a row can carry, in report order.
STATUSES = ("ok", "missing_reward", "invalid_result", "error", "timeout")

# Keys of a judge's dict that land in their own columns; every other key goes to judge_meta.
_OWN_KEYS = frozenset({"reward", "score", "reason", "markers", "failure_class", "judge_meta"})


class Verdict(NamedTuple):
    """One row's grading outcome, ready to be written as columns."""

    reward: float | None
    status: str
    reason: str | None
    markers: dict[str, float | None] | None
    meta: dict[str, Any] | None
    failure_class: str | None


def judge_name_of(judge: Any, name: str | None = None) -> str:
    """The name a judge is recorded under: ``name=``, else a ``name`` attribute, else ``__name__``.

    A lambda is recorded as ``"lambda_judge"``, an instance of a class (a verifier) by its class
    name, a ``functools.partial`` by the function it wraps.

    Examples:
        >>> judge_name_of(lambda row: 1)
        'lambda_judge'
        >>> def exact(row): return 1
        >>> judge_name_of(exact)
        'exact'
    """
    if name is not None:
        return str(name)
    attr = getattr(judge, "name", None)
    if isinstance(attr, str) and attr:
        return attr
    if isinstance(judge, functools.partial):
        return judge_name_of(judge.func)
    fn_name = getattr(judge, "__name__", None)
    if isinstance(fn_name, str):
        return "lambda_judge" if fn_name == "<lambda>" else fn_name
    return type(judge).__name__


def check_judge(judge: Any, what: str = "judge") -> None:
    """Raise :class:`JudgeError` unless ``judge`` is callable."""
    if judge is None:
        raise JudgeError(
            f"{what} must be a callable taking a row dict, got None. "
            f"Pass {what}=lambda row: {{'reward': ...}}, a verifier such as wai.verify.MathEqual(), "
            "or wai.rubric_judge(rubric, endpoint).",
            value=judge,
        )
    if not callable(judge):
        raise JudgeError(
            f"{what} must be a callable taking a row dict, got {type(judge).__name__} {judge!r:.80}. "
            "Wrap it in a function: lambda row: {'reward': ...}.",
            value=judge,
        )


def check_scale(scale: Any) -> tuple[float, float] | None:
    """Validate ``scale=(lo, hi)``: two finite numbers with hi > lo, or None."""
    if scale is None:
        return None
    try:
        lo, hi = (float(v) for v in scale)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"scale must be a pair (lo, hi) of numbers, got {scale!r}. Pass scale=(1, 5) for example.") from exc
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        raise ArgumentError(f"scale must have finite lo < hi, got {scale!r}. Pass scale=(1, 5) for example.")
    return lo, hi


def is_async_judge(judge: Any) -> bool:
    """Whether calling ``judge`` gives a coroutine (an ``async def`` function or ``__call__``)."""
    if inspect.iscoroutinefunction(judge):
        return True
    call = getattr(judge, "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


def _type_name(value: Any) -> str:
    return type(value).__name__


def _reward(value: Any, scale: tuple[float, float] | None) -> tuple[float | None, dict[str, Any] | None]:
    """A reward value as a float in [0, 1], or None with the judge_meta saying why."""
    kind = type(value)
    if kind is bool or isinstance(value, np.bool_):  # a verdict, not a rating: scale= never maps it
        return (1.0 if value else 0.0), None
    if kind is int or kind is float:
        x = float(value)
    elif not isinstance(value, (str, bytes)) and _is_real_number(value):
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            return None, {"reward_type": _type_name(value)}
    else:
        return None, {"reward_type": _type_name(value)}
    if scale is not None:
        lo, hi = scale
        if not (lo <= x <= hi):
            return None, {"reward_out_of_range": _plain(x), "scale": [lo, hi]}
        y = (x - lo) / (hi - lo)
        return (y if y in (0.0, 1.0) else round(y, 6)), {"rating": _plain(x), "scale": [lo, hi]}
    if not (0.0 <= x <= 1.0):  # also false for NaN
        return None, {"reward_out_of_range": _plain(x)}
    return x, None


def _is_real_number(value: Any) -> bool:
    import numbers

    return isinstance(value, numbers.Real)


def _plain(x: float) -> Any:
    return None if math.isnan(x) else x


def _markers(value: Any) -> tuple[dict[str, float | None] | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, Mapping):
        return None, f"markers must be a dict of name to number, got {_type_name(value)}"
    out: dict[str, float | None] = {}
    for key, v in value.items():
        if v is None:
            out[str(key)] = None
            continue
        if isinstance(v, (str, bytes)) or not _is_real_number(v):
            return None, f"marker {key!r} must be a number, got {_type_name(v)} {v!r:.40}"
        out[str(key)] = float(v)
    return out, None


def normalize_judge_result(raw: Any, *, scale: tuple[float, float] | None = None) -> Verdict:
    """Map what a judge returned onto the row's reward, status, reason, markers and judge_meta.

    Args:
        raw: The judge's return value.
        scale: ``(lo, hi)``: rewards are ratings on this scale, mapped to [0, 1] as
            ``(x - lo) / (hi - lo)``; a rating outside it is ``invalid_result``. A bool is a
            verdict, not a rating: True is 1.0 and False 0.0 under any scale.

    Returns:
        A :class:`Verdict`.

    Examples:
        >>> normalize_judge_result(True).reward
        1.0
        >>> normalize_judge_result({"foo": 1}).status
        'missing_reward'
        >>> normalize_judge_result(2.0).meta
        {'reward_out_of_range': 2.0}
    """
    kind = type(raw)
    if kind is dict and len(raw) == 1:  # the common {"reward": x}
        value = raw.get("reward")
        vkind = type(value)
        if (vkind is int or vkind is float or vkind is bool) and 0 <= value <= 1 and scale is None:
            return Verdict(float(value), "ok", None, None, None, None)
    if kind is float or kind is int or kind is bool:
        reward, why = _reward(raw, scale)
        if reward is None:
            return Verdict(None, "invalid_result", _invalid_reason(raw, why, scale), None, why, None)
        return Verdict(reward, "ok", None, None, why, None)
    if isinstance(raw, Mapping):
        return _from_mapping(raw, scale)
    if not isinstance(raw, (str, bytes)) and (_is_real_number(raw) or isinstance(raw, np.bool_)):
        reward, why = _reward(raw, scale)
        if reward is None:
            return Verdict(None, "invalid_result", _invalid_reason(raw, why, scale), None, why, None)
        return Verdict(reward, "ok", None, None, why, None)
    meta = {"returned_type": _type_name(raw)}
    return Verdict(None, "invalid_result",
                   f"the judge returned {_type_name(raw)} {raw!r:.60}, not a number, a bool or a dict with 'reward'",
                   None, meta, None)


def _invalid_reason(raw: Any, why: dict[str, Any] | None, scale: tuple[float, float] | None) -> str:
    if why and "reward_out_of_range" in why:
        span = f"[{scale[0]:g}, {scale[1]:g}] (scale=)" if scale else "[0, 1]"
        return f"the judge returned reward {raw!r}, outside {span}"
    return f"the judge returned reward {raw!r:.60} of type {_type_name(raw)}, not a number or a bool"


def _from_mapping(raw: Mapping[str, Any], scale: tuple[float, float] | None) -> Verdict:
    if scale is None and len(raw) == 2 and "reward" in raw and "reason" in raw:
        value, reason = raw["reward"], raw["reason"]
        vkind = type(value)
        if (vkind is int or vkind is float or vkind is bool) and 0 <= value <= 1 and (reason is None or type(reason) is str):
            return Verdict(float(value), "ok", reason, None, None, None)
    meta: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _OWN_KEYS:
            meta[str(key)] = value
    inner = raw.get("judge_meta")
    if isinstance(inner, Mapping):
        meta.update({str(k): v for k, v in inner.items()})
    elif inner is not None:
        meta["judge_meta"] = inner
    reason = raw.get("reason")
    reason_text = None if reason is None else (reason if isinstance(reason, str) else str(reason))
    failure_class = raw.get("failure_class")
    failure = None if failure_class is None else str(failure_class)
    markers, marker_problem = _markers(raw.get("markers"))
    reward_key = "reward" if "reward" in raw else "score" if "score" in raw else None
    value = raw[reward_key] if reward_key is not None else None
    if value is None:
        meta["returned_keys"] = sorted(str(k) for k in raw.keys())
        return Verdict(None, "missing_reward", reason_text or "the judge returned no 'reward'",
                       markers, meta, failure)
    if marker_problem is not None:
        meta["markers_invalid"] = marker_problem
        return Verdict(None, "invalid_result", f"the judge returned unusable markers: {marker_problem}",
                       None, meta, failure)
    reward, why = _reward(value, scale)
    if why:
        meta.update(why)
    if reward is None:
        return Verdict(None, "invalid_result", _invalid_reason(value, why, scale), markers, meta, failure)
    return Verdict(reward, "ok", reason_text, markers, meta or None, failure)


def error_verdict(exc: BaseException) -> Verdict:
    """The verdict for a judge that raised ``exc``."""
    text = f"{type(exc).__name__}: {exc}"
    return Verdict(None, "error", f"the judge raised {text:.300}", None, {"error": text[:1000]}, None)


def timeout_verdict(seconds: float) -> Verdict:
    """The verdict for a judge call that ran past ``seconds``."""
    return Verdict(None, "timeout", f"the judge ran past the {seconds:g} s timeout", None, {"timeout_s": seconds}, None)


JudgeFn = Callable[[Mapping[str, Any]], Any]
