"""The Wilson score interval for a binomial proportion (Wilson 1927, JASA 22:209)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from whileai.defaults import CI_LEVEL
from whileai.stats.intervals import normal_quantile

__all__ = ["wilson"]


def wilson(successes: ArrayLike, trials: ArrayLike, *, level: float = CI_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval bounds for ``successes`` out of ``trials``, vectorised.

    (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n); NaN where ``trials`` is 0.

    Examples:
        >>> lo, hi = wilson(8, 10)
        >>> round(float(lo), 4), round(float(hi), 4)
        (0.4902, 0.9433)
    """
    s = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    z = normal_quantile(level)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = s / n
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
        lo = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
        hi = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    return lo, hi
