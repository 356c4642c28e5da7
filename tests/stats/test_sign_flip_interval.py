"""The sign-flip test's own interval: against brute-force inversion, and one decision with the test."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from whileai.stats.permutation import sign_flip_interval, sign_flip_test


def _brute(d: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Invert the test by enumerating every sign pattern at every shift on a fine grid and at each switch point."""
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size)))
    flipped = signs @ d  # sum e d
    v = signs.sum(axis=1)
    n = d.size
    total = d.sum()
    # the p-value is a step function whose steps sit at the patterns' switch points: test there and between
    with np.errstate(divide="ignore", invalid="ignore"):
        cand = np.concatenate([(total - flipped) / (n - v), (flipped + total) / (n + v)])
    cand = np.unique(np.round(cand[np.isfinite(cand)], 12))
    mids = (cand[1:] + cand[:-1]) / 2
    grid = np.unique(np.concatenate([cand, mids, [cand[0] - 1.0, cand[-1] + 1.0]]))
    stat = np.abs(flipped[None, :] - grid[:, None] * v[None, :])
    obs = np.abs(total - n * grid)
    p = (stat >= obs[:, None] - 1e-9).mean(axis=1)
    keep = grid[p >= 1.0 - level]
    return float(keep.min()), float(keep.max())


CASES = {
    "spread gains": [0.25, 0.5, 0.0, 0.75, 0.5, 0.25, 0.5, 0.0],
    "mixed signs": [0.5, -0.25, 0.75, 0.25, 0.0, 1.0, -0.5, 0.25, 0.5, 0.0],
    "near the floor": [0.0, 0.0, 0.125, 0.0, 0.25, 0.0, 0.125, 0.0, 0.0, 0.375, 0.125, 0.0],
    "off a grid": [0.31, -0.07, 0.52, 0.13, 0.0, 0.27, 0.44, -0.21, 0.09],
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_interval_is_the_brute_force_inversion_of_the_test(name):
    d = np.array(CASES[name])
    lo, hi = _brute(d)
    r = sign_flip_interval(d, joint_support=1 << 21, n_perm=1)
    assert r.method == "exact" or name == "off a grid"
    if r.method == "exact":
        assert (r.lo, r.hi) == pytest.approx((lo, hi), abs=1e-9)
    # Monte Carlo patterns (off a grid) land within a few switch points of the exact ends
    mc = sign_flip_interval(d, joint_support=1, n_perm=200_000, seed=3)
    assert mc.method == "monte_carlo" and (mc.lo, mc.hi) == pytest.approx((lo, hi), abs=0.05)


def test_the_interval_excludes_zero_exactly_when_the_test_rejects():
    """Moved onto the deciding p, the interval and the verdict are one decision, exact or Monte Carlo."""
    rng = np.random.default_rng(39)
    disagree = 0
    for rep in range(400):
        n = int(rng.integers(6, 40))
        k = int(rng.choice([2, 4, 8]))
        p = rng.uniform(0.0, 0.3, n)
        d = (rng.binomial(k, np.clip(p + rng.choice([0.0, 0.1]), 0, 1)) - rng.binomial(k, p)) / k
        test = sign_flip_test(d)
        p0 = 1.0 if test.method == "none" else test.p_value
        support = 1 if rep % 2 else 1 << 21  # half through the Monte Carlo path
        r = sign_flip_interval(d, p_at_zero=p0, joint_support=support, n_perm=2000, seed=rep, bounds=(-1, 1))
        disagree += (r.lo > 0 or r.hi < 0) != (p0 < 0.05)
    assert disagree == 0


def test_the_set_is_an_interval_the_p_value_is_monotone_either_side_of_the_mean():
    d = np.array(CASES["mixed signs"])
    r = sign_flip_interval(d)
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size)))
    grid = np.linspace(-1, 1, 801)
    stat = np.abs((signs @ d)[None, :] - grid[:, None] * signs.sum(axis=1)[None, :])
    p = (stat >= np.abs(d.sum() - d.size * grid)[:, None] - 1e-9).mean(axis=1)
    below, above = p[grid <= d.mean()], p[grid >= d.mean()]
    assert np.all(np.diff(below) >= -1e-12) and np.all(np.diff(above) <= 1e-12)
    inside = grid[p >= 0.05]
    assert r.lo <= inside.min() + 1e-9 and inside.max() - 1e-9 <= r.hi


def test_under_two_tasks_no_interval():
    r = sign_flip_interval([0.5])
    assert np.isnan(r.lo) and r.method == "none"
