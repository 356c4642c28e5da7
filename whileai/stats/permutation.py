"""The sign-flip permutation test for a mean paired difference, exact where it can be.

Under the null that a task's two arms are exchangeable, each paired difference d_i is as likely
to be +|d_i| as -|d_i| (Good 2005, Permutation, Parametric and Bootstrap Tests of Hypotheses,
ch. 3). The statistic is |sum d_i|; the p-value is the share of the 2^n sign patterns whose
|sum| reaches the observed one. Tasks with equal |d| are interchangeable, so the patterns group
by level: a level with multiplicity m contributes level * (2B - m), B ~ Binomial(m, 1/2). The
exact null distribution is the convolution of those few scaled binomials, which stays small for
the grid-valued differences pass rates give (k rollouts a side give at most 2k + 1 levels).
When the convolution would be too large, the same grouped form is drawn by Monte Carlo
(``PERMUTATION_DRAWS`` draws) with the p-value (1 + hits) / (1 + draws) (Phipson and Smyth
2010, "Permutation p-values should never be zero", SAGMB 9:39).
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
    differences is at most ``EXACT_PERMUTATION_MAX_N`` or the grouped distribution has at most
    ``exact_support`` points; Monte Carlo otherwise.

    Args:
        diffs: Per-task paired differences (after - before).
        n_perm: Monte Carlo draws when the exact distribution is too large.
        seed: Seed or Generator for the Monte Carlo path.
        exact_support: Largest grouped null distribution computed exactly.

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
    observed = abs(float(np.round(d[nonzero].sum(), _DECIMALS)))
    levels, mult = np.unique(mag[nonzero], return_counts=True)
    tol = 1e-9 * max(1.0, observed)
    exact = _exact_distribution(levels, mult, exact_support if n_nonzero > EXACT_PERMUTATION_MAX_N else None)
    if exact is not None:
        sums, probs = exact
        p = float(probs[np.abs(sums) >= observed - tol].sum())
        return SignFlip(min(1.0, round(p, 12)), "exact", n_nonzero, 0)
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


def _exact_distribution(levels: np.ndarray, mult: np.ndarray, cap: int | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The null distribution of sum_j level_j * (2 B_j - m_j), or None when it outgrows ``cap``."""
    from scipy.special import gammaln

    sums = np.zeros(1)
    probs = np.ones(1)
    for level, m in zip(levels.tolist(), mult.tolist()):
        if cap is not None and sums.size * (m + 1) > cap * 4:
            return None
        heads = np.arange(m + 1, dtype=np.float64)
        step_sums = level * (2.0 * heads - m)
        step_probs = np.exp(gammaln(m + 1.0) - gammaln(heads + 1.0) - gammaln(m - heads + 1.0) - m * np.log(2.0))
        sums = np.round((sums[:, None] + step_sums[None, :]).ravel(), _DECIMALS)
        probs = (probs[:, None] * step_probs[None, :]).ravel()
        sums, inverse = np.unique(sums, return_inverse=True)
        probs = np.bincount(inverse.ravel(), weights=probs, minlength=sums.size).astype(np.float64)
        if cap is not None and sums.size > cap:
            return None
    return sums, probs
