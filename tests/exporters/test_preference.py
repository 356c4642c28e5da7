"""export_preference: the one-turn TRL/Fireworks split and the full-conversation OpenAI shape."""

from __future__ import annotations

import json

import polars as pl
import pytest

from whileai.errors import ArgumentError, EmptyInputError, TrainingSelectionError
from whileai.exporters import export_preference, preference_rows, to_trl

SYS = "Help."


def call(args, cid="c0"):
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": "get_order", "arguments": json.dumps(args)}}]}


def tool(text, cid="c0"):
    return {"role": "tool", "content": text, "tool_call_id": cid, "name": "get_order"}


def user(text):
    return {"role": "user", "content": text}


def say(text):
    return {"role": "assistant", "content": text}


def pairs_fixture():
    return [
        # diverge at the final reply, rejected side goes on for two more turns
        {"task_key": "t1", "prompt": "refund 1", "chosen": [user("refund 1"), call({"id": 1}), tool("ok"), say("Done.")],
         "rejected": [user("refund 1"), call({"id": 1}), tool("ok"), say("Cannot."), user("why"), say("dunno")],
         "chosen_reward": 1.0, "rejected_reward": 0.0},
        # diverge at the first agent turn (different tool arguments)
        {"task_key": "t2", "prompt": "refund 2", "chosen": [user("refund 2"), call({"id": 2}), tool("ok"), say("Done.")],
         "rejected": [user("refund 2"), call({"id": 3}), tool("none"), say("Not found.")],
         "chosen_reward": 1.0, "rejected_reward": 0.0},
        # a tie
        {"task_key": "t3", "prompt": "x", "chosen": [user("x"), say("A")], "rejected": [user("x"), say("B")],
         "chosen_reward": 1.0, "rejected_reward": 1.0},
        # sides first differ at a tool result: no one-turn contrast
        {"task_key": "t4", "prompt": "y", "chosen": [user("y"), call({"a": 1}), tool("r1"), say("ok")],
         "rejected": [user("y"), call({"a": 1}), tool("r2"), say("ok")], "chosen_reward": 1.0, "rejected_reward": 0.0},
        # chosen/rejected given without the ask: the ask is put first from `prompt`
        {"task_key": "t5", "prompt": "z", "chosen": [say("Yes, a long and careful answer.")], "rejected": [say("No.")],
         "chosen_reward": 1.0, "rejected_reward": 0.0},
    ]


def _diverge(a, b):
    """Reference: the first index where two message lists differ."""
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return i


def test_trl_one_turn_split_matches_reference():
    src = pairs_fixture()
    rows = preference_rows(src, format="trl", system_prompt=SYS)
    assert [r["task_key"] for r in rows] == ["t1", "t2", "t5"]
    for r in rows:
        pair = next(p for p in src if p["task_key"] == r["task_key"])
        c = [{"role": "system", "content": SYS}] + ([user(pair["prompt"])] if pair["chosen"][0]["role"] != "user" else []) + pair["chosen"]
        j = [{"role": "system", "content": SYS}] + ([user(pair["prompt"])] if pair["rejected"][0]["role"] != "user" else []) + pair["rejected"]
        d = _diverge(c, j)
        assert len(r["prompt"]) == d
        assert [m["role"] for m in r["prompt"]] == [m["role"] for m in c[:d]]
        assert len(r["chosen"]) == len(r["rejected"]) == 1
        assert r["chosen"][0]["role"] == r["rejected"][0]["role"] == "assistant"
        for m in r["prompt"] + r["chosen"] + r["rejected"]:
            for tc in m.get("tool_calls", []):
                assert isinstance(tc["function"]["arguments"], dict)
        assert r["prompt_text"] == pair["prompt"]
        assert r["margin"] == 1.0
    t1 = rows[0]
    assert [m["role"] for m in t1["prompt"]] == ["system", "user", "assistant", "tool"]
    assert t1["chosen"][0]["content"] == "Done." and t1["rejected"][0]["content"] == "Cannot."
    t2 = rows[1]
    assert t2["chosen"][0]["tool_calls"][0]["function"]["arguments"] == {"id": 2}
    assert t2["rejected"][0]["tool_calls"][0]["function"]["arguments"] == {"id": 3}


def test_report_counts(tmp_path):
    report = export_preference(pairs_fixture(), tmp_path / "p.jsonl", format="trl")
    assert report["n"] == 5 and report["pairs"] == 3
    assert report["dropped"] == {"ties": 1, "no_one_turn_contrast": 1}
    # t1 loses two later turns, t2 loses the tool result and the reply after its first agent turn
    assert report["trl_turns_cut"] == 2
    assert report["first_turn_identical"] == 1  # t1: the tool call is the same on both sides
    assert report["mean_margin"] == 1.0
    assert report["tool_call_roundtrip"].encoding == "dict"
    assert report["tool_call_roundtrip"].checked == 3  # t1's shared call, t2's call on each side
    assert len((tmp_path / "p.jsonl").read_text().splitlines()) == 3
    assert any("trl_turns_cut" in w for w in report.warnings)


def test_openai_shape_keeps_whole_conversations():
    rows = preference_rows(pairs_fixture(), format="openai", system_prompt=SYS)
    assert [r["task_key"] for r in rows] == ["t1", "t2", "t4", "t5"]  # only the tie is dropped
    t1 = rows[0]
    assert t1["prompt"] == "refund 1"
    assert [m["role"] for m in t1["rejected"]] == ["system", "user", "assistant", "tool", "assistant", "user", "assistant"]
    assert isinstance(t1["chosen"][2]["tool_calls"][0]["function"]["arguments"], str)


def test_fireworks_shape():
    rows = preference_rows(pairs_fixture(), format="fireworks")
    r = rows[0]
    assert set(r) >= {"input", "preferred_output", "non_preferred_output"}
    assert [m["role"] for m in r["input"]["messages"]] == ["user", "assistant", "tool"]
    assert r["preferred_output"] == [{"role": "assistant", "content": "Done."}]


def test_to_trl_preference_and_drop_ties_off():
    rows = to_trl(pairs_fixture(), kind="preference", drop_ties=False)
    assert "t3" in [r["task_key"] for r in rows]


def test_pairs_from_select_object():
    select = pytest.importorskip("whileai.selection")
    build = getattr(select, "build_preference_pairs", None)
    if build is None:
        pytest.skip("build_preference_pairs not available")
    rows = [{"scenario_id": f"t{t}", "rollout_index": j, "prompt": f"refund {t}",
             "messages": [user(f"refund {t}"), call({"id": t}), tool("ok"), say("Done." if j % 2 else "Cannot do that.")],
             "reward": float(j % 2)} for t in range(6) for j in range(4)]
    pairs = build(rows, length_match=False)
    if len(pairs) == 0:
        pytest.skip("no pairs drawn")
    rows = preference_rows(pairs, format="trl")
    assert rows and all(len(r["chosen"]) == len(r["rejected"]) == 1 for r in rows)
    assert all(r["chosen"][0]["role"] == "assistant" for r in rows)


def test_dataframe_input_and_bad_input(tmp_path):
    df = pl.DataFrame(pairs_fixture()[:2])
    assert len(preference_rows(df, format="trl")) == 2
    with pytest.raises(ArgumentError, match="format must be one of 'openai', 'trl', 'fireworks'"):
        export_preference(df, tmp_path / "p.jsonl", format="csv")
    with pytest.raises(EmptyInputError):
        export_preference([], tmp_path / "p.jsonl")
    with pytest.raises(TrainingSelectionError, match="at least one pair"):
        export_preference([pairs_fixture()[2]], tmp_path / "p.jsonl")
    broken = pairs_fixture()[:1]
    broken[0]["chosen"] = [user("refund 1"), {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c0", "type": "function", "function": {"name": "get_order", "arguments": "{oops"}}]}, tool("ok"), say("Done.")]
    with pytest.raises(TrainingSelectionError, match="tool_call_roundtrip"):
        export_preference(broken, tmp_path / "p.jsonl", format="openai")
    with pytest.raises(ArgumentError, match="output must end in"):
        export_preference(df, tmp_path / "p.csv")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("fmt", ["openai", "trl", "fireworks"])
def test_parquet_holds_the_same_pairs_as_jsonl(tmp_path, fmt):
    pq = pytest.importorskip("pyarrow.parquet")
    pairs = pairs_fixture()
    jsonl = export_preference(pairs, tmp_path / "p.jsonl", format=fmt)
    parquet = export_preference(pairs, tmp_path / "p.parquet", format=fmt)
    assert parquet["pairs"] == jsonl["pairs"] and parquet.path.endswith("p.parquet")
    expected = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    got = pq.read_table(tmp_path / "p.parquet").to_pylist()
    assert len(got) == len(expected)

    def plain(value):  # Arrow fills absent struct fields with None; arguments come back as JSON text
        if isinstance(value, dict):
            return {k: (json.loads(v) if k == "arguments" and fmt == "trl" and isinstance(v, str) else plain(v))
                    for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    assert [plain(r) for r in got] == [plain(r) for r in expected]


def test_parquet_arguments_are_json_typed_so_tools_do_not_merge(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pairs = pairs_fixture()
    pairs[1]["chosen"][1] = call({"order_id": "A-2", "reason": "late"})
    export_preference(pairs, tmp_path / "p.parquet", format="trl")
    schema = pq.read_schema(tmp_path / "p.parquet")
    types = []

    def walk(dtype):
        if pa.types.is_struct(dtype):
            for f in dtype:
                (types.append(f.type) if f.name == "arguments" else walk(f.type))
        elif pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
            walk(dtype.value_type)

    for field in schema:
        walk(field.type)
    assert types and all(str(t).startswith("extension<arrow.json") or t == pa.json_() for t in types)
