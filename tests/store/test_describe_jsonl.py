"""``wai inspect`` of a long JSONL file reads its data columns only, and says what the whole read says."""

from __future__ import annotations

import gzip
import json

import pytest

import whileai.store._describe as describe_module
from whileai import table
from whileai.store import describe
from whileai.testing import rollout_table


def _summary(path, monkeypatch, *, projected: bool):
    """describe's summary, and the columns of each read of the file itself (None: every column)."""
    seen: list[object] = []
    real_frame = table.frame

    def spy(rows, *args, **kwargs):
        if isinstance(rows, type(path)) and rows == path:
            seen.append(kwargs.get("columns"))
        return real_frame(rows, *args, **kwargs)

    with monkeypatch.context() as patch:
        if not projected:
            patch.setattr(describe_module, "_jsonl_head", lambda rows: None)
        patch.setattr(table, "frame", spy)
        out = describe(path)
    return out, seen


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_a_long_jsonl_file_is_described_as_the_whole_read_describes_it(tmp_path, monkeypatch, suffix):
    monkeypatch.setattr(describe_module, "JSONL_SCHEMA_HEAD_LINES", 40)
    rows = rollout_table(24, 4, seed=3, partial=True).with_columns(rollout_index=None)  # a null column too
    path = tmp_path / f"runs{suffix}"
    table.write_jsonl(rows, tmp_path / "runs.jsonl")
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress((tmp_path / "runs.jsonl").read_bytes()))
    # a field only a row past the head holds: the reader keeps it only where a value is given
    lines = (gzip.decompress(path.read_bytes()) if suffix.endswith(".gz") else path.read_bytes()).decode().splitlines()
    last = json.loads(lines[-1])
    last["late_field"] = "x"
    lines[-1] = json.dumps(last)
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)

    projected, reads = _summary(path, monkeypatch, projected=True)
    whole, whole_reads = _summary(path, monkeypatch, projected=False)
    assert whole_reads == [None]  # the reference reads every column
    assert len(reads) == 1 and reads[0] is not None  # the data columns only, never the whole file
    got, want = projected.model_dump(), whole.model_dump()
    assert got.pop("columns") == {k: v for k, v in want.pop("columns").items() if k != "late_field"}
    assert got == want
    assert projected.n_rows == 96 and projected.n_partial > 0


def test_a_short_file_and_a_json_array_are_read_whole(tmp_path, monkeypatch):
    rows = rollout_table(4, 2, seed=1)
    short = tmp_path / "short.jsonl"
    table.write_jsonl(rows, short)
    assert describe_module._jsonl_head(short) is None
    array = tmp_path / "array.jsonl"
    array.write_text(json.dumps(rows.select("scenario_id", "reward").to_dicts()) + "\n" + "\n" * 2000)
    monkeypatch.setattr(describe_module, "JSONL_SCHEMA_HEAD_LINES", 2)
    assert describe_module._jsonl_head(array) is None
    assert describe(array).n_rows == rows.height
