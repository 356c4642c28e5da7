"""The columnar full read of known JSONL row shapes gives the per-row reader's frame, batch by batch."""

from __future__ import annotations

import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from whileai import table
from whileai.errors import SchemaError
from whileai.table import _jsonl_full, _jsonl_plain
from whileai.testing import rollout_table


def _write(tmp_path, rows, name="r.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _both(path, monkeypatch, chunk=None):
    """(columnar frame, per-row frame, how many batches the columnar reader took, batches read)."""
    if chunk:
        monkeypatch.setattr(_jsonl_plain, "CHUNK_ROWS", chunk)
    taken = []
    real = _jsonl_full.read_batch

    def spy(data):
        out = real(data)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(_jsonl_full, "read_batch", spy)
    fast = table.frame(path)
    monkeypatch.setattr(_jsonl_plain, "_jsonl_fast", lambda data: None)
    slow = table.frame(path)
    return fast, slow, sum(taken), len(taken)


def _call(i, name, arguments, flat=False):
    if flat:
        return {"id": i, "name": name, "arguments": arguments}
    return {"id": i, "type": "function", "function": {"name": name, "arguments": arguments}}


def _openai_rows(flat=False):
    c = lambda *a: _call(*a, flat=flat)  # noqa: E731
    return [
        {"scenario_id": "t1", "reward": 1, "prompt": "hi", "final_text": None, "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                c("c1", "f", '{"b": 1, "a": [2, 1.0]}'), c("c2", "g", ""), c("c3", "h", "not json {"),
                c("c4", "k", None)]},
            {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"},
            {"role": "tool", "tool_call_id": "c2", "content": "é ✓ 中文 😀"},
            {"role": "assistant", "content": "done ✓"}]},
        {"scenario_id": "t2", "reward": 0.5, "prompt": None, "final_text": "x", "messages": [
            {"role": "user", "content": "first user\nline"}, {"role": "assistant", "content": "x"}]},
        {"scenario_id": "t3", "reward": None, "prompt": "p", "final_text": None, "messages": []},
        {"scenario_id": "t4", "reward": 0, "prompt": "p4", "final_text": None, "extra_field": 3, "messages": [
            {"role": "user", "content": "p4"},
            {"role": "assistant", "content": "calling", "tool_calls": [c("z9", "f", '{"x":"2024-01-01"}')]},
            {"role": "tool", "tool_call_id": "z9", "content": "2024-01-01"}]},
        {"scenario_id": "t5", "reward": 1, "prompt": "p5", "final_text": "bye", "late": {"k": [1, 2]},
         "messages": [{"role": "user", "content": "p5"}, {"role": "assistant", "content": "bye", "tool_calls": []}]},
    ]


def _w131_rows():
    return [
        {"scenario_id": "a", "rollout_index": 0, "prompt": "q é", "final_text": "done", "reward": 1.0,
         "markers": {"no_hedging": 1.0}, "model_version": "v1", "steps": [
             {"tool": "lookup", "arguments": {"b": "x", "a": "y"}, "result": {"status": "ok", "items": ["u", "v"]}},
             {"tool": "lookup", "arguments": '{"b": "1", "a": "2"}', "result": "plain text result"},
             {"tool": "write", "arguments": "not json", "result": ["a", "b"], "text": "let me write"},
             {"tool": "noop", "result": None},
             {"text": "thinking aloud"},
             {"user": "and also?"},
             "not a step",
             {"tool": "send", "arguments": None, "result": '{"json": "as text"}'},
         ]},
        {"scenario_id": "a", "rollout_index": 1, "prompt": "q é", "final_text": None, "reward": 0.0,
         "markers": {"no_hedging": 0.0}, "model_version": "v1", "steps": [{"text": "only text ✓"}]},
        {"scenario_id": "b", "rollout_index": 0, "prompt": None, "final_text": "x", "reward": None,
         "markers": {"no_hedging": 1.0}, "model_version": "v1", "steps": [{"user": "asked in a step"}]},
        {"scenario_id": "b", "rollout_index": 1, "prompt": "q b", "final_text": "y", "reward": 1.0,
         "markers": {"no_hedging": 1.0}, "model_version": "v1", "steps": None},
        {"scenario_id": "c", "rollout_index": 0, "prompt": "q c", "final_text": "z", "reward": 0.0,
         "markers": {"no_hedging": 1.0}, "model_version": "v1", "steps": []},
        {"scenario_id": "c", "rollout_index": 2, "prompt": "q c", "reward": 1.0, "system_prompt": "",
         "markers": {"no_hedging": 1.0}, "model_version": "v1", "steps": [{"tool": "t", "arguments": {}, "result": {}}]},
        {"scenario_id": "c", "rollout_index": 1, "prompt": "q c", "final_text": "z", "reward": 1.0,
         "markers": {"no_hedging": 1.0}, "model_version": "v1", "system_prompt": "be kind", "late_field": "l",
         "steps": [{"tool": "lookup", "arguments": {"b": "x", "a": "y"}, "result": {"status": "ok", "items": ["u", "v"]}}]},
    ]


def _flat_rows():
    """What Polars' write_ndjson writes of a table: flat calls, explicit nulls, each message's extra."""
    rows = _openai_rows()
    rows[0]["messages"][5]["reasoning_content"] = "because"
    df = table.frame(rows)
    return [json.loads(line) for line in df.drop("task_key").write_ndjson().splitlines()]


SHAPES = {
    "openai": _openai_rows,
    "openai_flat_calls": lambda: _openai_rows(flat=True),
    "flat": _flat_rows,
    "generated_flat": lambda: [json.loads(line) for line in
                               table.frame(rollout_table(5, 3, seed=4)).drop("task_key").write_ndjson().splitlines()],
    "w131": _w131_rows,
}


@pytest.mark.parametrize("chunk", [None, 2])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_known_shapes_read_columnar_give_the_per_row_frame(shape, chunk, tmp_path, monkeypatch):
    """Every batch (also when a field first appears in a later batch) takes the columnar reader,
    and the frame is the per-row reader's, dtypes and column order included."""
    path = _write(tmp_path, SHAPES[shape]())
    fast, slow, taken, batches = _both(path, monkeypatch, chunk)
    assert taken == batches and batches >= (1 if chunk is None else 3)
    assert_frame_equal(fast, slow)


def test_own_writer_output_reads_columnar(tmp_path, monkeypatch):
    df = table.frame(_openai_rows())
    path = tmp_path / "own.jsonl"
    table.write(df, path)
    fast, slow, taken, batches = _both(path, monkeypatch)
    assert taken == batches == 1
    assert_frame_equal(fast, slow)


def _with(rows, change):
    rows = json.loads(json.dumps(rows))
    change(rows)
    return rows


def _set_message(index, key, value):
    def change(rows):
        rows[0]["messages"][index][key] = value
    return change


def _set_step(key, value):
    def change(rows):
        rows[0]["steps"][0][key] = value
    return change


# Rows the columnar reader must hand to the per-row reader: the frames still agree.
DECLINED = {
    "call_without_id": (_openai_rows, lambda r: r[0]["messages"][2]["tool_calls"][0].pop("id")),
    "tool_result_without_call_id": (_openai_rows, lambda r: r[0]["messages"][3].pop("tool_call_id")),
    "unknown_message_key": (_openai_rows, _set_message(1, "refusal", "no")),
    "number_content": (_openai_rows, _set_message(1, "content", 1.0)),
    "multipart_content": (_openai_rows, _set_message(1, "content", [{"type": "text", "text": "hi"}])),
    "null_conversation": (_openai_rows, lambda r: r[1].update(messages=None)),
    "conversation_as_text": (_openai_rows, lambda r: r[1].update(messages=json.dumps(r[1]["messages"]))),
    "tools_column": (_openai_rows, lambda r: r[0].update(tools=[{"type": "function", "function": {"name": "f"}}])),
    "content_alias": (_openai_rows, lambda r: r[1].update(question="q?")),
    "prompt_first_seen_later": (_openai_rows, lambda r: [r[0].pop("prompt")]),
    "numbers_in_steps": (_w131_rows, _set_step("arguments", {"n": 1.0, "m": 10})),
    "steps_as_text": (_w131_rows, lambda r: r[1].update(steps="[]")),
    "tool_null": (_w131_rows, _set_step("tool", None)),
    "no_content_at_all": (_w131_rows, lambda r: r[3].update(prompt=None, final_text=None)),
    "no_final_text_key_first": (_w131_rows, lambda r: r[0].pop("final_text")),
}


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_doubtful_batches_read_row_by_row_to_the_same_frame(case, tmp_path, monkeypatch):
    rows_of, change = DECLINED[case]
    _same_frame_or_same_error(_write(tmp_path, _with(rows_of(), change)), monkeypatch)


def _same_frame_or_same_error(path, monkeypatch):
    """The full read gives the per-row reader's frame, or the same SchemaError where that refuses it."""
    try:
        fast, slow, taken, batches = _both(path, monkeypatch)
    except SchemaError as exc:  # the per-row reader refuses it: so does the full read, naming the same thing
        monkeypatch.undo()
        with pytest.raises(SchemaError) as again:
            table.frame(path)
        assert str(again.value) == str(exc)
        return
    assert_frame_equal(fast, slow)


@pytest.mark.parametrize("case", ["call_without_id", "tool_result_without_call_id", "number_content", "steps_as_text"])
def test_the_columnar_reader_declines_what_it_cannot_read_exactly(case):
    rows_of, change = DECLINED[case]
    data = "".join(json.dumps(r) + "\n" for r in _with(rows_of(), change)).encode()
    assert _jsonl_full.read_batch(data) is None
    assert _jsonl_full.read_batch("".join(json.dumps(r) + "\n" for r in rows_of()).encode()) is not None


def test_numbers_in_steps_are_read_exactly(tmp_path, monkeypatch):
    """Polars' JSON text writes 1.0 as 1: steps holding numbers are decoded from their lines."""
    rows = _with(_w131_rows(), _set_step("arguments", {"n": 1.0, "m": 10, "big": 1e20, "small": 1e-7, "neg": -0.0}))
    rows[1]["steps"][0]["result"] = 2.50
    fast, slow, taken, batches = _both(_write(tmp_path, rows), monkeypatch)
    assert taken == batches == 1
    assert_frame_equal(fast, slow)
    assert '"n":1.0' in fast["messages"][0][1]["tool_calls"][0]["arguments"]


def test_a_date_like_text_stays_text(tmp_path, monkeypatch):
    rows = _with(_openai_rows(), lambda r: [row.update(created="2024-01-01T10:00:00") for row in r])
    fast, slow, taken, batches = _both(_write(tmp_path, rows), monkeypatch)
    assert taken == batches and fast.schema["created"] == pl.String
    assert_frame_equal(fast, slow)


@pytest.mark.parametrize("shape", ["openai", "w131"])
def test_a_broken_line_is_named_as_before(shape, tmp_path, monkeypatch):
    monkeypatch.setattr(_jsonl_plain, "CHUNK_ROWS", 2)
    path = tmp_path / "r.jsonl"
    rows = SHAPES[shape]()
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[:3]) + "{broken\n")
    with pytest.raises(SchemaError, match=r"r\.jsonl': line 4 is not valid JSON"):
        table.frame(path)


AWKWARD_TEXT = 'tab\there "quote" \x00 nul \u2028 sep 😀 / é \n \r'


@pytest.mark.parametrize("backslash", [False, True])
@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("shape", ["openai", "w131"])
def test_escapes_and_unicode_survive_the_columnar_read(shape, ascii_only, backslash, tmp_path, monkeypatch):
    """Text with escapes reads the same, a backslash or a quote in a key of 0.131 steps too (Polars'
    JSON text of a value does not escape them, so those lines are decoded in Python)."""
    text = AWKWARD_TEXT + (" back\\slash \\n \\" if backslash else "")
    rows = SHAPES[shape]()
    if shape == "w131":
        rows[0]["steps"].append({"tool": text, "arguments": {text: text, 'a": "forged': "v"},
                                 "result": {"k": [text, None, True, {"z": False}]}, "text": text})
        rows[1]["steps"].append({"tool": "t", "result": text})
    else:
        rows[1]["messages"][0]["content"] = text
        rows[0]["messages"][2]["tool_calls"][0]["function"]["arguments"] = json.dumps({text: text})
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in rows), encoding="utf-8")
    fast, slow, taken, batches = _both(path, monkeypatch)
    assert taken == batches == 1
    assert_frame_equal(fast, slow)


@pytest.mark.parametrize("shape", ["w131", "openai"])
def test_a_read_asking_for_messages_builds_them_from_steps(shape, tmp_path):
    """columns=["messages"] (what export reads) gives the full read's conversations: for 0.131
    rows they are built from the steps, which the projected reader alone would skip."""
    path = _write(tmp_path, SHAPES[shape]())
    full = table.frame(path)
    narrow = table.frame(path, columns=["messages", "reward"])
    assert_frame_equal(narrow.select("task_key", "messages", "reward"), full.select("task_key", "messages", "reward"))


def test_steps_whose_values_change_type_read_columnar(tmp_path, monkeypatch):
    """A result that is text in one row and an object in another: pyarrow refuses the batch,
    Polars reads it, and the rows are the per-row reader's."""
    rows = _w131_rows()
    rows[1]["steps"] = [{"tool": "lookup", "arguments": {"b": "x"}, "result": "text"}]
    rows[2]["steps"] = [{"tool": "lookup", "arguments": {"b": "x"}, "result": {"ok": "yes"}}]
    fast, slow, taken, batches = _both(_write(tmp_path, rows), monkeypatch)
    assert taken == batches == 1
    assert_frame_equal(fast, slow)


@pytest.mark.parametrize("shape", ["openai", "w131"])
@pytest.mark.parametrize("field, values", [("tier", ["x", 1.0]), ("tier", ["x", True]), ("rollout_index", [1, "2"]),
                                           ("reward", [1, "0.5"]), ("markers", [{"a": 1}, {"a": "high"}])])
def test_a_field_of_two_types_reads_as_the_per_row_reader_reads_it(shape, field, values, tmp_path, monkeypatch):
    rows = SHAPES[shape]()
    rows[0][field], rows[1][field] = values
    _same_frame_or_same_error(_write(tmp_path, rows), monkeypatch)
