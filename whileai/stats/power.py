"""Power and sample size for a paired comparison over tasks, and the re-run noise band.

Miller 2024 ("Adding Error Bars to Evals", arXiv:2411.00640, equation 9): to detect a mean paired
difference delta with a two-sided test at level alpha and power 1 - beta,
``n = (z_{1-alpha/2} + z_{1-beta})^2 * sd_d^2 / delta^2``, where sd_d is the standard deviation of
the per-task paired difference; inverted, ``delta = (z_{1-alpha/2} + z_{1-beta}) * sd_d / sqrt(n)``.

Two models for sd_d when none is measured, both with k rollouts a side and independent arms:

* binomial: the gain is spread evenly, every task moves from p to q = p + delta, so
  ``sd_d^2 = (p(1-p) + q(1-q)) / k``;
* concentrated: the gain lands on the fewest tasks it can, a share f = delta / (1 - p) of tasks
  going from p to 1 and the rest staying at p, so
  ``sd_d^2 = (p(1-p) + (1-f) p(1-p)) / k + delta (1 - p - delta)`` (the second term is the spread
  of the gain across tasks, which ties on most tasks make large).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from whileai.defaults import (
    ALPHA,
    CI_LEVEL,
    MIN_HOLDOUT_TASKS,
    POWER,
    SIGN_FLIP_POWER_EXACT_MAX_TASKS,
    SIGN_FLIP_POWER_REPS,
)

__all__ = [
    "binomial_paired_var",
    "concentrated_paired_var",
    "detectable_effect_binomial",
    "detectable_effect_sd",
    "detectable_moved",
    "noise_band_width",
    "noncentral_t_sf",
    "paired_tasks_needed",
    "power_at",
    "sign_flip_power",
    "sign_flip_tasks_needed",
    "z_sum",
]


def z_sum(power: float = POWER, alpha: float = ALPHA) -> float:
    """``z_{1-alpha/2} + z_{power}``, the multiplier of every sizing formula (2.80 at 0.8, 0.05).

    Examples:
        >>> round(z_sum(0.8, 0.05), 4)
        2.8016
    """
    from scipy.special import ndtri

    return float(ndtri(1.0 - alpha / 2.0) + ndtri(power))


def binomial_paired_var(base: float, effect: float, k: int) -> float:
    """Variance of a task's paired difference when every task moves from ``base`` to ``base + effect``.

    Examples:
        >>> round(binomial_paired_var(0.6, 0.05, 4), 6)
        0.116875
    """
    q = base + effect
    return (base * (1.0 - base) + q * (1.0 - q)) / k


def concentrated_paired_var(base: float, effect: float, k: int) -> float:
    """Variance of a task's paired difference when the gain lands on the fewest tasks (they reach 1).

    Examples:
        >>> round(concentrated_paired_var(0.6, 0.05, 4), 6)
        0.13
    """
    if base >= 1.0:
        return float("nan")
    share = min(1.0, effect / (1.0 - base))
    within = (base * (1.0 - base) + (1.0 - share) * base * (1.0 - base)) / k
    return within + effect * (1.0 - base - effect)


def paired_tasks_needed(effect: float, sd: float, *, power: float = POWER, alpha: float = ALPHA) -> int:
    """Paired tasks needed to detect ``effect`` when the per-task difference has sd ``sd``.

    ``ceil((z_{1-alpha/2} + z_power)^2 sd^2 / effect^2)``, never below ``MIN_HOLDOUT_TASKS``.

    Examples:
        >>> paired_tasks_needed(0.05, binomial_paired_var(0.6, 0.05, 4) ** 0.5)
        367
    """
    n = (z_sum(power, alpha) * sd / effect) ** 2
    return max(MIN_HOLDOUT_TASKS, math.ceil(n - 1e-9))


def detectable_effect_sd(n_tasks: int, sd: float, *, power: float = POWER, alpha: float = ALPHA) -> float:
    """The smallest paired gain ``n_tasks`` tasks detect at ``power`` when the difference has sd ``sd``.

    Examples:
        >>> round(detectable_effect_sd(100, 0.3), 4)
        0.084
    """
    if n_tasks < MIN_HOLDOUT_TASKS:
        return float("nan")
    return z_sum(power, alpha) * sd / math.sqrt(n_tasks)


def detectable_moved(n_tasks: int, sd: float, band: float, *, power: float = POWER, alpha: float = ALPHA) -> float:
    """The smallest paired gain read as ``moved`` at ``power`` when it must clear the test and a noise band.

    A delta reads moved when the two-sided test rejects (|d| over about ``z_{1-alpha/2} se``) and
    |d| is over the re-run band. With d ~ N(delta, se^2), se = sd / sqrt(n), that happens with
    probability ``power`` at ``delta = max(band, z_{1-alpha/2} se) + z_power se`` (Miller 2024,
    arXiv:2411.00640, equation 9, with the band as a second threshold). With no band it is
    :func:`detectable_effect_sd`; the difference is the power the band costs.

    Examples:
        >>> round(detectable_moved(100, 0.3, 0.0), 4), round(detectable_moved(100, 0.3, 0.1), 4)
        (0.084, 0.1252)
    """
    from scipy.special import ndtri

    if n_tasks < MIN_HOLDOUT_TASKS or not sd > 0:
        return float("nan")
    se = sd / math.sqrt(n_tasks)
    return max(float(band), float(ndtri(1.0 - alpha / 2.0)) * se) + float(ndtri(power)) * se


def detectable_effect_binomial(n_tasks: int, *, base: float, k: int, power: float = POWER,
                               alpha: float = ALPHA) -> float:
    """The smallest evenly spread gain ``n_tasks`` paired tasks detect under the binomial model.

    Solves ``delta = z * sqrt(binomial_paired_var(base, delta, k) / n)`` for delta in (0, 1 - base];
    NaN when even a gain to 1.0 is not detectable or ``n_tasks`` is under ``MIN_HOLDOUT_TASKS``.

    Examples:
        >>> round(detectable_effect_binomial(100, base=0.6, k=4), 4)
        0.0942
    """
    if n_tasks < MIN_HOLDOUT_TASKS or not 0.0 <= base < 1.0:
        return float("nan")
    z = z_sum(power, alpha)

    def gap(effect: float) -> float:
        return effect - z * math.sqrt(binomial_paired_var(base, effect, k) / n_tasks)

    top = 1.0 - base
    if gap(top) < 0:
        return float("nan")
    if gap(0.0) >= 0:
        return 0.0
    low, high = 0.0, top  # gap(low) < 0 <= gap(high): bisection to 1e-12
    while high - low > 1e-12:
        mid = 0.5 * (low + high)
        if gap(mid) < 0:
            low = mid
        else:
            high = mid
    return high


@functools.cache
def _boost_nctdtr() -> bool:
    """Whether ``scipy.special.nctdtr`` is Boost's noncentral t, the one ``scipy.stats.nct`` uses (SciPy 1.15 on)."""
    import scipy

    major, minor = (int(part) for part in scipy.__version__.split(".")[:2])
    return (major, minor) >= (1, 15)


def noncentral_t_sf(x: np.ndarray, df: np.ndarray, nc: np.ndarray) -> np.ndarray:
    """``P(T > x)`` for T noncentral t with ``df`` degrees of freedom and noncentrality ``nc``.

    The same numbers as ``scipy.stats.nct.sf`` (checked to 2e-16 in the tests) without importing
    ``scipy.stats`` (about 1 CPU second of a ``wai compare``): from SciPy 1.15 on
    ``scipy.special.nctdtr`` is Boost's noncentral t, as ``scipy.stats.nct`` is, so the tail is
    ``1 - nctdtr``; where that evaluation fails in the far tails (NaN) and on older SciPy, whose
    ``nctdtr`` is CDFLIB's (off by up to 1e-4), ``scipy.stats.nct.sf`` answers. Broadcasts.
    """
    from scipy.special import nctdtr

    x, df, nc = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(df, dtype=np.float64),
                                    np.asarray(nc, dtype=np.float64))
    if not _boost_nctdtr():
        from scipy.stats import nct

        return np.asarray(nct.sf(x, df, nc), dtype=np.float64)
    cdf = nctdtr(df, nc, x)
    failed = np.isnan(cdf) & ~(np.isnan(x) | np.isnan(df) | np.isnan(nc))
    if not failed.any():
        return 1.0 - cdf
    from scipy.stats import nct

    return np.where(failed, nct.sf(x, df, nc), 1.0 - cdf)


def power_at(effect: float, sd: float, n_tasks: int, *, alpha: float = ALPHA) -> float:
    """Power of the two-sided paired test to detect ``effect`` with ``n_tasks`` tasks (normal approximation).

    Examples:
        >>> round(power_at(0.05, binomial_paired_var(0.6, 0.05, 4) ** 0.5, 367), 3)
        0.8
    """
    from scipy.special import ndtr, ndtri

    if sd <= 0 or n_tasks < 1:
        return float("nan")
    shift = effect * math.sqrt(n_tasks) / sd
    z = ndtri(1.0 - alpha / 2.0)
    return float(ndtr(shift - z) + ndtr(-shift - z))


def noise_band_width(run_std: float, n_a: float = 1, n_b: float = 1, df: float | None = None, *,
                     level: float = CI_LEVEL) -> float:
    """How far two eval means move apart by re-running alone: ``q * run_std * sqrt(1/n_a + 1/n_b)``.

    ``q`` is the two-sided normal quantile when ``df`` is None (run_std read as exact) or the
    Student-t quantile at ``df`` degrees of freedom (run_std estimated from df + 1 re-runs).

    Examples:
        >>> round(noise_band_width(0.02), 5), round(noise_band_width(0.02, 3, 3, df=4), 5)
        (0.05544, 0.04534)
    """
    from whileai.stats.intervals import t_quantile

    q = float(t_quantile(level, np.inf if df is None else df))
    return q * run_std * math.sqrt(1.0 / n_a + 1.0 / n_b)


def sign_flip_power(effect: float, base: float, k: int, n_tasks: int, *, alpha: float = ALPHA,
                    reps: int = SIGN_FLIP_POWER_REPS, seed: int | np.random.Generator | None = 0) -> float:
    """Power of the exact two-sided sign-flip test on binomial task rates, by seeded simulation.

    Each of ``reps`` evals draws ``n_tasks`` paired tasks, k rollouts a side, passing at ``base``
    before and ``base + effect`` after (the gain spread evenly, the arms independent: the model
    ``holdout_size`` sizes on), and runs the exact sign-flip test ``delta_report`` decides with
    (Good 2005, ch. 3): the paired differences are multiples of 1/k, so each eval's null
    distribution is the convolution of its |difference| levels' scaled binomials on that grid, one
    batched FFT for every eval (the same distribution as
    :func:`whileai.stats.permutation.sign_flip_test`, which the tests check it against). Past
    ``SIGN_FLIP_POWER_EXACT_MAX_TASKS`` tasks the null sum is read by its normal limit with variance
    sum d^2, continuity-corrected for its lattice (it decides as the exact test on 99.75% of evals or
    more at 99 to 369 tasks). The share
    with p < alpha estimates the power; its Monte Carlo error is ``sqrt(power (1 - power) / reps)``.

    Args:
        effect: Gain in pass rate.
        base: Before pass rate.
        k: Rollouts a task a side.
        n_tasks: Paired tasks.
        alpha: Two-sided test size.
        reps: Simulated evals.
        seed: Seed or Generator.

    Returns:
        The estimated power.

    Examples:
        >>> round(sign_flip_power(0.3, 0.5, 4, 12, reps=2000), 2)
        0.76
    """
    from whileai.stats.rng import check_rng

    rng = check_rng(seed)
    before = rng.binomial(k, base, size=(reps, n_tasks))
    after = rng.binomial(k, min(1.0, base + effect), size=(reps, n_tasks))
    d = after - before  # in units of 1/k
    observed = np.abs(d.sum(axis=1))
    if n_tasks > SIGN_FLIP_POWER_EXACT_MAX_TASKS:
        # the null sum's normal limit, continuity-corrected for its lattice of spacing 2 (in 1/k)
        from scipy.special import ndtr

        spread = np.sqrt((d * d).sum(axis=1).astype(np.float64))
        with np.errstate(divide="ignore", invalid="ignore"):
            p_normal = np.where(spread > 0, 2.0 * ndtr(-(observed - 1.0) / np.where(spread > 0, spread, 1.0)), 1.0)
        return float(np.mean(p_normal < alpha))
    mag = np.abs(d)
    counts = np.stack([(mag == j).sum(axis=1) for j in range(1, k + 1)], axis=1)  # (reps, k)
    top = int((counts * np.arange(1, k + 1)).sum(axis=1).max())
    size = 1 << int(top + 1).bit_length()
    hits = 0
    chunk = max(1, 2_000_000 // size)
    for start in range(0, reps, chunk):
        c = counts[start:start + chunk]
        spectrum = np.ones((c.shape[0], size // 2 + 1), dtype=np.complex128)
        for j in range(1, k + 1):
            m = c[:, j - 1]
            heads = np.arange(int(m.max()) + 1)
            pmf = _binom_pmf(heads[None, :], m[:, None])
            placed = np.zeros((c.shape[0], size))
            placed[:, heads * j] = pmf
            spectrum *= np.fft.rfft(placed, axis=1)
        dist = np.clip(np.fft.irfft(spectrum, n=size, axis=1), 0.0, None)
        total = (c * np.arange(1, k + 1)).sum(axis=1)  # sum |d|: the null sum is 2U - total
        u = np.arange(size)[None, :]
        stat = np.abs(2 * u - total[:, None])
        inside = u <= total[:, None]
        p = np.where(inside & (stat >= observed[start:start + chunk, None]), dist, 0.0).sum(axis=1)
        p = np.where(total > 0, p, 1.0)
        hits += int((p < alpha - 1e-12).sum())
    return hits / reps


def _binom_pmf(heads: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Binomial(m, 1/2) pmf at ``heads`` (0 past m), broadcast."""
    from scipy.special import gammaln

    ok = heads <= m
    h = np.where(ok, heads, 0)
    logp = gammaln(m + 1.0) - gammaln(h + 1.0) - gammaln(np.maximum(m - h, 0) + 1.0) - m * np.log(2.0)
    return np.where(ok, np.exp(logp), 0.0)


def sign_flip_tasks_needed(effect: float, base: float, k: int, start: int, *, power: float = POWER,
                           alpha: float = ALPHA, reps: int = SIGN_FLIP_POWER_REPS, seed: int = 0) -> int:
    """The fewest paired tasks at which :func:`sign_flip_power` reaches ``power``, from ``start`` up.

    ``start`` is the paired t test's answer (the sign-flip test is never more powerful on these
    rates). Every n is simulated with the same seed (common random numbers), so the power is
    smooth in n; the search doubles the step until it passes, then bisects.

    Examples:
        >>> sign_flip_tasks_needed(0.3, 0.5, 4, 12, reps=2000) > 12
        True
    """
    def enough(n: int) -> bool:
        return sign_flip_power(effect, base, k, n, alpha=alpha, reps=reps, seed=seed) >= power

    if enough(start):
        return start
    low, step = start, max(1, start // 16)
    high = start + step
    while not enough(high):
        low, step = high, 2 * step
        high = low + step
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return high
