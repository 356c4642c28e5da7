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
Off a grid, the level-by-level enumeration runs while its support stays within
``EXACT_SIGN_FLIP_SUPPORT`` points (20 distinct magnitudes are 2^20 at most), so the exact path is
taken wherever it is affordable. Otherwise the same grouped form is drawn by Monte Carlo
(``PERMUTATION_DRAWS`` draws, doubled up to ``PERMUTATION_MAX_DRAWS`` while the p-value sits within
``PERMUTATION_ALPHA_MARGIN`` Monte Carlo errors of alpha) with the p-value (1 + hits) / (1 + draws)
(Phipson and Smyth 2010, "Permutation p-values should never be zero", SAGMB 9:39); the result
carries its Monte Carlo error, so a p-value that still straddles alpha is reported as such.

:func:`sign_flip_interval` inverts the same test: the set of shifts delta whose differences
d_i - delta the test does not reject (Lehmann 1986, Testing Statistical Hypotheses, 3.5; for
randomization tests Garthwaite 1996, "Confidence intervals from randomization tests", Biometrics
52:1387). For one sign pattern e, |sum e_i (d_i - delta)| - |sum (d_i - delta)| is monotone in
delta on each side of the mean difference (the observed sum moves with slope n, a flipped one with
slope |sum e_i| <= n), so each pattern's indicator switches once on each side, the p-value is
monotone there and the set is an interval holding the mean: it excludes 0 exactly when the test
rejects at 0. Each pattern's switch points are closed-form, so the interval's ends are quantiles of
them under the null distribution of (sum e_i d_i, sum e_i), exact on the grid of the differences
(a two-dimensional convolution) while it has at most ``SIGN_FLIP_JOINT_SUPPORT`` cells, else by
Monte Carlo patterns.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from whileai.defaults import (
    BOOTSTRAP_MAX_CELLS,
    DEFAULT_SEED,
    EXACT_PERMUTATION_MAX_N,
    EXACT_SIGN_FLIP_SUPPORT,
    PERMUTATION_ALPHA_MARGIN,
    PERMUTATION_DRAWS,
    PERMUTATION_MAX_DRAWS,
    SIGN_FLIP_JOINT_SUPPORT,
)
from whileai.stats.rng import check_rng

__all__ = ["SignFlip", "SignFlipInterval", "sign_flip_interval", "sign_flip_pvalue", "sign_flip_test"]

_DECIMALS = 9  # |d| levels and sums are compared after rounding to this many decimals
_TOL = 1e-7  # relative tolerance when comparing a null sum with the observed one
_DIRECT_WORK = 1_000_000  # cell updates under which the joint distribution is built by direct shifted adds


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
    mc_error: float = 0.0
    """Monte Carlo standard error of ``p_value``, ``sqrt(p (1 - p) / draws)`` (0 when exact)."""
    straddles: bool = False
    """True when the Monte Carlo p-value is within ``PERMUTATION_ALPHA_MARGIN`` errors of ``alpha``
    after ``PERMUTATION_MAX_DRAWS`` draws: the side of alpha it falls on is not settled."""


def sign_flip_test(diffs: ArrayLike, *, n_perm: int = PERMUTATION_DRAWS,
                   seed: int | np.random.Generator | None = DEFAULT_SEED,
                   exact_support: int = EXACT_SIGN_FLIP_SUPPORT, alpha: float = 0.05,
                   max_draws: int = PERMUTATION_MAX_DRAWS) -> SignFlip:
    """Two-sided sign-flip permutation test that the mean paired difference is zero.

    Exact (the full null distribution by grouped convolution) whenever the number of non-zero
    differences is at most ``EXACT_PERMUTATION_MAX_N``, the differences sit on a grid of at most
    ``exact_support`` points, or the level-by-level enumeration stays within ``exact_support``
    points; Monte Carlo otherwise, with draws doubled from ``n_perm`` up to ``max_draws`` while the
    p-value is within ``PERMUTATION_ALPHA_MARGIN`` Monte Carlo errors of ``alpha`` (Good 2005, ch. 3;
    Phipson and Smyth 2010).

    Args:
        diffs: Per-task paired differences (after - before).
        n_perm: Monte Carlo draws when the exact distribution is too large.
        seed: Seed or Generator for the Monte Carlo path.
        exact_support: Largest integer grid (points) the exact path convolves on.
        alpha: The level the verdict reads the p-value at (where Monte Carlo draws are added).
        max_draws: Most Monte Carlo draws.

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
        sums, probs = _exact_distribution(levels, mult)  # type: ignore[misc]
        p = float(probs[np.abs(sums) >= observed - tol].sum())
        return SignFlip(min(1.0, round(p, 12)), "exact", n_nonzero, 0)
    grid = _grid_pvalue(levels, mult, d[nonzero], exact_support)
    if grid is not None:
        return SignFlip(grid, "exact", n_nonzero, 0)
    enumerated = _exact_distribution(levels, mult, cap=exact_support)
    if enumerated is not None:
        sums, probs = enumerated
        p = float(probs[np.abs(sums) >= observed - tol].sum())
        return SignFlip(min(1.0, round(p, 12)), "exact", n_nonzero, 0)
    rng = check_rng(seed)
    hits = 0
    done = 0
    target = int(n_perm)
    step = max(1, min(target, BOOTSTRAP_MAX_CELLS // max(levels.size, 1)))
    while True:
        while done < target:
            size = min(step, target - done)
            sums, _ = _sign_draws(levels, mult, size, rng)
            hits += int((np.abs(sums) >= observed - tol).sum())
            done += size
        p = (1.0 + hits) / (1.0 + done)
        error = float(np.sqrt(p * (1.0 - p) / done))
        near = abs(p - alpha) < PERMUTATION_ALPHA_MARGIN * error
        if not near or target >= max_draws:
            return SignFlip(p, "monte_carlo", n_nonzero, done, error, near)
        target = min(2 * target, int(max_draws))


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


def _exact_distribution(levels: np.ndarray, mult: np.ndarray, cap: int | None = None
                        ) -> tuple[np.ndarray, np.ndarray] | None:
    """The null distribution of sum_j level_j * (2 B_j - m_j), level by level.

    None when ``cap`` is given and the support would pass it (the product of the levels' sizes
    bounds it before any work, then the running support after each level).
    """
    from scipy.special import gammaln

    # the product of the levels' sizes, as a sum of logs: the product itself overflows past 1e308
    if cap is not None and float(np.log1p(mult.astype(np.float64)).sum()) > math.log(4.0 * cap):
        return None

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
        if cap is not None and sums.size > cap:
            return None
    return sums, probs


class SignFlipInterval(NamedTuple):
    """The sign-flip test's confidence interval for a shift of the mean paired difference."""

    lo: float
    """Smallest shift the test does not reject at ``1 - level`` (clipped to ``bounds``)."""
    hi: float
    """Largest shift the test does not reject."""
    method: Literal["exact", "monte_carlo", "none"]
    """How the sign patterns' null distribution was obtained."""
    draws: int
    """Monte Carlo sign patterns (0 when exact)."""


def sign_flip_interval(diffs: ArrayLike, *, level: float = 0.95, p_at_zero: float | None = None,
                       n_perm: int = PERMUTATION_DRAWS, seed: int | np.random.Generator | None = DEFAULT_SEED,
                       joint_support: int = SIGN_FLIP_JOINT_SUPPORT,
                       bounds: tuple[float, float] = (-np.inf, np.inf)) -> SignFlipInterval:
    """Confidence interval for the mean paired difference that inverts the two-sided sign-flip test.

    The set of shifts delta at which the sign-flip test on ``d_i - delta`` has p >= 1 - level
    (Lehmann 1986, 3.5; Garthwaite 1996, Biometrics 52:1387). For a sign pattern with
    ``a = sum e_i d_i`` and ``v = sum e_i`` over n tasks, its flipped sum reaches the observed one
    at delta exactly when ``delta >= min((n m - a) / (n - v), (a + n m) / (n + v))`` (below the
    mean m) and ``delta <= max(...)`` (above it); the two all-equal patterns reach it everywhere.
    So the p-value below m is the null probability that a pattern's lower switch is at most delta,
    and the interval's ends are the ``1 - level`` quantiles of the lower and upper switches. The
    null distribution of (a, v) is exact on the integer grid of the differences while it has at most
    ``joint_support`` cells (one FFT convolution per distinct difference), else ``n_perm`` Monte
    Carlo patterns (plus the observed one). Zeros count: a task that did not move is ``-delta``
    once shifted.

    ``p_at_zero``, the p-value the verdict reads (:func:`sign_flip_test`), makes the interval and
    the verdict one decision: the p-value curve is moved by the difference between it and the
    curve's own value at 0 (below 1e-12 when both are exact; a control variate for Monte Carlo), so
    the interval excludes 0 exactly when ``p_at_zero < 1 - level``.

    Args:
        diffs: Per-task paired differences (after - before), zeros included.
        level: Confidence level.
        p_at_zero: The deciding test's p-value at shift 0 (None: the curve's own).
        n_perm: Monte Carlo patterns when the exact joint distribution is too large.
        seed: Seed or Generator for the Monte Carlo path.
        joint_support: Most cells of the exact joint distribution.
        bounds: The range a shift can take (``(-1, 1)`` for differences of values in [0, 1]); an
            end the test never closes is this bound.

    Returns:
        A :class:`SignFlipInterval`; NaN ends under two tasks.

    Examples:
        >>> r = sign_flip_interval([0.5] * 6)
        >>> (r.lo, r.hi), r.method
        ((0.5, 0.5), 'exact')
        >>> r = sign_flip_interval([0.25, 0.5, 0.0, 0.75, 0.5, 0.25, 0.5, 0.0], bounds=(-1.0, 1.0))
        >>> round(r.lo, 4), round(r.hi, 4)
        (0.125, 0.5833)
    """
    d = np.asarray(diffs, dtype=np.float64).ravel()
    d = d[np.isfinite(d)]
    n = d.size
    lo_b, hi_b = float(bounds[0]), float(bounds[1])
    if n < 2:
        return SignFlipInterval(float("nan"), float("nan"), "none", 0)
    alpha = 1.0 - level
    values, mult = np.unique(np.round(d, _DECIMALS), return_counts=True)
    joint = _joint_patterns(values, mult, joint_support)
    if joint is not None:
        a_num, v, prob, scale = joint
        method: Literal["exact", "monte_carlo", "none"] = "exact"
        draws = 0
        total = float(np.round(d * scale).sum())  # n m on the grid, an integer
    else:
        rng = check_rng(seed)
        a_num, v, prob = _drawn_patterns(values, mult, int(n_perm), rng)
        scale, method, draws = 1.0, "monte_carlo", int(n_perm)
        total = float((values * mult).sum())
    low, up = _switches(a_num, v, float(n), total, scale)
    mean = total / scale / n
    cut = alpha
    if p_at_zero is not None and math.isfinite(p_at_zero):
        own = 1.0 if mean == 0.0 else (float(prob[low <= 0.0].sum()) if mean > 0 else float(prob[up >= 0.0].sum()))
        cut = alpha - (float(p_at_zero) - own)
    lo = _end(low, prob, cut, ascending=True)
    hi = _end(up, prob, cut, ascending=False)
    if p_at_zero is not None and math.isfinite(p_at_zero) and mean != 0.0:
        # the curve's value at 0 was moved onto p_at_zero; settle a rounding tie at 0 the verdict's way
        rejects = p_at_zero < alpha
        if mean > 0 and rejects and lo <= 0.0:
            lo = float(np.min(low[low > 0.0])) if (low > 0.0).any() else mean
        elif mean < 0 and rejects and hi >= 0.0:
            hi = float(np.max(up[up < 0.0])) if (up < 0.0).any() else mean
        elif mean > 0 and not rejects and lo > 0.0:
            lo = 0.0
        elif mean < 0 and not rejects and hi < 0.0:
            hi = 0.0
    lo = float(np.clip(lo, lo_b, hi_b)) if math.isfinite(lo) else lo_b
    hi = float(np.clip(hi, lo_b, hi_b)) if math.isfinite(hi) else hi_b
    return SignFlipInterval(lo, hi, method, draws)


def _end(switch: np.ndarray, prob: np.ndarray, cut: float, *, ascending: bool) -> float:
    """The first switch point (in the given direction) at which the summed probability reaches ``cut``."""
    if cut <= 0.0:
        return -np.inf if ascending else np.inf
    order = np.argsort(switch if ascending else -switch, kind="stable")
    s, c = switch[order], np.cumsum(prob[order])
    # ties at one switch point enter together: read the cumulative sum at the last of each run
    last = np.r_[s[1:] != s[:-1], True]
    s, c = s[last], c[last]
    hit = np.flatnonzero(c >= cut - 1e-12)
    if not hit.size:
        return np.inf if ascending else -np.inf
    return float(s[hit[0]])


def _switches(a: np.ndarray, v: np.ndarray, n: float, total: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Each pattern's lower and upper switch points (the shifts where its sum ties the observed one)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        num1 = total - a  # over n - v
        num2 = a + total  # over n + v
        tol = 1e-9 * max(1.0, abs(total))
        num1 = np.where(np.abs(num1) <= tol, 0.0, num1)
        num2 = np.where(np.abs(num2) <= tol, 0.0, num2)
        r1 = num1 / (n - v)
        r2 = num2 / (n + v)
    full = np.abs(v) >= n
    low = np.where(full, -np.inf, np.minimum(r1, r2)) / scale
    up = np.where(full, np.inf, np.maximum(r1, r2)) / scale
    return low, up


def _joint_patterns(values: np.ndarray, mult: np.ndarray, cap: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
    """Exact null distribution of (sum e_i d_i, sum e_i) on the differences' integer grid.

    Returns ``(a, v, prob, scale)`` with ``a`` in grid units (``d * scale`` integers) over the cells
    of positive probability; None off a grid of step at least 1/4096, or over ``cap`` cells.
    """
    from fractions import Fraction
    from math import lcm

    from scipy.special import gammaln

    denominator = 1
    for value in values.tolist():
        frac = Fraction(value).limit_denominator(4096)
        if abs(float(frac) - value) > 1e-9:
            return None
        denominator = lcm(denominator, frac.denominator)
        if denominator > 4096:
            return None
    ints = np.round(values * denominator).astype(np.int64)
    n = int(mult.sum())
    low = int((np.minimum(ints, 0) * mult).sum())
    span = int((np.abs(ints) * mult).sum()) + 1
    if span * (n + 1) > cap:
        return None
    if span * (n + 1) * (n + values.size) <= _DIRECT_WORK:
        # small tables: add each value's binomial along its line directly (no FFT set-up)
        dist = np.zeros((span, n + 1))
        dist[-low, 0] = 1.0
        for step, m in zip(ints.tolist(), mult.tolist()):
            pmf = np.exp(gammaln(m + 1.0) - gammaln(np.arange(m + 1) + 1.0) - gammaln(m - np.arange(m + 1) + 1.0)
                         - m * np.log(2.0))
            new = np.zeros_like(dist)
            for b in range(m + 1):
                shift = b * step
                src = dist[max(0, -shift): span - max(0, shift), : n + 1 - b]
                new[max(0, shift): max(0, shift) + src.shape[0], b:] += pmf[b] * src
            dist = new
    else:
        rows, cols = 1 << int(span).bit_length(), 1 << int(n + 1).bit_length()
        spectrum = np.ones((rows, cols // 2 + 1), dtype=np.complex128)
        for step, m in zip(ints.tolist(), mult.tolist()):
            heads = np.arange(m + 1)
            pmf = np.exp(gammaln(m + 1.0) - gammaln(heads + 1.0) - gammaln(m - heads + 1.0) - m * np.log(2.0))
            placed = np.zeros((rows, cols))
            # B heads of this value add step * B to sum(j B) (wrapped when negative) and B to sum(B)
            placed[(heads * step) % rows, heads] = pmf
            spectrum *= np.fft.rfft2(placed)
        full = np.fft.irfft2(spectrum, s=(rows, cols))
        p_idx = (np.arange(span) + low) % rows  # sum(j B) from low to low + span - 1
        dist = np.clip(full[p_idx][:, : n + 1], 0.0, None)
    keep = dist > 1e-15
    pj, qj = np.nonzero(keep)
    prob = dist[keep]
    prob = prob / prob.sum()
    const = int((ints * mult).sum())
    a = 2.0 * (pj + low) - const  # sum e j = 2 sum(j B) - sum(j m)
    v = 2.0 * qj - n
    return a.astype(np.float64), v.astype(np.float64), prob, float(denominator)


#: A value seen more than this many times gets one ``rng.binomial`` draw (about 200 ns, whatever its
#: count) instead of popcounts of random words (about 4 ns a 64-bit word).
_MOST_WORD_BITS = 1024
_ALL_BITS = np.iinfo(np.uint64).max


def _random_words(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform random 64-bit words (64 fair bits each), from the generator's full uint64 range."""
    return rng.integers(0, _ALL_BITS, size=n, dtype=np.uint64, endpoint=True)


def _sign_draws(values: np.ndarray, mult: np.ndarray, size: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray]:
    """``size`` random sign patterns: each draw's ``sum_i e_i d_i`` and ``sum_i e_i`` over fair signs e_i.

    ``values`` are the distinct differences and ``mult`` how often each occurs; a value seen m
    times contributes ``value * (2 B - m)`` with B ~ Binomial(m, 1/2) heads, the number of set
    bits among m fair random bits. The bits come from random 64-bit words: a value seen once is one
    bit, a value seen up to ``_MOST_WORD_BITS`` times the set bits (``np.bitwise_count``) of
    ceil(m / 64) random 64-bit words masked to m bits, values with as many words drawn together;
    a value seen more often is one ``rng.binomial`` draw. On a continuous metric (every value once)
    this is ten times cheaper than a binomial draw per value, on a mean over 8 rollouts (values
    seen 2 to 100 times) about three times (docs/performance.md).
    """
    a = np.zeros(size)
    v = np.zeros(size)
    once = mult == 1
    if once.any():
        cells = size * int(once.sum())
        n_once = cells // size
        bits = np.unpackbits(_random_words(rng, (cells + 63) // 64).view(np.uint8), count=cells).reshape(size, n_once)
        a += 2.0 * (bits @ values[once]) - float(values[once].sum())
        v += 2.0 * bits.sum(axis=1, dtype=np.int64) - n_once
    words = np.where(once | (mult > _MOST_WORD_BITS), 0, (mult + 63) // 64)
    groups: list[tuple[np.ndarray, np.ndarray]] = []
    for w in np.unique(words[words > 0]).tolist():
        which = words == w
        # each value's words: all bits but the last word's, which keeps m - 64 (w - 1) bits (1 to 64)
        last = (mult[which] - 64 * (w - 1)).astype(np.uint64)
        masks = np.full((int(which.sum()), w), _ALL_BITS, dtype=np.uint64)
        masks[:, -1] = np.where(last == 64, _ALL_BITS, (np.uint64(1) << (last % np.uint64(64))) - np.uint64(1))
        drawn = _random_words(rng, size * masks.size).reshape(size, *masks.shape)
        groups.append((np.bitwise_count(drawn & masks).sum(axis=2, dtype=np.int64), which))
    many = mult > _MOST_WORD_BITS
    if many.any():
        groups.append((rng.binomial(mult[many], 0.5, size=(size, int(many.sum()))), many))
    for heads, which in groups:
        flips = 2.0 * heads - mult[which]
        a += flips @ values[which]
        v += flips.sum(axis=1)
    return a, v


def _drawn_patterns(values: np.ndarray, mult: np.ndarray, draws: int, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``draws`` Monte Carlo sign patterns grouped by distinct difference, plus the observed one."""
    a_parts, v_parts = [np.array([float((values * mult).sum())])], [np.array([float(mult.sum())])]
    step = max(1, min(draws, BOOTSTRAP_MAX_CELLS // max(values.size, 1)))
    done = 0
    while done < draws:
        size = min(step, draws - done)
        a_draw, v_draw = _sign_draws(values, mult, size, rng)
        a_parts.append(a_draw)
        v_parts.append(v_draw)
        done += size
    a, v = np.concatenate(a_parts), np.concatenate(v_parts)
    return a, v, np.full(a.size, 1.0 / a.size)
