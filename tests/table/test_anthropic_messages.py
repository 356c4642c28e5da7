"""Anthropic Messages API conversations: content blocks become tool calls, tool messages and reasoning."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import whileai as wai
from whileai import table
from whileai.table import normalize as nz


def _row(reward: float = 1.0, **more: Any) -> dict[str, Any]:
    """One Anthropic conversation: every content a list of blocks (as Parquet needs one type)."""
    return {"task_id": "t0", "reward": reward, **more, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Refund order 42"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "look it up", "signature": "s"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01", "name": "lookup_order", "input": {"order_id": 42}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "shipped"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It shipped."}]}]}


def _plain(df: pl.DataFrame) -> list[dict[str, Any]]:
    return [{**m, "extra": nz.loads_or_raw(m["extra"])} for m in df["messages"][0].to_list()]


EXPECTED = [
    {"role": "user", "content": "Refund order 42", "name": None, "tool_call_id": None, "tool_calls": [], "extra": None},
    {"role": "assistant", "content": "Let me check.", "name": None, "tool_call_id": None,
     "tool_calls": [{"id": "toolu_01", "name": "lookup_order", "arguments": '{"order_id":42}'}],
     "extra": {"reasoning_content": "look it up"}},
    {"role": "tool", "content": "shipped", "name": None, "tool_call_id": "toolu_01", "tool_calls": [], "extra": None},
    {"role": "assistant", "content": "It shipped.", "name": None, "tool_call_id": None, "tool_calls": [],
     "extra": None},
]


def test_rows_become_tool_calls_and_tool_messages() -> None:
    df = table.frame([_row()])
    assert _plain(df) == EXPECTED
    assert df.select(table.n_tool_calls()).to_series().to_list() == [1]
    assert df.row(0, named=True)["prompt"] == "Refund order 42"
    assert df.row(0, named=True)["final_text"] == "It shipped."


def test_jsonl_reads_as_the_rows(tmp_path: Any) -> None:
    rows = [_row(1.0, system="Be kind."), _row(0.0, system="Be kind.")]
    rows[1]["messages"][0]["content"] = "Refund order 42"  # Anthropic also takes a plain string
    path = tmp_path / "claude.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    df = table.frame(path)
    assert _plain(df) == EXPECTED
    assert df["system_prompt"].to_list() == ["Be kind.", "Be kind."]  # Anthropic's top-level system
    assert_frame_equal(df, table.frame(rows))


def test_parquet_written_by_polars_reads_as_the_rows(tmp_path: Any) -> None:
    rows = [_row(1.0, system="Be kind."), _row(0.0, system="Be kind.")]
    path = tmp_path / "claude.parquet"
    pl.DataFrame(rows).write_parquet(path)  # every block gets every key, the absent ones null
    df = table.frame(path)
    assert _plain(df) == EXPECTED
    assert df["system_prompt"].to_list() == ["Be kind.", "Be kind."]
    from_rows = table.frame(rows)
    assert_frame_equal(df.select(from_rows.columns), from_rows)


def test_several_results_error_and_trailing_text_in_order() -> None:
    messages = [
        {"role": "user", "content": "Two lookups"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"q": "a", "n": 1}},
            {"type": "tool_use", "id": "toolu_b", "name": "lookup", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": [{"type": "text", "text": "found "},
                                                                          {"type": "text", "text": "a"}]},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "no such order", "is_error": True},
            {"type": "text", "text": "Also, hurry."}]},
    ]
    out = nz.normalize_messages(messages)
    assert out is not None
    assert [(m["role"], m["content"], m["tool_call_id"]) for m in out] == [
        ("user", "Two lookups", None), ("assistant", None, None), ("tool", "found a", "toolu_a"),
        ("tool", "no such order", "toolu_b"), ("user", "Also, hurry.", None)]
    assert out[1]["tool_calls"] == [{"id": "toolu_a", "name": "lookup", "arguments": '{"n":1,"q":"a"}'},
                                    {"id": "toolu_b", "name": "lookup", "arguments": "{}"}]
    assert out[3]["extra"] == '{"is_error":true}'
    assert out[2]["extra"] is None


def test_blocks_not_converted_are_kept_as_parts() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgB"}
    out = nz.normalize_messages([
        {"role": "user", "content": [image, {"type": "text", "text": "What is this?"}]},
        {"role": "assistant", "content": [redacted, {"type": "text", "text": "A chart."},
                                          {"type": "tool_use", "id": "toolu_1", "name": "zoom", "input": {"x": 1}}]},
    ])
    assert out is not None
    assert out[0]["content"] == "What is this?"
    assert json.loads(out[0]["extra"]) == {"content_parts": [image, {"type": "text", "text": "What is this?"}]}
    assert out[1]["content"] == "A chart."
    assert json.loads(out[1]["extra"]) == {"content_parts": [redacted, {"type": "text", "text": "A chart."}]}
    assert out[1]["tool_calls"] == [{"id": "toolu_1", "name": "zoom", "arguments": '{"x":1}'}]


def test_openai_multi_part_content_is_unchanged() -> None:
    parts = [{"type": "text", "text": "Look: "}, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]
    message = nz.normalize_message({"role": "user", "content": parts})
    assert message["content"] == "Look: "
    assert json.loads(message["extra"]) == {"content_parts": parts}
    assert nz.normalize_message({"role": "user", "content": [{"type": "text", "text": "a"}, "b"]})["extra"] is None


def test_normalize_message_refuses_to_drop_tool_results() -> None:
    message = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                                           {"type": "text", "text": "next"}]}
    with pytest.raises(nz.BadMessageError, match="1 Anthropic tool_result blocks.*normalize_messages"):
        nz.normalize_message(message)
    only = nz.normalize_message({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                                 "content": "ok"}]})
    assert (only["role"], only["tool_call_id"], only["content"]) == ("tool", "t1", "ok")


def test_export_writes_openai_tool_calls_and_tool_messages(tmp_path: Any) -> None:
    out = tmp_path / "train.jsonl"
    report = wai.export([_row(1.0, system="Be kind."), _row(0.0, system="Be kind.")], out)
    assert report["tool_call_roundtrip"]["checked"] == 2
    written = json.loads(out.read_text().splitlines()[0])
    messages = written["messages"]
    assert messages[0] == {"role": "system", "content": "Be kind."}
    assert messages[2] == {"role": "assistant", "content": "Let me check.", "tool_calls": [
        {"id": "toolu_01", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id":42}'}}]}
    assert messages[3] == {"role": "tool", "content": "shipped", "tool_call_id": "toolu_01"}
    assert not any("content_parts" in m or isinstance(m["content"], list) for m in messages)


def test_system_blocks_are_the_system_prompt(tmp_path: Any) -> None:
    system = [{"type": "text", "text": "Be kind."}, {"type": "text", "text": " Be brief.", "cache_control": {"type": "ephemeral"}}]
    rows = [_row(1.0, system=system), _row(0.0, system=system)]
    assert table.frame(rows)["system_prompt"].to_list() == ["Be kind. Be brief."] * 2
    path = tmp_path / "claude.parquet"
    pl.DataFrame(rows).write_parquet(path)
    assert table.frame(path)["system_prompt"].to_list() == ["Be kind. Be brief."] * 2
