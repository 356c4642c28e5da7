"""The within-ask kernel's per-group counts of bool columns, against numpy's bincount."""

from __future__ import annotations

import numpy as np
import pytest

from whileai.stats.within import WithinKernel


def _kernel(gid: np.ndarray) -> WithinKernel:
    return WithinKernel(gid, np.bincount(gid).astype(np.float64), np.zeros(gid.size), 1.0)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 8])
def test_equal_groups_count_exactly(k):
    rng = np.random.default_rng(k)
    gid = np.repeat(np.arange(300), k)
    P = rng.random((7, gid.size)) < 0.4
    ref = np.stack([np.bincount(gid, weights=row.astype(np.float64)) for row in P]).astype(np.int64)
    assert np.array_equal(_kernel(gid)._group_counts(P), ref)


def test_unequal_groups_count_exactly():
    rng = np.random.default_rng(0)
    _, gid = np.unique(np.sort(rng.integers(0, 60, 500)), return_inverse=True)
    P = rng.random((4, gid.size)) < 0.5
    ref = np.stack([np.bincount(gid, weights=row.astype(np.float64)) for row in P]).astype(np.int64)
    assert np.array_equal(_kernel(gid)._group_counts(P), ref)
