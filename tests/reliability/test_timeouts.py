"""Optional timeouts: judges, agents and tools no longer wait forever by default; None turns each off."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time

import pytest

from whileai import simulate
from whileai.defaults import AGENT_TIMEOUT_S, JUDGE_TIMEOUT_S, TOOL_TIMEOUT_S
from whileai.errors import ArgumentError
from whileai.grade import _run, run_judge
from whileai.simulation import seeded_agent, tool


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@pytest.fixture
def release():
    event = threading.Event()
    yield event
    event.set()  # let every abandoned call end


def test_timeout_defaults_are_named():
    assert inspect.signature(run_judge).parameters["timeout"].default == "default"
    params = inspect.signature(simulate).parameters
    assert params["timeout"].default == AGENT_TIMEOUT_S and params["tool_timeout"].default == TOOL_TIMEOUT_S
    assert JUDGE_TIMEOUT_S > 0


def test_judge_that_hangs_at_once_times_out_by_default(monkeypatch, release):
    monkeypatch.setattr(_run, "JUDGE_TIMEOUT_S", 0.3)

    def judge(row):
        if row["prompt"] == "hang":
            release.wait(30)
        return 1

    started = time.monotonic()
    scored = run_judge([{"prompt": p} for p in ["a", "hang", "b"]], judge)
    assert time.monotonic() - started < 5
    assert scored.df["judge_status"].to_list() == ["ok", "timeout", "ok"]
    assert "0.3 s timeout" in scored.df["reason"][1]


def test_async_judge_times_out_by_default(monkeypatch):
    monkeypatch.setattr(_run, "JUDGE_TIMEOUT_S", 0.2)

    async def judge(row):
        await asyncio.sleep(5 if row["prompt"] == "hang" else 0)
        return 1

    scored = run_judge([{"prompt": "hang"}, {"prompt": "b"}], judge)
    assert scored.df["judge_status"].to_list() == ["timeout", "ok"]


def test_judge_timeout_none_waits(monkeypatch):
    monkeypatch.setattr(_run, "JUDGE_TIMEOUT_S", 0.05)

    def judge(row):
        time.sleep(0.2)
        return 1

    scored = run_judge([{"prompt": "slow"}], judge, timeout=None)
    assert scored.df["judge_status"].to_list() == ["ok"]
    assert run_judge([{"prompt": "slow"}], judge).df["judge_status"].to_list() == ["timeout"]


def test_agent_that_hangs_is_lost_after_the_timeout(release):
    def agent(messages, tools):
        release.wait(30)
        return {"role": "assistant", "content": "late"}

    started = time.monotonic()
    data = simulate(agent, tools=[get_order], repeats=2, budget=4, concurrency=4, timeout=0.3)
    assert time.monotonic() - started < 10
    report = data.report
    assert report["rollouts_lost_by"]["agent_error"] == 4 and len(data) == 0
    assert "did not return within 0.3 s" in data.lost["error"][0]


def test_async_agent_that_hangs_is_lost_after_the_timeout():
    async def agent(messages, tools):
        await asyncio.sleep(30)

    data = simulate(agent, tools=[get_order], repeats=2, budget=2, timeout=0.2)
    assert data.report["rollouts_lost_by"]["agent_error"] == 2


def test_tool_that_hangs_answers_with_a_tool_error(release):
    def execute(name, args):
        release.wait(30)
        return {"late": True}

    started = time.monotonic()
    data = simulate(seeded_agent([get_order], rate=0.0), tools=[get_order], repeats=1, budget=2, fault_rate=0.0,
                    execute=execute, tool_timeout=0.2)
    assert time.monotonic() - started < 10
    results = [json.loads(m["content"]) for r in data.rows() for m in r["messages"] if m["role"] == "tool"]
    assert results and all(r["error"] == "tool_error" and "within 0.2 s" in r["message"] for r in results)


def test_timeouts_turn_off_with_none():
    def execute(name, args):
        time.sleep(0.05)
        return {"ok": True}

    data = simulate(seeded_agent([get_order], rate=0.0), tools=[get_order], repeats=1, budget=2, fault_rate=0.0,
                    execute=execute, timeout=None, tool_timeout=None)
    results = [json.loads(m["content"]) for r in data.rows() for m in r["messages"] if m["role"] == "tool"]
    assert results and all(r == {"ok": True} for r in results)


@pytest.mark.parametrize("name", ["timeout", "tool_timeout"])
def test_bad_timeouts(name):
    with pytest.raises(ArgumentError, match=f"{name} must be a positive number of seconds or None"):
        simulate(seeded_agent([get_order]), tools=[get_order], budget=2, **{name: 0})
