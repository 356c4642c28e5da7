"""Pearson correlation of two arrays, the yardstick every guard report uses for "tracks reward"."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["pearson"]


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation; NaN when either side is constant or there are fewer than 2 pairs."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < 2:
        return float("nan")
    xc, yc = x - x.mean(), y - y.mean()
    den = math.sqrt(float(xc @ xc) * float(yc @ yc))
    if den <= 1e-12:
        return float("nan")
    return float(np.clip((xc @ yc) / den, -1.0, 1.0))
