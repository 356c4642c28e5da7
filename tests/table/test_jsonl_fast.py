"""Polars' native JSONL reader (fast path) and the per-row reader give the same table rows."""

from __future__ import annotations

import gzip
import json

import pytest
from polars.testing import assert_frame_equal

from whileai import table
from whileai.errors import SchemaError
from whileai.table import _jsonl_plain, _row_reader
from whileai.testing import rollout_table


def _both(path, monkeypatch):
    fast = table.frame(path)
    monkeypatch.setattr(_jsonl_plain, "_jsonl_fast", lambda p: None)
    slow = table.frame(path)
    monkeypatch.undo()
    return fast, slow


def _write(tmp_path, rows, name="r.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


CASES = {
    "generated": lambda: table.rows(table.frame(rollout_table(6, 3, seed=2, eval_run=1))),
    "openai_tools": lambda: [
        {"scenario_id": "t1", "reward": 1, "tools": [{"type": "function", "function": {"name": "f"}}],
         "messages": [{"role": "user", "content": "hi"},
                      {"role": "assistant", "content": None, "tool_calls": [
                          {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"b": 1, "a": 2}'}}]},
                      {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                      {"role": "assistant", "content": "done"}]},
        {"scenario_id": "t2", "reward": 0, "messages": [{"role": "user", "content": "yo"}], "extra_field": 3},
    ],
    "chat_only": lambda: [{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": f"q{i}"},
                                        {"role": "assistant", "content": f"a{i}"}]} for i in range(4)],
    "no_ids": lambda: [{"prompt": "p", "messages": [
        {"role": "user", "content": "p"},
        {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "content": "r"}]}],
    "multipart": lambda: [{"task_id": "a", "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}],
    "extra_keys": lambda: [{"task_id": "a", "messages": [{"role": "assistant", "content": "x", "reasoning_content": "r"}]}],
    "wai131": lambda: [json.loads(line) for line in open("tests/data/wai131/export.jsonl")],
    "object_arguments": lambda: [{"task_id": f"t{i}", "seeded": ["timeout"] if i % 2 else [], "messages": [
        {"role": "user", "content": "p"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "g", "arguments": {"b": [1.0, None], "a": i}},
                                                            {"name": "h", "arguments": {}}]},
        {"role": "tool", "name": "g", "content": "r1"}, {"role": "tool", "name": "h", "content": "r2"},
        {"role": "tool", "name": "x", "content": "unanswered"},
        {"role": "assistant", "content": "done"}]} for i in range(3)],
    "anthropic_results": lambda: [{"task_id": "a", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tu1", "name": "g", "input": {"q": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "ok"},
                                     {"type": "text", "text": "thanks"}]}]}],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_and_per_row_readers_agree(case, tmp_path, monkeypatch):
    path = _write(tmp_path, CASES[case]())
    fast, slow = _both(path, monkeypatch)
    assert table.rows(fast) == table.rows(slow)
    assert fast["task_key"].to_list() == slow["task_key"].to_list()


def test_fast_path_is_taken_on_plain_rows(tmp_path):
    path = _write(tmp_path, CASES["openai_tools"]())
    assert _jsonl_plain._jsonl_fast(path) is not None
    # calls without ids, linked by order as the per-row reader links them
    assert _jsonl_plain._jsonl_fast(_write(tmp_path, CASES["no_ids"](), "b.jsonl")) is not None
    # an Anthropic message of tool results stands for several messages: the per-row reader splits it
    assert _jsonl_plain._jsonl_fast(_write(tmp_path, CASES["anthropic_results"](), "c.jsonl")) is None


def test_generator_rows_read_columnar_as_the_per_row_reader_reads_them(tmp_path, monkeypatch):
    """whileai 0.131's rows as the benchmark generator writes them (``make_rollouts.py --n-tasks 38
    --k 8 --seed 3``): ``messages`` with id-less calls and object arguments beside ``steps``, and
    ``seeded`` as a list of fault kinds."""
    path = tmp_path / "gen.jsonl"
    path.write_bytes(gzip.decompress(open("tests/data/wai131/bench-rollouts-304.jsonl.gz", "rb").read()))
    assert _jsonl_plain._jsonl_fast(path) is not None
    fast, slow = _both(path, monkeypatch)
    # the per-row reader's struct field order follows Polars' own inference from dicts, which
    # changed across releases (Polars 2.1, make test-floor, sorts ``sampling``'s keys; later ones
    # keep the file's order, as the columnar read does): fields compared by name
    assert_frame_equal(_fields_by_name(fast), _fields_by_name(slow))
    assert fast.height == 304 and fast["seeded_kinds"].null_count() < fast.height


def _fields_by_name(df):
    """Every struct column with its fields in name order (values and names unchanged)."""
    import polars as pl

    return df.with_columns(pl.struct([pl.col(c).struct.field(f) for f in sorted(df[c].struct.fields)]).alias(c)
                           for c in df.columns if isinstance(df.schema[c], pl.Struct))


W131_ROWS = [
    {"scenario_id": f"t{i // 3}", "rollout_index": i % 3, "prompt": f"q{i // 3}", "reward": float(i % 2),
     "markers": {"no_hedging": 1.0, "honest_claims": float(i % 3 == 0)}, "model_version": "v1",
     "steps": [{"tool": "lookup", "arguments": {"id": i}, "result": {"ok": True}}], "final_text": "done"}
    for i in range(12)
] + [{"task_id": "t9", "prompt": "q9", "reward": 1, "steps": [], "final_text": "x"}]  # another identity field


@pytest.mark.parametrize("shape", ["w131", "openai_tools", "generated"])
@pytest.mark.parametrize("columns", [["reward"], ["reward", "markers", "rollout_index"], ["task_key"]])
def test_projected_read_is_the_full_read_narrowed(tmp_path, monkeypatch, shape, columns):
    """columns= without the conversation: the engine parses only those fields, in any row shape
    (no row goes through the row normaliser), and the rows and values are the full read's, narrowed."""
    rows = W131_ROWS if shape == "w131" else CASES[shape]()
    path = _write(tmp_path, rows)
    full = table.frame(path)
    normalised = []
    real = _row_reader._normalize_row
    monkeypatch.setattr(_row_reader, "_normalize_row", lambda *a: normalised.append(1) or real(*a))
    narrow = table.frame(path, columns=columns)
    assert not normalised and "messages" not in narrow.columns
    assert narrow.equals(full.select(narrow.columns))


def test_projected_read_names_a_broken_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(W131_ROWS[0]) + "\n{not json\n")
    with pytest.raises(SchemaError, match=r"r\.jsonl.*2"):
        table.frame(path, columns=["reward"])


def test_a_gzipped_file_is_read_in_batches_as_the_plain_file_is(tmp_path, monkeypatch):
    """JSONL.gz takes the batch reader (columnar where the shape allows), not the per-row reader."""
    packed = open("tests/data/wai131/bench-rollouts-304.jsonl.gz", "rb").read()
    plain, gz = tmp_path / "gen.jsonl", tmp_path / "gen.jsonl.gz"
    plain.write_bytes(gzip.decompress(packed))
    gz.write_bytes(packed)
    batches = []
    real = _jsonl_plain._jsonl_fast
    monkeypatch.setattr(_jsonl_plain, "_jsonl_fast", lambda data: batches.append(real(data)) or batches[-1])
    assert_frame_equal(table.frame(gz), table.frame(plain))
    assert batches and all(b is not None for b in batches)


def test_a_truncated_gzip_file_is_refused_by_name(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"task_id": "a", "reward": 1}\n' * 2000)[:200])
    with pytest.raises(SchemaError, match="cut.jsonl.gz"):
        table.frame(path)


@pytest.mark.parametrize("name", ["sim.jsonl", "scored.jsonl"])
def test_whileai_0131_files_read_columnar_as_the_per_row_reader_reads_them(name, tmp_path, monkeypatch):
    """Files the published whileai 0.131 wrote: step results that are text in one step and an
    object in the next (pyarrow refuses the batch: DuckDB's JSON text of each field reads it),
    scenario dimensions first seen in later rows, ``seeded`` as a list."""
    path = tmp_path / name
    path.write_bytes(open(f"tests/data/wai131/{name}", "rb").read())
    assert _jsonl_plain._jsonl_fast(path) is not None
    fast, slow = _both(path, monkeypatch)
    assert_frame_equal(fast, slow)
