"""strip_think=True leaves no reasoning to train on: <think> blocks and the reasoning fields go.

``reasoning_content`` (DeepSeek, vLLM, Qwen3: their chat templates render it as <think>...</think>)
rides in a message's extra keys; docs/export.md, strip_think.
"""

from __future__ import annotations

import json

import pytest

import whileai as wai


def _rows(**extra: object) -> list[dict]:
    return [{"scenario_id": "t", "rollout_index": i, "reward": float(i % 2),
             "messages": [{"role": "user", "content": "Describe this"},
                          {"role": "assistant", "content": f"<think>hidden plan</think>It is a cat {i}",
                           "refusal": None, **extra}]} for i in range(2)]


@pytest.mark.parametrize("fmt", ["openai", "trl"])
@pytest.mark.parametrize("unroll", [False, True])
def test_strip_think_drops_reasoning_fields(fmt, unroll):
    rows = _rows(reasoning_content="HIDDEN CHAIN OF THOUGHT", reasoning="ALSO HIDDEN",
                 reasoning_details=[{"type": "reasoning.text", "text": "DETAIL HIDDEN"}], audio={"id": "a1"})
    out = wai.training_rows(rows, format=fmt, strip_think=True, unroll=unroll)
    text = json.dumps(out)
    assert "HIDDEN" not in text
    turn = (out[0].get("completion") or out[0]["messages"])[-1]
    assert turn["content"] == "It is a cat 0"
    assert turn["audio"] == {"id": "a1"}  # other extra keys stay


def test_strip_think_reasoning_with_quotes_and_only_key():
    rows = _rows(reasoning_content='He said "no, stop", then {"reasoning":"x"}, HIDDEN')
    msgs = wai.training_rows(rows, format="openai", strip_think=True)[0]["messages"]
    assert msgs[-1] == {"role": "assistant", "content": "It is a cat 0"}


def test_reasoning_kept_without_strip_think():
    rows = _rows(reasoning_content="KEPT CHAIN")
    msgs = wai.training_rows(rows, format="openai", strip_think=False)[0]["messages"]
    assert msgs[-1]["reasoning_content"] == "KEPT CHAIN"
    assert msgs[-1]["content"].startswith("<think>")


def test_file_export_drops_reasoning(tmp_path):
    path = tmp_path / "train.jsonl"
    wai.export(_rows(reasoning_content="HIDDEN CHAIN"), path, format="openai")
    assert b"HIDDEN" not in path.read_bytes()
