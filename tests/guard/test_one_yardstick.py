"""One length yardstick, one trajectory signature, one MinHash kernel, one feature key: callers agree."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from whileai.errors import ArgumentError
from whileai.guard import dedupe_groups, length_report, near_duplicate_prompts, reward_correlations
from whileai.selection import publish_gate, select_for_rl
from whileai.stats import band_keys, minhash_signatures


def _row(task: str, i: int, reply: str, reward: float, *, call_id: str | None = None, result: str = '{"status": "ok"}',
         args: dict | None = None) -> dict:
    cid = call_id or f"c{i}"
    return {"scenario_id": task, "rollout_index": i, "reward": reward, "final_text": reply, "messages": [
        {"role": "user", "content": f"help with {task}"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "get_order", "arguments": json.dumps(args or {"id": "A1"})}}]},
        {"role": "tool", "tool_call_id": cid, "name": "get_order", "content": result},
        {"role": "assistant", "content": reply}]}


def test_guard_and_the_gate_measure_length_spread_the_same_way():
    # ask a: one one-word reply beside three of 100 chars: over 4x the shortest, not over 4x the median
    # ask b: one reply of 500 chars beside three of 100: over 4x the median too
    rows = ([_row("a", 0, "ok", 1.0)] + [_row("a", i, "y" * 99 + str(i), float(i % 2)) for i in (1, 2, 3)]
            + [_row("b", i, "z" * 99 + str(i), float(i % 2)) for i in (0, 1, 2)] + [_row("b", 3, "w" * 500, 1.0)])
    guard = length_report(rows)
    gate = publish_gate(rows).length
    assert guard.n_groups_multi == gate["n_groups_multi"] == 2
    assert guard.n_groups_wide_spread == gate["n_groups_wide_spread"] == 1  # the shortest-reply yardstick said 2
    assert gate["median_chars"] == guard.median_chars == 100.0
    assert {k: v for k, v in guard.to_dict().items() if k != "warnings"} == gate


def test_length_report_counts_finish_reason_length_as_truncated_and_checks_max_spread():
    rows = [_row("a", 0, "x", 1.0), {**_row("a", 1, "y", 0.0), "finish_reason": "length"}]
    assert length_report(rows).n_truncated == 1 == publish_gate(rows).length["n_truncated"]
    with pytest.raises(ArgumentError, match="max_spread must be a number > 1"):
        length_report(rows, max_spread=1)


def test_rollouts_differing_only_in_call_id_and_tool_output_are_one_trajectory_everywhere():
    rows = [
        _row("t", 0, "Your order A1 ships today.", 1.0, call_id="call_x", result='{"status": "ok", "eta": "today"}'),
        _row("t", 1, "Your order A1 ships today.", 1.0, call_id="call_y", result='{"status": "ok"}'),
        _row("t", 2, "I could not find order A1.", 0.0),
        _row("t", 3, "Your order A1 ships today.", 1.0, args={"id": "A2"}),  # other arguments: another trajectory
    ]
    kept, report = dedupe_groups(rows)
    assert report.n_dropped == 1 and [r["rollout_index"] for r in kept] == [0, 2, 3]  # whole-message hash dropped 0
    sel = select_for_rl(rows, target=None)
    assert sel.report.duplicates["n_dropped"] == 1 and sel.report.dropped["duplicate"] == 1
    gate = publish_gate(rows).duplicates
    assert gate == {k: v for k, v in report.to_dict().items() if k != "warnings"}
    # the same text in another ask is not a duplicate
    assert dedupe_groups(rows + [{**rows[0], "scenario_id": "u"}]).report.n_dropped == 1


def test_reward_correlations_and_the_gate_key_turns_alike():
    rows = [_row("t", i, "r" * (10 + i), float(i % 2)) for i in range(6)]
    guard = reward_correlations(rows).correlations
    gate = publish_gate(rows).correlations["correlations"]
    assert set(gate) == set(guard) == {"reply_length", "tool_calls", "assistant_turns"}
    assert gate["reply_length"] == pytest.approx(guard["reply_length"], abs=1e-4)
    sel = select_for_rl(rows, target=None).report.correlations["correlations"]
    assert "assistant_turns" in sel and "turns" not in sel


def test_one_minhash_kernel_estimates_jaccard():
    # the fraction of equal signature slots estimates Jaccard (Broder 1997): within 4 standard errors at k=256
    rng = np.random.default_rng(5)
    for inter, only in ((80, 10), (50, 50), (10, 90)):
        common = rng.integers(0, 2**63, size=inter, dtype=np.int64).astype(np.uint64)
        a = np.r_[common, rng.integers(0, 2**63, size=only, dtype=np.int64).astype(np.uint64)]
        b = np.r_[common, rng.integers(0, 2**63, size=only, dtype=np.int64).astype(np.uint64)]
        ids, sig = minhash_signatures(np.r_[np.zeros(a.size, np.int64), np.ones(b.size, np.int64)], np.r_[a, b],
                                      n_hashes=256)
        truth = inter / (inter + 2 * only)
        est = float((sig[0] == sig[1]).mean())
        assert ids.tolist() == [0, 1]
        assert abs(est - truth) <= 4 * np.sqrt(truth * (1 - truth) / 256) + 1e-9
    keys = band_keys(sig, 64)
    assert keys.shape == (2, 64)
    with pytest.raises(ArgumentError, match="bands must be a divisor"):
        band_keys(sig, 7)


def test_guard_and_gate_near_duplicates_share_the_kernel_and_find_brute_force_pairs():
    rng = np.random.default_rng(2)
    vocab = [f"w{i}" for i in range(50)]
    prompts = []
    for _ in range(25):
        words = list(rng.choice(vocab, 10, replace=False))
        prompts.append(" ".join(words))
        words[0] = f"q{len(prompts)}"
        prompts.append(" ".join(words))
    sets = [set(p.split()) for p in prompts]
    truth = {(i, j) for i, j in itertools.combinations(range(len(sets)), 2)
             if len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= 0.8}
    rows = [_row(f"t{i}", 0, "r", 1.0) | {"prompt": p} for i, p in enumerate(prompts)]
    assert near_duplicate_prompts(rows, threshold=0.8).n_pairs == len(truth)
    involved = {i for pair in truth for i in pair}
    assert publish_gate(rows, strict=False).near_duplicate_prompts["n_prompts_involved"] == len(involved)
