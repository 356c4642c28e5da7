"""Multiplicity corrections for a family of p-values."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["holm"]


def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979, Scandinavian Journal of Statistics 6:65).

    "A Simple Sequentially Rejective Multiple Test Procedure". Sorted ascending, ``p_(i)`` becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``; rejecting where
    the adjusted value is under alpha holds the family-wise error rate at alpha under any
    dependence. NaN p-values are left out of the family and stay NaN.

    Examples:
        >>> holm([0.01, 0.04, 0.03, float("nan")]).round(4).tolist()
        [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out
