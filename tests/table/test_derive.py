"""task_key and derived columns."""

from __future__ import annotations

import hashlib

import pytest

from whileai import table
from whileai.errors import SchemaError


def test_task_key_order_of_precedence():
    assert table.task_key({"scenario_id": "s", "task_id": "t", "prompt": "p"}) == "s"
    assert table.task_key({"task_id": "t", "prompt": "p"}) == "t"
    expected = "p-" + hashlib.sha256(b"p").hexdigest()[:16]
    assert table.task_key({"prompt": "p"}) == expected
    assert table.task_key({"messages": [{"role": "user", "content": "p"}]}) == expected
    with pytest.raises(SchemaError):
        table.task_key({})


def test_task_key_column_matches_row_function():
    rows = [{"scenario_id": "s"}, {"task_id": "t"}, {"prompt": "q"}]
    df = table.frame(rows)
    assert df["task_key"].to_list() == [table.task_key(r) for r in rows]


def test_derived_expressions():
    row = {"prompt": "x", "messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]},
        {"role": "tool", "content": "1"}, {"role": "tool", "content": "2"},
        {"role": "assistant", "tool_calls": [{"name": "a", "arguments": {}}]},
        {"role": "tool", "content": "3"},
        {"role": "assistant", "content": "done!"}]}
    df = table.frame([row]).with_columns(table.reply_chars(), table.n_tool_calls(), table.n_turns(), table.tools_used())
    assert df.select("reply_chars", "n_tool_calls", "n_turns").row(0) == (5, 3, 3)
    assert df["tools_used"][0].to_list() == ["a", "b"]
    assert table.markers_of(df) == []
    assert table.markers_of(table.frame([{"task_id": "a", "markers": {"m": 1}}])) == ["m"]
