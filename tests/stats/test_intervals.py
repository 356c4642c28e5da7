"""The t interval against scipy, and its coverage by simulation (Beta difficulty, k = 4)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from whileai.stats.intervals import mean_interval, t_interval, t_quantile


def test_t_interval_matches_scipy():
    rng = np.random.default_rng(3)
    for n in (2, 5, 16, 50):
        x = rng.random(n)
        lo, hi = t_interval(x, level=0.9)
        slo, shi = stats.t.interval(0.9, n - 1, loc=x.mean(), scale=stats.sem(x))
        # 1e-10: scipy 1.13's t quantile (the floor make test-floor runs) is good to about 2e-11
        # relative at one df, where ours is the exact tan (tests/stats/test_t_quantile.py)
        assert float(lo) == pytest.approx(slo, abs=1e-10) and float(hi) == pytest.approx(shi, abs=1e-10)


def test_t_interval_vectorised_rows_match_one_by_one():
    x = np.random.default_rng(4).random((7, 12))
    lo, hi = t_interval(x, axis=1)
    for i in range(7):
        a, b = t_interval(x[i])
        assert lo[i] == pytest.approx(float(a), abs=1e-12) and hi[i] == pytest.approx(float(b), abs=1e-12)


def test_t_interval_bounds_and_too_few():
    lo, hi = t_interval([0.0, 1.0, 1.0], bounds=(0.0, 1.0))
    assert float(lo) == 0.0 and float(hi) == 1.0
    lo, hi = t_interval([0.5])
    assert np.isnan(lo) and np.isnan(hi)
    assert np.isnan(mean_interval([0.5])[0])


def test_t_quantile():
    assert t_quantile(0.95, 2) == pytest.approx(4.302652729911275)
    assert t_quantile(0.95, np.inf) == pytest.approx(1.959963984540054)


@pytest.mark.parametrize("n_tasks", [8, 16, 50])
def test_t_interval_coverage_holds_at_small_task_counts(n_tasks):
    # Many evaluations: tasks with Beta(2, 1.5) difficulty, k = 4 rollouts, the interval over task
    # means must contain the true mean pass rate 95% of the time (within [0.93, 0.97]).
    a, b, k, reps = 2.0, 1.5, 4, 20_000
    rng = np.random.default_rng(20240 + n_tasks)
    p = rng.beta(a, b, size=(reps, n_tasks))
    task_means = rng.binomial(k, p) / k
    lo, hi = t_interval(task_means, axis=1, bounds=(0.0, 1.0))
    truth = a / (a + b)
    coverage = float(np.mean((lo <= truth) & (truth <= hi)))
    assert 0.93 <= coverage <= 0.97, coverage


def test_percentile_bootstrap_undercovers_where_t_does_not():
    # the reason CI_METHOD is "t": at 8 tasks the percentile bootstrap covers about 0.88-0.92
    from whileai.stats.bootstrap import bootstrap_mean_ci

    a, b, k, reps, n_tasks = 2.0, 1.5, 4, 600, 8
    rng = np.random.default_rng(5)
    truth = a / (a + b)
    hits_boot = hits_t = 0
    for _ in range(reps):
        x = rng.binomial(k, rng.beta(a, b, n_tasks)) / k
        lo, hi = bootstrap_mean_ci(x, n_boot=1000, seed=rng)
        hits_boot += lo <= truth <= hi
        tlo, thi = t_interval(x)
        hits_t += float(tlo) <= truth <= float(thi)
    assert hits_boot / reps < 0.93 < hits_t / reps
