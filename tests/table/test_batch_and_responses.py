"""Objects under text columns, OpenAI Batch API output and Responses API items are refused with the fix."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from whileai import table
from whileai.errors import SchemaError

REPLY = "response.body.choices.0.message.content"


def _batch_lines(n: int = 2) -> list[dict]:
    return [{"id": f"batch_req_{i}", "custom_id": f"task-{i}", "error": None,
             "response": {"status_code": 200, "request_id": "r",
                          "body": {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": f"answer {i}"}}]}}}
            for i in range(n)]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("columns", [None, ["reward"]])
def test_openai_batch_output_is_refused_saying_what_it_is(tmp_path: Path, columns: list[str] | None) -> None:
    path = _write(tmp_path / "batch_output.jsonl", _batch_lines())
    with pytest.raises(SchemaError, match="OpenAI Batch API output") as info:
        table.frame(path, columns=columns)
    message = str(info.value)
    assert "custom_id" in message and "batch input file" in message and "--map" in message


def test_openai_batch_output_whose_first_request_failed_is_recognised(tmp_path: Path) -> None:
    failed = {"id": "batch_req_x", "custom_id": "task-x", "response": None,
              "error": {"code": "server_error", "message": "boom"}}
    path = _write(tmp_path / "out.jsonl", [failed, *_batch_lines()])
    with pytest.raises(SchemaError, match="OpenAI Batch API output"):
        table.frame(path)


def test_openai_batch_output_reads_with_the_mapping_the_error_gives(tmp_path: Path) -> None:
    path = _write(tmp_path / "batch_output.jsonl", _batch_lines())
    df = table.frame(path, mapping={"task": "custom_id", "final_text": REPLY})
    assert df.select("task_key", "final_text").rows() == [("task-0", "answer 0"), ("task-1", "answer 1")]
    assert "reward" not in df.columns or df["reward"].null_count() == df.height  # no reward is invented
    assert df["messages"][0][-1]["content"] == "answer 0"


def test_a_batch_envelope_mapped_only_by_task_is_not_taken_as_the_reply(tmp_path: Path) -> None:
    path = _write(tmp_path / "batch_output.jsonl", _batch_lines())
    with pytest.raises(SchemaError, match=r"row 0 .*final_text.*'response'") as info:
        table.frame(path, mapping={"task": "custom_id"})
    assert info.value.column == "final_text" and info.value.row == 0
    assert "OpenAI Batch API output" in str(info.value)


@pytest.mark.parametrize("rows, column, row", [
    ([{"task_id": "a", "prompt": "q"}, {"task_id": "b", "response": {"text": "hi"}}], "final_text", 1),
    ([{"task_id": "a", "prompt": "q", "final_text": ["a", "b"]}], "final_text", 0),
    ([{"task_id": "a", "question": {"text": "q"}, "final_text": "x"}], "prompt", 0),
    ([{"scenario_id": ["a"], "prompt": "q"}], "scenario_id", 0),
])
def test_an_object_under_a_text_column_is_refused_with_its_row(tmp_path: Path, rows: list[dict], column: str,
                                                               row: int) -> None:
    pattern = rf"row {row} has {column}.* a JSON (object|list)"
    with pytest.raises(SchemaError, match=pattern) as info:
        table.frame(rows)
    assert (info.value.column, info.value.row) == (column, row)
    path = _write(tmp_path / "rows.jsonl", rows)
    with pytest.raises(SchemaError, match=pattern):
        table.frame(path)
    with pytest.raises(SchemaError, match=pattern):
        table.frame(pl.DataFrame(rows, strict=False))


def test_text_under_the_response_alias_still_reads() -> None:
    df = table.frame([{"task_id": "a", "prompt": "q", "response": "hi"}])
    assert df["final_text"].to_list() == ["hi"]


RESPONSES_ITEMS = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "weather SF?"}]},
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"SF\"}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "72F"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "72F", "annotations": []}]},
]


@pytest.mark.parametrize("columns", [None, ["reward"]])
def test_responses_api_items_as_a_conversation_are_refused_with_the_fix(tmp_path: Path,
                                                                        columns: list[str] | None) -> None:
    row = {"task_id": "r1", "reward": 1.0, "messages": RESPONSES_ITEMS}
    path = _write(tmp_path / "responses.jsonl", [row, row])
    with pytest.raises(SchemaError, match="Responses API") as info:
        table.frame(path, columns=columns if columns is None else [*columns, "messages"])
    message = str(info.value)
    assert "function_call" in message and "tool_calls" in message and "tool message" in message
    assert "row 0" in message and info.value.row == 0


def test_responses_api_items_as_rows_are_refused_with_the_fix(tmp_path: Path) -> None:
    path = _write(tmp_path / "items.jsonl", RESPONSES_ITEMS)
    for columns in (None, ["reward"]):
        with pytest.raises(SchemaError, match="Responses API"):
            table.frame(path, columns=columns)


def test_a_message_without_a_role_still_names_its_row() -> None:
    rows = [{"task_id": "a", "messages": [{"role": "user", "content": "q"}]},
            {"task_id": "b", "messages": [{"content": "no role"}]}]
    with pytest.raises(SchemaError, match="row 1 has a message with role None") as info:
        table.frame(rows)
    assert "Responses API" not in str(info.value)
