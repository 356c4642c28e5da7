"""Free-form JSON columns (``tools``, ``judge_meta``...) read by the columnar JSONL paths.

Polars' text of a nested value read as String is not the file's (1.0 becomes 1, a quote or a
backslash inside a key stays unescaped, a string loses its quotes), so the columnar readers take
these cells from the lines themselves; each must equal the per-row reader's cell.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

import whileai.table._jsonl_plain as read
from whileai import table

ROWS = [
    {"task_id": "a", "reward": 1.0,
     "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "r"}],
     "tools": [{"type": "function", "function": {"name": "f", "parameters": {"z": 1.0, 'a"b': "x\\y", "n": 10**18}}}],
     "judge_meta": {"score": 2.0, "why": "ok"}},
    {"task_id": "b", "reward": 0.0,
     "messages": [{"role": "user", "content": "q2"}, {"role": "assistant", "content": "r2"}],
     "tools": [], "judge_meta": "12"},
    {"task_id": "c", "reward": 0.5,
     "messages": [{"role": "user", "content": "é"}, {"role": "assistant", "content": "ü"}],
     "judge_meta": '{"kept": "as given"}'},
]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    out = tmp_path / "tools.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    return out


def _per_row(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> object:
    with monkeypatch.context() as m:
        m.setattr(read, "_jsonl_fast", lambda data: None)
        m.setattr(read._jsonl_engine, "read", lambda *a: None)
        return table.frame(path, **kwargs)


def test_full_read_gives_the_row_readers_cells(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = table.frame(path)
    assert_frame_equal(fast, _per_row(path, monkeypatch))
    tools = json.loads(fast["tools"][0])
    assert tools[0]["function"]["parameters"] == {"z": 1.0, 'a"b': "x\\y", "n": 10**18}
    assert fast["judge_meta"].to_list() == ['{"score":2.0,"why":"ok"}', '"12"', '{"kept": "as given"}']


def test_projected_read_gives_the_same_cells(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cols = ["tools", "judge_meta", "reward"]
    fast = table.frame(path, columns=cols)
    slow = _per_row(path, monkeypatch, columns=cols)
    assert_frame_equal(fast.select(cols), slow.select(cols))
    assert fast["tools"][1] == "[]"
