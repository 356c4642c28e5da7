"""``wai select`` on rows with a NaN reward writes valid JSON (the reward model's NaN is ungraded)."""

from __future__ import annotations

import json

import pytest

from tests.selection.test_nan_rewards import _rows


def test_wai_select_writes_valid_json(wai, tmp_path):
    src = tmp_path / "nan.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    out = tmp_path / "sel.jsonl"
    res = wai("select", src, "--mode", "rl", "-o", out)
    assert res.code == 0, res.err
    rows = [json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in the output")) for line in out.open()]
    assert rows and all(r["reward"] is not None for r in rows)
