"""reward_correlations, dedupe_groups, near_duplicate_prompts, length_report against plain references."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from whileai import table
from whileai.data import ScoredData
from whileai.errors import ArgumentError
from whileai.guard import dedupe_groups, length_report, near_duplicate_prompts, reward_correlations
from whileai.testing import rollout_table


def test_reward_correlations_match_numpy():
    df = table.frame(rollout_table(20, 4, seed=1))
    r = reward_correlations(df)
    y = df["reward"].to_numpy()
    x = df["final_text"].str.len_chars().cast(pl.Float64).to_numpy()
    assert r["correlations"]["reply_length"] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    calls = df.select(table.n_tool_calls())["n_tool_calls"].to_numpy().astype(float)
    assert r["correlations"]["tool_calls"] == pytest.approx(np.corrcoef(calls, y)[0, 1], abs=1e-12)
    assert set(r["flagged"]) == {k for k, v in r["correlations"].items() if v is not None and abs(v) >= 0.3}


def test_reward_correlations_undefined_is_none_with_warning():
    rows = [{"prompt": f"p{i}", "final_text": "same", "reward": float(i % 2)} for i in range(6)]
    r = reward_correlations(rows)
    assert r["correlations"]["reply_length"] is None
    assert "undefined" in r.warnings[0]
    assert reward_correlations([{"prompt": "x"}])["n_graded"] == 0
    with pytest.raises(ArgumentError, match="threshold"):
        reward_correlations(rows, threshold=2)


def test_dedupe_groups_keeps_first_trajectory_per_ask_and_keeps_kind():
    rows = [
        {"scenario_id": "a", "final_text": "x", "reward": 1.0},
        {"scenario_id": "a", "final_text": "x", "reward": 1.0},
        {"scenario_id": "a", "final_text": "y", "reward": 0.0},
        {"scenario_id": "b", "final_text": "x", "reward": 0.0},  # same text, other ask: not a duplicate
        {"scenario_id": "b", "final_text": "x", "reward": 1.0},  # duplicate with a conflicting reward
    ]
    kept, rep = dedupe_groups(rows)
    assert isinstance(kept, list) and len(kept) == 3
    assert [r["final_text"] for r in kept] == ["x", "y", "x"]
    assert (rep.n_dropped, rep.groups_affected, rep.conflicting_rewards) == (2, 2, 1)
    assert rep.duplicate_rate == pytest.approx(0.4)
    assert len(rows) == 5  # input untouched
    df_kept, _ = dedupe_groups(pl.DataFrame(rows))
    assert isinstance(df_kept, pl.DataFrame) and df_kept.height == 3
    fl, _ = dedupe_groups(ScoredData(pl.DataFrame(rows), meta={"mode": "rl"}))
    assert isinstance(fl, ScoredData) and fl.meta == {"mode": "rl"} and len(fl) == 3


def _jaccard(a: str, b: str) -> float:
    wa, wb = set(a.lower().split()), set(b.lower().split())
    return len(wa & wb) / len(wa | wb)


def test_near_duplicate_prompts_match_brute_force():
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(40)]
    base = [list(rng.choice(vocab, 12, replace=False)) for _ in range(30)]
    prompts = []
    for words in base:
        prompts.append(" ".join(words))
        edit = list(words)
        edit[int(rng.integers(0, 12))] = f"z{int(rng.integers(0, 1000))}"  # one word changed: Jaccard 11/13
        prompts.append(" ".join(edit))
    rows = [{"prompt": p} for p in prompts]
    r = near_duplicate_prompts(rows, threshold=0.8)
    truth = {(a, b) for a, b in itertools.combinations(prompts, 2) if _jaccard(a, b) >= 0.8}
    assert r["n_pairs"] == len(truth)
    assert r["n_prompts"] == len(set(prompts))
    for ex in r["examples"]:
        assert ex["jaccard"] == pytest.approx(_jaccard(ex["a"], ex["b"]), abs=1e-4)


def test_near_duplicate_prompts_none_and_bad_threshold():
    assert near_duplicate_prompts([{"prompt": "alpha beta"}, {"prompt": "gamma delta"}])["n_pairs"] == 0
    with pytest.raises(ArgumentError, match="threshold"):
        near_duplicate_prompts([{"prompt": "a"}], threshold=0)


def test_length_report_matches_manual():
    df = table.frame(rollout_table(10, 4, seed=3))
    r = length_report(df, max_spread=1.5)
    c = df["final_text"].str.len_chars()
    assert r["median_chars"] == pytest.approx(float(np.median(c.to_numpy())))
    assert r["max_chars"] == c.max()
    # the yardstick is the ask's median reply (the publish gate reports this same measure)
    by_task: dict[str, list[int]] = {}
    for key, n in zip(df["task_key"].to_list(), c.to_list()):
        by_task.setdefault(key, []).append(n)
    wide = sum(1 for v in by_task.values() if len(v) >= 2 and np.median(v) > 0 and max(v) > 1.5 * np.median(v))
    assert r["n_groups_wide_spread"] == wide == 3
    assert r["n_groups_multi"] == 10
    with pytest.raises(ArgumentError, match="max_spread"):
        length_report(df, max_spread=1)


def test_near_duplicates_of_template_prompts_stay_linear():
    # 3,000 prompts from one template share band buckets: candidates are starred, not all pairs
    import whileai as wai

    rows = [{"task_id": f"t{i}", "prompt": f"please look into the order status for customer number {i}"}
            for i in range(3000)]
    report = wai.near_duplicate_prompts(rows, threshold=0.8)
    assert report.n_prompts == 3000
    assert 2999 <= report.n_pairs < 3000 * 20  # every prompt found, far fewer than the 4.5 million pairs
    assert report.n_prompts_involved == 3000
