"""Empty and null conversations next to real ones: each check still sees every message.

Polars 2 explodes an empty list to no row where Polars 1 gave one null; code that counted on one
null row per empty conversation let a message with no role through when an empty conversation
sat beside it, and miscounted calls without an id. These explode without placeholders.
"""

from __future__ import annotations

import polars as pl
import pytest

from whileai import table
from whileai.errors import SchemaError
from whileai.table import normalize as nz
from whileai.table._read import _simple_messages
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


_OPENAI = pl.List(pl.Struct({
    "role": pl.String, "content": pl.String,
    "tool_calls": pl.List(pl.Struct({"id": pl.String, "type": pl.String,
                                     "function": pl.Struct({"name": pl.String, "arguments": pl.String})})),
}))


def _openai(role: str, *, calls: list[dict[str, object]] | None = None, content: str | None = "x") -> dict[str, object]:
    return {"role": role, "content": content, "tool_calls": calls if calls is not None else []}


def test_plain_messages_beside_empty_ones_match_the_row_reader() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"b": 1, "a": 2}'}}
    rows = [[], [_openai("user", content="q"), _openai("assistant", calls=[call], content=None)], None, [],
            [_openai("user", content="r")]]
    got = _simple_messages(pl.Series("messages", rows, dtype=_OPENAI))
    assert got is not None
    want = [None if r is None else nz.normalize_messages(r) for r in rows]
    assert got.to_list() == want


def test_a_call_without_an_id_goes_to_the_row_reader_whatever_the_empty_lists() -> None:
    # many messages with no calls, and one call without an id: the per-row reader must give it one
    call = {"id": None, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    rows = [[_openai("user") for _ in range(5)], [], [_openai("assistant", calls=[call], content=None)]]
    assert _simple_messages(pl.Series("messages", rows, dtype=_OPENAI)) is None
