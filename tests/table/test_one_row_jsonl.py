"""A .jsonl or .ndjson file holds one object per line: one line is one row, never a JSON document."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from whileai import table
from whileai.errors import SchemaError
from whileai.table import _formats

SHAREGPT = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}
QA = {"question": "2+2?", "answer": "4", "score": 1.0}


def _write(path: Path, rows: list[dict]) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".ndjson", ".jsonl.gz"])
@pytest.mark.parametrize("row", [SHAREGPT, QA], ids=["sharegpt", "qa"])
def test_one_line_reads_as_the_first_row_of_two(tmp_path: Path, suffix: str, row: dict) -> None:
    one = _write(tmp_path / f"one{suffix}", [row])
    two = _write(tmp_path / f"two{suffix}", [row, row])
    assert _formats.sniff(one) is None
    assert_frame_equal(table.frame(one), table.frame(two).head(1))


def test_a_one_row_sharegpt_file_keeps_its_conversation(tmp_path: Path) -> None:
    df = table.frame(_write(tmp_path / "data.jsonl", [SHAREGPT]))
    assert df.height == 1
    assert [m["role"] for m in df["messages"][0]] == ["user", "assistant"]
    assert df.select("prompt", "final_text").row(0) == ("hi", "hello")


def test_a_one_line_trl_text_row_is_a_row_not_a_document(tmp_path: Path) -> None:
    path = _write(tmp_path / "train.jsonl", [{"text": "hello world"}])
    with pytest.raises(SchemaError, match="has no scenario_id, task_id or prompt") as info:
        table.frame(path)
    assert "one JSON object" not in str(info.value)


def test_a_json_file_holding_one_object_is_still_a_document(tmp_path: Path) -> None:
    path = tmp_path / "qa.json"
    path.write_text(json.dumps(QA))
    with pytest.raises(SchemaError, match="is one JSON object"):
        table.frame(path)
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps({"rows": [{"task_id": "a", "reward": 1.0}]}))
    assert table.frame(rows)["task_key"].to_list() == ["a"]


def test_a_one_line_json_array_in_a_jsonl_file_is_still_rows(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps([{"task_id": "a", "reward": 1.0}, {"task_id": "b", "reward": 0.0}]) + "\n")
    assert table.frame(path)["task_key"].to_list() == ["a", "b"]
