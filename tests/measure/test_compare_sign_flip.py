"""compare_runs' interval inverts the deciding sign-flip test: it excludes zero exactly when the verdict is significant.

Seeded simulations of paired binomial evals (task rates from a Beta, the after arm shifted on the
logit scale; the truth is the mean gain over the eval's tasks): the default interval agrees with
the verdict on every eval, covers the true gain at 95% or more, and excludes zero under the null no
more often than the exact test rejects. The MOVER score interval it replaces as the default disagreed
with the verdict on some evals of every cell below (up to 17.5% in the issue's cells).
"""

from __future__ import annotations

import numpy as np
import pytest

import whileai as wai
from whileai.defaults import COMPARE_CI_METHOD
from whileai.measure._compare import compare_arrays, join_intervals
from whileai.stats.permutation import sign_flip_interval, sign_flip_test
from whileai.stats.score import paired_score_interval


def _evals(rng, reps, tasks, k, a, b, shift):
    p = rng.beta(a, b, size=(reps, tasks))
    q = 1.0 / (1.0 + np.exp(-(np.log(p / (1.0 - p)) + shift)))
    return rng.binomial(k, p) / k, rng.binomial(k, q) / k, (q - p).mean(axis=1)


def _run(before, after, k, method, rng):
    n = np.full(before.size, float(k))
    c = compare_arrays(before, after, metric="pass_at_1", level=0.95, ci_method=method, n_boot=200, n_perm=10_000,
                       min_paired=5, rng=rng, n_a=n, n_b=n)
    lo, hi = c.ci95
    return lo, hi, c.verdict in ("a_better", "b_better"), c.interval_agrees


@pytest.mark.parametrize("shift", [0.0, 0.6])
def test_the_interval_and_the_verdict_never_disagree_near_the_floor_at_150_tasks(shift):
    """The issue's cells: gains near the floor (Beta(1, 19), about 0.05), 150 tasks, k = 4."""
    assert COMPARE_CI_METHOD == "sign_flip"
    rng = np.random.default_rng(390 + int(10 * shift))
    before, after, _ = _evals(rng, 150, 150, 4, 1.0, 19.0, shift)
    old = 0
    excludes = 0
    for va, vb in zip(before, after, strict=True):
        lo, hi, significant, agrees = _run(va, vb, 4, "sign_flip", rng)
        assert agrees and ((lo > 0.0 or hi < 0.0) == significant)
        excludes += lo > 0.0 or hi < 0.0
        slo, shi, s_sig, _ = _run(va, vb, 4, "score", rng)
        old += (slo > 0.0 or shi < 0.0) != s_sig
    if shift == 0.0:  # under the null the interval excludes zero as often as the exact test rejects: at most alpha
        assert excludes / 150 <= 0.05 + 3 * (0.05 * 0.95 / 150) ** 0.5
    else:
        assert old > 0  # the score interval read otherwise on some of these evals


@pytest.mark.parametrize(("tasks", "k", "a", "b", "shift"), [(30, 4, 2.0, 2.0, 0.5), (12, 2, 0.5, 0.5, 0.5),
                                                            (30, 4, 1.0, 19.0, 1.0)])
def test_the_interval_covers_the_true_gain(tasks, k, a, b, shift):
    """1,000 seeded evals a cell; Monte Carlo error about 0.007, so 0.95 less three errors is the floor.

    The score intervals of every eval come from one vectorised call, the test's own interval per eval;
    the first evals also run through compare_arrays and must give the same interval.
    """
    rng = np.random.default_rng(tasks * 100 + k)
    reps = 1000
    before, after, truth = _evals(rng, reps, tasks, k, a, b, shift)
    slo, shi = paired_score_interval(before, after, rollouts_before=k, rollouts_after=k)
    hits = 0
    for i in range(reps):
        d = after[i] - before[i]
        test = sign_flip_test(d)
        p0 = 1.0 if test.method == "none" else test.p_value
        own = sign_flip_interval(d, p_at_zero=p0, bounds=(-1.0, 1.0))
        lo, hi = join_intervals((own.lo, own.hi), (float(slo[i]), float(shi[i])), rejects=p0 < 0.05)
        assert (lo > 0.0 or hi < 0.0) == (p0 < 0.05)
        if i < 5:
            assert _run(before[i], after[i], k, "sign_flip", rng)[:2] == pytest.approx((lo, hi), abs=1e-12)
        hits += lo - 1e-12 <= truth[i] <= hi + 1e-12
    assert hits / reps >= 0.95 - 3 * (0.05 * 0.95 / reps) ** 0.5


def test_every_task_moved_alike_keeps_width_and_agrees():
    """Six tasks from 0.5 to 1.0: the test's own set is the single point +0.5; joined with the score interval it is not."""
    a = [{"task_id": t, "reward": r} for t in "abcdef" for r in (0, 1)]
    b = [{"task_id": t, "reward": 1} for t in "abcdef" for _ in (0, 1)]
    r = wai.compare_runs(a, b)
    assert r.ci_method == "sign_flip" and r.verdict == "b_better" and r.interval_agrees
    assert r.ci95[0] > 0.0 and r.ci95[1] - r.ci95[0] > 0.5
    assert wai.delta_report(a, b).target_ci95 == pytest.approx(r.ci95, abs=1e-12)
