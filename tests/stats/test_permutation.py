"""The sign-flip p-value against exact enumeration of all 2^n sign patterns."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from whileai.stats.permutation import sign_flip_pvalue, sign_flip_test


def _enumerate(d: np.ndarray) -> float:
    d = d[d != 0]
    observed = abs(d.sum())
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=d.size):
        hits += abs(np.dot(signs, d)) >= observed - 1e-9
    return hits / 2 ** d.size


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 11, 14])
def test_matches_exact_enumeration_on_grid_values(n):
    rng = np.random.default_rng(n)
    d = rng.choice(np.arange(-4, 5) / 4, size=n)  # paired differences of rates over 4 rollouts: ties
    if not d.any():
        d[0] = 0.25
    assert sign_flip_pvalue(d) == pytest.approx(_enumerate(d), abs=1e-12)


@pytest.mark.parametrize("n", [4, 9, 13])
def test_matches_exact_enumeration_on_continuous_values(n):
    d = np.random.default_rng(100 + n).normal(0.2, 1.0, n)
    result = sign_flip_test(d)
    assert result.method == "exact"
    assert result.p_value == pytest.approx(_enumerate(d), abs=1e-12)


def test_zeros_carry_no_sign():
    d = np.array([0.5, 0.25, 0.0, 0.0, 0.5])
    assert sign_flip_test(d).n_nonzero == 3
    assert sign_flip_pvalue(d) == pytest.approx(_enumerate(d))
    assert np.isnan(sign_flip_pvalue([0.0, 0.0]))


def test_grouped_exact_path_beyond_enumeration_and_monte_carlo_agree():
    rng = np.random.default_rng(7)
    d = rng.choice(np.array([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75]), size=60)
    exact = sign_flip_test(d)
    assert exact.method == "exact"  # 60 tasks but few levels: the grouped distribution is small
    mc = sign_flip_test(d, exact_support=10, n_perm=40_000, seed=1)
    assert mc.method == "monte_carlo" and mc.draws == 40_000
    se = np.sqrt(exact.p_value * (1 - exact.p_value) / 40_000)
    assert abs(mc.p_value - exact.p_value) < 4 * se + 1e-4


def test_monte_carlo_p_is_never_zero_and_is_seeded():
    d = np.full(200, 0.25) + np.random.default_rng(1).normal(0, 1e-3, 200)  # many distinct levels
    a = sign_flip_test(d, exact_support=10, n_perm=2000, seed=3)
    b = sign_flip_test(d, exact_support=10, n_perm=2000, seed=3)
    assert a.p_value == b.p_value == pytest.approx(1 / 2001)


def test_null_p_values_are_roughly_uniform():
    rng = np.random.default_rng(5)
    ps = np.array([sign_flip_pvalue(rng.choice([-0.25, 0.0, 0.25], 20)) for _ in range(400)])
    assert 0.02 <= np.mean(ps <= 0.05) <= 0.08


@pytest.mark.parametrize("k_before,k_after", [(4, 4), (8, 8), (4, 6)])
def test_grid_path_equals_the_level_by_level_distribution(k_before, k_after):
    from whileai.stats.permutation import _exact_distribution

    rng = np.random.default_rng(k_before * 10 + k_after)
    d = rng.binomial(k_after, 0.55, 40) / k_after - rng.binomial(k_before, 0.5, 40) / k_before
    got = sign_flip_test(d)
    assert got.method == "exact"
    nz = np.round(np.abs(d[d != 0]), 9)
    levels, mult = np.unique(nz, return_counts=True)
    sums, probs = _exact_distribution(levels, mult)
    observed = abs(float(d.sum()))
    assert got.p_value == pytest.approx(float(probs[np.abs(sums) >= observed - 1e-7].sum()), abs=1e-10)


def test_large_grid_is_fast_and_matches_monte_carlo():
    import time

    rng = np.random.default_rng(3)
    d = rng.binomial(8, 0.52, 125_000) / 8 - rng.binomial(8, 0.5, 125_000) / 8
    start = time.perf_counter()
    exact = sign_flip_test(d)
    assert exact.method == "exact" and time.perf_counter() - start < 2.0
    mc = sign_flip_test(d, exact_support=10, n_perm=20_000, seed=2)
    assert abs(mc.p_value - exact.p_value) < 4 * np.sqrt(max(exact.p_value, 1e-4) / 20_000) + 1e-4


# exact wherever affordable; Monte Carlo that cannot cross alpha silently (issue: exact .0543 came out .0492)

def _meet_in_the_middle(d: np.ndarray) -> float:
    """Every one of the 2^n sign patterns, as the sums of two halves' patterns (2^(n/2) each)."""
    import itertools

    half = d.size // 2
    left = np.array(list(itertools.product([-1.0, 1.0], repeat=half))) @ d[:half]
    right = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size - half))) @ d[half:]
    total = np.abs(left[:, None] + right[None, :])
    return float(np.mean(total >= abs(d.sum()) - 1e-9))


def test_twenty_distinct_magnitudes_off_a_grid_are_exact_not_drawn():
    rng = np.random.default_rng(7)
    d = rng.normal(0.15, 0.4, 20) + rng.uniform(0, 1e-3, 20) * np.pi  # no common step
    r = sign_flip_test(d)
    assert r.method == "exact" and r.draws == 0 and r.mc_error == 0.0
    assert r.p_value == pytest.approx(_meet_in_the_middle(d), abs=1e-12)


def _near_alpha(rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Forty differences on a 1/4 grid whose exact p sits just above 0.05."""
    while True:
        d = (rng.binomial(4, 0.45, 40) - rng.binomial(4, 0.4, 40)) / 4.0
        p = sign_flip_test(d).p_value
        if 0.0503 < p < 0.0525:
            return d, p


def test_monte_carlo_near_alpha_adds_draws_reports_its_error_and_never_crosses_silently():
    d, exact = _near_alpha(np.random.default_rng(39))
    silent = flagged = 0
    for seed in range(40):
        r = sign_flip_test(d, exact_support=1, n_perm=10_000, seed=seed, max_draws=40_000)
        assert r.method == "monte_carlo" and r.mc_error == pytest.approx((r.p_value * (1 - r.p_value) / r.draws) ** 0.5)
        assert r.draws > 10_000 or not abs(r.p_value - 0.05) < 3 * r.mc_error
        flagged += r.straddles
        silent += (r.p_value < 0.05) != (exact < 0.05) and not r.straddles
    assert silent == 0 and flagged > 0


def test_sign_draws_have_the_null_moments_for_single_and_repeated_values():
    """Random bits for a value seen once, binomial heads for a repeated one: the same null."""
    from whileai.stats.permutation import _sign_draws

    values = np.array([0.3, 1.7, 2.5, 4.0, 0.125, 0.01, 0.02, 0.001])
    mult = np.array([1, 1, 3, 1, 6, 64, 130, 3000])  # one bit, masked words, a whole word, three words, binomial
    a, v = _sign_draws(values, mult, 200_000, np.random.default_rng(11))
    # sum_i e_i d_i and sum_i e_i over fair signs: mean 0, variances sum m d^2 and sum m
    var_a, var_v = float((mult * values**2).sum()), float(mult.sum())
    assert abs(a.mean()) < 4 * np.sqrt(var_a / a.size)
    assert abs(v.mean()) < 4 * np.sqrt(var_v / v.size)
    assert a.var() == pytest.approx(var_a, rel=0.02)
    assert v.var() == pytest.approx(var_v, rel=0.02)
    # each value's heads are Binomial(m, 1/2): the 130-fold value's share of v has its variance
    for m in (130, 3000):
        alone = _sign_draws(np.array([1.0]), np.array([m]), 100_000, np.random.default_rng(m))[1]
        assert alone.var() == pytest.approx(m, rel=0.02)
        assert set(np.unique(alone).astype(int)) <= set(range(-m, m + 1, 2))
    small = _sign_draws(values[:5], mult[:5], 200_000, np.random.default_rng(5))[1]
    assert set(np.unique(small).astype(int)) == set(range(-12, 13, 2))  # every parity-consistent total


def test_monte_carlo_on_continuous_differences_agrees_with_the_exact_null():
    """Thousands of distinct differences (a continuous metric): Monte Carlo against the normal limit."""
    from scipy import stats

    rng = np.random.default_rng(4)
    d = rng.normal(0.03, 1.0, 3000)
    mc = sign_flip_test(d, n_perm=20_000, seed=2)
    assert mc.method == "monte_carlo"
    # the sign-flip null of sum e_i d_i has variance sum d_i^2; n = 3000 is deep in its normal limit
    z = abs(d.sum()) / np.sqrt((d**2).sum())
    normal = 2 * stats.norm.sf(z)
    assert abs(mc.p_value - normal) < 4 * np.sqrt(normal * (1 - normal) / 20_000) + 2e-3


def test_many_distinct_differences_raise_no_overflow_warning():
    d = np.random.default_rng(9).normal(0.0, 1.0, 2000)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sign_flip_test(d, n_perm=200, seed=1).method == "monte_carlo"
