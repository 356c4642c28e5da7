"""Simulation progress: rollouts landed, situations written and rollouts lost, on a tqdm.auto bar.

A bar where a person watches (a terminal or a notebook), silent elsewhere; ``progress=False``
turns it off and a callable receives ``(done, total, info)`` with ``info`` holding
``situations`` and ``lost`` (reason -> count) (``whileai._progress``).
"""

from __future__ import annotations

import threading

from whileai._progress import ProgressArg, Tracker
from whileai.defaults import PROGRESS_MIN_ROLLOUTS

__all__ = ["Progress"]


class Progress:
    """Counts finished rollouts for the engine and hands them to a :class:`Tracker`."""

    def __init__(self, total: int, *, progress: ProgressArg = None) -> None:
        self.tracker = Tracker(total, desc="simulate", unit="rollouts", progress=progress,
                               min_total=PROGRESS_MIN_ROLLOUTS)
        self.situations = 0
        self.lost: dict[str, int] = {}
        self._lock = threading.Lock()

    def tick(self, situation_ordinal: int, lost_reason: str | None = None) -> None:
        """One rollout finished (``lost_reason`` when it never became a row)."""
        if not self.tracker.active:
            return
        with self._lock:
            self.situations = max(self.situations, situation_ordinal + 1)
            if lost_reason is not None:
                self.lost[lost_reason] = self.lost.get(lost_reason, 0) + 1
            info = {"situations": self.situations, "lost": sum(self.lost.values())}
            if self.lost:
                info["lost_by"] = dict(self.lost)  # type: ignore[assignment]
        self.tracker.update(1, **info)

    def add(self, n: int, *, situations: int, lost_by: dict[str, int]) -> None:
        """``n`` rollouts finished elsewhere (a Ray worker's part), ``lost_by`` of them lost by reason."""
        if not self.tracker.active:
            return
        with self._lock:
            self.situations = max(self.situations, situations)
            for reason, count in lost_by.items():
                if count:
                    self.lost[reason] = self.lost.get(reason, 0) + count
            info = {"situations": self.situations, "lost": sum(self.lost.values())}
            if self.lost:
                info["lost_by"] = dict(self.lost)  # type: ignore[assignment]
        self.tracker.update(n, **info)

    def close(self) -> None:
        """End the bar."""
        self.tracker.close()
