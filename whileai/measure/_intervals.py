"""Intervals on a mean over tasks, with the floor on tasks and the Wilson fallbacks."""

from __future__ import annotations

from typing import Any

import numpy as np

from whileai.defaults import MIN_CI_TASKS
from whileai.stats.intervals import mean_interval
from whileai.stats.wilson import wilson

__all__ = ["interval_over_tasks", "rate_interval"]


def interval_over_tasks(values: np.ndarray, *, method: str, level: float, n_boot: int, seed: Any,
                        bounds: tuple[float, float] | None, what: str, notes: list[str],
                        binary_ci: str | None = None) -> tuple[float, float, str]:
    """Interval on a mean over tasks and the method used; NaN (with a note) under ``MIN_CI_TASKS`` tasks.

    With ``binary_ci="wilson"`` and every value 0 or 1, the mean is a proportion of tasks and the
    interval is Wilson's over tasks (``BINARY_CI_METHOD``).
    """
    if values.size < MIN_CI_TASKS:
        notes.append(f"no interval on {what}: {values.size} task(s), and an interval needs {MIN_CI_TASKS}")
        return float("nan"), float("nan"), method
    if binary_ci == "wilson" and bool(np.isin(values, (0.0, 1.0)).all()):
        lo, hi = wilson(float(values.sum()), float(values.size), level=level)
        return float(lo), float(hi), "wilson"
    lo_, hi_ = mean_interval(values, method=method, level=level, n_boot=n_boot, seed=seed, bounds=bounds)  # type: ignore[arg-type]
    return lo_, hi_, method


def rate_interval(values: np.ndarray, rollouts: float, sum_rewards: float, *, method: str, level: float,
                  n_boot: int, seed: Any, what: str, notes: list[str],
                  binary_ci: str | None = None) -> tuple[float, float, str]:
    """Interval on a mean pass rate over tasks, with a Wilson fallback when it has no width.

    When every task has the same (non 0/1) rate the t and bootstrap intervals have no width, so
    the Wilson interval over the graded rollouts is given (the rollouts read as independent: the
    narrowest honest interval) and a note says so.
    """
    lo, hi, used = interval_over_tasks(values, method=method, level=level, n_boot=n_boot, seed=seed,
                                       bounds=(0.0, 1.0), what=what, notes=notes, binary_ci=binary_ci)
    if used != "wilson" and values.size >= MIN_CI_TASKS and float(np.ptp(values)) == 0.0 and rollouts > 0:
        wlo, whi = wilson(sum_rewards, rollouts, level=level)
        notes.append(f"every task scored {values[0]:.2f} on {what}, so the interval over tasks has no width; "
                     f"the interval is Wilson's over the {int(rollouts)} rollouts")
        return float(wlo), float(whi), "wilson_rollouts"
    return lo, hi, used
