"""The seeded table generator: same seed same table, and its truth is what it says."""

from __future__ import annotations

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from whileai import table
from whileai.testing import ScriptedPolicy, rollout_table, scripted_judge, true_pass_rates


def test_same_seed_same_table():
    assert_frame_equal(rollout_table(8, 4, seed=3), rollout_table(8, 4, seed=3))


def test_pass_rates_track_truth():
    df = rollout_table(400, 50, seed=1, messages=False)
    observed = df.group_by("scenario_id", maintain_order=True).agg(reward=pl.col("reward").mean())["reward"].to_numpy()
    truth = true_pass_rates(400, seed=1)
    assert np.abs(observed - truth).mean() < 0.06


def test_after_run_shares_tasks_and_moves():
    before = rollout_table(200, 8, seed=2, messages=False)
    after = rollout_table(200, 8, seed=2, shift=0.1, messages=False)
    assert before["scenario_id"].to_list() == after["scenario_id"].to_list()
    assert 0.04 < after["reward"].mean() - before["reward"].mean() < 0.16


def test_shortcut_tracks_reward_within_task():
    df = rollout_table(100, 8, seed=0, shortcut="zzq", messages=False)
    has = df["final_text"].str.contains("zzq")
    assert df.filter(has)["reward"].mean() > df.filter(~has)["reward"].mean() + 0.3


def test_generated_table_is_canonical():
    df = table.frame(rollout_table(4, 2, seed=0, eval_run=1))
    assert df["messages"].list.len().min() >= 2
    assert df["lineage"].struct.field("eval_run").to_list() == [1] * 8


def test_scripted_policy_and_judge():
    policy = ScriptedPolicy({"refund": "Refunded, resolved."})
    reply = policy([{"role": "user", "content": "please refund"}])
    assert reply["content"] == "Refunded, resolved."
    assert scripted_judge({"final_text": reply["content"]})["reward"] == 1.0
    assert policy([{"role": "user", "content": "x"}])["content"] == "Done."


def test_outcome_signal_controls_how_much_the_text_says():
    told = rollout_table(200, 8, seed=3, messages=False)
    blind = rollout_table(200, 8, seed=3, messages=False, outcome_signal=0.5)
    says = told["final_text"].str.contains("resolved it")
    assert (says == (told["reward"] >= 0.5)).all()
    agree = (blind["final_text"].str.contains("resolved it") == (blind["reward"] >= 0.5)).mean()
    assert 0.45 < agree < 0.55


def test_replica_redraws_rollouts_of_the_same_tasks():
    a = rollout_table(50, 4, seed=1, messages=False)
    b = rollout_table(50, 4, seed=1, replica=1, messages=False)
    assert a["scenario_id"].to_list() == b["scenario_id"].to_list()
    assert a["reward"].to_list() != b["reward"].to_list()
