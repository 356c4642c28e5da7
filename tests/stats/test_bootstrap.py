"""The vectorised bootstrap against scipy.stats.bootstrap and a plain numpy loop."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from whileai.stats.bootstrap import (
    bootstrap_mean_ci,
    bootstrap_means,
    bootstrap_moments,
    paired_bootstrap_ci,
)


def _task_means(n_tasks: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.binomial(k, rng.beta(2.0, 1.5, n_tasks)) / k


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_matches_scipy_bootstrap(method):
    x = _task_means(40, 4, 1)
    lo, hi = bootstrap_mean_ci(x, n_boot=40_000, seed=2, method=method)
    ref = stats.bootstrap((x,), np.mean, n_resamples=40_000, method="BCa" if method == "bca" else "percentile",
                          random_state=np.random.default_rng(3), vectorized=True).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.012)
    assert hi == pytest.approx(ref.high, abs=0.012)


def test_continuous_values_take_the_index_path_and_match_scipy():
    x = np.random.default_rng(9).random(300)  # 300 distinct levels: index resampling in chunks
    lo, hi = bootstrap_mean_ci(x, n_boot=20_000, seed=1)
    ref = stats.bootstrap((x,), np.mean, n_resamples=20_000, method="percentile",
                          random_state=np.random.default_rng(2)).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.006) and hi == pytest.approx(ref.high, abs=0.006)


def test_multinomial_trick_has_the_index_resampling_distribution():
    x = _task_means(25, 4, 3)
    fast = bootstrap_means(x, n_boot=50_000, seed=4)
    rng = np.random.default_rng(5)
    slow = x[rng.integers(0, x.size, size=(50_000, x.size))].mean(axis=1)
    assert fast.mean() == pytest.approx(slow.mean(), abs=0.002)
    assert fast.std() == pytest.approx(slow.std(), rel=0.02)
    np.testing.assert_allclose(np.quantile(fast, [0.025, 0.5, 0.975]), np.quantile(slow, [0.025, 0.5, 0.975]), atol=0.011)


def test_same_seed_same_output_and_chunking_does_not_change_draws():
    x = _task_means(30, 8, 6)
    a = bootstrap_means(x, n_boot=1000, seed=7)
    b = bootstrap_means(x, n_boot=1000, seed=7)
    c = bootstrap_means(x, n_boot=1000, seed=7, chunk=33)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, c, atol=1e-12)
    assert not np.array_equal(a, bootstrap_means(x, n_boot=1000, seed=8))
    y = np.random.default_rng(1).random(500)
    np.testing.assert_allclose(bootstrap_means(y, n_boot=300, seed=2), bootstrap_means(y, n_boot=300, seed=2, chunk=7))


def test_paired_interval_matches_a_plain_numpy_loop():
    rng = np.random.default_rng(11)
    before = rng.binomial(4, rng.beta(2, 2, 30)) / 4
    after = np.clip(before + rng.choice([-0.25, 0.0, 0.25, 0.5], 30), 0, 1)
    lo, hi = paired_bootstrap_ci(before, after, n_boot=40_000, seed=12)
    loop_rng = np.random.default_rng(13)
    deltas = []
    for _ in range(10_000):
        idx = loop_rng.integers(0, 30, 30)
        deltas.append(after[idx].mean() - before[idx].mean())
    ref_lo, ref_hi = np.quantile(deltas, [0.025, 0.975])
    assert lo == pytest.approx(ref_lo, abs=0.01) and hi == pytest.approx(ref_hi, abs=0.01)


def test_moments_variance_matches_numpy_on_resamples():
    x = np.array([0.0, 0.25, 0.25, 1.0, 0.5])
    means, var = bootstrap_moments(x, n_boot=20_000, seed=1)
    rng = np.random.default_rng(2)
    ref = x[rng.integers(0, 5, size=(20_000, 5))]
    assert var.mean() == pytest.approx(ref.var(axis=1, ddof=1).mean(), rel=0.02)
    assert means.mean() == pytest.approx(x.mean(), abs=0.005)


def test_degenerate_and_tiny_inputs():
    assert bootstrap_mean_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert np.isnan(bootstrap_mean_ci([0.5])[0])
    assert bootstrap_means([], n_boot=10).size == 0
    with pytest.raises(ValueError, match="one value per paired task"):
        paired_bootstrap_ci([0.0, 1.0], [1.0])
