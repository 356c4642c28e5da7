"""The mean of per-row values with a cluster-robust interval over tasks (rows of one task are not independent)."""

from __future__ import annotations

import math

import numpy as np

from whileai.defaults import CI_LEVEL

__all__ = ["cluster_mean_ci"]


def cluster_mean_ci(values: np.ndarray, groups: np.ndarray, *, level: float = CI_LEVEL) -> tuple[float, float, float]:
    """Mean of ``values`` with a cluster-robust normal interval over tasks.

    Miller 2024 ("Adding Error Bars to Evals", arXiv:2411.00640, section 2.1): rows of one task
    are not independent, so the variance is summed over tasks.

    se^2 = G/(G-1) * sum_g (s_g - m n_g)^2 / N^2 with s_g the task's sum, n_g its rows, G tasks.
    Returns (mean, lo, hi) clipped to the range of the values; NaN bounds with fewer than 2 tasks
    or when every value is the same (no interval for a constant).
    """
    from scipy.special import ndtri  # not scipy.stats: a fraction of the import time

    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(v)
    v, g = v[ok], np.asarray(groups)[ok]
    if v.size == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(v.mean())
    _, inv = np.unique(g, return_inverse=True)
    n_g = np.bincount(inv).astype(np.float64)
    s_g = np.bincount(inv, weights=v)
    G = n_g.size
    if G < 2 or float(v.max() - v.min()) == 0.0:
        return m, float("nan"), float("nan")
    se = math.sqrt(G / (G - 1) * float(((s_g - m * n_g) ** 2).sum())) / v.size
    z = float(ndtri(0.5 + level / 2.0))
    lo, hi = float(v.min()), float(v.max())
    return m, max(lo, m - z * se), min(hi, m + z * se)
