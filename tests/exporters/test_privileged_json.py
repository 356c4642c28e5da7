"""Export never writes the grader's context, at any depth, inside JSON-text columns it carries.

``world_state`` and ``faults`` given as dicts or lists are held as canonical JSON text, so the
struct scrub never sees their keys; docs/export.md, "What a row holds".
"""

from __future__ import annotations

import json

import polars as pl
import pytest

import whileai as wai
from whileai.exporters import _rows

SECRETS = ("HIDDEN-FRAUD", "REF-ANSWER-IN-FAULT", "LINEAGE-RUBRIC", "VECTOR-IN-STATE", "PRINCIPLE-DEEP")


def _rows_with_secrets() -> list[dict]:
    return [
        {"scenario_id": "t1", "rollout_index": i, "prompt": "Refund A-1", "final_text": f"Refunded {i}.",
         "reward": float(i % 2),
         "world_state": {"order": "A-1", "hidden_state": {"fraud_flag": "HIDDEN-FRAUD"},
                         "items": [{"sku": "x", "vector": "VECTOR-IN-STATE"}]},
         "faults": [{"kind": "timeout", "reference": "REF-ANSWER-IN-FAULT",
                     "detail": {"note": "ok", "principle": "PRINCIPLE-DEEP"}}],
         "lineage": {"source": "sim", "rubric": "LINEAGE-RUBRIC"}}
        for i in range(2)
    ]


@pytest.mark.parametrize("fmt", ["openai", "trl"])
@pytest.mark.parametrize("ext", ["jsonl", "parquet"])
def test_privileged_keys_inside_json_columns_are_not_written(tmp_path, fmt, ext):
    path = tmp_path / f"train.{ext}"
    wai.export(_rows_with_secrets(), path, format=fmt)
    blob = path.read_bytes()
    assert not [s for s in SECRETS if s.encode() in blob]
    for key in ("hidden_state", "reference", "principle", "vector"):
        assert f'"{key}"'.encode() not in blob
    # the rest of the carried values is kept
    rows = ([json.loads(line) for line in blob.decode().splitlines()] if ext == "jsonl"
            else pl.read_parquet(path).to_dicts())
    state, faults = rows[0]["world_state"], rows[0]["faults"]
    state = json.loads(state) if isinstance(state, str) else state
    faults = json.loads(faults) if isinstance(faults, str) else faults
    assert state == {"items": [{"sku": "x"}], "order": "A-1"}
    assert faults == [{"detail": {"note": "ok"}, "kind": "timeout"}]


def test_training_rows_scrub_json_columns():
    out = wai.training_rows(_rows_with_secrets(), format="openai")
    assert not [s for s in SECRETS if s in json.dumps(out)]


def test_json_text_without_privileged_keys_is_untouched():
    texts = pl.Series(["found", None, '{"b": 1, "a": "reference"}', '[{"kind":"timeout"}]', "not json \"reference\":"])
    out = _rows._drop_json_keys(texts, _rows.FORBIDDEN_KEYS)
    assert out.to_list() == texts.to_list()
    nulls = pl.Series([None, None], dtype=pl.String)
    assert _rows._drop_json_keys(nulls, _rows.FORBIDDEN_KEYS).to_list() == [None, None]


def test_json_text_scrubbed_once_per_distinct_value():
    texts = pl.Series(['{"a":1,"reference":"r"}', '{"a":1,"reference":"r"}', "plain", '[{"x":{"rubric":"q"}}]', None])
    out = _rows._drop_json_keys(texts, _rows.FORBIDDEN_KEYS)
    assert out.to_list() == ['{"a":1}', '{"a":1}', "plain", '[{"x":{}}]', None]
