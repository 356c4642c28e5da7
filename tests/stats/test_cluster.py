"""cluster_mean_ci against the formula written out task by task, and its coverage by seeded simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from whileai.stats import cluster_mean_ci


def _by_hand(values, groups, level=0.95):
    """Miller 2024, section 2.1, one task at a time in a Python loop (the reference)."""
    m = sum(values) / len(values)
    tasks = sorted(set(groups))
    total = 0.0
    for t in tasks:
        vs = [v for v, g in zip(values, groups) if g == t]
        total += (sum(vs) - m * len(vs)) ** 2
    g = len(tasks)
    se = math.sqrt(g / (g - 1) * total) / len(values)
    z = scipy_stats.norm.ppf(0.5 + level / 2)
    return m, max(min(values), m - z * se), min(max(values), m + z * se)


def test_cluster_mean_ci_matches_the_formula():
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 12, size=80)
    values = rng.random(80)
    got = cluster_mean_ci(values, groups)
    assert got == pytest.approx(_by_hand(list(values), list(groups)), abs=1e-12)


def test_cluster_mean_ci_undefined_cases():
    m, lo, hi = cluster_mean_ci(np.array([0.2, 0.4]), np.array(["a", "a"]))
    assert m == pytest.approx(0.3) and math.isnan(lo) and math.isnan(hi)  # one task
    m, lo, hi = cluster_mean_ci(np.array([1.0, 1.0, 1.0]), np.array(["a", "b", "c"]))
    assert m == 1.0 and math.isnan(lo) and math.isnan(hi)  # a constant
    assert all(math.isnan(v) for v in cluster_mean_ci(np.array([np.nan]), np.array(["a"])))


def test_cluster_mean_ci_covers_the_mean_of_clustered_data():
    """Tasks with a shared random effect: the cluster interval covers near 95%, a naive one would not."""
    rng = np.random.default_rng(11)
    hits = 0
    sims = 400
    for _ in range(sims):
        task_effect = rng.normal(0.0, 1.0, size=40)
        groups = np.repeat(np.arange(40), 8)
        values = task_effect[groups] + rng.normal(0.0, 0.5, size=groups.size)
        _, lo, hi = cluster_mean_ci(values, groups)
        hits += lo <= 0.0 <= hi
    assert 0.91 <= hits / sims <= 0.98
