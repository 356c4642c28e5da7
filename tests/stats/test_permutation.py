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
