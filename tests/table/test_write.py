"""Writers: round trips lose nothing; files are written atomically."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from whileai import table
from whileai.errors import InputFileError

ROWS = [
    {"scenario_id": "t1", "rollout_index": 0, "prompt": "refund 9", "reward": 1.0, "custom": {"a": [1, 2]},
     "tools": [{"type": "function", "function": {"name": "refund", "parameters": {"type": "object"}}}],
     "markers": {"polite": 1.0}, "lineage": {"source": "simulate", "eval_run": 0},
     "messages": [
         {"role": "system", "content": "policy"},
         {"role": "user", "content": "refund 9"},
         {"role": "assistant", "content": "", "tool_calls": [
             {"id": "call_0000", "type": "function", "function": {"name": "refund", "arguments": '{"id":"9"}'}}]},
         {"role": "tool", "tool_call_id": "call_0000", "content": "ok", "name": "refund"},
         {"role": "assistant", "content": "Refunded.", "reasoning_content": "easy"},
     ]},
    {"scenario_id": "t2", "rollout_index": 0, "prompt": "hi", "reward": 0.0, "other": "x"},
]


def test_round_trip_jsonl_parquet_jsonl(tmp_path):
    first = table.frame(ROWS)
    table.write(first, tmp_path / "a.jsonl")
    second = table.frame(tmp_path / "a.jsonl")
    table.write(second, tmp_path / "b.parquet")
    third = table.frame(tmp_path / "b.parquet")
    table.write(third, tmp_path / "c.jsonl")
    a = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    c = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert a == c
    assert a[0]["custom"] == {"a": [1, 2]}
    assert a[0]["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"id":"9"}'
    assert a[0]["messages"][4]["reasoning_content"] == "easy"
    assert a[0]["tools"] == ROWS[0]["tools"]
    assert a[1]["other"] == "x"
    assert all(r["schema_version"] == "1" for r in a)


def test_parquet_carries_schema_version(tmp_path):
    table.write(table.frame(ROWS), tmp_path / "a.parquet")
    meta = pq.read_schema(tmp_path / "a.parquet").metadata
    assert meta[b"whileai.schema_version"] == b"1"


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    df = table.frame(ROWS)
    target = tmp_path / "out.jsonl"
    target.write_text("previous\n")

    def boom(*args, **kwargs):
        yield {"x": 1}
        raise RuntimeError("disk full")

    monkeypatch.setattr("whileai.table._write.iter_rows", boom)
    with pytest.raises(RuntimeError):
        table.write_jsonl(df, target)
    assert target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_write_into_missing_folder(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        table.write(table.frame(ROWS), tmp_path / "no" / "x.jsonl")


def test_gz_writer(tmp_path):
    table.write(table.frame(ROWS), tmp_path / "a.jsonl.gz")
    assert table.frame(tmp_path / "a.jsonl.gz").height == 2


def test_column_wise_rows_equal_the_per_row_reference():
    from whileai.table._write import _row_out_slow
    from whileai.testing import rollout_table

    df = table.frame(rollout_table(6, 3, seed=4, eval_run=2))
    reference = [_row_out_slow(r) for r in df.iter_rows(named=True)]
    assert table.rows(df) == reference
    mixed = table.frame(ROWS)
    assert table.rows(mixed) == [_row_out_slow(r) for r in mixed.iter_rows(named=True)]
