"""The native projected JSONL read gives exactly the full read's frame, narrowed, on every shape.

``table.frame(path, columns=[...])`` parses only the wanted fields with the dtypes the file's
head shows; the full read (``table.frame(path)``, conversations and all) is the reference:
values and dtypes of every column read must match, and any row outside those dtypes must hand
the file to the batch readers, which give the same frame or the same error with its line.
"""

from __future__ import annotations

import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from whileai import table
from whileai.errors import SchemaError
from whileai.measure._common import MEASURE_COLUMNS
from whileai.table import _read
from whileai.testing import rollout_table


def _write(tmp_path, rows, name="r.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _native_taken(path, columns, monkeypatch):
    """Whether the file-level native reader produced the frame (not a batch reader)."""
    taken = []
    real = _read._jsonl_native
    monkeypatch.setattr(_read, "_jsonl_native", lambda p, c: taken.append(out := real(p, c)) or out)
    table.frame(path, columns=columns)
    monkeypatch.undo()
    return taken and taken[0] is not None


def _openai_rows():
    df = rollout_table(5, 4, seed=3)
    return [json.loads(line) for line in df.write_ndjson().splitlines()]


def _w131_rows():
    return [{"scenario_id": f"t{i // 3}", "rollout_index": i % 3, "prompt": f"q{i // 3} ünï 中文 😀",
             "reward": [0, 1, 0.5][i % 3], "markers": {"no_hedging": 1.0, "honest_claims": i % 2},
             "model_version": "v1",
             "steps": [{"tool": "lookup", "arguments": {"id": i, "nested": {"a": [1, 2]}}, "result": {"ok": True}}],
             "final_text": "done"} for i in range(12)]


def _inspect_like_rows():
    """Rows as a converted inspect sample: ids, an input text, a score, metadata."""
    return [{"task_id": f"s{i}", "input": f"question {i}", "score": float(i % 2), "epoch": i % 2,
             "messages": [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": "a"}]}
            for i in range(8)]


def _awkward_rows():
    rows = _w131_rows()
    rows[1].pop("markers")                          # a missing field
    rows[2]["reward"] = None                        # a null reward
    rows[3]["markers"] = {"no_hedging": None, "honest_claims": 1}
    rows[4]["prompt"] = "tab\tquote\"back\\slash \\u escapes é"
    rows[5]["steps"] = [{"tool": "a", "arguments": {"q": {"deep": [{"x": 1}]}}, "result": None}] * 3
    rows[6]["model_version"] = None
    return rows


SHAPES = {"openai": _openai_rows, "w131": _w131_rows, "inspect": _inspect_like_rows, "awkward": _awkward_rows}
COLUMN_SETS = [["reward"], list(MEASURE_COLUMNS), ["reward", "markers", "rollout_index"]]


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("columns", COLUMN_SETS, ids=["reward", "measure", "markers"])
def test_native_read_is_the_full_read_narrowed(tmp_path, monkeypatch, shape, columns):
    path = _write(tmp_path, SHAPES[shape]())
    narrow = table.frame(path, columns=columns)
    full = table.frame(path)
    assert "messages" not in narrow.columns
    assert_frame_equal(narrow, full.select(narrow.columns))  # values and dtypes
    assert _native_taken(path, columns, monkeypatch), "the native reader should take these rows"
    monkeypatch.setattr(_read, "_jsonl_native", lambda p, c: None)
    assert_frame_equal(table.frame(path, columns=columns), narrow)  # the batch readers agree


def test_native_read_spans_blocks(tmp_path, monkeypatch):
    rows = _openai_rows() * 20
    path = _write(tmp_path, rows)
    monkeypatch.setattr(_read, "JSONL_NATIVE_BLOCK_BYTES", 4096)
    monkeypatch.setattr(_read, "JSONL_SCHEMA_HEAD_LINES", 3)
    narrow = table.frame(path, columns=list(MEASURE_COLUMNS))
    assert narrow.height == len(rows)
    assert_frame_equal(narrow, table.frame(path).select(narrow.columns))


@pytest.mark.parametrize("late", [
    {"reward": "0.5"},                 # a numeric string: the row reader converts it
    {"reward": True},                  # a flag read as a score
    {"scenario_id": 17},               # a number where the head showed text
    {"markers": {"no_hedging": 1.0, "new_marker": 0.25}},   # a marker the head did not show
    {"markers": '{"no_hedging":1.0}'},                      # markers given as JSON text
    {"truncated": True},               # a wanted field the head did not show
    {"temperature": 0.7},              # an extra the head did not show
    {"system_prompt": None, "task_id": "x9"},
])
def test_a_late_row_outside_the_head_falls_back_to_the_same_frame(tmp_path, monkeypatch, late):
    monkeypatch.setattr(_read, "JSONL_SCHEMA_HEAD_LINES", 4)
    rows = _w131_rows()
    rows[-1] = {**rows[-1], **late}
    path = _write(tmp_path, rows)
    columns = list(MEASURE_COLUMNS)
    assert not _native_taken(path, columns, monkeypatch)
    narrow = table.frame(path, columns=columns)
    assert_frame_equal(narrow, table.frame(path).select(narrow.columns))


def test_a_field_the_head_shows_null_keeps_its_column(tmp_path):
    rows = _w131_rows()
    for r in rows:
        r["judge_status"] = None
    narrow = table.frame(_write(tmp_path, rows), columns=list(MEASURE_COLUMNS))
    full = table.frame(tmp_path / "r.jsonl")
    assert "judge_status" in narrow.columns
    assert_frame_equal(narrow, full.select(narrow.columns))


def test_a_malformed_line_gives_the_same_error_and_line(tmp_path):
    rows = [json.dumps(r) for r in _openai_rows()]
    rows.insert(7, '{"scenario_id": "x", "reward": ')
    path = _write(tmp_path, rows)
    with pytest.raises(SchemaError, match=r"r\.jsonl.*line 8 is not valid JSON") as projected:
        table.frame(path, columns=["reward"])
    with pytest.raises(SchemaError) as full:
        table.frame(path)
    assert str(projected.value) == str(full.value)


def test_a_malformed_head_line_gives_the_same_error(tmp_path):
    path = _write(tmp_path, ['{"scenario_id": "a", "reward": 1}', "[1, 2]", '{"scenario_id": "b", "reward": 0}'])
    with pytest.raises(SchemaError, match=r"line 2 is a JSON list, not an object"):
        table.frame(path, columns=["reward"])


def test_alias_fields_are_read_as_their_columns(tmp_path):
    rows = [{"question": f"q{i}", "score": i % 2, "epoch": i} for i in range(6)]
    path = _write(tmp_path, rows)
    narrow = table.frame(path, columns=["reward", "rollout_index"])
    assert narrow.schema["reward"] == pl.Float64 and narrow["reward"].to_list() == [0.0, 1.0] * 3
    assert_frame_equal(narrow, table.frame(path).select(narrow.columns))
