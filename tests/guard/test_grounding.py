"""Argument grounding on conversations whose invented values are known."""

from __future__ import annotations

import json

import pytest

from whileai.errors import ArgumentError
from whileai.guard import grounding_report, mark_grounding, ungrounded_arguments
from whileai.testing import rollout_table


def row(prompt, args, result="ok", system=None, name="get_order", final="done", reward=None, sid=None):
    msgs = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
        {"role": "assistant", "content": final},
    ]
    out = {"prompt": prompt, "messages": msgs}
    if reward is not None:
        out["reward"] = reward
    if sid is not None:
        out["scenario_id"] = sid
    return out


def test_grounded_from_prompt_system_and_earlier_result():
    assert ungrounded_arguments(row("Refund order ORD-9 please", {"order_id": "ord-9"})) == []
    assert ungrounded_arguments(row("Refund my order", {"store": "Main Street"}, system="Store: Main Street")) == []
    r = {"prompt": "find my last order", "messages": [
        {"role": "user", "content": "find my last order"},
        {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "list_orders", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": '{"orders": ["ORD-1"]}'},
        {"role": "assistant", "tool_calls": [{"id": "b", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "ORD-1"}'}}]},
        {"role": "tool", "tool_call_id": "b", "content": "ok"},
        {"role": "assistant", "content": "found"}]}
    assert ungrounded_arguments(r) == []


def test_invented_values_nested_lists_ignore_keys_allow_and_min_len():
    r = row("Cancel my order", {"order_id": "ORD-404", "reason": "customer asked", "mode": "soft",
                                "items": ["SKU-1"], "x": "ab", "opts": {"note": "rush it"}})
    bad = {(b["key"], b["value"]) for b in ungrounded_arguments(r)}
    assert bad == {("order_id", "ORD-404"), ("reason", "customer asked"), ("mode", "soft"), ("items", "SKU-1"),
                   ("note", "rush it")}
    bad = {b["key"] for b in ungrounded_arguments(r, ignore_keys=["reason", "note"], allow=["soft"])}
    assert bad == {"order_id", "items"}
    # a value seen only AFTER the call is not grounding
    later = row("Cancel my order", {"order_id": "ORD-5"}, result="ORD-5 cancelled")
    assert ungrounded_arguments(later) == [{"tool": "get_order", "key": "order_id", "value": "ORD-5"}]


def test_marker_and_report():
    rows = [row(f"Where is ORD-{i}?", {"order_id": f"ORD-{i}" if i % 4 else "ORD-000"}, reward=float(i % 2),
                sid=f"t{i}") for i in range(12)]
    rows.append({"prompt": "hi", "final_text": "hello", "scenario_id": "t99"})
    out = mark_grounding(rows)
    marks = [r["markers"]["argument_grounding"] for r in out]
    assert marks == [0.0 if i % 4 == 0 else 1.0 for i in range(12)] + [1.0]
    rep = grounding_report(rows)
    assert rep["rows"] == 13 and rep["rows_with_calls"] == 12
    assert rep["grounded_rate"] == pytest.approx(10 / 13)
    assert rep["invented"][0] == {"argument": "get_order.order_id", "rows": 3, "example": "ORD-000"}
    assert rep.ci95 is not None and rep.ci95[0] < 10 / 13 < rep.ci95[1]
    assert "invented" in str(rep)


def test_generator_rows_are_grounded_and_errors():
    rep = grounding_report(rollout_table(20, 4, seed=2))
    assert rep["grounded_rate"] == 1.0 and rep["rows_with_calls"] > 0
    with pytest.raises(ArgumentError, match="min_len"):
        mark_grounding([{"prompt": "x"}], min_len=0)
    with pytest.raises(ArgumentError, match="row must be one row dict"):
        ungrounded_arguments([{"prompt": "x"}])
