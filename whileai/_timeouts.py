"""Wall-clock limits on calls into user code (judges, agents, tools): one helper for every step.

A Python thread cannot be stopped from outside, so a call past its limit is left running on a
daemon thread and its late result is dropped; the caller gets :class:`CallTimeout` at once and
goes on (the rollout is lost, the tool answers with an error, the judge row is ``timeout``).
Defaults: ``JUDGE_TIMEOUT_S``, ``AGENT_TIMEOUT_S`` and ``TOOL_TIMEOUT_S`` in ``defaults.py``;
None turns a limit off.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import math
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from whileai.errors import ArgumentError

__all__ = ["CallTimeout", "check_timeout", "run_with_timeout", "with_timeout"]

T = TypeVar("T")


class CallTimeout(TimeoutError):
    """A call into user code ran past its wall-clock limit."""


def check_timeout(name: str, value: Any) -> float | None:
    """``value`` as seconds, or None; anything else is an :class:`ArgumentError`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        raise ArgumentError(f"{name} must be a positive number of seconds or None (no limit), got {value!r}. "
                            f"Pass {name}=60, or {name}=None to wait forever.", argument=name, value=value)
    return float(value)


def run_with_timeout(fn: Callable[[], T], timeout: float, *, what: str = "the call") -> T:
    """Call ``fn()`` on a daemon thread (with the caller's context variables); wait at most ``timeout`` s.

    Raises:
        CallTimeout: ``fn`` had not returned after ``timeout`` seconds.
        Exception: Whatever ``fn`` raised.
    """
    context = contextvars.copy_context()
    box: list[tuple[bool, Any]] = []

    def target() -> None:
        try:
            box.append((True, context.run(fn)))
        except BaseException as exc:  # handed to the caller below
            box.append((False, exc))

    helper = threading.Thread(target=target, name="wai-timed-call", daemon=True)
    helper.start()
    helper.join(timeout)
    if not box:
        raise CallTimeout(f"{what} did not return within {timeout:g} s (pass a larger timeout, or None for none)")
    ok, value = box[0]
    if not ok:
        raise value
    return value


def with_timeout(fn: Callable[..., Any], timeout: float | None, *, what: str,
                 returns_awaitable: bool = False) -> Callable[..., Any]:
    """``fn`` wrapped so every call is limited to ``timeout`` seconds (``fn`` itself when None).

    When ``fn`` returns an awaitable (a coroutine function, or ``returns_awaitable=True``) the
    wrapper returns one bounded by ``asyncio.wait_for``; a plain ``fn`` runs on a helper thread.
    """
    if timeout is None:
        return fn
    limit = timeout
    if returns_awaitable or inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        def timed_async(*args: Any, **kwargs: Any) -> Any:
            return _bounded(fn(*args, **kwargs), limit, what)
        return timed_async

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        return run_with_timeout(lambda: fn(*args, **kwargs), limit, what=what)
    return timed


async def _bounded(awaitable: Any, limit: float, what: str) -> Any:
    if not inspect.isawaitable(awaitable):
        return awaitable
    try:
        return await asyncio.wait_for(awaitable, limit)
    except asyncio.TimeoutError:
        raise CallTimeout(f"{what} did not return within {limit:g} s (pass a larger timeout, or None for none)") from None
