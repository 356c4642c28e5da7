"""Gaps a run must not hide: an unjudged dynamic run, an async execute, a seeded share that cannot be met, NaN results."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

import whileai as wai
from whileai.errors import ArgumentError
from whileai.simulation import seeded_agent, tool


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@tool
def refund_order(order_id: str, amount: float) -> dict:
    """Refund an order."""


POLICY = "Help customers with orders."


def _call_then_echo(messages, tools):
    if messages[-1]["role"] == "tool":
        return "result: " + messages[-1]["content"]
    return {"role": "assistant", "content": None,
            "tool_calls": [{"type": "function", "function": {"name": "get_order", "arguments": {"order_id": "ORD-1"}}}]}


async def _acall_then_echo(messages, tools):
    return _call_then_echo(messages, tools)


def _tool_contents(data):
    return [m["content"] for r in data.rows() for m in r["messages"] if m["role"] == "tool"]


# --- 1. dynamic sampling with a grader that judges nothing ------------------------------------


@pytest.mark.parametrize("grader,named", [
    (lambda row: (_ for _ in ()).throw(RuntimeError("judge down")), "RuntimeError: judge down"),
    (lambda row: "junk", "invalid_result"),
])
def test_dynamic_sampling_counts_and_warns_about_asks_it_could_not_judge(grader, named):
    data = wai.simulate(seeded_agent([get_order]), tools=[get_order], system_prompt=POLICY, repeats=4, budget=32,
                        repeat_policy="dynamic", grader=grader, progress=False)
    r = data.report
    assert data.df["reward"].null_count() == data.df.height
    assert r.asks_unjudged == 8
    assert r.asks_oversampled == 0
    warning = [w for w in r.warnings if "could not judge" in w]
    assert len(warning) == 1 and named in warning[0] and "grader" in warning[0]
    assert "8 asks" in str(r)


def test_dynamic_sampling_reports_no_unjudged_asks_when_the_grader_works():
    data = wai.simulate(seeded_agent([get_order]), tools=[get_order], system_prompt=POLICY, repeats=4, budget=32,
                        repeat_policy="dynamic", grader=lambda row: float(not row["seeded"]), progress=False)
    assert data.report.asks_unjudged == 0
    assert not [w for w in data.report.warnings if "could not judge" in w]


# --- 2. an async execute= -------------------------------------------------------------------


async def _aexecute(name, args):
    await asyncio.sleep(0)
    return {"order_id": args["order_id"], "status": "shipped", "by": name}


@pytest.mark.parametrize("agent", [_call_then_echo, _acall_then_echo], ids=["sync agent", "async agent"])
@pytest.mark.parametrize("tool_timeout", [60, None])
def test_an_async_execute_is_awaited(agent, tool_timeout):
    data = wai.simulate(agent, tools=[get_order], system_prompt=POLICY, repeats=1, budget=4, fault_rate=0,
                        progress=False, execute=_aexecute, tool_timeout=tool_timeout, concurrency=2)
    contents = _tool_contents(data)
    assert len(contents) == 4 and data.report.rollouts_lost == 0
    assert all(json.loads(c) == {"order_id": "ORD-1", "status": "shipped", "by": "get_order"} for c in contents)


@pytest.mark.parametrize("agent", [_call_then_echo, _acall_then_echo], ids=["sync agent", "async agent"])
def test_an_async_execute_past_tool_timeout_is_a_tool_error(agent):
    async def slow(name, args):
        await asyncio.sleep(5)
        return {"late": True}

    data = wai.simulate(agent, tools=[get_order], system_prompt=POLICY, repeats=1, budget=2, fault_rate=0,
                        progress=False, execute=slow, tool_timeout=0.2)
    contents = [json.loads(c) for c in _tool_contents(data)]
    assert len(contents) == 2
    assert all(c["error"] == "tool_error" and "did not return within 0.2 s" in c["message"] for c in contents)


def test_an_async_execute_that_raises_is_a_tool_error():
    async def broken(name, args):
        raise KeyError("db down")

    data = wai.simulate(_call_then_echo, tools=[get_order], system_prompt=POLICY, repeats=1, budget=2, fault_rate=0,
                        progress=False, execute=broken)
    contents = [json.loads(c) for c in _tool_contents(data)]
    assert contents and all(c["error"] == "tool_error" and "db down" in c["message"] for c in contents)


def test_a_sync_execute_returning_a_coroutine_is_awaited_too():
    data = wai.simulate(_call_then_echo, tools=[get_order], system_prompt=POLICY, repeats=1, budget=2, fault_rate=0,
                        progress=False, execute=lambda name, args: _aexecute(name, args))
    assert all(json.loads(c)["status"] == "shipped" for c in _tool_contents(data))


# --- 3. seeded kinds that cannot happen -----------------------------------------------------


def test_seeded_agent_refuses_kinds_none_of_which_can_happen_with_its_tools():
    with pytest.raises(ArgumentError, match="kinds must hold at least one kind that can happen with these tools"):
        seeded_agent([get_order], kinds=["wrong_tool"])
    seeded_agent([get_order, refund_order], kinds=["wrong_tool"])  # two tools: it can


def test_simulate_refuses_fault_only_kinds_in_a_world_without_faults():
    with pytest.raises(ArgumentError, match="fault_rate"):
        wai.simulate(seeded_agent([get_order], kinds=["ignored_failure"]), tools=[get_order], system_prompt=POLICY,
                     repeats=4, budget=16, fault_rate=0, progress=False)


def test_a_seeded_share_short_of_rate_is_warned_about():
    data = wai.simulate(seeded_agent([get_order], rate=0.5, kinds=["ignored_failure"]), tools=[get_order],
                        system_prompt=POLICY, repeats=4, budget=400, progress=False)
    share = data.df["seeded"].mean()
    assert share < 0.3
    warning = [w for w in data.report.warnings if "seeded_agent" in w]
    assert len(warning) == 1 and "ignored_failure" in warning[0] and "rate 0.5" in warning[0]


def test_no_seeded_warning_when_every_kind_can_happen():
    data = wai.simulate(seeded_agent([get_order], rate=0.5, kinds=["filler"]), tools=[get_order],
                        system_prompt=POLICY, repeats=4, budget=64, progress=False)
    assert not [w for w in data.report.warnings if "seeded_agent" in w]


# --- 5. tool results are strict JSON --------------------------------------------------------


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -math.inf])
def test_a_non_finite_number_from_execute_becomes_null(value):
    data = wai.simulate(_call_then_echo, tools=[get_order], system_prompt=POLICY, repeats=1, budget=2, fault_rate=0,
                        progress=False, execute=lambda name, args: {"x": value, "nested": [1.5, value], "ok": 1})
    for content in _tool_contents(data):
        assert json.loads(content, parse_constant=lambda c: pytest.fail(f"{c} in {content}")) == \
            {"x": None, "nested": [1.5, None], "ok": 1}


def test_ray_parts_add_up_their_unjudged_asks():
    from whileai.simulation._dynamic import _no_dynamic, _unjudged_warning
    from whileai.simulation._job import _merge_parts

    def part(asks, rows, by, first):
        dynamic = {**_no_dynamic(), "asks_unjudged": asks, "rows_unjudged": rows, "unjudged_by": by,
                   "unjudged_first": first}
        return {"lost_by": {}, "lost": [], "unknown_tool_calls": 0, "unknown_tools": [], "user_turns": 0,
                "dynamic": dynamic, "sent": {}, "attempted": rows,
                "counts": {"rows": rows, "faults_met": 0, "fault_kinds": {}, "seeded_rows": 0, "seeded_by": {},
                           "truncated": 0}}

    landed, _ = _merge_parts([part(0, 0, {}, None), part(2, 8, {"error": 8}, "the judge raised X"),
                              part(1, 4, {"error": 3, "timeout": 1}, "the judge raised Y")])
    d = landed.dynamic
    assert (d["asks_unjudged"], d["rows_unjudged"], d["unjudged_by"]) == (3, 12, {"error": 11, "timeout": 1})
    assert d["unjudged_first"] == "the judge raised X"
    text = _unjudged_warning(d, 10)
    assert "could not judge 3 of 10 asks" in text and "11 error, 1 timeout" in text and "Fix the grader" in text
