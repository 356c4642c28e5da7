from __future__ import annotations

import json
import math
import re

import pytest

from whileai import simulate
from whileai.errors import ArgumentError
from whileai.simulation import SEEDED_KINDS, seeded_agent, tool


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@tool
def cancel_order(order_id: str, reason: str) -> dict:
    """Cancel an order."""


TOOLS = [get_order, cancel_order]


@pytest.fixture(scope="module")
def run():
    agent = seeded_agent(TOOLS, rate=0.35, seed=7)
    return simulate(agent, tools=TOOLS, system_prompt="Help with orders.", repeats=4, budget=1600, seed=1,
                    fault_rate=0.3)


def calls_of(row):
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in row["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])]


def tool_results(row):
    return [m["content"] for m in row["messages"] if m["role"] == "tool"]


def test_seeded_share_matches_the_rate(run):
    n = len(run)
    share = run.df["seeded"].mean()
    assert abs(share - 0.35) < 4 * math.sqrt(0.35 * 0.65 / n)
    # every seeded row names exactly one kind, every honest row none
    kinds = run.df["seeded_kinds"].to_list()
    assert all((len(k) == 1) == s for k, s in zip(kinds, run.df["seeded"].to_list()))
    assert {k[0] for k in kinds if k} == set(SEEDED_KINDS)


def test_each_label_is_what_the_agent_did(run):
    for row in run.rows():
        kinds = row["seeded_kinds"]
        calls = calls_of(row)
        dims = row["scenario_dimensions"]
        prompt = row["prompt"]
        final = row.get("final_text") or ""
        if not kinds:
            # honest: every argument it sends is in the prompt; it never claims a failed call went through
            for _, args in calls:
                assert all(str(v) in prompt for v in args.values()), (prompt, args)
            if row.get("fault_kind") and dims["fault_calls"] == "all":
                assert "went through" not in final and "processed" not in final
            continue
        kind = kinds[0]
        if kind == "invented_argument":
            assert calls and any(str(v) not in prompt for _, args in calls for v in args.values())
        elif kind == "skipped_tool":
            assert not calls and "taken care of" in final
        elif kind == "wrong_tool":
            assert calls and calls[0][0] != dims["tool"]
        elif kind == "ignored_failure":
            assert row["fault_kind"] is not None and "went through" in final
        elif kind == "unsupported_claim":
            assert "processed" in final or "confirmed" in final
        elif kind == "filler":
            assert final.startswith("Thanks so much for reaching out")


def test_honest_agent_asks_retries_and_declines(run):
    rows = [r for r in run.rows() if not r["seeded"]]
    vague = [r for r in rows if r["stance"] == "vague"]
    assert vague and all(not calls_of(r) and "Which" in r["final_text"] for r in vague)
    unrelated = [r for r in rows if r["stance"] == "off_topic" and r["ask_family"] != "compound"]
    assert unrelated and all(not calls_of(r) for r in unrelated)
    retried = [r for r in rows if r.get("fault_kind") in ("timeout", "server_error", "rate_limit")
               and r["scenario_dimensions"]["fault_calls"] == "first"]
    assert retried and all(len(calls_of(r)) == 2 for r in retried)


def test_same_seed_same_draws_and_eval_runs_differ():
    kw = dict(tools=TOOLS, repeats=4, budget=200, seed=3)
    a = simulate(seeded_agent(TOOLS, seed=1), **kw)
    b = simulate(seeded_agent(TOOLS, seed=1), **kw)
    c = simulate(seeded_agent(TOOLS, seed=2), **kw)
    assert a.df["seeded_kinds"].to_list() == b.df["seeded_kinds"].to_list()
    assert a.df["seeded_kinds"].to_list() != c.df["seeded_kinds"].to_list()
    three = simulate(seeded_agent(TOOLS, seed=1), tasks=a, runs=3)
    per_run = [three.df.filter(three.df["lineage"].struct.field("eval_run") == r)["seeded"].to_list() for r in (1, 2, 3)]
    assert per_run[0] != per_run[1] != per_run[2]


def test_outside_a_run_it_reads_the_prompt():
    agent = seeded_agent(TOOLS, rate=0.0)
    reply = agent([{"role": "user", "content": "Please cancel my order ORD-4242. The reason is moved."}])
    call = reply["tool_calls"][0]["function"]
    assert call["name"] == "cancel_order" and json.loads(call["arguments"]) == {"order_id": "ORD-4242", "reason": "moved"}
    ask = agent([{"role": "user", "content": "Something is wrong with my order"}])
    assert "tool_calls" not in ask and re.search("order", ask["content"])
    done = agent([{"role": "user", "content": "Check order ORD-4242"}, reply,
                  {"role": "tool", "tool_call_id": "call_0", "name": "cancel_order",
                   "content": '{"status":"ok","data":{"order_id":"ORD-4242","status":"open","action":"cancel","result":"completed"}}'}])
    assert "completed" in done["content"] and "seeded" not in done


def test_bad_arguments():
    with pytest.raises(ArgumentError, match="at least one tool"):
        seeded_agent([])
    with pytest.raises(ArgumentError, match="rate must be a number between 0 and 1"):
        seeded_agent(TOOLS, rate=1.5)
    with pytest.raises(ArgumentError, match="kinds must be a non-empty subset"):
        seeded_agent(TOOLS, kinds=["lying"])
    with pytest.raises(ArgumentError, match="seed must be an int"):
        seeded_agent(TOOLS, seed="x")
    only = simulate(seeded_agent(TOOLS, rate=1.0, kinds=["filler"]), tools=TOOLS, repeats=2, budget=20)
    assert only.df["seeded"].all() and set(only.df["seeded_kinds"].explode().to_list()) == {"filler"}


def test_single_tool_never_plants_wrong_tool():
    data = simulate(seeded_agent([get_order], rate=1.0), tools=[get_order], repeats=2, budget=200)
    assert "wrong_tool" not in set(data.df["seeded_kinds"].explode().to_list())


def test_seeded_arms_with_another_seed_or_rate_are_not_one_setup():
    """model_version carries the seeded agent's seed and rate, so delta_report tells the arms apart."""
    from whileai import delta_report

    def run(**kw):
        return simulate(seeded_agent([get_order], **kw), tools=[get_order], repeats=2, budget=40, seed=0).grade(
            lambda row: {"reward": 0.0 if row.get("seeded") else 1.0})

    base = run(seed=0, rate=0.5)
    for other in (run(seed=1, rate=0.5), run(seed=0, rate=0.2)):
        assert not any("to itself" in w for w in delta_report(base, other).warnings)
    assert any("to itself" in w for w in delta_report(base, run(seed=0, rate=0.5)).warnings)
    assert base.df["model_version"][0] == "seeded_agent(seed=0,rate=0.5)"
