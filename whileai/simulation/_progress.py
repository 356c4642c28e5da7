"""The progress line: ``36/64 rollouts, 39 situations written, 0s elapsed, ~1s left``.

Drawn on a terminal only (seeds, "The loop"); silent when stderr is not a TTY.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from typing import TextIO

from whileai.defaults import PROGRESS_INTERVAL_S

__all__ = ["Progress", "progress_line"]


def progress_line(done: int, total: int, situations: int, elapsed: float, *,
                  lost: Mapping[str, int] | None = None) -> str:
    """One progress line. The estimate of time left appears once 5 rollouts have landed.

    Examples:
        >>> progress_line(36, 64, 39, 0.4)
        '36/64 rollouts, 39 situations written, 0s elapsed, ~0s left'
        >>> progress_line(64, 64, 48, 0.9, lost={"agent_error": 2})
        '64/64 rollouts, 48 situations written, 1s elapsed, 2 lost (2 agent_error)'
    """
    text = f"{done}/{total} rollouts, {situations} situations written, {elapsed:.0f}s elapsed"
    if 5 <= done < total:
        text += f", ~{elapsed / done * (total - done):.0f}s left"
    n_lost = sum((lost or {}).values())
    if n_lost:
        why = ", ".join(f"{v} {k}" for k, v in (lost or {}).items() if v)
        text += f", {n_lost} lost ({why})"
    return text


class Progress:
    """Counts finished rollouts and redraws the line at most every ``PROGRESS_INTERVAL_S``."""

    def __init__(self, total: int, *, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty()) if callable(isatty) else False
        self.enabled = enabled
        self.total = total
        self.done = 0
        self.situations = 0
        self.lost: dict[str, int] = {}
        self.start = time.perf_counter()
        self._last = 0.0
        self._lock = threading.Lock()

    def tick(self, situation_ordinal: int, lost_reason: str | None = None) -> None:
        """One rollout finished (``lost_reason`` when it never became a row)."""
        if not self.enabled:
            return
        with self._lock:
            self.done += 1
            if situation_ordinal + 1 > self.situations:
                self.situations = situation_ordinal + 1
            if lost_reason is not None:
                self.lost[lost_reason] = self.lost.get(lost_reason, 0) + 1
            now = time.perf_counter()
            if now - self._last >= PROGRESS_INTERVAL_S:
                self._last = now
                self._draw(end="")

    def close(self) -> None:
        """Draw the final line and end it."""
        if self.enabled:
            with self._lock:
                self._draw(end="\n")

    def _draw(self, *, end: str) -> None:
        line = progress_line(self.done, self.total, self.situations, time.perf_counter() - self.start, lost=self.lost)
        self.stream.write("\r" + line + "\x1b[K" + end)
        self.stream.flush()
