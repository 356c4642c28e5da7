"""Seeded simulation of graded evals with known truth: the coverage grid behind our interval claims.

A task's pass rate p is drawn from a difficulty distribution (a Beta, or a point mass), each of its
n rollouts passes with probability p, and the truth of each metric is its population value over
tasks: E[p] for pass@1, E[p^k] for pass^k (Yao et al. 2024) and E[1 - (1 - p)^k] for pass@k
(Chen et al. 2021). For Beta(a, b), E[p^k] = B(a + k, b) / B(a, b) and E[(1 - p)^k] =
B(a, b + k) / B(a, b). Used by the unit tests (a reduced grid), ``benchmarks/coverage.py`` (the
full grid) and ``self_check``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

__all__ = ["DIFFICULTIES", "Metric", "coverage", "draw_passes", "truth"]

Metric = Literal["pass_at_1", "pass_pow_k", "pass_at_k"]

#: Difficulty distributions: Beta(a, b), or ("point", p) for every task at p.
DIFFICULTIES: Mapping[str, tuple[str, float, float]] = {
    "Beta(2,2)": ("beta", 2.0, 2.0),
    "Beta(4,1)": ("beta", 4.0, 1.0),
    "Beta(1,9)": ("beta", 1.0, 9.0),
    "Beta(0.5,0.5)": ("beta", 0.5, 0.5),
    "point 0.5": ("point", 0.5, 0.0),
}


def draw_passes(rng: np.random.Generator, difficulty: str, sets: int, tasks: int, rollouts: int) -> np.ndarray:
    """Pass counts, shape (sets, tasks): tasks drawn from ``difficulty``, ``rollouts`` tries each.

    Examples:
        >>> draw_passes(np.random.default_rng(0), "point 0.5", 2, 3, 4).shape
        (2, 3)
    """
    kind, a, b = DIFFICULTIES[difficulty]
    p = np.full((sets, tasks), a) if kind == "point" else rng.beta(a, b, size=(sets, tasks))
    return rng.binomial(rollouts, p)


def truth(difficulty: str, metric: Metric, k: int = 1) -> float:
    """The population value of ``metric`` under ``difficulty`` (closed form).

    Examples:
        >>> round(truth("Beta(1,9)", "pass_pow_k", 2), 6)
        0.018182
    """
    from scipy.special import betaln

    kind, a, b = DIFFICULTIES[difficulty]
    if kind == "point":
        return {"pass_at_1": a, "pass_pow_k": a**k, "pass_at_k": 1.0 - (1.0 - a) ** k}[metric]
    if metric == "pass_at_1":
        return a / (a + b)
    if metric == "pass_pow_k":
        return float(np.exp(betaln(a + k, b) - betaln(a, b)))
    return 1.0 - float(np.exp(betaln(a, b + k) - betaln(a, b)))


def coverage(lo: np.ndarray, hi: np.ndarray, value: float) -> float:
    """Share of intervals that contain ``value`` (an undefined interval counts as a miss)."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    tol = 1e-12
    return float(np.mean((lo <= value + tol) & (value - tol <= hi)))
