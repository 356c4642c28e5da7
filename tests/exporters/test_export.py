"""export_dataset / training_rows: shapes, masks, unroll, cuts, checks, files and bad input.

Every expected row is rebuilt here from the source conversation by a plain-Python reference
(``_reference``), independent of the columnar writer.
"""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import polars as pl
import pytest

import whileai as wai
from whileai import export_training, table
from whileai.errors import ArgumentError, EmptyInputError, InputFileError, TrainingSelectionError
from whileai.exporters import (
    _export,
    export_dataset,
    loss_mask,
    to_trl,
    tool_call_roundtrip,
    training_rows,
)
from whileai.testing import rollout_table

SYS = "Help customers with orders."
TOOLS = [{"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}}]


def _call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def conversation(i: int, turns: int = 2, tool_text: str = '{"status": "ok", "data": "x"}') -> list[dict]:
    """A user ask, then (turns - 1) tool-calling agent turns with results, then a reply."""
    msgs = [{"role": "user", "content": f"Where is order {i}?"}]
    for t in range(turns - 1):
        cid = f"call_{t}"
        msgs.append({"role": "assistant", "content": "", "tool_calls": [_call(cid, "get_order", {"order_id": f"O{i}", "t": t})]})
        msgs.append({"role": "tool", "content": tool_text, "tool_call_id": cid, "name": "get_order"})
    msgs.append({"role": "assistant", "content": f"Order {i} ships today."})
    return msgs


def rows_fixture(n_tasks=3, k=2, turns=2, **extra):
    rows = []
    for t in range(n_tasks):
        for j in range(k):
            rows.append({"scenario_id": f"t{t}", "rollout_index": j, "messages": conversation(t, turns),
                         "reward": float((t + j) % 2), "tier": "ordinary", "markers": {"polite": 1.0}, **extra})
    return rows


def _reference(src: dict, *, mode="assistant", system=SYS) -> dict:
    """Plain-Python expectation for one openai training row."""
    msgs = [dict(m) for m in src["messages"]]
    if system is not None and msgs[0]["role"] != "system":
        msgs.insert(0, {"role": "system", "content": system})
    mask = [1 if m["role"] == "assistant" else 0 for m in msgs]
    if mode == "final":
        last = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
        mask = [1 if i == last else 0 for i in range(len(msgs))]
    return {"messages": msgs, "loss_mask": mask}


# ------------------------------------------------------------------------------------------
# the openai shape
# ------------------------------------------------------------------------------------------


def test_openai_rows_match_reference_and_mask():
    src = rows_fixture(turns=3)
    out = training_rows(src, system_prompt=SYS, tools=TOOLS)
    assert len(out) == len(src)
    for got, row in zip(out, src):
        ref = _reference(row)
        assert [m["role"] for m in got["messages"]] == [m["role"] for m in ref["messages"]]
        assert got["loss_mask"] == ref["loss_mask"]
        assert got["loss_mask"] == loss_mask(got["messages"])
        assert got["messages"][0] == {"role": "system", "content": SYS}
        assert got["prompt"] == row["messages"][0]["content"]
        assert got["tools"] == TOOLS
        assert got["reward"] == row["reward"]
        assert got["scenario_id"] == row["scenario_id"]
        # arguments are a JSON string that parses back to the same object; ids are kept
        calls = [c for m in got["messages"] for c in m.get("tool_calls", [])]
        want = [c for m in row["messages"] for c in m.get("tool_calls", [])]
        assert [c["id"] for c in calls] == [c["id"] for c in want]
        assert all(isinstance(c["function"]["arguments"], str) for c in calls)
        assert [json.loads(c["function"]["arguments"]) for c in calls] == [json.loads(c["function"]["arguments"]) for c in want]
        tool_msgs = [m for m in got["messages"] if m["role"] == "tool"]
        assert all(m["tool_call_id"].startswith("call_") and m["name"] == "get_order" for m in tool_msgs)
        # a user message carries no null keys
        assert set(got["messages"][1]) == {"role", "content"}
        # never carried: markers, rollout_index
        assert "markers" not in got and "rollout_index" not in got


def test_final_mode_trains_only_the_last_agent_turn():
    src = rows_fixture(turns=3)
    out = training_rows(src, system_prompt=SYS, mask_mode="final")
    for got, row in zip(out, src):
        assert got["loss_mask"] == _reference(row, mode="final")["loss_mask"]
        assert sum(got["loss_mask"]) == 1


def test_report_counts_trained_and_masked(tmp_path):
    src = rows_fixture(n_tasks=4, k=3, turns=3)
    report = export_dataset(src, tmp_path / "t.jsonl", system_prompt=SYS, tools=TOOLS)
    refs = [_reference(r) for r in src]
    trained = sum(sum(r["loss_mask"]) for r in refs)
    total = sum(len(r["loss_mask"]) for r in refs)
    assert report["trained_messages"] == trained
    assert report["masked_messages"] == total - trained
    assert report["n"] == report["n_written"] == len(src)
    assert report["with_system"] == report["with_tools"] == len(src)
    assert report["groups"] == 4
    assert report["mask_mode"] == "assistant"
    assert report["format"] == "openai"
    rewards = [r["reward"] for r in src]
    assert report["rewards"].n_pass == sum(r >= 0.5 for r in rewards)
    assert report["rewards"].n_fail == sum(r < 0.5 for r in rewards)
    assert report["tool_call_roundtrip"].checked == 2 * len(src)
    assert report["tool_call_roundtrip"].invalid == 0
    assert report["tool_call_roundtrip"].encoding == "json_string"
    assert any("below 0.5" in w for w in report.warnings)
    assert report["path"] == str(tmp_path / "t.jsonl")
    assert "export (openai)" in str(report)


def test_group_stats_match_numpy():
    df = table.frame(rollout_table(30, 5, seed=4, partial=True))
    out = training_rows(df, system_prompt=SYS)
    by_task: dict[str, list[float]] = {}
    for r in df.select("task_key", "reward").iter_rows():
        by_task.setdefault(r[0], []).append(r[1])
    ids = set()
    for got in out:
        rewards = np.array(by_task[got["scenario_id"]])
        assert got["k"] == len(rewards)
        assert got["n1"] == int((rewards >= 0.5).sum())
        assert got["n0"] == int((rewards < 0.5).sum())
        assert got["reward_mean"] == pytest.approx(rewards.mean())
        assert got["reward_std"] == pytest.approx(rewards.std(ddof=0))
        assert len(got["group_id"]) == 12
        ids.add((got["scenario_id"], got["group_id"]))
    assert len({g for _, g in ids}) == len({s for s, _ in ids}) == 30


def test_system_prompt_from_meta_column_or_argument():
    src = rows_fixture(n_tasks=1, k=1)
    # column
    with_col = [dict(r, system_prompt="From column.") for r in src]
    assert training_rows(with_col)[0]["messages"][0]["content"] == "From column."
    # argument wins over column
    assert training_rows(with_col, system_prompt="Arg.")[0]["messages"][0]["content"] == "Arg."
    # a conversation that starts with its own system message keeps it
    own = [dict(r, messages=[{"role": "system", "content": "Own."}, *r["messages"]]) for r in src]
    got = training_rows(own, system_prompt="Arg.")[0]["messages"]
    assert [m["content"] for m in got if m["role"] == "system"] == ["Own."]
    # fluent object meta (system prompt and tools)
    data = wai.ScoredData(table.frame(src), meta={"system_prompt": "Meta.", "tools": TOOLS})
    row = training_rows(data)[0]
    assert row["messages"][0]["content"] == "Meta." and row["tools"] == TOOLS


def test_fluent_export_delegates(tmp_path):
    data = wai.Selection(table.frame(rows_fixture()), meta={"system_prompt": SYS, "tools": TOOLS})
    report = data.export(tmp_path / "sel.jsonl")
    assert report["with_system"] == report["with_tools"] == report["n"]
    first = json.loads((tmp_path / "sel.jsonl").read_text().splitlines()[0])
    assert first["messages"][0]["content"] == SYS


def test_export_is_export_dataset_is_export_training():
    assert export_training is export_dataset
    assert wai.export_training is wai.export_dataset
    assert wai.export is wai.export_dataset  # a plain function: the step package is whileai.exporters


def test_no_system_prompt_warns(tmp_path):
    report = export_dataset(rows_fixture(), tmp_path / "x.jsonl")
    assert report["with_system"] == 0
    assert any("system prompt" in w for w in report.warnings)
    assert any("tool schemas" in w for w in report.warnings)


# ------------------------------------------------------------------------------------------
# unroll and tool-output cuts
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["openai", "trl"])
def test_unroll_gives_one_sample_per_agent_turn(fmt):
    src = rows_fixture(n_tasks=2, k=1, turns=3)
    out = training_rows(src, system_prompt=SYS, unroll=True, format=fmt)
    assert len(out) == 2 * 3
    for i, got in enumerate(out):
        row = src[i // 3]
        turn = i % 3 + 1
        ref = _reference(row)["messages"]
        agent_positions = [j for j, m in enumerate(ref) if m["role"] == "assistant"]
        end = agent_positions[turn - 1]
        assert got["unroll"] == {"turn": turn, "turns": 3}
        assert "group_id" not in got
        if fmt == "openai":
            assert len(got["messages"]) == end + 1
            assert got["loss_mask"] == [0] * end + [1]
            assert [m["role"] for m in got["messages"]] == [m["role"] for m in ref[: end + 1]]
        else:
            assert [m["role"] for m in got["prompt"]] == [m["role"] for m in ref[:end]]
            assert len(got["completion"]) == 1 and got["completion"][0]["role"] == "assistant"
            assert "messages" not in got and "loss_mask" not in got


def test_unroll_report(tmp_path):
    src = rows_fixture(n_tasks=2, k=2, turns=2)
    report = export_dataset(src, tmp_path / "u.jsonl", system_prompt=SYS, unroll=True)
    assert report["n_written"] == 8 and report["n"] == 4
    assert report["trained_messages"] == 8
    assert report["mask_mode"] == "final (unrolled)"
    assert report["unrolled"] is True


def test_max_tool_output_chars_cuts_and_counts(tmp_path):
    long = "x" * 50
    src = rows_fixture(n_tasks=1, k=2, turns=3)
    for r in src:
        r["messages"] = conversation(0, 3, tool_text=long)
    out = training_rows(src, max_tool_output_chars=10)
    for got in out:
        tools = [m for m in got["messages"] if m["role"] == "tool"]
        assert all(m["content"] == "x" * 10 + "[... 40 chars of tool output truncated]" for m in tools)
        assert got["tool_output_truncated"] == 2 and got["tool_output_chars_cut"] == 80
    report = export_dataset(src, tmp_path / "c.jsonl", max_tool_output_chars=10)
    assert report["tool_output_truncated"] == 4 and report["tool_output_chars_cut"] == 160
    # under the cap: nothing cut, no per-row keys
    out = training_rows(src, max_tool_output_chars=1000)
    assert "tool_output_truncated" not in out[0]
    assert [m["content"] for m in out[0]["messages"] if m["role"] == "tool"] == [long, long]


def test_strip_think():
    src = [{"scenario_id": "a", "messages": [{"role": "user", "content": "q"},
                                             {"role": "assistant", "content": "<think>secret plan</think> Answer."}]}]
    assert training_rows(src)[0]["messages"][-1]["content"] == "Answer."
    assert "secret" in training_rows(src, strip_think=False)[0]["messages"][-1]["content"]


# ------------------------------------------------------------------------------------------
# the trl shape
# ------------------------------------------------------------------------------------------


def test_trl_sft_rows_have_no_prompt_string_and_dict_arguments():
    src = rows_fixture(turns=2)
    out = training_rows(src, format="trl", system_prompt=SYS, tools=TOOLS)
    for got, row in zip(out, src):
        assert "prompt" not in got and "loss_mask" not in got
        assert got["prompt_text"] == row["messages"][0]["content"]
        calls = [c for m in got["messages"] for c in m.get("tool_calls", [])]
        assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
        assert json.loads(got["tools"]) == TOOLS  # TRL's SFTTrainer json.loads a string tools column


def test_trl_final_is_prompt_completion():
    src = rows_fixture(turns=3)
    out = to_trl(src, kind="completion", system_prompt=SYS)
    for got, row in zip(out, src):
        ref = _reference(row)["messages"]
        assert [m["role"] for m in got["prompt"]] == [m["role"] for m in ref[:-1]]
        assert got["completion"] == [{"role": "assistant", "content": ref[-1]["content"]}]


def test_trl_mask_mode_text(tmp_path):
    src = rows_fixture()
    r1 = export_dataset(src, tmp_path / "a.jsonl", format="trl")
    r2 = export_dataset(src, tmp_path / "b.jsonl", format="trl", mask_mode="final")
    assert "every token" in r1["mask_mode"] and "assistant_only_loss" in r1["mask_mode"]
    assert "last assistant turn only" in r2["mask_mode"] and "completion_mask" in r2["mask_mode"]
    assert r1["tool_call_roundtrip"].encoding == "dict"


# ------------------------------------------------------------------------------------------
# checks: privileged context, tool-call round trip
# ------------------------------------------------------------------------------------------


def test_privileged_leak_refused_unless_validate_false(tmp_path):
    ref = "the entity does not exist: report it missing and do not act"
    src = rows_fixture(n_tasks=2, k=2)
    for r in src:
        r["privileged"] = {"reference": ref, "hidden_state": {"world_state": "entity missing"}}
    src[1]["messages"][-1]["content"] = "As my notes say, The entity does not exist:  report it missing and do not act."
    path = tmp_path / "leak.jsonl"
    with pytest.raises(TrainingSelectionError, match="privileged_leak") as info:
        export_dataset(src, path)
    assert info.value.rows == [1]
    assert not path.exists() and not list(tmp_path.iterdir())
    report = export_dataset(src, path, validate=False)
    assert report["privileged_leaks"].n_leaked == 1 and report["privileged_leaks"].leaked == [1]
    assert any("privileged" in w for w in report.warnings)
    text = path.read_text()
    assert "privileged" not in text and "hidden_state" not in text and "reference" not in text
    # a clean set passes the check and says what it checked
    report = export_dataset(src[2:], tmp_path / "clean.jsonl")
    assert report["privileged_leaks"].n_checked == 2 and report["privileged_leaks"].n_leaked == 0


def test_short_privileged_values_do_not_count_as_quotes():
    src = rows_fixture(n_tasks=1, k=1)
    src[0]["privileged"] = {"hidden_state": {"world_state": "missing"}}
    src[0]["messages"][-1]["content"] = "The order is missing."
    assert len(training_rows(src)) == 1


def test_forbidden_keys_scrubbed_from_carried_structs():
    src = rows_fixture(n_tasks=1, k=1)
    src[0]["lineage"] = {"source": "grade", "reference": "the answer key", "run": "r1"}
    got = training_rows(src)[0]
    assert got["lineage"] == {"source": "grade", "run": "r1"}


def test_broken_tool_arguments_refused_or_written_as_strings(tmp_path):
    src = rows_fixture(n_tasks=1, k=2)
    src[1]["messages"][1]["tool_calls"][0]["function"]["arguments"] = "{not json"
    rt = tool_call_roundtrip(src)
    assert (rt.checked, rt.invalid, rt.rows) == (2, 1, [1])
    for fmt in ("openai", "trl"):
        path = tmp_path / f"{fmt}.jsonl"
        with pytest.raises(TrainingSelectionError, match="tool_call_roundtrip"):
            export_dataset(src, path, format=fmt)
        assert not path.exists()
        report = export_dataset(src, path, format=fmt, validate=False)
        assert report["tool_call_roundtrip"].invalid == 1
        lines = [json.loads(x) for x in path.read_text().splitlines()]  # every line still parses
        bad = lines[1]["messages"][1]["tool_calls"][0]["function"]["arguments"]
        assert bad == "{not json"


# ------------------------------------------------------------------------------------------
# files: JSONL, gzip, Parquet, chunking, atomic writes
# ------------------------------------------------------------------------------------------


def test_jsonl_file_equals_training_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(_export, "CHUNK_ROWS", 7)  # many chunks, odd boundary
    df = table.frame(rollout_table(12, 3, seed=2))
    for fmt in ("openai", "trl"):
        path = tmp_path / f"{fmt}.jsonl"
        report = export_dataset(df, path, format=fmt, system_prompt=SYS)
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        assert lines == training_rows(df, format=fmt, system_prompt=SYS)
        assert report["n_written"] == len(lines) == 36
        assert [r["scenario_id"] for r in lines] == df["scenario_id"].to_list()


def test_gzip(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    export_dataset(rows_fixture(), path)
    with gzip.open(path, "rt") as handle:
        assert len(handle.read().splitlines()) == 6


@pytest.mark.parametrize("fmt,mode,unroll", [("openai", "assistant", False), ("trl", "assistant", False),
                                             ("trl", "final", False), ("openai", "assistant", True)])
def test_parquet_matches_jsonl(tmp_path, fmt, mode, unroll, monkeypatch):
    monkeypatch.setattr(_export, "CHUNK_ROWS", 5)
    src = rows_fixture(n_tasks=3, k=3, turns=3)
    report = export_dataset(src, tmp_path / "t.parquet", format=fmt, mask_mode=mode, unroll=unroll, system_prompt=SYS)
    pq_rows = pl.read_parquet(tmp_path / "t.parquet").to_dicts()
    js_rows = training_rows(src, format=fmt, mask_mode=mode, unroll=unroll, system_prompt=SYS)
    assert report["n_written"] == len(pq_rows) == len(js_rows)
    key = "prompt" if fmt == "trl" and (mode == "final" or unroll) else "messages"
    for p, j in zip(pq_rows, js_rows):
        assert [m["role"] for m in p[key]] == [m["role"] for m in j[key]]
        assert [m["content"] for m in p[key]] == [m["content"] for m in j[key]]
        if fmt == "openai" and not unroll:
            assert p["loss_mask"] == j["loss_mask"]
        for pm, jm in zip(p[key], j[key]):
            for pc, jc in zip(pm["tool_calls"] or [], jm.get("tool_calls", [])):
                got = pc["function"]["arguments"]
                got = json.loads(got) if isinstance(got, str) else got
                want = jc["function"]["arguments"]
                assert got == (json.loads(want) if isinstance(want, str) else want)


def test_output_none_writes_beside_a_path_source(tmp_path):
    src = tmp_path / "rows.jsonl"
    table.write(table.frame(rows_fixture()), src)
    report = export_dataset(src)
    assert report["path"] == str(tmp_path / "rows.train.jsonl")
    assert (tmp_path / "rows.train.jsonl").exists()
    with pytest.raises(ArgumentError, match="output must be a file path"):
        export_dataset(rows_fixture())


def test_unwritable_paths_leave_nothing(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        export_dataset(rows_fixture(), tmp_path / "missing" / "t.jsonl")
    with pytest.raises(InputFileError, match="is a folder"):
        export_dataset(rows_fixture(), tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # root ignores permissions
            pytest.skip("running as root: permissions are not enforced")
        with pytest.raises(InputFileError, match="cannot be written"):
            export_dataset(rows_fixture(), ro / "t.jsonl")
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)


def test_failure_mid_write_leaves_no_partial_file(tmp_path, monkeypatch):
    monkeypatch.setattr(_export, "CHUNK_ROWS", 2)
    src = rows_fixture(n_tasks=4, k=2)
    src[-1]["messages"][1]["tool_calls"][0]["function"]["arguments"] = "{broken"  # found in the last chunk
    target = tmp_path / "t.jsonl"
    target.write_text("old\n")
    with pytest.raises(TrainingSelectionError):
        export_dataset(src, target)
    assert target.read_text() == "old\n"  # the old file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------


def test_bad_arguments_name_the_allowed_values(tmp_path):
    with pytest.raises(ArgumentError, match="format must be one of 'openai', 'trl', got 'csv'"):
        export_dataset(rows_fixture(), tmp_path / "x.jsonl", format="csv")
    with pytest.raises(ArgumentError, match="mask_mode must be one of 'assistant', 'final', got 'all'"):
        training_rows(rows_fixture(), mask_mode="all")
    with pytest.raises(ArgumentError, match="max_tool_output_chars must be a positive"):
        training_rows(rows_fixture(), max_tool_output_chars=0)
    with pytest.raises(ArgumentError, match="unroll must be True or False"):
        training_rows(rows_fixture(), unroll="yes")
    with pytest.raises(ArgumentError, match="mode must be one of"):
        loss_mask([], mode="all")
    assert not list(tmp_path.iterdir())


def test_empty_and_agentless_sources(tmp_path):
    with pytest.raises(EmptyInputError):
        export_dataset([], tmp_path / "x.jsonl")
    no_agent = [{"scenario_id": "a", "messages": [{"role": "user", "content": "hi"}]}]
    with pytest.raises(TrainingSelectionError, match="at least one assistant turn"):
        export_dataset(no_agent, tmp_path / "x.jsonl")
    assert not list(tmp_path.iterdir())
    mixed = no_agent + rows_fixture(n_tasks=1, k=1)
    report = export_dataset(mixed, tmp_path / "x.jsonl")
    assert report["n_written"] == 1 and report["dropped"] == {"no_assistant_turn": 1}


def test_loss_mask_helper():
    msgs = [{"role": "system"}, {"role": "user"}, {"role": "assistant"}, {"role": "tool"}, {"role": "assistant"}]
    assert loss_mask(msgs) == [0, 0, 1, 0, 1]
    assert loss_mask(msgs, mode="final") == [0, 0, 0, 0, 1]
    assert loss_mask([{"role": "user"}], mode="final") == [0]


def test_wai131_rows_export_like_the_published_package(tmp_path):
    """Our export of the 0.131 scored fixture has the published training row's keys and masks."""
    here = os.path.join(os.path.dirname(__file__), "..", "data", "wai131")
    published = [json.loads(x) for x in open(os.path.join(here, "export.jsonl"))]
    sys_prompt = published[0]["messages"][0]["content"]
    ours = training_rows(os.path.join(here, "scored.jsonl"), system_prompt=sys_prompt,
                         tools=published[0]["tools"], validate=False)
    by_key = {}
    for row in ours:
        by_key.setdefault(row["scenario_id"], []).append(row)
    core = {"messages", "loss_mask", "tools", "reward", "prompt", "scenario_id", "schema_version", "group_id", "k",
            "n0", "n1", "reward_mean", "reward_std"}
    for pub in published:
        assert core <= set(pub)
        candidates = by_key.get(pub["scenario_id"], [])
        assert candidates, pub["scenario_id"]
        assert all(core <= set(c) for c in candidates)
        match = [c for c in candidates if c["messages"][-1]["content"] == pub["messages"][-1]["content"]]
        assert match, "the same conversation exports"
        assert match[0]["loss_mask"] == pub["loss_mask"]
        assert [m["role"] for m in match[0]["messages"]] == [m["role"] for m in pub["messages"]]
    assert all("privileged" not in row for row in ours)


def test_tools_as_functions_become_schemas():
    def get_order(order_id: str) -> dict:
        """Look up an order.

        Args:
            order_id: The order id.
        """
        return {}

    got = training_rows(rows_fixture(n_tasks=1, k=1), tools=[get_order])[0]["tools"]
    assert got[0]["function"]["name"] == "get_order"
    assert got[0]["function"]["parameters"]["required"] == ["order_id"]
    bare = training_rows(rows_fixture(n_tasks=1, k=1), tools=[{"name": "f", "parameters": {"type": "object"}}])[0]
    assert bare["tools"] == [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with pytest.raises(ArgumentError, match="tools must be"):
        training_rows(rows_fixture(n_tasks=1, k=1), tools="not json")


def test_trl_dataset_without_datasets_names_the_extra(monkeypatch):
    import sys

    from whileai.errors import MissingExtraError
    from whileai.exporters import trl_dataset

    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'whileai\[trl\]'"):
        trl_dataset(rows_fixture())


def test_group_id_is_fnv1a_of_the_task_key():
    """The 12-hex group_id is FNV-1a-64 of the task key: stable across machines and versions."""

    def fnv1a(text: str) -> str:  # the published algorithm, one byte at a time
        h = 0xCBF29CE484222325
        for byte in text.encode("utf-8"):
            h = ((h ^ byte) * 0x100000001B3) % 2**64
        return f"{h:016x}"[:12]

    assert fnv1a("a") == "af63dc4c8601"  # FNV-1a-64("a") = 0xaf63dc4c8601ec8c (reference vector)
    out = training_rows(rows_fixture(n_tasks=3, k=2) + [{"scenario_id": "héllo", "messages": conversation(9)}])
    assert all(r["group_id"] == fnv1a(r["scenario_id"]) for r in out)


@pytest.mark.parametrize("fmt", ["openai", "trl"])
def test_awkward_text_round_trips_exactly(tmp_path, fmt):
    """Quotes, backslashes, control characters, emoji, and text that looks like the null keys the
    writer strips all come back byte for byte."""
    nasty = 'He said "hi",\n\tthen \\ left ,"name":null ,"tool_call_id":null \x01 \u2028 🐳 {"a": null}'
    src = [{"scenario_id": 'task ,"x":null', "prompt": nasty, "lineage": {"first": None, "note": nasty, "gone": None, "inner": {"a": None, "b": 1}, "empty": {"z": None}},
            "messages": [{"role": "user", "content": nasty},
                         {"role": "assistant", "content": nasty, "tool_calls": [
                             {"id": "c0", "type": "function", "function": {"name": "f", "arguments": json.dumps({"q": nasty})}}]},
                         {"role": "tool", "content": nasty, "tool_call_id": "c0", "name": "f"},
                         {"role": "assistant", "content": nasty}], "reward": 1.0}]
    path = tmp_path / "t.jsonl"
    export_dataset(src, path, format=fmt, system_prompt=nasty)
    (row,) = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]
    assert training_rows(src, format=fmt, system_prompt=nasty) == [row]
    msgs = row["messages"]
    assert [m["content"] for m in msgs] == [nasty] * 5
    assert msgs[3] == {"role": "tool", "content": nasty, "name": "f", "tool_call_id": "c0"}
    args = msgs[2]["tool_calls"][0]["function"]["arguments"]
    assert (json.loads(args) if fmt == "openai" else args) == {"q": nasty}
    assert row["scenario_id"] == 'task ,"x":null'
    assert row["prompt" if fmt == "openai" else "prompt_text"] == nasty
    assert row["lineage"] == {"note": nasty, "inner": {"b": 1}, "empty": {}}


@pytest.mark.parametrize("fmt,suffix", [("openai", "jsonl"), ("trl", "jsonl"), ("openai", "parquet")])
def test_parquet_source_streams_in_chunks_with_the_same_rows(tmp_path, monkeypatch, fmt, suffix):
    """A Parquet source is read chunk by chunk (the leak check on each chunk): the file and the
    report equal those of the same rows exported from memory, and leaks are found across chunks."""
    from whileai.exporters import _export

    monkeypatch.setattr(_export, "CHUNK_ROWS", 7)  # several chunks, tasks cut across them
    ref = "the entity does not exist: report it missing and do not act"
    src = rows_fixture(n_tasks=6, k=4)
    for r in src:
        r["privileged"] = {"reference": ref}
    for i in (3, 15):
        src[i]["messages"][-1]["content"] = "As my notes say, the entity does not exist: report it missing and do not act."
    df = table.frame(src)
    pq_path = tmp_path / "src.parquet"
    df.write_parquet(pq_path)
    with pytest.raises(TrainingSelectionError, match="privileged_leak: 2 of 24 rows") as info:
        export_dataset(pq_path, tmp_path / f"refused.{suffix}", format=fmt)
    assert info.value.rows == [3, 15] and not (tmp_path / f"refused.{suffix}").exists()
    a = export_dataset(pq_path, tmp_path / f"a.{suffix}", format=fmt, validate=False)
    b = export_dataset(df, tmp_path / f"b.{suffix}", format=fmt, validate=False)
    assert a.model_dump(exclude={"path"}) == b.model_dump(exclude={"path"})
    assert a["privileged_leaks"].leaked == [3, 15] and a["n_written"] == 24
    if suffix == "jsonl":
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    else:
        assert pl.read_parquet(tmp_path / "a.parquet").equals(pl.read_parquet(tmp_path / "b.parquet"))
