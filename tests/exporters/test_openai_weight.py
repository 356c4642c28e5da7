"""OpenAI's fine-tuning format marks an assistant message not to train on with "weight": 0; the
export wrote loss_mask 1 beside it, so the two contradicted each other."""

from __future__ import annotations

import json

import polars as pl
import pytest

import whileai as wai


def _rows() -> list[dict]:
    return [{"task_id": "t", "reward": 1.0, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "London.", "weight": 0},
        {"role": "user", "content": "Wrong, try again."},
        {"role": "assistant", "content": "Paris.", "weight": 1}]}]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_weight_zero_is_not_trained_on(tmp_path, suffix):
    out = tmp_path / f"out{suffix}"
    wai.export(_rows(), out)
    row = (json.loads(out.read_text().splitlines()[0]) if suffix == ".jsonl"
           else pl.read_parquet(out).row(0, named=True))
    assert list(row["loss_mask"]) == [0, 0, 0, 0, 1]


def test_without_weights_every_assistant_turn_is_trained(tmp_path):
    rows = _rows()
    for m in rows[0]["messages"]:
        m.pop("weight", None)
    out = tmp_path / "out.jsonl"
    wai.export(rows, out)
    assert json.loads(out.read_text())["loss_mask"] == [0, 0, 1, 0, 1]
