"""publish_gate: refusals for RL-shaped sets a grouped update cannot use, and the warnings."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tests.selection._helpers import group, row
from whileai import select_for_rl
from whileai.errors import ArgumentError, PublishGateError
from whileai.selection import publish_gate


def test_ungraded_rl_rows_are_refused():
    rows = group("t", [None, None, None])
    with pytest.raises(PublishGateError, match="ungraded_rl_rows: RL-shaped rows must be graded") as info:
        publish_gate(rows)
    assert info.value.refusal == "ungraded_rl_rows"
    assert info.value.report.ok is False
    report = publish_gate(rows, strict=False)
    assert report.ok is False and report.refusal == "ungraded_rl_rows"


def test_no_mixed_group_is_refused_and_names_the_counts():
    rows = group("a", [1.0, 1.0]) + group("b", [0.0, 0.0]) + group("c", [1.0])
    with pytest.raises(PublishGateError, match=r"no_mixed_groups: .*1 all pass, 1 all fail, 1 with one graded"):
        publish_gate(rows)


def test_single_rollout_sft_rows_are_not_rl_shaped():
    rows = [row(f"t{i}", None) for i in range(4)]
    report = publish_gate(rows)
    assert report.ok and not report.rl_shaped
    assert publish_gate(group("t", [1.0, 1.0]), mode="sft").ok
    with pytest.raises(PublishGateError):
        publish_gate([row("t", 1.0)], mode="rl")


def test_warnings_for_unanimous_out_of_band_duplicates_and_eval_rewards():
    mixed = group("m", [1.0, 0.0, 1.0, 0.0])
    mixed.append(copy.deepcopy(mixed[0]))
    rows = (mixed + group("easy", [1.0] * 9 + [0.0]) + group("all", [1.0, 1.0])
            + group("ev", [1.0, 0.0], source="eval"))
    report = publish_gate(rows)
    assert report.ok and report.rl_shaped
    text = " | ".join(report.warnings)
    assert "1 mixed ask(s) fall outside the 20%..80% band" in text
    assert "1 unanimous ask(s) still present (1 all pass, 0 all fail)" in text
    assert "1 duplicate rollout(s) within 1 ask(s) present" in text
    assert "evaluate()" in text
    assert report.signal["n_mixed"] == 3 and report.signal["n_in_band"] == 2
    assert report.duplicates["n_dropped"] == 1
    assert str(report).startswith("publish gate: OK")


def test_a_pruned_selection_passes_clean_and_keeps_its_carried_stamps():
    rows = group("a", [0.0, 0.0, 1.0, 0.0, 1.0, 1.0]) + group("b", [0.0, 1.0, 0.0, 0.0])
    rows[1]["final_text"] = rows[0]["final_text"]  # make a duplicate that the prune drops
    rows[1]["messages"] = copy.deepcopy(rows[0]["messages"])
    sel = select_for_rl(rows, target=None)
    report = publish_gate(sel)
    assert report.ok
    assert report.calibration["n_carried"] == 5  # task a: stamped over 6 graded, 5 rows left
    assert not any("unanimous" in w for w in report.warnings)
    assert any("keep the calibration stamp measured before a prune" in w for w in report.warnings)


def test_empty_input_and_bad_arguments():
    report = publish_gate([])
    assert report.ok and not report.rl_shaped
    with pytest.raises(ArgumentError, match="mode must be one of 'rl', 'sft'"):
        publish_gate(group("t", [1.0]), mode="dpo")
    with pytest.raises(ArgumentError, match="band must satisfy"):
        publish_gate(group("t", [1.0]), band=(1.0, 0.0))


def test_strict_hacks_refuses_a_reward_hack_regime(monkeypatch):
    import sys
    import types

    fake = types.ModuleType("whileai.guard")
    fake.hack_scan = lambda rows, *, endorsed=(): {"regime": "reward_hack", "warnings": ["reward tracks 'sorry'"]}
    monkeypatch.setitem(sys.modules, "whileai.guard", fake)
    rows = group("a", [1.0, 0.0]) + group("b", [1.0, 0.0])
    assert publish_gate(rows).ok  # no scan unless asked
    with pytest.raises(PublishGateError, match="reward_hack: .*reward tracks 'sorry'"):
        publish_gate(rows, endorsed=["tool:get_order"], strict_hacks=True)
    report = publish_gate(rows, endorsed=[])
    assert report.ok and report.hack_scan["regime"] == "reward_hack"


def test_near_duplicate_asks_and_length_spread_are_reported():
    rows = (group("a", [1.0, 0.0], prompt="please cancel order 12 for me right now")
            + group("b", [1.0, 0.0], prompt="please cancel order 12 for me now")
            + group("c", [1.0, 0.0], prompt="what is the refund policy for damaged items")
            + group("d", [1.0, 0.0, 1.0]))
    rows[-1]["final_text"] = rows[-1]["messages"][-1]["content"] = "x" * 400
    report = publish_gate(rows)
    near = report.near_duplicate_prompts
    assert (near["n_pairs"], near["n_prompts_involved"], near["n_prompts"]) == (1, 2, 4)
    assert near["examples"][0]["jaccard"] == pytest.approx(7 / 8, abs=1e-4)
    assert {near["examples"][0]["task_a"], near["examples"][0]["task_b"]} == {"a", "b"}
    assert report.length["n_groups_wide_spread"] == 1
    text = " | ".join(report.warnings)
    assert "2 ask(s) of different tasks are near duplicates" in text
    assert "1 ask(s) have a reply more than 4x the ask's median length" in text


def test_near_duplicate_asks_find_what_brute_force_finds():
    rng = np.random.default_rng(9)
    vocab = [f"w{i}" for i in range(60)]
    base = [list(rng.choice(vocab, 10, replace=False)) for _ in range(40)]
    prompts = []
    for words in base:  # each base ask, and a near copy with one word swapped for about half of them
        prompts.append(" ".join(words))
        if rng.random() < 0.5:
            copy_ = list(words)
            copy_[0] = "zz" + str(len(prompts))
            prompts.append(" ".join(copy_))
    rows = [row(f"t{i}", 1.0, prompt=p) for i, p in enumerate(prompts)]
    from whileai import table
    from whileai.selection._hygiene import near_duplicate_asks

    got = near_duplicate_asks(table.frame(rows), threshold=0.8)
    sets = [set(p.split()) for p in prompts]
    truth = {(i, j) for i in range(len(sets)) for j in range(i + 1, len(sets))
             if len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= 0.8}
    involved = {i for pair in truth for i in pair}
    assert got["n_prompts_involved"] == len(involved) and got["n_pairs"] == len(truth)


def test_near_duplicate_asks_stay_linear_on_template_asks():
    from whileai import table
    from whileai.selection._hygiene import near_duplicate_asks

    rows = [row(f"t{i}", 1.0, prompt=f"please look into the order status for this customer today {i}") for i in range(3000)]
    got = near_duplicate_asks(table.frame(rows))
    assert got["n_prompts"] == 3000 and got["n_prompts_involved"] == 3000
    assert got["n_pairs"] < 3000 * 16  # a star per bucket, not all 4.5 million pairs
