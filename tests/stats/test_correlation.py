"""pearson against scipy.stats.pearsonr, and its NaN cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from whileai.stats import pearson


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pearson_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=200)
    y = 0.3 * x + rng.normal(size=200)
    assert pearson(x, y) == pytest.approx(scipy_stats.pearsonr(x, y).statistic, abs=1e-12)


def test_pearson_drops_non_finite_pairs():
    x = np.array([1.0, 2.0, np.nan, 4.0, 5.0, 6.0])
    y = np.array([2.0, 1.0, 3.0, np.inf, 7.0, 5.0])
    keep = [0, 1, 4, 5]
    assert pearson(x, y) == pytest.approx(scipy_stats.pearsonr(x[keep], y[keep]).statistic, abs=1e-12)


@pytest.mark.parametrize(("x", "y"), [([1.0], [2.0]), ([1.0, 1.0, 1.0], [0.0, 1.0, 2.0]), ([], [])])
def test_pearson_is_nan_for_a_constant_side_or_fewer_than_two_pairs(x, y):
    assert math.isnan(pearson(np.array(x), np.array(y)))


def test_pearson_of_a_perfect_line_is_one():
    x = np.arange(10.0)
    assert pearson(x, 3 * x + 1) == pytest.approx(1.0) and pearson(x, -x) == pytest.approx(-1.0)
