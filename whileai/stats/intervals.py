"""Intervals on a mean over tasks: the Student-t interval and a dispatcher over the methods.

The default (``CI_METHOD = "t"``) is the t interval on per-task values, mean +- t(T-1) * s / sqrt(T),
which Miller 2024 ("Adding Error Bars to Evals", arXiv:2411.00640, section 2) recommends: the
unit of resampling is the task, and the t quantile corrects the narrowness a normal or percentile
interval has at 8 to 16 tasks. ``"percentile"`` and ``"bca"`` are the bootstrap intervals of
:mod:`whileai.stats.bootstrap`.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from whileai.defaults import BOOTSTRAP_DRAWS, CI_LEVEL, DEFAULT_SEED

__all__ = ["IntervalMethod", "INTERVAL_METHODS", "mean_interval", "normal_quantile", "t_interval", "t_quantile"]

IntervalMethod = Literal["t", "percentile", "bca"]
INTERVAL_METHODS: tuple[str, ...] = ("t", "percentile", "bca")


def normal_quantile(level: float) -> float:
    """The two-sided standard normal quantile ``z = Phi^-1(0.5 + level / 2)`` (1.96 at 0.95).

    From the standard library's ``statistics.NormalDist.inv_cdf`` (Wichura 1988, algorithm AS 241,
    about 16 significant digits): within 2e-15 of ``scipy.special.ndtri``, without the 0.7 s
    import of scipy.special that a cold ``select`` would otherwise pay for one number.

    Examples:
        >>> round(normal_quantile(0.95), 6), round(normal_quantile(0.99), 6)
        (1.959964, 2.575829)
    """
    from statistics import NormalDist

    q = 0.5 + level / 2.0
    if not 0.0 < q < 1.0:  # as ndtri: the ends of the line at 0 and 1, NaN outside
        return math.inf if q == 1.0 else -math.inf if q == 0.0 else math.nan
    return NormalDist().inv_cdf(q)


def t_quantile(level: float, df: float | np.ndarray) -> float | np.ndarray:
    """The two-sided Student-t quantile ``t(df, 1 - (1 - level) / 2)``; the normal one at df=inf.

    Examples:
        >>> round(float(t_quantile(0.95, 2)), 3), round(float(t_quantile(0.95, np.inf)), 3)
        (4.303, 1.96)
    """
    # scipy.special, not scipy.stats: a fraction of the import time
    from scipy.special import ndtri, stdtrit

    q = 0.5 + level / 2.0
    df_arr = np.asarray(df, dtype=np.float64)
    out = np.where(np.isinf(df_arr), ndtri(q), stdtrit(np.where(np.isinf(df_arr), 1.0, df_arr), q))
    return float(out) if out.ndim == 0 else out


def t_interval(values: ArrayLike, *, level: float = CI_LEVEL, axis: int = -1,
               bounds: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Student-t interval on the mean of ``values`` along ``axis``, vectorised over the rest.

    ``mean +- t(T-1, (1+level)/2) * sd / sqrt(T)`` with the sample sd (ddof 1); Miller 2024,
    arXiv:2411.00640, equation 1 with the t quantile in place of 1.96. NaN where fewer than two
    values. ``bounds`` clips the ends (a pass rate cannot leave [0, 1]; clipping never lowers
    coverage of a parameter inside the bounds).

    Args:
        values: Per-task values (1-D, or 2-D with one evaluation per row for simulations).
        level: Confidence level.
        axis: The axis that indexes tasks.
        bounds: Optional (low, high) clip.

    Returns:
        ``(lo, hi)`` arrays with ``axis`` removed (0-d arrays for 1-D input).

    Examples:
        >>> lo, hi = t_interval([0.0, 0.25, 0.5, 1.0, 0.75])
        >>> round(float(lo), 4), round(float(hi), 4)
        (0.0092, 0.9908)
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.shape[axis]
    if n < 2:
        shape = np.delete(np.asarray(x.shape), axis % max(x.ndim, 1)) if x.ndim else ()
        nan = np.full(tuple(shape), np.nan)
        return nan, nan.copy()
    mean = x.mean(axis=axis)
    se = x.std(axis=axis, ddof=1) / np.sqrt(n)
    q = float(t_quantile(level, n - 1))
    lo, hi = mean - q * se, mean + q * se
    if bounds is not None:
        lo, hi = np.clip(lo, *bounds), np.clip(hi, *bounds)
    return np.asarray(lo), np.asarray(hi)


def mean_interval(values: ArrayLike, *, method: IntervalMethod = "t", level: float = CI_LEVEL,
                  n_boot: int = BOOTSTRAP_DRAWS, seed: int | np.random.Generator | None = DEFAULT_SEED,
                  bounds: tuple[float, float] | None = None) -> tuple[float, float]:
    """Interval on the mean of a 1-D array of per-task values by the chosen method.

    Args:
        values: Per-task values.
        method: ``"t"`` (Student-t, Miller 2024), ``"percentile"`` or ``"bca"`` (bootstrap over
            tasks, Efron and Tibshirani 1993, ch. 13 and 14).
        level: Confidence level.
        n_boot: Bootstrap draws (ignored by ``"t"``).
        seed: Seed or Generator for the bootstrap.
        bounds: Optional (low, high) clip.

    Returns:
        ``(lo, hi)`` as floats; NaN when fewer than two values.

    Examples:
        >>> mean_interval([1.0, 0.0, 1.0, 1.0], method="t")[0] < 0.75
        True
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size < 2:
        return float("nan"), float("nan")
    if method == "t":
        lo, hi = t_interval(x, level=level, bounds=bounds)
        return float(lo), float(hi)
    from whileai.stats.bootstrap import bootstrap_mean_ci

    blo, bhi = bootstrap_mean_ci(x, level=level, n_boot=n_boot, seed=seed, method=method)
    if bounds is not None:
        blo, bhi = float(np.clip(blo, *bounds)), float(np.clip(bhi, *bounds))
    return blo, bhi
