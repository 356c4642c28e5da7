"""The bootstrap over tasks, vectorised and in bounded memory.

A bootstrap resample of T task values is T indices drawn with replacement; its mean depends only
on how many times each distinct value was drawn. When the values take few distinct levels (a
pass rate over k rollouts takes at most k + 1), those counts are one Multinomial(T, level shares)
draw, so a resample costs O(levels) instead of O(T) and the result has exactly the distribution
of index resampling (docs/measure.md, "The bootstrap, fast and exact"). Values with many levels are resampled by index in
chunks of at most ``BOOTSTRAP_MAX_CELLS`` cells, never a T x draws matrix at once.

Intervals: percentile (Efron and Tibshirani 1993, An Introduction to the Bootstrap, ch. 13) and
BCa (Efron 1987, JASA 82:171; the acceleration from the jackknife, which for a mean has the
closed form sum(d^3) / (6 (sum d^2)^1.5) with d the deviations from the mean).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from whileai.defaults import (
    BOOTSTRAP_CHUNK,
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_MAX_CELLS,
    BOOTSTRAP_MAX_LEVELS,
    CI_LEVEL,
    DEFAULT_SEED,
)
from whileai.stats.rng import check_rng

__all__ = ["bootstrap_mean_ci", "bootstrap_means", "bootstrap_moments", "paired_bootstrap_ci"]


def bootstrap_means(values: ArrayLike, *, n_boot: int = BOOTSTRAP_DRAWS,
                    seed: int | np.random.Generator | None = DEFAULT_SEED,
                    chunk: int = BOOTSTRAP_CHUNK) -> np.ndarray:
    """Means of ``n_boot`` bootstrap resamples of ``values`` (tasks drawn with replacement).

    Args:
        values: Per-task values, 1-D.
        n_boot: Resamples.
        seed: Seed or Generator; the same seed gives the same draws.
        chunk: Resamples drawn at once (memory is ``chunk`` x levels, or ``chunk`` x tasks capped at
            ``BOOTSTRAP_MAX_CELLS`` cells when values have many levels).

    Returns:
        Float64 array of ``n_boot`` resample means (empty when there are no values).

    Examples:
        >>> m = bootstrap_means([0.0, 0.5, 1.0, 1.0], n_boot=4000, seed=1)
        >>> m.shape, bool(abs(m.mean() - 0.625) < 0.01)
        ((4000,), True)
    """
    return bootstrap_moments(values, n_boot=n_boot, seed=seed, chunk=chunk)[0]


def bootstrap_moments(values: ArrayLike, *, n_boot: int = BOOTSTRAP_DRAWS,
                      seed: int | np.random.Generator | None = DEFAULT_SEED,
                      chunk: int = BOOTSTRAP_CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample variance (ddof 1) of each of ``n_boot`` bootstrap resamples of ``values``.

    Same draws as :func:`bootstrap_means` for the same seed (the variance rides along): used to
    put a range on a standard deviation read off the tasks (holdout sizing).

    Examples:
        >>> means, variances = bootstrap_moments([0.0, 1.0], n_boot=3, seed=0)
        >>> sorted(set(variances.round(2).tolist())) <= [0.0, 0.5]
        True
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    n = x.size
    means = np.empty(int(n_boot), dtype=np.float64)
    squares = np.empty(int(n_boot), dtype=np.float64)
    if n == 0:
        return means[:0], squares[:0]
    rng = check_rng(seed)
    levels, counts = np.unique(x, return_counts=True)
    chunk = max(1, int(chunk))
    if levels.size <= max(BOOTSTRAP_MAX_LEVELS, 1) or levels.size * 4 <= n:
        shares = counts / n
        for start in range(0, means.size, chunk):
            size = min(chunk, means.size - start)
            drawn = rng.multinomial(n, shares, size=size)
            means[start:start + size] = drawn @ levels / n
            squares[start:start + size] = drawn @ (levels * levels) / n
    else:
        step = max(1, min(chunk, BOOTSTRAP_MAX_CELLS // n))
        for start in range(0, means.size, step):
            size = min(step, means.size - start)
            picked = x[rng.integers(0, n, size=(size, n))]
            means[start:start + size] = picked.mean(axis=1)
            squares[start:start + size] = (picked * picked).mean(axis=1)
    var = np.clip(squares - means * means, 0.0, None) * (n / (n - 1) if n > 1 else np.nan)
    return means, var


def bootstrap_mean_ci(values: ArrayLike, *, level: float = CI_LEVEL, n_boot: int = BOOTSTRAP_DRAWS,
                      seed: int | np.random.Generator | None = DEFAULT_SEED,
                      method: Literal["percentile", "bca"] = "percentile") -> tuple[float, float]:
    """Bootstrap interval on the mean of per-task values: percentile or BCa.

    Args:
        values: Per-task values, 1-D.
        level: Confidence level.
        n_boot: Resamples.
        seed: Seed or Generator.
        method: ``"percentile"`` (Efron and Tibshirani 1993, ch. 13) or ``"bca"`` (Efron 1987).

    Returns:
        ``(lo, hi)``; NaN when fewer than two values.

    Examples:
        >>> lo, hi = bootstrap_mean_ci([0.0, 0.25, 0.5, 0.75, 1.0, 1.0], seed=0)
        >>> 0.2 < lo < 0.6 < hi <= 1.0
        True
    """
    from scipy.special import ndtr, ndtri

    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size < 2:
        return float("nan"), float("nan")
    means = bootstrap_means(x, n_boot=n_boot, seed=seed)
    alpha = 1.0 - level
    if method == "percentile":
        lo, hi = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
        return float(lo), float(hi)
    theta = float(x.mean())
    share = ((means < theta).sum() + (means <= theta).sum()) / (2.0 * means.size)
    z0 = float(ndtri(share))
    d = x - theta
    denom = 6.0 * float((d * d).sum()) ** 1.5
    accel = float((d ** 3).sum()) / denom if denom > 0 else 0.0
    if not np.isfinite(z0):  # every resample on one side: the interval is the degenerate end
        lo = hi = float(np.quantile(means, 0.5))
        return lo, hi
    z = ndtri(np.array([alpha / 2.0, 1.0 - alpha / 2.0]))
    adj = ndtr(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
    lo, hi = np.quantile(means, adj)
    return float(lo), float(hi)


def paired_bootstrap_ci(before: ArrayLike, after: ArrayLike, *, level: float = CI_LEVEL,
                        n_boot: int = BOOTSTRAP_DRAWS, seed: int | np.random.Generator | None = DEFAULT_SEED,
                        method: Literal["percentile", "bca"] = "percentile") -> tuple[float, float]:
    """Bootstrap interval on the mean paired difference ``after - before`` (tasks resampled as pairs).

    Resampling pairs and taking the mean of ``after[i] - before[i]`` is resampling the per-task
    differences, so this is :func:`bootstrap_mean_ci` on the differences (Miller 2024,
    arXiv:2411.00640, section 4: compare models on question-level paired differences).

    Examples:
        >>> lo, hi = paired_bootstrap_ci([0.5, 0.25, 0.5, 0.0], [0.75, 0.5, 1.0, 0.25], seed=0)
        >>> 0.0 < lo < hi
        True
    """
    a = np.asarray(before, dtype=np.float64).ravel()
    b = np.asarray(after, dtype=np.float64).ravel()
    if a.shape != b.shape:
        from whileai.errors import ArgumentError

        raise ArgumentError(f"before and after must have one value per paired task, got {a.size} and {b.size}. "
                            "Align them on task_key first.")
    return bootstrap_mean_ci(b - a, level=level, n_boot=n_boot, seed=seed, method=method)
