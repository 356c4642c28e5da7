"""The Wilson interval against the formula written out (Wilson 1927; peers.md section 4.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from whileai.stats.wilson import wilson


def _formula(s: int, n: int, z: float) -> tuple[float, float]:
    p = s / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.mark.parametrize("level,z", [(0.95, 1.959963984540054), (0.9, 1.6448536269514722), (0.99, 2.5758293035489004)])
def test_matches_formula(level, z):
    s = np.array([0, 1, 5, 8, 10, 37, 100])
    n = np.array([10, 10, 10, 10, 10, 100, 100])
    lo, hi = wilson(s, n, level=level)
    for i in range(s.size):
        flo, fhi = _formula(int(s[i]), int(n[i]), z)
        assert lo[i] == pytest.approx(flo, abs=1e-12)
        assert hi[i] == pytest.approx(fhi, abs=1e-12)


def test_zero_trials_is_nan_and_bounds_hold():
    lo, hi = wilson([0, 3], [0, 3])
    assert np.isnan(lo[0]) and np.isnan(hi[0])
    assert 0.0 < lo[1] < 1.0 and hi[1] == 1.0


def test_normal_quantile_matches_scipy_ndtri():
    from scipy.special import ndtri

    from whileai.stats.intervals import normal_quantile

    levels = np.r_[np.linspace(0.0, 1.0, 2001)[1:-1], 0.95, 0.9, 0.99, 0.999, 1e-9, 1 - 1e-9]
    for level in levels:
        assert normal_quantile(float(level)) == pytest.approx(float(ndtri(0.5 + level / 2.0)), abs=1e-12, rel=1e-12)
    assert normal_quantile(1.0) == math.inf and normal_quantile(0.0) == 0.0
    assert math.isnan(normal_quantile(1.5))


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_matches_scipy_binomtest_at_every_count(level):
    from scipy.stats import binomtest

    for n in (1, 2, 7, 40):
        lo, hi = wilson(np.arange(n + 1), np.full(n + 1, n), level=level)
        for k in range(n + 1):
            ref = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
            assert lo[k] == pytest.approx(ref.low, abs=1e-12)
            assert hi[k] == pytest.approx(ref.high, abs=1e-12)
