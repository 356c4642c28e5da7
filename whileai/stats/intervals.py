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

from whileai.defaults import (
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    DEFAULT_SEED,
    T_QUANTILE_NEWTON_STEPS,
    T_QUANTILE_SERIES_MAX_DF,
)

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

    A scalar whole ``df`` (task counts, runs) is solved without scipy: Newton's method on the
    exact two-sided probability of Abramowitz and Stegun 26.7.3-4, from the Cornish-Fisher
    start of 26.7.5, and that expansion itself past ``T_QUANTILE_SERIES_MAX_DF`` degrees of
    freedom, where its first omitted term is below 3e-14. Measured against scipy 1.17's
    ``stdtrit`` and by scipy's t CDF at the result (tests/stats/test_t_quantile.py): within 1e-12
    relative up to the 0.999 level and 1e-9 at 0.999999 (the sum's rounding, amplified in the far
    tail); scipy 1.13's own ``stdtrit`` is off by up to 2e-11. So the
    first ``pass_at`` of a process does not import scipy (0.2 to 0.4 s). Fractional ``df``
    (Welch) and arrays go to ``stdtrit``.

    Examples:
        >>> round(float(t_quantile(0.95, 2)), 3), round(float(t_quantile(0.95, np.inf)), 3)
        (4.303, 1.96)
    """
    if np.ndim(df) == 0:
        nu = float(df)
        if math.isinf(nu) and nu > 0:
            return normal_quantile(level)
        if nu >= 1.0 and nu.is_integer() and 0.0 < level < 1.0:
            return _t_quantile_whole(level, int(nu))
    # scipy.special, not scipy.stats: a fraction of the import time
    from scipy.special import ndtri, stdtrit

    q = 0.5 + level / 2.0
    df_arr = np.asarray(df, dtype=np.float64)
    out = np.where(np.isinf(df_arr), ndtri(q), stdtrit(np.where(np.isinf(df_arr), 1.0, df_arr), q))
    return float(out) if out.ndim == 0 else out


def _t_quantile_whole(level: float, nu: int) -> float:
    """``t_quantile`` for a whole number of degrees of freedom (``0 < level < 1``, ``nu >= 1``)."""
    if nu == 1:  # Cauchy
        return math.tan(math.pi * level / 2.0)
    if nu == 2:
        return level * math.sqrt(2.0 / (1.0 - level * level))
    z = normal_quantile(level)
    t = _cornish_fisher(z, nu)
    if nu > T_QUANTILE_SERIES_MAX_DF:
        return t
    log_norm = math.lgamma((nu + 1) / 2.0) - math.lgamma(nu / 2.0) - 0.5 * math.log(nu * math.pi)
    last = math.inf
    for _ in range(T_QUANTILE_NEWTON_STEPS):
        density = math.exp(log_norm - (nu + 1) / 2.0 * math.log1p(t * t / nu))
        step = (_t_within(t, nu) - level) / (2.0 * density)
        if abs(step) >= last:  # the sum's rounding: no step can gain anything more
            break
        # heavy tails at few df: never step past zero, halve toward it instead
        t = t / 2.0 if step >= t else t - step
        if abs(step) <= 1e-15 * t:
            break
        last = abs(step)
    return t


def _cornish_fisher(z: float, nu: int) -> float:
    """The t quantile from the normal one, to the fourth order in ``1 / nu`` (A&S 26.7.5)."""
    z2 = z * z
    g1 = z * (z2 + 1.0) / 4.0
    g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0
    g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0
    g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0
    return z + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu


def _t_within(t: float, nu: int) -> float:
    """``P(|T| < t)`` for ``t >= 0`` and a whole ``nu >= 1``: the finite sums of A&S 26.7.3-4."""
    cos2 = nu / (nu + t * t)
    sin = t / math.sqrt(nu + t * t)
    term = total = 1.0
    if nu % 2 == 0:
        for k in range(1, nu // 2):
            term *= cos2 * (2 * k - 1) / (2 * k)
            total += term
        return sin * total
    theta = math.atan(t / math.sqrt(nu))
    for k in range(1, (nu - 1) // 2):
        term *= cos2 * (2 * k) / (2 * k + 1)
        total += term
    return 2.0 / math.pi * (theta + (sin * math.sqrt(cos2) * total if nu > 1 else 0.0))


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
