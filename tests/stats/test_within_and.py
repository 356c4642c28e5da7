"""The AND tier's shuffled cross products: exact sums from row patterns give the float32 products' bits."""

from __future__ import annotations

import numpy as np
import pytest

import whileai.stats.within as wk
from whileai.stats.within import AndTier, WithinKernel


def _setup(sizes: np.ndarray, seed: int, *, continuous: bool = False, m: int = 20):
    rng = np.random.default_rng(seed)
    gid = np.repeat(np.arange(sizes.size), sizes)
    n_g = sizes.astype(np.float64)
    y = rng.random(gid.size) if continuous else (rng.random(gid.size) < 0.5).astype(np.float64)
    yc = y - (np.bincount(gid, weights=y) / n_g)[gid]
    kernel = WithinKernel(gid, n_g, yc, float(yc @ yc))
    pool = rng.random((m, gid.size)) < rng.uniform(0.1, 0.9, (m, 1))
    both = (pool[:, None, :] & pool[None, :, :]).sum(axis=2)
    tier = AndTier(pool_t=pool, pair_obs=both, n_graded=gid.size, dense_pos=np.zeros(0, np.int64),
                   auto_pos=np.arange(m), seeds=12, min_obs=3, sxx={})
    b = 30
    Yp = np.stack([yc.astype(np.float32)[np.argsort(gid + rng.random(gid.size))] for _ in range(b)], axis=1)
    rho = np.abs(rng.standard_normal((m, b)))
    return kernel, tier, rho, np.ascontiguousarray(Yp)


def test_pattern_sums_match_a_direct_count():
    rng = np.random.default_rng(3)
    pool = rng.random((9, 1000)) < 0.4
    w = (rng.integers(-7, 8, 1000) / 8).astype(np.float32)
    top = np.array([4, 0, 7, 2, 8])
    bits = ((np.arange(1 << top.size)[:, None] >> np.arange(top.size)) & 1).astype(np.float64)
    got = wk._pattern_cross(pool, top, w, bits)
    ref = np.array([[np.sum(w[pool[a] & pool[b]], dtype=np.float64) for b in top] for a in top])
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_sums_give_the_float32_products_bit_for_bit(seed, monkeypatch):
    kernel, tier, rho, Yp = _setup(np.full(400, 8), seed)
    assert kernel._exact32()
    fast = kernel._and_max(tier._replace(sxx={}), rho, Yp)
    monkeypatch.setattr(wk, "_CODE_BITS", 0)  # the float32 matrix products
    slow = WithinKernel(kernel.gid, kernel.n_g, kernel.yc, kernel.syy)._and_max(tier._replace(sxx={}), rho, Yp)
    assert fast.max() > 0 and np.array_equal(fast.view(np.uint64), slow.view(np.uint64))


def test_inexact_rewards_keep_the_float32_products():
    rng = np.random.default_rng(5)
    unequal, _, _, _ = _setup(rng.integers(2, 9, 300), 5)  # ask means such as 1/3 are not dyadic
    continuous, _, _, _ = _setup(np.full(300, 8), 6, continuous=True)
    assert not unequal._exact32() and not continuous._exact32()
    big = WithinKernel(np.zeros(3, np.int64), np.array([3.0]), np.array([2.0**23 + 0.5, -2.0**22, -2.0**22 - 0.5]), 1.0)
    assert not big._exact32()  # the sums could pass 2^24 steps of the smallest power of two


@pytest.mark.parametrize("sizes", [np.full(500, 8), np.full(700, 3), np.random.default_rng(9).integers(2, 12, 400)])
def test_and_sums_of_squares_batch_by_batch_are_the_whole_matrix_sums(sizes):
    kernel, tier, _, _ = _setup(sizes, 7, m=30)
    m = tier.pool_t.shape[0]
    codes = [a * m + b for a in range(m) for b in range(a + 1, m)][::7]  # several batches
    kernel._and_sxx(tier, codes)
    P = np.stack([tier.pool_t[c // m] & tier.pool_t[c % m] for c in codes])
    sums = np.stack([np.bincount(kernel.gid, weights=p.astype(np.float64), minlength=sizes.size) for p in P], axis=1)
    whole = np.maximum(P.sum(axis=1) - (sums * sums / kernel.n_g[:, None]).sum(axis=0), 0.0)  # groups summed in order
    assert np.array_equal(np.array([tier.sxx[c] for c in codes]), whole)
    ref = [float(((p - (np.bincount(kernel.gid, weights=p) / kernel.n_g)[kernel.gid]) ** 2).sum())
           for p in P.astype(np.float64)]
    assert np.allclose(whole, ref, rtol=1e-12, atol=1e-9)
