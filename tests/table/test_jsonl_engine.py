"""The projected JSONL read (DuckDB's JSON reader) gives exactly the full read's frame, narrowed.

``table.frame(path, columns=[...])`` parses only the wanted fields through DuckDB and types each
column once; the full read (``table.frame(path)``, conversations and all) is the reference:
values and dtypes of every column read must match, on every row shape and whatever a later row
holds, and a broken line gives the full read's error with its line.
"""

from __future__ import annotations

import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from whileai import table
from whileai.errors import SchemaError
from whileai.measure._rows import MEASURE_COLUMNS
from whileai.table import _jsonl_engine, _row_reader
from whileai.testing import rollout_table


def _write(tmp_path, rows, name="r.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _columnar(path, columns, monkeypatch):
    """Whether the projected read typed every column without the row normaliser."""
    normalised = []
    real = _row_reader._normalize_row
    monkeypatch.setattr(_row_reader, "_normalize_row", lambda *a: normalised.append(1) or real(*a))
    table.frame(path, columns=columns)
    monkeypatch.undo()
    return not normalised


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
def test_projected_read_is_the_full_read_narrowed(tmp_path, monkeypatch, shape, columns):
    path = _write(tmp_path, SHAPES[shape]())
    narrow = table.frame(path, columns=columns)
    full = table.frame(path)
    assert "messages" not in narrow.columns
    assert_frame_equal(narrow, full.select(narrow.columns))  # values and dtypes
    assert _columnar(path, columns, monkeypatch), "these rows are typed columnar"


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
def test_a_late_row_outside_the_head_reads_as_the_full_read(tmp_path, monkeypatch, late):
    monkeypatch.setattr(_jsonl_engine, "JSONL_SCHEMA_HEAD_LINES", 4)
    rows = _w131_rows()
    rows[-1] = {**rows[-1], **late}
    path = _write(tmp_path, rows)
    columns = list(MEASURE_COLUMNS)
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


# ---- the whole-file read, text parsed as String, .jsonl.gz and stdin ------------------------------


def _same_as_full(path, columns=None):
    columns = columns or list(MEASURE_COLUMNS)
    narrow = table.frame(path, columns=columns)
    assert "messages" not in narrow.columns
    assert_frame_equal(narrow, table.frame(path).select(narrow.columns))
    return narrow


def test_text_that_looks_like_a_number_stays_text(tmp_path, monkeypatch):
    # ids such as "12" or "[INST]" prompts are JSON text, typed as text: same frame, columnar
    rows = [{"scenario_id": str(i // 2), "prompt": "[INST] q" if i % 3 else "true", "reward": i % 2,
             "policy_version": "-1.5e3"} for i in range(12)]
    path = _write(tmp_path, rows)
    narrow = _same_as_full(path)
    assert narrow["scenario_id"].to_list()[:3] == ["0", "0", "1"] and narrow["prompt"][0] == "true"
    assert _columnar(path, list(MEASURE_COLUMNS), monkeypatch)


@pytest.mark.parametrize("late", [{"scenario_id": 17}, {"prompt": 12}, {"reward": True}, {"model_version": "v2"},
                                  {"reward": "1"}])
def test_a_type_change_past_the_head_reads_as_the_full_read(tmp_path, monkeypatch, late):
    monkeypatch.setattr(_jsonl_engine, "JSONL_SCHEMA_HEAD_LINES", 4)
    rows = [{"scenario_id": f"t{i // 4}", "rollout_index": i % 4, "prompt": f"q{i}", "reward": float(i % 2),
             "policy_version": "v1"} for i in range(40)]
    rows[-3] = {**rows[-3], **late}
    path = _write(tmp_path, rows)
    _same_as_full(path)


def test_nulls_blank_lines_crlf_and_a_last_line_without_newline(tmp_path, monkeypatch):
    lines = [json.dumps({"scenario_id": "a", "prompt": "p", "reward": 1.0, "tier": None}),
             "", "   ",
             json.dumps({"scenario_id": None, "prompt": "p2", "reward": None, "tier": "hard"}),
             json.dumps({"scenario_id": "b", "prompt": None, "reward": 0.0, "tier": None})]
    path = tmp_path / "r.jsonl"
    path.write_bytes(("\r\n".join(lines)).encode())  # CRLF, no newline after the last line
    narrow = _same_as_full(path, ["reward", "tier"])
    assert narrow.height == 3 and narrow["reward"].to_list() == [1.0, None, 0.0]
    assert _columnar(path, ["reward", "tier"], monkeypatch)


def test_a_byte_order_mark_reads_as_the_full_read_does(tmp_path, monkeypatch):
    """The projected read and the full read agree on a file with a BOM: both read it as without one."""
    path = tmp_path / "r.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in _w131_rows())
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    plain = tmp_path / "plain.jsonl"
    plain.write_text(text)
    projected = table.frame(path, columns=["reward"])
    assert projected["reward"].to_list() == table.frame(path)["reward"].to_list()
    assert table.frame(path).equals(table.frame(plain))


@pytest.mark.parametrize("name", ["run[1]*.jsonl", "it's a run%20 #2 ü.jsonl", 'say "x".jsonl'])
def test_a_path_with_glob_quote_or_other_characters(tmp_path, monkeypatch, name):
    rows = _openai_rows()
    path = _write(tmp_path, rows, name=name)
    _write(tmp_path, rows[:3], name="run1x.jsonl")  # what a glob would also match
    narrow = _same_as_full(path)
    assert narrow.height == len(rows)
    assert _columnar(path, list(MEASURE_COLUMNS), monkeypatch)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_gzipped_file_is_read_as_the_full_read(tmp_path, monkeypatch, shape):
    import gzip

    path = tmp_path / "r.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in SHAPES[shape]() * 3).encode(), 1))
    for columns in COLUMN_SETS:
        _same_as_full(path, columns)
        assert _columnar(path, columns, monkeypatch)


def test_a_gzipped_file_with_a_late_change_or_a_broken_stream(tmp_path, monkeypatch):
    import gzip

    monkeypatch.setattr(_jsonl_engine, "JSONL_SCHEMA_HEAD_LINES", 4)
    rows = _w131_rows()
    rows[-1] = {**rows[-1], "reward": "0.5"}
    path = tmp_path / "late.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    _same_as_full(path)
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(path.read_bytes()[:-40])  # a truncated stream
    with pytest.raises(SchemaError) as projected:
        table.frame(broken, columns=["reward"])
    with pytest.raises(SchemaError) as full:
        table.frame(broken)
    assert str(projected.value) == str(full.value)


def _stdin(monkeypatch, data: bytes):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_stdin_is_spooled_and_read_by_the_engine(tmp_path, monkeypatch):
    rows = _openai_rows()
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    normalised = []
    real = _row_reader._normalize_row
    monkeypatch.setattr(_row_reader, "_normalize_row", lambda *a: normalised.append(1) or real(*a))
    _stdin(monkeypatch, data)
    narrow = table.frame("-", columns=list(MEASURE_COLUMNS))
    assert not normalised
    assert_frame_equal(narrow, table.frame(path, columns=list(MEASURE_COLUMNS)))
    _stdin(monkeypatch, data)
    assert_frame_equal(table.frame("-"), table.frame(path))  # the full read from stdin as before


def test_a_broken_line_on_stdin_is_named_as_before(monkeypatch):
    bad = b'{"scenario_id": "a", "reward": 1}\n{"scenario_id": "b", "reward": \n'
    _stdin(monkeypatch, bad)
    with pytest.raises(SchemaError, match=r"stdin: line 2 is not valid JSON") as projected:
        table.frame("-", columns=["reward"])
    _stdin(monkeypatch, bad)
    with pytest.raises(SchemaError) as full:
        table.frame("-")
    assert str(projected.value) == str(full.value)
    _stdin(monkeypatch, b'[{"scenario_id": "a", "reward": 1}, {"scenario_id": "b", "reward": 0}]')
    assert table.frame("-", columns=["reward"])["reward"].to_list() == [1.0, 0.0]


def test_the_engine_draws_no_duckdb_progress_bar(tmp_path, monkeypatch):
    """DuckDB draws a progress bar on stderr for a read past 2 s (a 100k-row file): the engine turns it off."""
    import duckdb

    seen: list[object] = []
    real_connect = duckdb.connect

    class Watched:
        def __init__(self) -> None:
            self.con = real_connect()
            self.con.execute("SET enable_progress_bar = true")  # DuckDB's default outside pytest

        def __getattr__(self, name: str) -> object:
            return getattr(self.con, name)

        def close(self) -> None:
            seen.append(self.con.execute("SELECT current_setting('enable_progress_bar')").fetchall()[0][0])
            self.con.close()

    monkeypatch.setattr(duckdb, "connect", lambda *a, **k: Watched())
    path = tmp_path / "rows.jsonl"
    path.write_text('{"scenario_id": "a", "reward": 1}\n{"scenario_id": "b", "reward": 0}\n')
    from whileai import measure

    assert measure.pass_at(path).n_rows == 2
    assert seen and all(value is False for value in seen)
