"""The sign-flip permutation test for a mean paired difference, exact where it can be.

Under the null that a task's two arms are exchangeable, each paired difference d_i is as likely
to be +|d_i| as -|d_i| (Good 2005, Permutation, Parametric and Bootstrap Tests of Hypotheses,
ch. 3). The statistic is |sum d_i|; the p-value is the share of the 2^n sign patterns whose
|sum| reaches the observed one. Tasks with equal |d| are interchangeable, so the patterns group
by level: a level with multiplicity m contributes level * (2B - m), B ~ Binomial(m, 1/2), and
the exact null distribution is the convolution of those few scaled binomials. Up to
``EXACT_PERMUTATION_MAX_N`` non-zero differences it is enumerated level by level; beyond, when
every |d| is a multiple of one step (pass-rate differences over k rollouts are multiples of 1/k,
or of 1/lcm of the ks), the convolution is taken on that integer grid with one FFT per level,
exact to floating-point rounding, while the grid has at most ``EXACT_SIGN_FLIP_SUPPORT`` points.
Otherwise the same grouped form is drawn by Monte Carlo (``PERMUTATION_DRAWS`` draws) with the
p-value (1 + hits) / (1 + draws) (Phipson and Smyth 2010, "Permutation p-values should never be
zero", SAGMB 9:39).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from whileai.defaults import (
    BOOTSTRAP_MAX_CELLS,
    DEFAULT_SEED,
    EXACT_PERMUTATION_MAX_N,
    EXACT_SIGN_FLIP_SUPPORT,
    PERMUTATION_DRAWS,
)
from whileai.stats.rng import check_rng

__all__ = ["SignFlip", "sign_flip_pvalue", "sign_flip_test"]

_DECIMALS = 9  # |d| levels and sums are compared after rounding to this many decimals
_TOL = 1e-7  # relative tolerance when comparing a null sum with the observed one


class SignFlip(NamedTuple):
    """A sign-flip test result."""

    p_value: float
    """Two-sided p-value; NaN when every difference is zero or there are none."""
    method: Literal["exact", "monte_carlo", "none"]
    """How the null distribution was obtained."""
    n_nonzero: int
    """Tasks with a non-zero difference (zeros carry no sign)."""
    draws: int
    """Monte Carlo draws (0 when exact)."""


def sign_flip_test(diffs: ArrayLike, *, n_perm: int = PERMUTATION_DRAWS,
                   seed: int | np.random.Generator | None = DEFAULT_SEED,
                   exact_support: int = EXACT_SIGN_FLIP_SUPPORT) -> SignFlip:
    """Two-sided sign-flip permutation test that the mean paired difference is zero.

    Exact (the full null distribution by grouped convolution) whenever the number of non-zero
    differences is at most ``EXACT_PERMUTATION_MAX_N`` or the differences sit on a grid of at
    most ``exact_support`` points; Monte Carlo otherwise.

    Args:
        diffs: Per-task paired differences (after - before).
        n_perm: Monte Carlo draws when the exact distribution is too large.
        seed: Seed or Generator for the Monte Carlo path.
        exact_support: Largest integer grid (points) the exact path convolves on.

    Returns:
        A :class:`SignFlip`.

    Examples:
        >>> sign_flip_test([0.25, 0.5, 0.25, 0.75, 0.0]).p_value
        0.125
    """
    d = np.asarray(diffs, dtype=np.float64).ravel()
    d = d[np.isfinite(d)]
    mag = np.round(np.abs(d), _DECIMALS)
    nonzero = mag > 0
    n_nonzero = int(nonzero.sum())
    if n_nonzero == 0:
        return SignFlip(float("nan"), "none", 0, 0)
    # the statistic from the same rounded magnitudes the null is built from; sums that differ by
    # less than _TOL (relative) are the same sum reached in a different order
    observed = abs(float(np.sum(np.sign(d[nonzero]) * mag[nonzero])))
    levels, mult = np.unique(mag[nonzero], return_counts=True)
    tol = _TOL * max(1.0, observed)
    if n_nonzero <= EXACT_PERMUTATION_MAX_N:
        sums, probs = _exact_distribution(levels, mult)
        p = float(probs[np.abs(sums) >= observed - tol].sum())
        return SignFlip(min(1.0, round(p, 12)), "exact", n_nonzero, 0)
    grid = _grid_pvalue(levels, mult, d[nonzero], exact_support)
    if grid is not None:
        return SignFlip(grid, "exact", n_nonzero, 0)
    rng = check_rng(seed)
    hits = 0
    step = max(1, min(int(n_perm), BOOTSTRAP_MAX_CELLS // max(levels.size, 1)))
    for start in range(0, int(n_perm), step):
        size = min(step, int(n_perm) - start)
        heads = rng.binomial(mult, 0.5, size=(size, levels.size))
        sums = (2.0 * heads - mult) @ levels
        hits += int((np.abs(sums) >= observed - tol).sum())
    return SignFlip((1.0 + hits) / (1.0 + int(n_perm)), "monte_carlo", n_nonzero, int(n_perm))


def sign_flip_pvalue(diffs: ArrayLike, *, n_perm: int = PERMUTATION_DRAWS,
                     seed: int | np.random.Generator | None = DEFAULT_SEED) -> float:
    """The two-sided sign-flip p-value for a mean paired difference of zero (see :func:`sign_flip_test`).

    Examples:
        >>> sign_flip_pvalue([1.0, 1.0, 1.0])
        0.25
    """
    return sign_flip_test(diffs, n_perm=n_perm, seed=seed).p_value


def _grid_pvalue(levels: np.ndarray, mult: np.ndarray, d: np.ndarray, cap: int) -> float | None:
    """Exact p-value when every |d| is a multiple of a common step (rates over k rollouts are).

    With integer levels L_j = |d| / step, the null sum is 2U - M with U = sum_j L_j B_j and
    M = sum_j L_j m_j; U's distribution on 0..M is the product of the levels' characteristic
    functions (one FFT each, one inverse), exact up to floating-point rounding (about 1e-12).
    None when no step up to 1/4096 fits or M + 1 exceeds ``cap``.
    """
    from fractions import Fraction
    from math import lcm

    from scipy.special import gammaln

    denominator = 1
    for level in levels.tolist():
        frac = Fraction(level).limit_denominator(4096)
        if abs(float(frac) - level) > 1e-9:
            return None
        denominator = lcm(denominator, frac.denominator)
        if denominator > 4096:
            return None
    ints = np.round(levels * denominator).astype(np.int64)
    total = int((ints * mult).sum())
    if total + 1 > cap:
        return None
    size = 1 << int(total + 1).bit_length()
    spectrum = np.ones(size // 2 + 1, dtype=np.complex128)
    for step, m in zip(ints.tolist(), mult.tolist()):
        heads = np.arange(m + 1, dtype=np.float64)
        pmf = np.exp(gammaln(m + 1.0) - gammaln(heads + 1.0) - gammaln(m - heads + 1.0) - m * np.log(2.0))
        placed = np.zeros(size)
        placed[(np.arange(m + 1) * step)] = pmf
        spectrum *= np.fft.rfft(placed)
    dist = np.clip(np.fft.irfft(spectrum, n=size)[: total + 1], 0.0, None)
    observed = abs(int(np.round(float(np.round(d * denominator).sum()))))
    stat = np.abs(2 * np.arange(total + 1) - total)
    return float(min(1.0, round(float(dist[stat >= observed].sum()), 12)))


def _exact_distribution(levels: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The null distribution of sum_j level_j * (2 B_j - m_j), level by level (small n only)."""
    from scipy.special import gammaln

    sums = np.zeros(1)
    probs = np.ones(1)
    for level, m in zip(levels.tolist(), mult.tolist()):
        heads = np.arange(m + 1, dtype=np.float64)
        step_sums = level * (2.0 * heads - m)
        step_probs = np.exp(gammaln(m + 1.0) - gammaln(heads + 1.0) - gammaln(m - heads + 1.0) - m * np.log(2.0))
        sums = np.round((sums[:, None] + step_sums[None, :]).ravel(), _DECIMALS)
        probs = (probs[:, None] * step_probs[None, :]).ravel()
        sums, inverse = np.unique(sums, return_inverse=True)
        probs = np.bincount(inverse.ravel(), weights=probs, minlength=sums.size).astype(np.float64)
    return sums, probs
