"""Unbiased pass@k and pass^k against direct combinatorics (math.comb, exact fractions)."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from whileai.stats.passk import comb_ratio, pass_at_k, pass_pow_k


def _cases(max_n: int = 12):
    for n in range(1, max_n + 1):
        for c in range(n + 1):
            for k in range(1, n + 1):
                yield n, c, k


def test_pass_pow_k_matches_binomial_coefficients():
    n, c, k = map(np.array, zip(*_cases()))
    for kk in np.unique(k):
        sel = k == kk
        got = pass_pow_k(n[sel], c[sel], int(kk))
        want = [float(Fraction(comb(int(ci), int(kk)), comb(int(ni), int(kk)))) for ni, ci in zip(n[sel], c[sel])]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_pass_at_k_matches_binomial_coefficients():
    n, c, k = map(np.array, zip(*_cases()))
    for kk in np.unique(k):
        sel = k == kk
        got = pass_at_k(n[sel], c[sel], int(kk))
        want = [1.0 - float(Fraction(comb(int(ni - ci), int(kk)), comb(int(ni), int(kk)))) for ni, ci in zip(n[sel], c[sel])]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_large_n_is_stable():
    # n = 200, k = 100 (Chen et al.'s setting): the product form must not overflow
    got = pass_at_k([200], [3], 100)[0]
    want = 1.0 - float(Fraction(comb(197, 100), comb(200, 100)))
    assert got == pytest.approx(want, rel=1e-12)
    assert pass_pow_k([200], [199], 100)[0] == pytest.approx(float(Fraction(comb(199, 100), comb(200, 100))), rel=1e-12)


def test_unbiased_by_enumeration():
    # E over all C(n, k) subsets of k rollouts of "all pass" / "any pass" equals the estimator
    import itertools

    outcomes = [1, 1, 0, 1, 0, 0, 1]
    n, c, k = len(outcomes), sum(outcomes), 3
    subsets = list(itertools.combinations(outcomes, k))
    assert pass_pow_k([n], [c], k)[0] == pytest.approx(np.mean([all(s) for s in subsets]))
    assert pass_at_k([n], [c], k)[0] == pytest.approx(np.mean([any(s) for s in subsets]))


def test_short_tasks_are_nan_and_k1_is_pass_rate():
    assert np.isnan(pass_pow_k([3], [3], 4)[0])
    assert np.isnan(pass_at_k([3], [0], 4)[0])
    np.testing.assert_allclose(pass_pow_k([4, 8], [1, 6], 1), [0.25, 0.75])
    np.testing.assert_allclose(pass_at_k([4, 8], [1, 6], 1), [0.25, 0.75])


def test_monotone_in_k():
    n, c = np.full(9, 8), np.arange(9)
    prev_pow, prev_at = np.ones(9), np.zeros(9)
    for k in range(1, 9):
        now_pow, now_at = pass_pow_k(n, c, k), pass_at_k(n, c, k)
        assert (now_pow <= prev_pow + 1e-15).all() and (now_at >= prev_at - 1e-15).all()
        prev_pow, prev_at = now_pow, now_at
    assert comb_ratio([2], [4], 2)[0] == pytest.approx(1 / 6)


def test_many_tasks_take_the_distinct_pair_path_and_agree():
    rng = np.random.default_rng(0)
    n = rng.integers(4, 13, 20_000)
    c = rng.binomial(n, 0.4)
    got_pow, got_at = pass_pow_k(n, c, 4), pass_at_k(n, c, 4)
    for i in rng.integers(0, n.size, 300):
        assert got_pow[i] == pytest.approx(comb(int(c[i]), 4) / comb(int(n[i]), 4), abs=1e-15)
        assert got_at[i] == pytest.approx(1 - comb(int(n[i] - c[i]), 4) / comb(int(n[i]), 4), abs=1e-15)
    assert np.isnan(pass_pow_k(np.r_[n, 3], np.r_[c, 1], 4)[-1])
