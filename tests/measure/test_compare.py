"""compare_runs against numpy, scipy and exact enumeration of sign patterns."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from whileai.errors import ArgumentError
from whileai.measure import compare_runs
from whileai.testing import rollout_table, true_pass_rates


def _arms(n_tasks=12, k=4, shift=0.15, seed=0):
    before = rollout_table(n_tasks, k, seed=seed, messages=False)
    after = rollout_table(n_tasks, k, seed=seed + 100, pass_rates=true_pass_rates(n_tasks, seed=seed), shift=shift,
                          messages=False, policy_version="v2")
    return before, after


def _task_means(df):
    return df.group_by("scenario_id").agg(pl.col("reward").mean()).sort("scenario_id")


def _exact_p(d):
    d = d[d != 0]
    obs = abs(d.sum())
    hits = sum(abs(np.dot(s, d)) >= obs - 1e-9 for s in itertools.product((1.0, -1.0), repeat=d.size))
    return hits / 2 ** d.size


def test_paired_delta_interval_and_exact_p_value():
    before, after = _arms(12)
    r = compare_runs(before, after, ci_method="t")  # the t interval itself (the default is score)
    a, b = _task_means(before)["reward"].to_numpy(), _task_means(after)["reward"].to_numpy()
    d = b - a
    assert r.paired and r.n_paired == 12 and r.paired_share == 1.0
    assert r.delta == pytest.approx(d.mean(), abs=1e-12)
    assert (r.mean_a, r.mean_b) == pytest.approx((a.mean(), b.mean()))
    lo, hi = stats.t.interval(0.95, 11, loc=d.mean(), scale=stats.sem(d))
    assert r.ci95 == pytest.approx((lo, hi), abs=1e-12)
    assert r.p_method == "exact" and r.p_value == pytest.approx(_exact_p(d), abs=1e-12)
    assert r.task_std == pytest.approx(d.std(ddof=1))


def test_percentile_paired_interval_matches_a_numpy_loop():
    before, after = _arms(30, shift=0.1, seed=4)
    r = compare_runs(before, after, ci_method="percentile", n_boot=20_000, seed=1)
    a, b = _task_means(before)["reward"].to_numpy(), _task_means(after)["reward"].to_numpy()
    rng = np.random.default_rng(2)
    deltas = [b[i].mean() - a[i].mean() for i in (rng.integers(0, 30, 30) for _ in range(8000))]
    assert r.ci95 == pytest.approx(tuple(np.quantile(deltas, [0.025, 0.975])), abs=0.012)


def test_dropped_tasks_and_paired_share():
    before, after = _arms(20)
    after = after.filter(~pl.col("scenario_id").is_in(["sc-00000000", "sc-00000001"]))
    extra = rollout_table(3, 4, seed=9, messages=False, task_prefix="new-")
    after = pl.concat([after, extra.select(after.columns)])
    r = compare_runs(before, after)
    assert (r.n_paired, r.n_only_a, r.n_only_b) == (18, 2, 3)
    assert r.paired_share == pytest.approx(18 / 23)
    assert "2 task(s) only before and 3 only after were dropped" in r.note


def test_fewer_than_five_shared_tasks_falls_back_to_welch():
    before = pl.DataFrame({"task_id": [f"a{i}" for i in range(6)] * 2, "reward": [1.0, 0.0] * 6})
    after = pl.DataFrame({"task_id": ([f"a{i}" for i in range(3)] + [f"b{i}" for i in range(5)]) * 2,
                          "reward": [1.0] * 8 + [0.0, 1.0] * 4})
    r = compare_runs(before, after)
    assert not r.paired and r.n_paired == 3 and r.p_method == "welch"
    assert "fewer than 5 shared tasks (3); unpaired task means, weaker test" in r.note
    a = before.group_by("task_id").agg(pl.col("reward").mean())["reward"].to_numpy()
    b = after.group_by("task_id").agg(pl.col("reward").mean())["reward"].to_numpy()
    ref = stats.ttest_ind(b, a, equal_var=False)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval(0.95)
    assert r.ci95 == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_verdict_words():
    before, after = _arms(40, shift=0.3, seed=2)
    assert compare_runs(before, after).verdict == "b_better"
    assert compare_runs(after, before).verdict == "a_better"
    same = compare_runs(before, before)
    assert same.verdict == "no_difference_detected" and same.delta == 0.0 and same.p_value == 1.0


def test_markers_and_unknown_metric():
    before, after = _arms(15)
    r = compare_runs(before, after, metric="marker:no_hedging")
    assert r.metric == "marker:no_hedging"
    bare = compare_runs(before, after, metric="no_hedging")
    assert bare.delta == r.delta
    with pytest.raises(ArgumentError, match="Measured on both: pass_at_1, argument_grounding"):
        compare_runs(before, after, metric="politeness")


def test_no_shared_tasks_and_one_task():
    a = [{"task_id": "x", "reward": 1}, {"task_id": "x", "reward": 0}]
    b = [{"task_id": "y", "reward": 1}, {"task_id": "y", "reward": 1}]
    r = compare_runs(a, b)
    assert r.verdict == "insufficient_data" and r.ci95 is None and r.paired_share == 0.0
    assert math.isnan(r.p_value)
    empty = compare_runs([], [])
    assert empty.verdict == "insufficient_data" and empty.warnings


def test_same_seed_same_output_and_bad_arguments():
    before, after = _arms(200, k=8, seed=5)
    one = compare_runs(before, after, seed=3, ci_method="bca")
    assert one.to_dict() == compare_runs(before, after, seed=3, ci_method="bca").to_dict()
    with pytest.raises(ArgumentError, match="min_paired must be an integer >= 2"):
        compare_runs(before, after, min_paired=1)
    with pytest.raises(ArgumentError, match="ci_method must be one of"):
        compare_runs(before, after, ci_method="normal")
    assert "b_better" in str(compare_runs(*_arms(40, shift=0.3, seed=2)))


def test_one_test_decides_and_the_printed_p_agrees_under_the_null():
    """Null arms, 8 tasks, k=4: the verdict is the sign-flip test's, so it never disagrees with p.

    The t interval used to decide (false alarms 0.061) next to the sign-flip p, and the two
    disagreed on up to 4.6% of null datasets.
    """
    rng = np.random.default_rng(8)
    alarms = noted = 0
    runs = 200
    for _ in range(runs):
        p = rng.uniform(0.2, 0.7, 8)
        ca, cb = rng.binomial(4, p), rng.binomial(4, p)
        a = [{"task_id": f"t{i}", "reward": float(r < ca[i])} for i in range(8) for r in range(4)]
        b = [{"task_id": f"t{i}", "reward": float(r < cb[i])} for i in range(8) for r in range(4)]
        c = compare_runs(a, b)
        significant = c.verdict in ("a_better", "b_better")
        assert significant == (c.p_value < 0.05) and c.test == "sign_flip"
        if not c.interval_agrees:
            noted += 1
            assert "the verdict follows the test" in c.note
        alarms += significant
    assert alarms / runs <= 0.05 + 3 * (0.05 * 0.95 / runs) ** 0.5
    assert noted == 0  # the default interval inverts the deciding test: it never reads otherwise


def test_five_tasks_cannot_reach_significance_and_says_so():
    a = [{"task_id": t, "reward": 0.0} for t in "abcde" for _ in range(2)]
    b = [{"task_id": t, "reward": 1.0} for t in "abcde" for _ in range(2)]
    c = compare_runs(a, b)
    assert c.verdict == "no_difference_detected" and c.p_value == pytest.approx(0.0625)
    assert "cannot reach p < 0.05" in c.note and c.interval_agrees and c.ci95 == (-1.0, 1.0)


def _awkward_run(seed, only):
    """Rows with repeated (task, rollout_index) pairs, null and partial rewards, null and missing markers."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(24):
        if t in only:
            continue
        for i in range(4):
            reward = [0.0, 1.0, 0.5, 0.3, None][int(rng.integers(5))]
            row = {"scenario_id": f"task-{t:02d}", "rollout_index": i, "prompt": f"q{t}", "reward": reward,
                   "markers": {"no_hedging": float(rng.integers(2)), "honest_claims": [None, 0.25, 1.0][i % 3]}}
            if i == 3 and t % 5 == 0:
                row.pop("markers")
            rows.append(row)
    rows += [dict(rows[0]), dict(rows[5])]  # two repeated pairs
    return rows


@pytest.mark.parametrize("metric", ["pass_at_1", "marker:honest_claims"])
def test_jsonl_sides_read_one_at_a_time_give_the_full_reads_report(tmp_path, metric):
    """Each JSONL side reduced to its per-task values before the other is read: the report of the full frames."""
    import json

    from whileai import table

    paths = []
    for name, seed, only in (("a.jsonl", 0, {3, 4}), ("b.jsonl", 1, {7})):
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in _awkward_run(seed, only)), encoding="utf-8")
        paths.append(path)
    from_files = compare_runs(*paths, metric=metric)
    from_frames = compare_runs(table.frame(paths[0]), table.frame(paths[1]), metric=metric)
    assert from_files.model_dump_json() == from_frames.model_dump_json()
    assert from_files.n_only_a == 1 and from_files.n_only_b == 2
    assert any("repeat a (task, rollout_index) pair" in w for w in from_files.warnings)
    with pytest.raises(ArgumentError, match="metric must be measured on both runs"):
        compare_runs(paths[0], [{"scenario_id": "task-00", "reward": 1.0}], metric="marker:honest_claims")
