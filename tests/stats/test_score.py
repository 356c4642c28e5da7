"""Score intervals: exact references, exhaustive monotonicity, and seeded coverage on the issue's cells."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from whileai.measure import pass_at
from whileai.stats.grid import coverage, draw_passes, truth
from whileai.stats.multiplicity import holm
from whileai.stats.passk import pass_at_k, pass_pow_k
from whileai.stats.score import (
    cluster_wilson,
    clustered_rate_interval,
    modified_wilson,
    score_interval,
)


def test_modified_wilson_is_wilson_away_from_the_ends_and_poisson_near_them():
    for x, n in ((8, 20), (10, 10), (4, 40), (36, 40)):
        ci = stats.binomtest(x, n).proportion_ci(method="wilson")
        lo, hi = modified_wilson(x, n)
        if 3 < x < n - 3:
            assert (float(lo), float(hi)) == pytest.approx((ci.low, ci.high), abs=1e-12)
    for x in (1, 2, 3):  # Brown, Cai and DasGupta 2001, 4.1.1: lambda_x / n, lambda the 0.05 quantile of Gamma(x)
        lo, hi = modified_wilson(x, 100)
        assert float(lo) == pytest.approx(stats.gamma.ppf(0.05, x) / 100, rel=1e-9)
        lo_m, hi_m = modified_wilson(100 - x, 100)
        assert float(hi_m) == pytest.approx(1 - stats.gamma.ppf(0.05, x) / 100, rel=1e-9)
    assert float(modified_wilson(1, 100)[0]) == pytest.approx(-math.log(0.95) / 100)


def test_score_interval_on_binary_values_is_modified_wilson_over_tasks():
    values = np.array([1.0] * 7 + [0.0] * 13)
    lo, hi = score_interval(values, floor=1.0)
    ref = modified_wilson(7, 20)
    assert (float(lo), float(hi)) == pytest.approx((float(ref[0]), float(ref[1])), abs=1e-12)
    assert all(math.isnan(v) for v in score_interval([0.5], floor=1.0))


@pytest.mark.parametrize("tasks,n", [(t, n) for t in (2, 3, 4, 5) for n in (1, 2, 3) if (n + 1) ** t <= 4096])
def test_pass1_interval_is_monotone_in_passes_exhaustively(tasks, n):
    """Every table of pass counts, every single extra pass: neither end may go down."""
    configs = np.array(list(itertools.product(range(n + 1), repeat=tasks)))
    lo, hi = clustered_rate_interval(configs, n)
    index = {tuple(c): i for i, c in enumerate(configs.tolist())}
    for i, c in enumerate(configs.tolist()):
        for t in range(tasks):
            if c[t] < n:
                j = index[tuple(c[:t] + [c[t] + 1] + c[t + 1:])]
                assert lo[j] >= lo[i] - 1e-12 and hi[j] >= hi[i] - 1e-12, (c, t)


def test_pass1_monotone_with_unequal_rollouts():
    for ns in ((4, 3, 3, 2), (1, 4, 3, 4), (2, 1, 1, 1)):
        configs = np.array(list(itertools.product(*[range(k + 1) for k in ns])))
        lo, hi = clustered_rate_interval(configs, np.array(ns))
        index = {tuple(c): i for i, c in enumerate(configs.tolist())}
        for i, c in enumerate(configs.tolist()):
            for t in range(4):
                if c[t] < ns[t]:
                    j = index[tuple(c[:t] + [c[t] + 1] + c[t + 1:])]
                    assert lo[j] >= lo[i] - 1e-12 and hi[j] >= hi[i] - 1e-12


def test_one_pass_never_reads_tighter_than_none():
    """The defect: 1 pass in 32 rollouts gave [0, 0.098] while 0 passes gave [0, 0.194]."""
    zero = pass_at([{"task_id": f"t{i}", "reward": 0.0} for i in range(16) for _ in range(2)])
    one = pass_at([{"task_id": f"t{i}", "reward": float(i == 0 and r == 0)} for i in range(16) for r in range(2)])
    assert zero.ci_method == one.ci_method == "score"
    assert one.ci95[1] >= zero.ci95[1] and one.ci95[0] >= zero.ci95[0]


# The cells (old coverage in the comment) and a few more; 1000 seeded sets each, so the
# Monte Carlo error is about 0.007. Bounds: not under 0.925, and not over 0.99 where the truth
# sits more than 3 / tasks inside (0, 1).
CELLS = [
    # tasks, k, rollouts, difficulty, metric, old coverage
    (30, 8, 16, "Beta(4,1)", "pass_at_k", 0.44),
    (100, 8, 16, "Beta(1,9)", "pass_pow_k", 0.54),
    (100, 8, 16, "Beta(4,1)", "pass_at_k", 0.58),
    (16, 4, 8, "Beta(2,2)", "pass_pow_k", None),
    (16, 4, 8, "Beta(0.5,0.5)", "pass_at_k", None),
    (16, 2, 2, "Beta(1,9)", "pass_at_1", 0.884),
    (8, 4, 4, "Beta(2,2)", "pass_at_1", None),
    (30, 8, 8, "Beta(4,1)", "pass_at_1", None),
]


@pytest.mark.parametrize("tasks,k,n,diff,metric,old", CELLS)
def test_coverage_on_the_reduced_grid(tasks, k, n, diff, metric, old):
    c = draw_passes(np.random.default_rng(tasks * 1000 + k * 10 + n), diff, 1000, tasks, n)
    if metric == "pass_at_1":
        lo, hi = clustered_rate_interval(c, n)
    else:
        fn = pass_pow_k if metric == "pass_pow_k" else pass_at_k
        lo, hi = score_interval(fn(n, c, k), floor=k / n)
    value = truth(diff, metric, k)
    cov = coverage(lo, hi, value)
    assert cov >= 0.925, cov
    if min(value, 1 - value) * tasks > 3:  # near 0 or 1 every sensible interval covers almost always
        assert cov <= 0.99, cov


def test_pass_at_default_is_the_kernel_and_covers_the_worst_old_cell():
    """pass_at itself, through its rows: pass@8 from 16 rollouts, Beta(4,1), 30 tasks (old default 0.44)."""
    rng = np.random.default_rng(3)
    value = truth("Beta(4,1)", "pass_at_k", 8)
    hits = 0
    c_all = draw_passes(rng, "Beta(4,1)", 150, 30, 16)
    for i, c in enumerate(c_all):
        rows = [{"task_id": f"t{t}", "reward": float(r < c[t])} for t in range(30) for r in range(16)]
        r = pass_at(rows, k=8)
        if i == 0:
            lo, hi = score_interval(pass_at_k(16, c, 8), floor=0.5)
            assert r.pass_at_k_ci95 == pytest.approx((float(lo), float(hi)), abs=1e-12)
            lo, hi = clustered_rate_interval(c, 16)
            assert r.ci95 == pytest.approx((float(lo), float(hi)), abs=1e-12)
            assert r.kway_ci_method == "score" and "clustered score interval" in r.table()
        hits += r.pass_at_k_ci95[0] <= value <= r.pass_at_k_ci95[1]
    assert hits / 150 >= 0.88  # binomial(150, 0.95) is under 0.88 with probability about 0.001


def test_cluster_wilson_covers_when_rows_cluster_by_task():
    """Judge accuracy varying by task, 8 labelled rows a task: rows read as independent cover 0.86."""
    rng = np.random.default_rng(11)
    acc = rng.beta(8.5, 1.5, size=(2000, 20))
    x = rng.binomial(8, acc)
    lo, hi = cluster_wilson(x, 8)
    assert coverage(lo, hi, 0.85) >= 0.93
    from whileai.stats.wilson import wilson

    lo, hi = wilson(x.sum(axis=1), 160)
    assert coverage(lo, hi, 0.85) < 0.9  # the defect the clustering removes
    one = cluster_wilson([1] * 8 + [0] * 2, [1] * 10)
    assert (float(one[0]), float(one[1])) == pytest.approx(tuple(float(v) for v in modified_wilson(8, 10)))


def test_holm_matches_the_step_down_definition():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan])
    adj = holm(p)
    finite = p[:4]
    order = np.argsort(finite)
    ref = np.empty(4)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (4 - rank) * finite[i]))
        ref[i] = running
    assert adj[:4] == pytest.approx(ref) and math.isnan(adj[4])
