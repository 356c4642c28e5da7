"""Empty and null conversations next to real ones: each check still sees every message.

Polars 2 explodes an empty list to no row where Polars 1 gave one null; code that counted on one
null row per empty conversation let a message with no role through when an empty conversation
sat beside it, and miscounted calls without an id. These explode without placeholders.
"""

from __future__ import annotations

import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import whileai.table._jsonl_plain as read
from whileai import table
from whileai.errors import SchemaError
from whileai.table.schema import MESSAGE


def _message(role: str | None, content: str = "x") -> dict[str, object]:
    return {"role": role, "content": content, "name": None, "tool_call_id": None, "tool_calls": [], "extra": None}


@pytest.mark.parametrize("conversations, row, role", [
    ([[], [_message(None)], [_message("user")]], 1, "None"),
    ([[], [], [_message("user"), _message(None)]], 2, "None"),
    ([None, [_message("user")], [_message("bogus")]], 2, "'bogus'"),
])
def test_a_message_without_a_known_role_is_named_beside_empty_conversations(conversations, row, role) -> None:
    df = pl.DataFrame({"task_id": ["a", "b", "c"], "reward": [1.0, 0.0, 1.0],
                       "messages": pl.Series(conversations, dtype=pl.List(MESSAGE))})
    with pytest.raises(SchemaError, match=f"row {row} has a message with role {role}"):
        table.frame(df)


def test_empty_and_null_conversations_keep_their_place() -> None:
    df = pl.DataFrame({"task_id": ["a", "b", "c", "d"], "reward": [1.0, 0.0, 1.0, 0.0],
                       "messages": pl.Series([[], None, [_message("user", "q")], []], dtype=pl.List(MESSAGE))})
    out = table.frame(df)
    assert out["messages"].list.len().to_list() == [0, None, 1, 0]


def _openai(role: str, *, calls: list[dict[str, object]] | None = None, content: object = "x") -> dict[str, object]:
    return {"role": role, "content": content, "tool_calls": calls if calls is not None else []}


@pytest.mark.parametrize("odd", ["none", "call_without_id", "multipart", "number_content"])
def test_a_jsonl_file_with_empty_conversations_reads_as_the_row_reader_does(odd, tmp_path, monkeypatch) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"b": 1, "a": 2}'}}
    last = {"none": _openai("user", content="r"),
            "call_without_id": _openai("assistant", content=None, calls=[{**call, "id": None}]),
            "multipart": _openai("user", content=[{"type": "text", "text": "hi"}]),
            "number_content": _openai("user", content=1.5)}[odd]
    conversations = [[], [_openai("user", content="q"), _openai("assistant", calls=[call], content=None),
                          {"role": "tool", "tool_call_id": "c1", "content": "ok"}],
                     None, [_openai("user") for _ in range(5)], [], [last]]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"task_id": f"t{i}", "reward": 1.0, "messages": m}) + "\n"
                            for i, m in enumerate(conversations)))
    fast = table.frame(path)
    monkeypatch.setattr(read, "_jsonl_fast", lambda data: None)
    assert_frame_equal(fast, table.frame(path))
