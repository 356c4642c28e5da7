"""Markers get the clustered score interval pass@1 uses: one implementation, and it covers.

The t interval on task means marker_summary used covered 0.822 at a marker rate of 0.97 (30 tasks x
8 rollouts) and 0.850 at 0.02. Seeded simulation, 1,000 evaluations a cell (Monte Carlo error about
0.007): task rates from a Beta with the marker's mean, each rollout's marker 1 with the task's rate;
the truth is the mean rate.
"""

from __future__ import annotations

import numpy as np
import pytest

import whileai as wai
from whileai.stats.intervals import t_quantile
from whileai.stats.score import clustered_rate_interval, rate_score_interval


def _rows(counts, n, partial=None):
    rows = []
    for t, c in enumerate(counts):
        for r in range(n):
            value = float(r < c) if partial is None else partial[t][r]
            rows.append({"task_id": f"t{t}", "reward": 1.0, "markers": {"no_hedging": value}})
    return rows


def test_a_marker_gets_the_interval_pass_at_1_gets_on_the_same_values():
    rng = np.random.default_rng(1)
    counts = rng.binomial(8, rng.beta(9.7, 0.3, 30))
    rows = _rows(counts, 8)
    as_reward = [{"task_id": r["task_id"], "reward": r["markers"]["no_hedging"]} for r in rows]
    p = wai.pass_at(as_reward)
    m = wai.marker_summary(rows)["no_hedging"]
    s = wai.metric_summary(rows, "marker:no_hedging")
    assert m.ci_method == s.ci_method == p.ci_method == "score"
    assert m.ci95 == pytest.approx(p.ci95, abs=1e-12) and s.ci95 == pytest.approx(p.ci95, abs=1e-12)
    lo, hi, _ = rate_score_interval(counts, [8] * 30)
    assert m.ci95 == pytest.approx((lo, hi), abs=1e-12)


def test_partial_markers_take_the_score_interval_on_rates_and_off_scale_markers_the_t_interval():
    rng = np.random.default_rng(2)
    partial = rng.choice([0.0, 0.5, 1.0], size=(12, 4)).tolist()
    m = wai.marker_summary(_rows([0] * 12, 4, partial))["no_hedging"]
    assert m.ci_method == "score_rates"
    rows = [{"task_id": f"t{t}", "reward": 1.0, "markers": {"stars": float(v)}}
            for t in range(10) for v in rng.integers(1, 6, 3)]
    s = wai.marker_summary(rows)["stars"]
    assert s.ci_method == "t" and "outside [0, 1]" in s.note


@pytest.mark.parametrize(("rate", "conc", "tasks", "n"), [(0.97, 2.0, 30, 8), (0.02, 2.0, 30, 8), (0.97, 10.0, 16, 2)])
def test_the_marker_interval_covers_where_the_t_interval_did_not(rate, conc, tasks, n):
    rng = np.random.default_rng(int(rate * 100) + tasks)
    reps = 1000
    c = rng.binomial(n, rng.beta(rate * conc, (1.0 - rate) * conc, size=(reps, tasks)))
    lo, hi = clustered_rate_interval(c, np.full(tasks, n))
    ours = np.mean((lo <= rate) & (rate <= hi))
    v = c / n
    half = float(t_quantile(0.95, tasks - 1)) * v.std(axis=1, ddof=1) / np.sqrt(tasks)
    old = np.mean((v.mean(1) - half <= rate) & (rate <= v.mean(1) + half))
    assert ours >= 0.95 - 3 * (0.05 * 0.95 / reps) ** 0.5
    assert old < 0.93  # the interval marker_summary used
    # the same numbers through marker_summary on the first tables
    for i in range(2):
        got = wai.marker_summary(_rows(c[i], n))["no_hedging"]
        if not got.degenerate:
            assert got.ci95 == pytest.approx((lo[i], hi[i]), abs=1e-12)
