"""pass_at against plain references: task means, direct combinatorics, scipy's t interval."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from math import comb
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from whileai.errors import ArgumentError, SchemaError
from whileai.measure import PassAt, pass_at
from whileai.stats.bootstrap import bootstrap_mean_ci
from whileai.testing import rollout_table

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "wai131" / "scored.jsonl"
LINE = re.compile(
    r"^pass@1 \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| pass\^4 \(pass_pow_k\) \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| "
    r"pass@4 \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| headroom -?\d\.\d\d \(16 groups, k=4\)$"
)


def _by_task(rows):
    out = defaultdict(list)
    for r in rows:
        if r.get("reward") is not None:
            out[r["task_id"]].append(float(r["reward"]))
    return out


def _rows(n_tasks=20, seed=0, uneven=False, partial=False):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        n = int(rng.integers(4, 9)) if uneven else 4
        p = rng.beta(2, 1.5)
        for _ in range(n):
            r = rng.binomial(4, p) / 4 if partial else float(rng.random() < p)
            rows.append({"task_id": f"t{t}", "reward": r})
    return rows


def test_seed_line_format_and_table_form():
    r = pass_at(rollout_table(16, 4, seed=0, messages=False))
    assert LINE.match(str(r)), str(r)
    table = r.table().splitlines()
    assert table[0].split("\t") == ["Metric", "Value", "95% interval", "n", "What it says"]
    assert [line.split("\t")[0] for line in table[1:]] == ["pass@1", "pass^4", "pass@4", "headroom"]
    assert "how often all four tries pass" in table[2] and "at least one of four passes" in table[3]
    assert "the gap an RL update could close" in table[4]
    assert r.table(style="markdown").startswith("| Metric | Value |")


def test_numbers_match_plain_references():
    rows = _rows(30, seed=1, uneven=True)
    r = pass_at(rows, k=4, seed=5, ci_method="t", kway_ci_method="percentile")
    tasks = _by_task(rows)
    means = np.array([np.mean(v) for v in tasks.values()])
    assert r.pass_at_1 == pytest.approx(means.mean(), abs=1e-12)
    pow_k = np.array([comb(int(sum(v)), 4) / comb(len(v), 4) for v in tasks.values()])
    at_k = np.array([1 - comb(len(v) - int(sum(v)), 4) / comb(len(v), 4) for v in tasks.values()])
    assert r.pass_pow_k == pytest.approx(pow_k.mean(), abs=1e-12)
    assert r.pass_at_k == pytest.approx(at_k.mean(), abs=1e-12)
    assert r.headroom == pytest.approx(at_k.mean() - means.mean(), abs=1e-12)
    lo, hi = stats.t.interval(0.95, means.size - 1, loc=means.mean(), scale=stats.sem(means))
    assert r.ci95 == pytest.approx((max(lo, 0.0), min(hi, 1.0)), abs=1e-12)
    rng = np.random.default_rng(5)  # the k-way intervals: the bootstrap kernel, same seed, same draws
    assert r.pass_pow_k_ci95 == pytest.approx(bootstrap_mean_ci(pow_k, seed=rng), abs=1e-12)
    assert r.pass_at_k_ci95 == pytest.approx(bootstrap_mean_ci(at_k, seed=rng), abs=1e-12)
    assert r.n_groups == 30 and r.n_rows == len(rows) and r.k == 4


def test_matches_whileai_0131_point_estimates_on_its_own_rows():
    # whileai 0.131 pass_at on this file: pass@1 0.8214, pass^4 0.4592, pass@4 1.0, k=4, 7 groups (uneven 4 to 8)
    r = pass_at(FIXTURE)
    assert (round(r.pass_at_1, 4), round(r.pass_pow_k, 4), r.pass_at_k, r.k, r.n_groups) == (0.8214, 0.4592, 1.0, 4, 7)
    assert "groups are uneven (4 to 8 repeats); k is the smallest" in r.note


def test_partial_credit():
    rows = [{"task_id": t, "reward": r} for t in "abc" for r in (0.25, 0.5, 0.75, 1.0)]
    r = pass_at(rows)
    assert r.pass_at_1 == pytest.approx(0.625)  # mean reward
    assert r.pass_pow_k == 0.0 and r.pass_at_k == 1.0  # 3 of 4 rollouts at >= 0.5
    assert r.n_partial == 9


def test_same_seed_same_output_and_json():
    df = rollout_table(40, 8, seed=3, messages=False)
    a, b = pass_at(df, seed=9), pass_at(df, seed=9)
    assert a.to_dict() == b.to_dict()
    data = json.loads(a.to_json())
    assert len(data["per_task"]) == 40 and "config" in data
    assert isinstance(a.per_task, pl.DataFrame) and a.per_task.columns[:5] == ["task_key", "n", "n_graded", "c", "pass_rate"]
    assert a["pass_at_1"] == a.pass_at_1


def test_accepts_paths_frames_and_fluent(tmp_path):
    from whileai import table
    from whileai.data import ScoredData

    df = rollout_table(12, 4, seed=2, messages=False)
    want = pass_at(df).pass_at_1
    table.write(df, tmp_path / "r.parquet")
    table.write(df, tmp_path / "r.jsonl")
    assert pass_at(tmp_path / "r.parquet").pass_at_1 == pytest.approx(want)
    assert pass_at(str(tmp_path / "r.jsonl")).pass_at_1 == pytest.approx(want)
    assert pass_at(df.lazy()).pass_at_1 == pytest.approx(want)
    assert ScoredData(table.frame(df)).pass_at.pass_at_1 == pytest.approx(want)


def test_short_tasks_excluded_or_imputed():
    rows = [{"task_id": "a", "reward": r} for r in (1, 1, 1, 1)] + [{"task_id": "b", "reward": r} for r in (1, 0, 0, 1)]
    rows += [{"task_id": "c", "reward": 1}, {"task_id": "c", "reward": 1}]  # short of k=4 and unanimous
    r = pass_at(rows, k=4)
    assert (r.n_groups_at_k, r.n_groups_short, r.short_tasks) == (2, 1, "excluded")
    assert r.pass_pow_k == pytest.approx(0.5)
    assert "fewer than 4 rollouts" in r.note
    imputed = pass_at(rows, k=4, unanimous_short=True)
    assert imputed.n_groups_imputed == 1 and imputed.short_tasks == "imputed_unanimous"
    assert imputed.pass_pow_k == pytest.approx(2 / 3)
    assert bool(r.per_task.filter(pl.col("task_key") == "c")["short"][0])


def test_inferred_k_below_min_k_is_not_reported():
    r = pass_at([{"task_id": t, "reward": v} for t in "abcd" for v in (1, 0)])
    assert r.k == 2 and math.isnan(r.pass_pow_k) and "set repeats>=4" in r.note
    # the note names the way to report on the rows as they are, and that way works
    assert "or pass k=2 (or min_k=2)" in r.note
    assert pass_at([{"task_id": t, "reward": v} for t in "abcd" for v in (1, 0)], min_k=2).pass_pow_k == 0.0
    assert pass_at([{"task_id": t, "reward": v} for t in "abcd" for v in (1, 0)], k=2).pass_pow_k == 0.0


def test_binary_task_values_get_wilson_over_tasks():
    from whileai.stats.wilson import wilson

    every = pass_at([{"task_id": t, "reward": 1} for t in "abcdefgh" for _ in range(4)], ci_method="t", kway_ci_method="percentile")
    lo, hi = wilson(8, 8)  # 8 tasks, each passing: a proportion of tasks, not of rollouts
    assert every.ci95 == pytest.approx((float(lo), float(hi))) and every.ci_method == "wilson"
    assert every.pass_at_k_ci95 == pytest.approx((float(lo), float(hi))) and every.kway_ci_method == "wilson"
    assert any("every graded row scored 1.00" in w for w in every.warnings)
    df = rollout_table(30, 4, seed=2, messages=False)
    r = pass_at(df, ci_method="t", kway_ci_method="percentile")
    per = df.group_by("scenario_id").agg((pl.col("reward") >= 0.5).sum().alias("c"))["c"].to_numpy()
    lo, hi = wilson(int((per == 4).sum()), 30)
    assert r.pass_pow_k_ci95 == pytest.approx((float(lo), float(hi)))
    lo, hi = wilson(int((per > 0).sum()), 30)
    assert r.pass_at_k_ci95 == pytest.approx((float(lo), float(hi)))
    off = pass_at(df, binary_ci=None, seed=1, ci_method="t", kway_ci_method="percentile")
    assert off.kway_ci_method == "percentile" and off.pass_pow_k_ci95 != r.pass_pow_k_ci95
    single = pass_at([{"task_id": f"t{i}", "reward": i % 3 != 0} for i in range(12)], ci_method="t")
    assert single.ci_method == "wilson" and single.ci95 == pytest.approx(tuple(float(v) for v in wilson(8, 12)))


def test_zero_width_interval_falls_back_to_wilson_over_rollouts():
    from whileai.stats.wilson import wilson

    r = pass_at([{"task_id": t, "reward": v} for t in "abcdefgh" for v in (1, 1, 1, 0)], ci_method="t")
    lo, hi = wilson(24, 32)
    assert r.ci95 == pytest.approx((float(lo), float(hi))) and r.ci_method == "wilson_rollouts"
    assert "the interval is Wilson's over the 32 rollouts" in r.note


# ---- bad input -------------------------------------------------------------------------


def test_reward_outside_unit_interval_raises():
    with pytest.raises(SchemaError, match=r"reward must be in \[0, 1\], got 3.0"):
        pass_at([{"task_id": "a", "reward": 3}, {"task_id": "a", "reward": 1}])
    with pytest.raises(SchemaError, match="not a number"):
        pass_at([{"task_id": "a", "reward": "abc"}])
    with pytest.raises(SchemaError, match="reward"):
        pass_at(pl.DataFrame({"task_id": ["a"], "reward": ["yes"]}))


def test_ungraded_and_empty_give_nan_and_a_warning():
    r = pass_at([{"task_id": "a", "reward": None}, {"task_id": "b"}])
    assert math.isnan(r.pass_at_1) and r.ci95 is None and "grade first" in r.warnings[0]
    assert str(r).startswith("pass@1 n/a |")
    e = pass_at([])
    assert math.isnan(e.pass_at_1) and e.n_rows == 0 and "no rows" in e.warnings[0]


def test_one_task_has_no_interval():
    r = pass_at([{"task_id": "a", "reward": v} for v in (1, 0, 1, 1)])
    assert r.pass_at_1 == 0.75 and r.ci95 is None and r.pass_pow_k_ci95 is None
    assert "no interval on pass@1: 1 task(s)" in r.note


def test_k_larger_than_any_task_is_nan_with_warning():
    r = pass_at(rollout_table(10, 4, seed=1, messages=False), k=6)
    assert math.isnan(r.pass_pow_k) and math.isnan(r.pass_at_k) and r.pass_pow_k_ci95 is None
    assert "k=6 is more than any task's graded rollouts (the most is 4)" in r.warnings[0]
    assert not math.isnan(r.pass_at_1)


def test_nan_rewards_read_as_ungraded():
    df = pl.DataFrame({"task_id": ["a", "a", "b", "b"], "reward": [1.0, float("nan"), 0.0, 1.0]})
    r = pass_at(df)
    assert r.n_graded == 3 and "reward NaN" in r.warnings[0]


@pytest.mark.parametrize("kwargs,match", [
    ({"k": 0}, "k must be an integer >= 1, got 0"),
    ({"k": 2.5}, "k must be an integer"),
    ({"level": 1.5}, "level must be a number between 0 and 1"),
    ({"ci_method": "wald"}, "ci_method must be one of 'score', 't', 'percentile', 'bca', got 'wald'"),
    ({"seed": "x"}, "seed must be an int"),
])
def test_bad_arguments_raise_before_reading(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        pass_at("/no/such/file.jsonl", **kwargs)


def test_other_interval_methods():
    rows = _rows(25, seed=4)
    t = pass_at(rows)
    boot = pass_at(rows, ci_method="percentile", seed=1)
    bca = pass_at(rows, ci_method="bca", seed=1)
    assert boot.ci95 != t.ci95 and bca.ci95 != boot.ci95
    assert boot.ci95[0] < boot.pass_at_1 < boot.ci95[1]
    assert "bootstrap over tasks" in boot.table()
    assert isinstance(t, PassAt)


def test_task_stats_extension_keeps_its_default_shape():
    from whileai.measure import task_stats

    df = pl.DataFrame({"task_key": ["b", "a", "b"], "g": ["x", "y", "x"], "reward": [1.0, 0.0, None]})
    assert task_stats(df).rows() == [("b", 2, 1, 1, 1.0, 1.0), ("a", 1, 1, 0, 0.0, 0.0)]
    two = task_stats(df, keys=["g", "task_key"], extra=[pl.col("reward").max().alias("best")])
    assert two.columns == ["g", "task_key", "n", "n_graded", "c", "reward_sum", "reward_mean", "best"]

@pytest.mark.parametrize("shape", ["binary", "partial", "short tasks"])
def test_pass_at_numbers_are_pass_at_without_intervals(shape):
    from whileai.measure._passat import pass_at_numbers

    df = rollout_table(30, 6, seed=4, partial=shape == "partial")
    if shape == "short tasks":
        df = df.filter(~((pl.col("scenario_id").str.ends_with("7")) & (pl.col("rollout_index") > 3)))
    full, bare = pass_at(df), pass_at_numbers(df)
    for name in ("pass_at_1", "pass_pow_k", "pass_at_k", "headroom", "k", "n_groups", "n_groups_at_k", "n_graded"):
        a, b = getattr(bare, name), getattr(full, name)
        assert a == b or (math.isnan(a) and math.isnan(b)), name
    assert not math.isnan(full.pass_pow_k)
    assert bare.ci95 is None and bare.pass_pow_k_ci95 is None and bare.pass_at_k_ci95 is None
    assert full.ci95 is not None and full.pass_pow_k_ci95 is not None


def test_headroom_with_partial_credit_is_taken_at_the_pass_threshold():
    """Every reward 0.4: pass@1 (the mean reward) 0.4, pass@4 0 (no reward reaches 0.5); headroom
    was -0.4, a gap below zero. It is pass@k minus c / n, by hand here."""
    rows = [{"task_id": t, "reward": 0.4} for t in "abcdef" for _ in range(4)]
    r = pass_at(rows, k=4)
    assert r.pass_at_1 == pytest.approx(0.4) and r.pass_at_k == 0.0 and r.headroom == 0.0
    mixed = [{"task_id": t, "reward": v} for t in "abcd" for v in (1.0, 0.6, 0.4, 0.0)]
    m = pass_at(mixed, k=2)
    c_over_n = 2 / 4  # 1.0 and 0.6 pass
    at_k = 1 - comb(4 - 2, 2) / comb(4, 2)
    assert m.headroom == pytest.approx(at_k - c_over_n, abs=1e-12) and m.headroom >= 0
