"""build_preference_pairs: same-ask pairs, length matching against brute force, report counts."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from tests.selection._helpers import row
from whileai.errors import ArgumentError, TrainingSelectionError
from whileai.selection import PreferencePairs, build_preference_pairs
from whileai.table.schema import MESSAGE


def ask(task: str, replies: list[tuple[float, str]], **kw) -> list[dict]:
    return [row(task, r, reply=text, index=i, prompt=f"Q about {task}", **kw) for i, (r, text) in enumerate(replies)]


def test_columns_and_dtypes_are_what_export_preference_reads():
    rows = ask("t", [(1.0, "yes " * 10), (0.0, "no " * 9)])
    pairs = build_preference_pairs(rows)
    assert isinstance(pairs, PreferencePairs) and len(pairs) == 1
    assert pairs.df.columns == ["task_key", "prompt", "chosen", "rejected", "chosen_reward", "rejected_reward", "margin"]
    assert pairs.df.schema["chosen"] == pl.List(MESSAGE) == pairs.df.schema["rejected"]
    assert pairs.df.row(0, named=True)["margin"] == 1.0
    with_tools = build_preference_pairs([{**r, "tools": [{"type": "function", "function": {"name": "get_order"}}],
                                          "system_prompt": "Help."} for r in rows])
    assert with_tools.df.columns[-2:] == ["tools", "system_prompt"]
    wire = pairs.rows()[0]
    assert wire["chosen"][-1] == {"role": "assistant", "content": "yes " * 10}


def brute_force(rewards: list[float], lengths: list[int], margin: float, max_pairs: int) -> list[tuple[int, int]]:
    """Greedy rounds, each the (best-reward chosen, rejected >= margin below) combination closest in length."""
    free = set(range(len(rewards)))
    out = []
    for _ in range(max_pairs):
        if not free:
            break
        best = max(rewards[i] for i in free)
        cands = [(abs(lengths[c] - lengths[r]), c, r) for c, r in itertools.product(sorted(free), sorted(free))
                 if rewards[c] == best and rewards[r] <= best - margin + 1e-9]
        if not cands:
            break
        _, c, r = min(cands)
        out.append((c, r))
        free -= {c, r}
    return out


def test_length_matching_agrees_with_brute_force():
    rng = np.random.default_rng(11)
    for trial in range(25):
        k = int(rng.integers(2, 9))
        rewards = [float(x) for x in rng.integers(0, 5, k) / 4]
        lengths = [int(x) for x in rng.choice(np.arange(5, 200), k, replace=False)]
        margin = float(rng.choice([0.25, 0.5, 1.0]))
        m = int(rng.integers(1, 4))
        rows = ask(f"t{trial}", [(r, "x" * n) for r, n in zip(rewards, lengths)])
        pairs = build_preference_pairs(rows, min_margin=margin, max_pairs_per_prompt=m)
        expected = brute_force(rewards, lengths, margin, m)
        got = [(len(p["chosen"][-1]["content"]), len(p["rejected"][-1]["content"])) for p in pairs.rows()]
        assert got == [(lengths[c], lengths[r]) for c, r in expected]
        for p in pairs.rows():
            assert p["margin"] >= margin - 1e-9


def test_without_length_match_the_lowest_reward_is_rejected():
    rows = ask("t", [(1.0, "a" * 10), (0.5, "b" * 10), (0.0, "c" * 100)])
    assert build_preference_pairs(rows, min_margin=0.5).rows()[0]["rejected_reward"] == 0.5
    assert build_preference_pairs(rows, min_margin=0.5, length_match=False).rows()[0]["rejected_reward"] == 0.0


def test_pairs_never_cross_asks_or_phrasings_and_skips_are_counted():
    rows = (ask("a", [(1.0, "x"), (0.0, "y")])
            + [row("a", 0.0, reply="z", prompt="another phrasing", index=5)]
            + ask("b", [(1.0, "x"), (1.0, "y")])          # unanimous
            + ask("c", [(1.0, "x")])                       # single
            + ask("d", [(1.0, "x"), (0.5, "y")])           # below the 1.0 margin
            + ask("e", [(None, "x"), (0.0, "y")]))         # one graded: single
    pairs = build_preference_pairs(rows)
    assert [p["task_key"] for p in pairs.rows()] == ["a"]
    r = pairs.report
    assert r.pairs == 1 and r.prompts_seen == 6 and r.prompts_with_contrast == 1
    assert r.skipped == {"single": 3, "unanimous": 1, "below_margin": 1}
    assert r.rows_unusable == 1
    assert "1 from 1 of 6 asks" in str(pairs)


def test_max_pairs_uses_each_rollout_once():
    rows = ask("t", [(1.0, "a"), (1.0, "bb"), (0.0, "ccc"), (0.0, "dddd"), (0.0, "eeeee")])
    pairs = build_preference_pairs(rows, max_pairs_per_prompt=5)
    assert len(pairs) == 2
    used = [len(p[s][-1]["content"]) for p in pairs.rows() for s in ("chosen", "rejected")]
    assert len(used) == len(set(used))


def test_length_confound_policy_and_eval_sourced_in_the_report():
    rows = []
    for t in range(12):
        rows += ask(f"t{t}", [(1.0, "long " * 30), (0.0, "no")], source="eval" if t < 2 else "grade")
    pairs = build_preference_pairs(rows)
    r = pairs.report
    assert r.chosen_longer_frac == 1.0 and r.length["chosen_longer"] == 12
    assert any("learns length before behaviour" in w for w in r.warnings)
    assert r.eval_sourced == 2 and any("evaluate()" in w for w in r.warnings)
    assert r.same_policy_pairs == 12 and r.mixed_policy_pairs == 0
    assert r.first_turn_identical == 12  # both sides open with the same tool call


def test_no_pair_warns_and_errors_are_clear():
    pairs = build_preference_pairs(ask("t", [(1.0, "x"), (1.0, "y")]))
    assert len(pairs) == 0 and pairs.df.columns[:3] == ["task_key", "prompt", "chosen"]
    assert any("no pair" in w for w in pairs.report.warnings)
    with pytest.raises(TrainingSelectionError, match="Grade first"):
        build_preference_pairs(ask("t", [(None, "x")]))
    with pytest.raises(ArgumentError, match="min_margin must be a positive number"):
        build_preference_pairs(ask("t", [(1.0, "x")]), min_margin=0)
    with pytest.raises(ArgumentError, match="max_pairs_per_prompt must be an integer"):
        build_preference_pairs(ask("t", [(1.0, "x")]), max_pairs_per_prompt=0)
