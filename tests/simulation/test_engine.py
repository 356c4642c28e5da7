from __future__ import annotations

import asyncio
import json
import threading

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import whileai as wai
from whileai import simulate, table
from whileai.errors import ArgumentError
from whileai.simulation import SimulationReport, UnknownArgumentError, seeded_agent, tool
from whileai.table.schema import MESSAGE
from whileai.testing import ScriptedPolicy


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@tool
def refund_order(order_id: str, amount: float) -> dict:
    """Refund an order."""


POLICY = "Help customers with orders. Never refund more than $100 without a manager."


def run(agent=None, **kw):
    kw.setdefault("tools", [get_order])
    kw.setdefault("repeats", 4)
    kw.setdefault("budget", 64)
    return simulate(agent if agent is not None else seeded_agent(kw["tools"]), **kw)


def test_the_quickstart_call_shape_and_rows():
    data = simulate(
        wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
        simulator=False, mode="rl", repeats=4, repeat_policy="fixed", budget=64,
    )
    assert isinstance(data, wai.SimulationData)
    df = data.df
    assert (df.height, data.n_tasks, data.k) == (64, 16, 4)
    assert df.group_by("scenario_id").len()["len"].to_list() == [4] * 16
    expected = ["scenario_id", "rollout_index", "rollout_id", "prompt", "system_prompt", "messages", "final_text",
                "tools", "scenario_dimensions", "world_state", "stance", "ask_family", "tier", "fault_kind", "faults",
                "seeded", "seeded_kinds", "truncated", "finish_reason", "policy_version", "model_version",
                "privileged", "lineage", "task_key"]
    assert df.columns == expected
    assert df.schema["messages"] == pl.List(MESSAGE)
    assert df.schema["seeded"] == pl.Boolean and df.schema["seeded_kinds"] == pl.List(pl.String)
    # the table is already canonical: frame() changes nothing
    assert_frame_equal(table.frame(df.drop("task_key")), df)
    assert df["rollout_id"].n_unique() == 64
    assert sorted(df["rollout_index"].unique().to_list()) == [0, 1, 2, 3]
    lineage = df["lineage"].struct.unnest()
    assert set(lineage["source"]) == {"simulate"} and lineage["run_id"].n_unique() == 1
    assert lineage["eval_run"].null_count() == 64 and set(lineage["writer"]) == {"template"}
    assert data.meta["system_prompt"] == "Help customers with orders."
    assert data.meta["tools"] == [get_order.schema] and data.meta["mode"] == "rl" and data.meta["repeats"] == 4
    row = data[0]
    assert row["messages"][0] == {"role": "system", "content": "Help customers with orders."}
    assert row["messages"][1]["role"] == "user" and row["messages"][1]["content"] == row["prompt"]
    assert json.loads(df["tools"][0]) == [get_order.schema]
    assert row["privileged"]["reference"]
    # faults recorded as met, the first one in fault_kind
    met = df.filter(pl.col("fault_kind").is_not_null())
    assert met.height and all(json.loads(f)[0]["kind"] == k for f, k in zip(met["faults"], met["fault_kind"]))
    assert set(df.filter(pl.col("fault_kind").is_null())["faults"]) == {"[]"}


def test_report_keys_and_both_access_styles():
    data = run()
    r = data.report
    assert isinstance(r, SimulationReport)
    assert r["rollouts_lost"] == 0 and r()["rollouts_lost"] == 0
    assert r["rollouts_lost_by"] == {"agent_error": 0, "invalid_reply": 0, "endpoint_error": 0}
    assert r["rows"] == 64 and r["tasks"] == 16 and r["k"] == 4 and r["stopped_because"] == "budget"
    assert 0 < r["pairwise"]["fraction"] <= 1 and r["tier_mix"]["requested"] == 0.4
    assert r["seeded_rows"] == int(data.df["seeded"].sum())
    assert json.loads(r.to_json())["rows"] == 64
    assert "64 rollouts over 16 tasks" in str(r)
    assert any("templates that know only your tool" in w for w in data.warnings)


def test_same_seed_same_table_at_any_concurrency():
    policy = ScriptedPolicy(default="All good.")
    a = run(policy, concurrency=1, seed=5, system_prompt=POLICY)
    b = run(policy, concurrency=8, seed=5, system_prompt=POLICY)
    assert_frame_equal(a.df, b.df)
    c = run(seeded_agent([get_order]), seed=5, system_prompt=POLICY)
    d = run(seeded_agent([get_order]), seed=5, system_prompt=POLICY)
    assert_frame_equal(c.df, d.df)
    e = run(seeded_agent([get_order]), seed=6, system_prompt=POLICY)
    assert set(e.df["scenario_id"]) != set(c.df["scenario_id"])


def test_modes_set_k_and_budget_rounds_down():
    assert run(mode="rl", repeats=None, budget=80).k == 8
    assert run(mode="sft", repeats=None, budget=80).k == 4
    assert run(mode="eval", repeats=None, budget=80).k == 4
    odd = run(repeats=4, budget=66)
    assert len(odd) == 64 and any("not a multiple" in w for w in odd.warnings)
    one = run(repeat_policy="none", repeats=None, budget=10)
    assert one.k == 1 and one.n_tasks == 10


def test_policy_clauses_get_their_own_tasks():
    data = run(tools=[get_order, refund_order], system_prompt=POLICY, budget=160)
    dims = [json.loads(d) for d in data.df["scenario_dimensions"]]
    clause = [d for d in dims if d["block"] == "clause"]
    assert clause and {d["clause"] for d in clause} == {"Never refund more than $100 without a manager."}
    assert data.report["clauses"] == ["Never refund more than $100 without a manager."]
    assert all(d["ask_family"] == "policy" for d in clause)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"budget": 0}, ArgumentError, "budget must be an integer >= 1, got 0"),
        ({"budget": -5}, ArgumentError, "budget must be an integer >= 1"),
        ({"repeats": 0}, ArgumentError, "repeats must be an integer >= 1, got 0"),
        ({"repeats": 2.5}, ArgumentError, "repeats must be an integer"),
        ({"budget": 3, "repeats": 4}, ArgumentError, "budget must be at least repeats"),
        ({"mode": "dpo"}, ArgumentError, "mode must be one of 'rl', 'sft', 'eval', got 'dpo'"),
        ({"repeat_policy": "successive"}, ArgumentError, "repeat_policy must be 'fixed', 'none' or 'dynamic'"),
        ({"repeat_policy": "always"}, ArgumentError, "repeat_policy must be one of"),
        ({"runs": 0}, ArgumentError, "runs must be an integer >= 1"),
        ({"hard_share": 1.5}, ArgumentError, "hard_share must be a number between 0 and 1"),
        ({"fault_rate": -0.1}, ArgumentError, "fault_rate must be a number between 0 and 1"),
        ({"concurrency": 0}, ArgumentError, "concurrency must be an integer >= 1"),
        ({"max_turns": 0}, ArgumentError, "max_turns must be an integer >= 1"),
        ({"seed": "abc"}, ArgumentError, "seed must be an int"),
        ({"system_prompt": 5}, ArgumentError, "system_prompt must be text"),
        ({"repeat_policy": "none", "repeats": 3}, ArgumentError, "repeats must be 1 with repeat_policy='none'"),
        ({"budgett": 5}, TypeError, "unexpected keyword argument 'budgett' \\(did you mean 'budget'\\?\\)"),
        ({"budgett": 5, "foo": 1}, UnknownArgumentError, "arguments 'budgett' .*, 'foo'"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        run(**kwargs)


def test_an_agent_that_raises_or_returns_garbage_loses_only_those_rollouts():
    calls = {"n": 0}
    lock = threading.Lock()

    def flaky(messages, tools):
        with lock:
            calls["n"] += 1
            n = calls["n"]
        if n % 5 == 0:
            raise RuntimeError("model crashed")
        if n % 7 == 0:
            return {"text": "not a message"}
        if n % 11 == 0:
            return None
        return "Fine."

    data = run(flaky, concurrency=1, budget=80, repeats=4)
    r = data.report
    assert r["rollouts_lost_by"]["agent_error"] == 16
    assert r["rollouts_lost_by"]["invalid_reply"] == sum(1 for n in range(1, 81) if n % 5 and (n % 7 == 0 or n % 11 == 0))
    assert r["rollouts_lost"] == sum(r["rollouts_lost_by"].values()) == 80 - len(data)
    assert r["rollouts_requested"] == 80 and r["stopped_because"] == "budget"
    assert {x["reason"] for x in r["lost"]} == {"agent_error", "invalid_reply"}
    assert any("RuntimeError: model crashed" == x["error"] for x in r["lost"])
    assert any("keys ['text']" in x["error"] for x in r["lost"])
    assert any("never became rows" in w for w in data.warnings)
    # every lost rollout is recorded, with its error and the conversation up to the failure
    lost = data.lost
    assert lost.height == r["rollouts_lost"] and set(lost["finish_reason"]) == {"error"}
    assert set(lost["lost_reason"]) == {"agent_error", "invalid_reply"}
    assert lost.filter(lost["lost_reason"] == "agent_error")["error"].unique().to_list() == ["RuntimeError: model crashed"]
    assert lost["messages"].list.len().min() >= 1 and "error" not in data.df.columns
    assert set(lost["scenario_id"]) <= set(data.df["scenario_id"]) | set(lost["scenario_id"])
    assert not set(lost["rollout_id"]) & set(data.df["rollout_id"])


def test_a_dead_agent_stops_early_with_an_empty_table():
    def dead(messages, tools):
        raise ValueError("no key")

    data = run(dead, budget=400, repeats=4)
    assert len(data) == 0 and data.df.width > 10
    assert data.report["stopped_because"] == "agent_failed"
    assert data.report["rollouts_lost"] == 16 and data.report["rollouts_requested"] == 400
    assert data.lost.height == 16
    assert any("ValueError: no key" in w for w in data.warnings)
    small = run(dead, budget=8, repeats=4)
    assert small.report["rollouts_lost"] == 8 and small.report["stopped_because"] == "agent_failed"


def test_unknown_tools_are_answered_and_counted_and_rows_stay():
    def wrong(messages, tools):
        if messages[-1]["role"] == "tool":
            return "Sorry."
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "launch_rocket", "arguments": "{}"}}]}

    data = run(wrong, budget=8, repeats=2, fault_rate=0.0)
    assert len(data) == 8 and data.report["unknown_tool_calls"] == 8
    tool_msg = next(m for m in data[0]["messages"] if m["role"] == "tool")
    assert json.loads(tool_msg["content"])["error"] == "unknown_tool"
    assert any("launch_rocket" in w for w in data.warnings)


def test_turn_limit_truncates():
    def loop(messages, tools):
        return {"content": None, "tool_calls": [{"name": "get_order", "arguments": {"order_id": "ORD-1"}}]}

    data = run(loop, budget=4, repeats=2, max_turns=3)
    assert data.df["truncated"].all() and set(data.df["finish_reason"]) == {"length"}
    assert data.df["final_text"].null_count() == 4
    assert all(sum(m["role"] == "assistant" for m in r["messages"]) == 3 for r in data.rows())
    assert data.report["truncated"] == 4


def test_finish_reason_length_from_the_agent_marks_truncated():
    data = run(lambda m, t: {"content": "cut mid", "finish_reason": "length"}, budget=4, repeats=2)
    assert data.df["truncated"].all() and set(data.df["final_text"]) == {"cut mid"}


def test_async_agents_run_on_an_event_loop():
    active = {"now": 0, "max": 0}

    async def agent(messages, tools):
        active["now"] += 1
        active["max"] = max(active["max"], active["now"])
        await asyncio.sleep(0.005)
        active["now"] -= 1
        return "ok"

    data = run(agent, budget=40, repeats=4, concurrency=5)
    assert len(data) == 40 and set(data.df["final_text"]) == {"ok"}
    assert 2 <= active["max"] <= 5
    assert set(data.df["model_version"]) == {"agent"}


def test_sync_agents_with_io_run_on_threads():
    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def agent(messages, tools):
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
        threading.Event().wait(0.005)
        with lock:
            active["now"] -= 1
        return "ok"

    run(agent, budget=40, repeats=4, concurrency=4)
    assert 2 <= active["max"] <= 4


def test_the_agent_sees_openai_messages_and_schemas():
    seen = []

    def agent(messages, tools):
        seen.append((messages, tools))
        messages.append({"role": "user", "content": "mutating my copy is harmless"})
        return "ok"

    data = run(agent, budget=2, repeats=2, system_prompt=POLICY)
    messages, tools = seen[0]
    assert messages[0] == {"role": "system", "content": POLICY} and messages[1]["role"] == "user"
    assert tools == [get_order.schema]
    assert [m["role"] for m in data[0]["messages"]] == ["system", "user", "assistant"]


def test_tasks_replays_exactly_the_pinned_tasks(tmp_path):
    base = run(seeded_agent([get_order]), system_prompt=POLICY, budget=48, repeats=4, seed=2)
    edited = POLICY.replace("$100", "$50")
    again = simulate(ScriptedPolicy(default="New answer."), tools=[get_order], system_prompt=edited, tasks=base)
    assert again.k == 4 and len(again) == 48
    key = ["scenario_id", "prompt", "scenario_dimensions", "world_state", "stance", "tier"]
    assert_frame_equal(base.df.select(key).unique(maintain_order=True), again.df.select(key).unique(maintain_order=True))
    assert again.report["stopped_because"] == "tasks_done" and again.report["writer"] == "pinned"
    lineage = again.df["lineage"].struct.unnest()
    assert lineage["replayed"].all() and set(lineage["parent_run"]) == {base.report["run_id"]}
    assert set(again.df["system_prompt"]) == {edited}
    # from rows and from a JSONL path: the same tasks, the same faults met by the same agent
    path = base.write(tmp_path / "base.jsonl")
    for source in (base.rows(), str(path)):
        replay = simulate(seeded_agent([get_order]), tools=[get_order], system_prompt=POLICY, tasks=source)
        assert replay.df["scenario_id"].to_list() == base.df["scenario_id"].to_list()
        assert replay.df["faults"].to_list() == base.df["faults"].to_list()
        assert replay.df["final_text"].to_list() == base.df["final_text"].to_list()
    # repeats= re-runs at another k on purpose; budget= caps and warns
    assert simulate(seeded_agent([get_order]), tools=[get_order], tasks=base, repeats=2).k == 2
    capped = simulate(seeded_agent([get_order]), tools=[get_order], tasks=base, budget=8)
    assert capped.n_tasks == 2 and any("pinned tasks" in w for w in capped.warnings)


def test_tasks_from_foreign_rows():
    rows = [{"task_id": "t1", "prompt": "Where is ORD-1234?"}, {"task_id": "t2", "prompt": "Hi"},
            {"task_id": "t1", "prompt": "Where is ORD-1234?"}]
    data = simulate(seeded_agent([get_order], rate=0.0), tools=[get_order], tasks=rows)
    assert data.k == 2 and data.n_tasks == 2 and len(data) == 4
    assert set(data.df["scenario_id"]) == {"t1", "t2"}
    first = data.rows()[0]
    assert json.loads(next(m for m in first["messages"] if m["role"] == "tool")["content"])["status"] == "ok"
    with pytest.raises(ArgumentError, match="tasks rows must carry a prompt"):
        simulate(seeded_agent([get_order]), tools=[get_order], tasks=[{"task_id": "a", "reward": 1}])


def test_runs_replays_and_stamps_eval_run():
    data = run(seeded_agent([get_order]), budget=32, repeats=4, runs=3)
    assert len(data) == 96 and data.report["runs"] == 3
    eval_run = data.df["lineage"].struct.field("eval_run")
    assert eval_run.value_counts().sort("eval_run")["count"].to_list() == [32, 32, 32]
    per = [set(data.df.filter(eval_run == r)["scenario_id"]) for r in (1, 2, 3)]
    assert per[0] == per[1] == per[2]
    assert data.df["rollout_id"].n_unique() == 96


def test_output_is_written(tmp_path):
    data = run(budget=8, repeats=2, output=tmp_path / "out.jsonl")
    back = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(back) == 8 and back[0]["scenario_id"] == data.df["scenario_id"][0]
    assert isinstance(back[0]["messages"][2].get("tool_calls", [{}])[0].get("function", {}).get("arguments", ""), str)
    run(budget=8, repeats=2, output=tmp_path / "out.parquet")
    assert pl.read_parquet(tmp_path / "out.parquet").height == 8


def test_progress_silent_off_a_terminal_and_callable_gets_counts(capsys):
    run(budget=8, repeats=2)
    run(budget=8, repeats=2, progress=False)
    assert capsys.readouterr().err == ""
    seen = []
    run(budget=8, repeats=2, progress=lambda done, total, info: seen.append((done, total, dict(info))))
    assert [d for d, _, _ in seen] == list(range(1, 9)) and {t for _, t, _ in seen} == {8}
    assert seen[-1][2]["situations"] == 4 and seen[-1][2]["lost"] == 0
    assert capsys.readouterr().err == ""


def test_progress_must_be_a_flag_or_callable():
    with pytest.raises(ArgumentError, match="progress must be True, False, None or a callable"):
        run(budget=8, repeats=2, progress="yes")


def test_execute_answers_tool_calls():
    data = run(seeded_agent([get_order], rate=0.0), budget=8, repeats=2, fault_rate=0.0,
               execute=lambda name, args: {"from": "my world", **args})
    results = [m["content"] for r in data.rows() for m in r["messages"] if m["role"] == "tool"]
    assert results and all(json.loads(c)["from"] == "my world" for c in results)
