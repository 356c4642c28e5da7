"""vf-eval output of real releases (tests/data/verifiers/make_traces.py): 0.4.0 traces.jsonl, 0.3.1 results.jsonl.

Both runs evaluated the exported order environment offline against the scripted server: 4 tasks,
2 rollouts each; the judge pays 0.75 for a reply built on a tool result and 0.25 otherwise; the
fourth task's ask gets HTTP 500 from the provider. vf-eval 0.4 printed, for its run:
``8/8 · reward 0.58 (0.44) · err 0.25`` (the mean reward of the rollouts that did not error, the
mean counting an error as 0, and the error share).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from whileai import pass_at, table

VF = Path(__file__).parent.parent / "data" / "verifiers"
V04 = VF / "v04"
TRACES = next(V04.rglob("traces.jsonl"))
#: What vf-eval 0.4 printed for this run (the README beside the data has the whole summary).
VF_REWARD, VF_REWARD_ERRORS_AS_ZERO, VF_ERROR_SHARE = 0.58, 0.44, 0.25


def _episodes() -> list[dict]:
    return [json.loads(line) for line in TRACES.read_text().splitlines()]


def test_verifiers_04_traces_read_as_rollouts():
    df = table.frame(TRACES)
    episodes = _episodes()
    assert df.height == len(episodes) == 8
    # the task: the task_key our export put into the task's info (the task's key too)
    assert sorted(df["task_key"].unique()) == ["cancel", "order-0", "order-1", "order-2"]
    assert sorted(df["rollout_index"].to_list()) == [0, 0, 0, 0, 1, 1, 1, 1]
    # each reward is the episode's weighted judge score, as vf-eval recorded it
    mine = dict(zip(df["rollout_id"], df["reward"]))
    for ep in episodes:
        trace = ep["traces"][0]
        want = None if trace["errors"] or ep["errors"] else sum(
            r["score"] * r["weight"] for r in trace["rewards"].values())
        assert mine[trace["id"]] == want
    assert df["model_version"].unique().to_list() == ["fake-model"]
    assert df["lineage"].struct.field("env").unique().to_list() == ["order_env"]


def test_verifiers_04_numbers_agree_with_vf_eval():
    df = table.frame(TRACES)
    graded = df.filter(pl.col("reward").is_not_null())
    assert round(graded["reward"].mean(), 2) == VF_REWARD
    assert round(df["reward"].fill_null(0.0).mean(), 2) == VF_REWARD_ERRORS_AS_ZERO
    errored = df.filter(pl.col("judge_status") == "agent_error")
    assert errored.height / df.height == VF_ERROR_SHARE
    assert errored["error"].str.starts_with("ProviderError").all()  # the provider's failure, as the file says
    report = pass_at(TRACES, k=2)
    assert round(report.pass_at_1, 2) == VF_REWARD
    assert any("2 row(s) ended in an agent or harness error" in w for w in report.warnings)


def test_verifiers_04_trajectory_is_the_final_branch_as_messages():
    df = table.frame(TRACES)
    row = table.rows(df.filter((pl.col("task_key") == "order-0") & (pl.col("rollout_index") == 0)))[0]
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    call = row["messages"][2]["tool_calls"][0]
    assert call["function"]["name"] == "get_order" and json.loads(call["function"]["arguments"]) == {"order_id": "A-0"}
    assert row["messages"][3]["tool_call_id"] == call["id"]
    assert row["final_text"] == 'resolved: {"status": "shipped", "token": "tok-0"}'
    assert [t["function"]["name"] for t in row["tools"]] == ["get_order", "check_stock"]
    assert row["markers"] == {"judge": 0.75}


def test_a_verifiers_04_run_folder_skips_its_configs():
    """``outputs/`` holds configs/resolved/eval.json beside traces.jsonl: not rows."""
    assert table.frame(V04).height == 8


def test_task_identity_without_a_whileai_task_key_is_env_and_task_key(tmp_path):
    """A task from any taskset: ``<env>/<task key>``, else ``<env>/<example idx>``."""
    lines = []
    for ep in _episodes():
        for holder in (ep["task"], ep["traces"][0]["task"]):
            holder["data"]["info"] = {}
        lines.append(ep)
    no_key = json.loads(json.dumps(lines[0]))
    no_key["task"].pop("key")
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [*lines, no_key]))
    df = table.frame(path)
    idx = no_key["task"]["data"]["idx"]
    assert sorted(df["task_key"].unique()) == sorted({*(f"order_env/{e['task']['key']}" for e in lines), f"order_env/{idx}"})
    assert f"order_env/{idx}" not in {f"order_env/{e['task']['key']}" for e in lines}


def test_verifiers_03_results_agree_with_vf_eval_metadata():
    """vf-eval 0.3.1's own numbers (metadata.json: avg_reward, avg_error) beside ours on the same run."""
    run = next((VF / "v03").rglob("results.jsonl")).parent
    meta = json.loads((run / "metadata.json").read_text())
    assert meta["version_info"]["vf_version"] == "0.3.1"
    df = table.frame(VF / "v03")
    assert df.height == meta["num_examples"] * meta["rollouts_per_example"] == 8
    assert sorted(df["task_key"].unique()) == ["cancel", "order-0", "order-1", "order-2"]
    assert df["reward"].mean() == pytest.approx(meta["avg_reward"])  # 0.3 scores a rollout that raised, and counts it
    assert (df["finish_reason"] == "error").sum() / df.height == pytest.approx(meta["avg_error"])
    assert df["model_version"].unique().to_list() == [meta["model"]]
    assert pass_at(df).pass_at_1 == pytest.approx(meta["avg_reward"])
