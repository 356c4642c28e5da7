from __future__ import annotations

import dataclasses
import json

import pytest

from whileai.simulation import World, tool
from whileai.simulation._tools import normalize_tools
from whileai.simulation._writer import FAULT_KINDS, make_situation


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@tool
def cancel_order(order_id: str, reason: str = "") -> dict:
    """Cancel an order."""


SPECS = normalize_tools([get_order, cancel_order])
TOOLS = {s.name: s for s in SPECS}


def situation(world_state="found", fault=None, fault_calls="none", stance="cooperative"):
    s = make_situation(SPECS[0], world_state=world_state, stance=stance, family="direct", clause=None, replica=0,
                       fault_rate=0.0)
    return dataclasses.replace(s, fault=fault, fault_calls=fault_calls if fault else "none")


def call(world, name="get_order", **args):
    return world.call(name, json.dumps(args))


@pytest.mark.parametrize("cached", [False, True])
def test_world_states(cached):
    cache = {} if cached else None
    s = situation("found")
    ok = json.loads(call(World(s, TOOLS, cache=cache), order_id=s.entity))
    assert ok["status"] == "ok" and ok["data"]["order_id"] == s.entity and "updated_at" in ok["data"]
    other = json.loads(call(World(s, TOOLS, cache=cache), order_id="ORD-0000"))
    assert other["status"] == "not_found" and "ORD-0000" in other["error"]
    s = situation("not_found")
    assert json.loads(call(World(s, TOOLS, cache=cache), order_id=s.entity))["status"] == "not_found"
    s = situation("ambiguous")
    amb = json.loads(call(World(s, TOOLS, cache=cache), order_id=s.entity))
    assert amb["matches"] == 2 and len(amb["data"]) == 2 and amb["data"][0]["status"] != amb["data"][1]["status"]
    s = situation("partial")
    part = json.loads(call(World(s, TOOLS, cache=cache), order_id=s.entity.lower()))  # ids match case-insensitively
    assert part["incomplete"] is True and "amount" not in part["data"]
    # a write tool reports the action
    write = json.loads(call(World(situation("found"), TOOLS, cache=cache), "cancel_order", order_id=situation().entity))
    assert write["data"]["action"] == "cancel" and write["data"]["result"] == "completed"
    # the same answer every time (replays see the same world)
    w1, w2 = World(s, TOOLS, cache=cache), World(s, TOOLS, cache=cache)
    assert call(w1, order_id=s.entity) == call(w2, order_id=s.entity)


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_faults_fire_on_schedule_and_are_recorded(kind):
    s = situation("found", fault=kind, fault_calls="first")
    world = World(s, TOOLS, cache={})
    first = call(world, order_id=s.entity)
    second = call(world, order_id=s.entity)
    assert world.met == [{"call": 0, "tool": "get_order", "kind": kind}]
    assert json.loads(second)["status"] == "ok"
    if kind == "malformed_output":
        with pytest.raises(ValueError):
            json.loads(first)
    elif kind == "empty_result":
        assert first == "{}"
    elif kind == "partial_result":
        assert json.loads(first)["partial"] is True
    else:
        assert json.loads(first)["error"] == kind
    every = World(dataclasses.replace(s, fault_calls="all"), TOOLS)
    call(every, order_id=s.entity)
    call(every, "cancel_order", order_id=s.entity)
    assert [m["call"] for m in every.met] == [0, 1] and every.met[1]["tool"] == "cancel_order"


def test_bad_calls_are_answered_not_raised():
    s = situation()
    world = World(s, TOOLS)
    unknown = json.loads(world.call("delete_everything", "{}"))
    assert unknown["error"] == "unknown_tool" and unknown["available"] == ["cancel_order", "get_order"]
    assert world.unknown_calls == ["delete_everything"]
    assert json.loads(world.call("get_order", "{}"))["missing"] == ["order_id"]
    assert json.loads(world.call("get_order", "not json"))["error"] == "invalid_arguments"
    assert json.loads(world.call("get_order", None))["missing"] == ["order_id"]


def test_execute_answers_after_faults():
    seen = []

    def execute(name, args):
        seen.append((name, args))
        if args.get("order_id") == "boom":
            raise RuntimeError("db down")
        return {"real": True}

    s = situation(fault="timeout", fault_calls="first")
    world = World(s, TOOLS, execute=execute, cache={})
    assert json.loads(call(world, order_id="x"))["error"] == "timeout"  # the fault fires first
    assert json.loads(call(world, order_id="x")) == {"real": True}
    assert json.loads(call(world, order_id="boom"))["error"] == "tool_error"
    assert seen == [("get_order", {"order_id": "x"}), ("get_order", {"order_id": "boom"})]
