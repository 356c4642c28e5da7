"""frame(): every accepted input becomes the canonical rollout table."""

from __future__ import annotations

import gzip
import io
import json

import polars as pl
import pyarrow as pa
import pytest

from whileai import table
from whileai.errors import EmptyInputError, InputFileError, SchemaError, WaiError
from whileai.table.schema import MESSAGE

ROWS = [
    {"scenario_id": "t1", "prompt": "find order 7", "reward": 1, "category": "lookup",
     "messages": [
         {"role": "user", "content": "find order 7"},
         {"role": "assistant", "content": None, "tool_calls": [
             {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "7"}'}}]},
         {"role": "tool", "tool_call_id": "c1", "name": "get_order", "content": '{"status": "ok"}'},
         {"role": "assistant", "content": "Order 7 shipped."},
     ]},
    {"scenario_id": "t1", "prompt": "find order 7", "reward": 0, "category": "lookup"},
]


def test_list_of_dicts_maps_schema_and_keeps_unknown_fields():
    df = table.frame(ROWS)
    assert df.schema["messages"] == pl.List(MESSAGE)
    assert df["category"].to_list() == ["lookup", "lookup"]
    assert df["task_key"].to_list() == ["t1", "t1"]
    assert df["reward"].dtype == pl.Float64
    assert df["final_text"].to_list() == ["Order 7 shipped.", None]


def test_arguments_as_string_or_dict_are_stored_the_same():
    as_str = {"prompt": "p", "messages": [{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": '{"b": 2, "a": [1, 2]}'}}]}]}
    as_dict = {"prompt": "p", "messages": [{"role": "assistant", "tool_calls": [
        {"name": "f", "arguments": {"a": [1, 2], "b": 2}}]}]}
    a = table.frame([as_str])["messages"][0][0]["tool_calls"][0]["arguments"]
    b = table.frame([as_dict])["messages"][0][0]["tool_calls"][0]["arguments"]
    assert a == b == '{"a":[1,2],"b":2}'


def test_openai_chat_jsonl_messages_only(tmp_path):
    path = tmp_path / "chat.jsonl"
    lines = [{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": f"q{i}"},
                           {"role": "assistant", "content": f"a{i}"}]} for i in range(3)]
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    df = table.frame(path)
    assert df["prompt"].to_list() == ["q0", "q1", "q2"]
    assert df["final_text"].to_list() == ["a0", "a1", "a2"]
    assert df["task_key"].n_unique() == 3
    assert df["task_key"][0] == table.task_key({"prompt": "q0"})


def test_multipart_content_is_joined_and_kept(tmp_path):
    row = {"messages": [{"role": "user", "content": [{"type": "text", "text": "look at "},
                                                      {"type": "image_url", "image_url": {"url": "x"}}]}]}
    df = table.frame([row])
    assert df["prompt"][0] == "look at "
    back = table.rows(df)[0]["messages"][0]
    assert back["content"] == row["messages"][0]["content"]


def test_trl_conversational_prompt_completion():
    row = {"prompt": [{"role": "user", "content": "hi"}], "completion": [{"role": "assistant", "content": "hello"}]}
    df = table.frame([row])
    assert df["prompt"][0] == "hi" and df["final_text"][0] == "hello"


def test_whileai_0131_rows_are_read(tmp_path):
    for name in ("sim", "scored", "export"):
        df = table.frame(f"tests/data/wai131/{name}.jsonl")
        assert df.height > 0
        assert df["task_key"].null_count() == 0
        assert df["messages"].list.len().min() >= 2
    scored = table.frame("tests/data/wai131/scored.jsonl")
    assert scored["reward"].null_count() == 0
    assert scored["seeded"].dtype == pl.Boolean
    # 0.131 tool calls carry no ids: ids are given and results linked
    msgs = table.rows(scored)[0]["messages"]
    call = msgs[1]["tool_calls"][0]
    assert call["id"] == "call_0000" and msgs[2]["tool_call_id"] == "call_0000"
    assert isinstance(table.rows(scored)[0]["privileged"], dict)


def test_seeded_list_becomes_bool_plus_kinds():
    df = table.frame([{"prompt": "a", "seeded": ["filler"]}, {"prompt": "b", "seeded": []}])
    assert df["seeded"].to_list() == [True, False]
    assert df["seeded_kinds"].to_list() == [["filler"], []]


def test_polars_lazy_arrow_and_columns():
    df = table.frame(ROWS)
    lazy = table.frame(df.lazy(), columns=["reward"])
    assert set(lazy.columns) >= {"reward", "task_key"} and "category" not in lazy.columns
    arrow = table.frame(pa.Table.from_pylist([{"task_id": "a", "reward": 0.5}]))
    assert arrow["task_key"][0] == "a"


def test_parquet_file_and_folder_and_lazy_columns(tmp_path):
    df = table.frame(ROWS)
    table.write(df, tmp_path / "a.parquet")
    (tmp_path / "dir").mkdir()
    table.write(df, tmp_path / "dir" / "p1.parquet")
    table.write(df, tmp_path / "dir" / "p2.parquet")
    assert table.frame(tmp_path / "dir").height == 4
    few = table.frame(tmp_path / "a.parquet", columns=["reward"])
    assert "category" not in few.columns and few["task_key"].to_list() == ["t1", "t1"]


def test_jsonl_gz_and_stdin(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps({"task_id": "x", "reward": 1}) + "\n")
    assert table.frame(path)["task_key"].to_list() == ["x"]
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"task_id": "y"}) + "\n"))
    assert table.frame("-")["task_key"].to_list() == ["y"]


def test_broken_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task_id": "a"}\n\n{"task_id": oops}\n')
    with pytest.raises(SchemaError, match=r"bad.jsonl.*line 3 is not valid JSON") as info:
        table.frame(path)
    assert info.value.line == 3


def test_row_without_task_identity_says_what_to_add():
    with pytest.raises(SchemaError, match="row 1 has neither scenario_id, task_id nor prompt"):
        table.frame([{"task_id": "a"}, {"reward": 1.0}])


def test_frame_without_any_identity_column():
    with pytest.raises(SchemaError, match="no scenario_id, task_id or prompt"):
        table.frame(pl.DataFrame({"reward": [1.0]}))


def test_empty_inputs_raise_clearly(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(EmptyInputError, match="holds no rows"):
        table.frame(path)
    with pytest.raises(EmptyInputError):
        table.frame([])
    assert table.frame([], allow_empty=True).height == 0


def test_missing_file_and_folder_without_parquet(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        table.frame(tmp_path / "nope.jsonl")
    (tmp_path / "d").mkdir()
    with pytest.raises(InputFileError, match="must hold .parquet, .jsonl, .json, .eval or .arrow files"):
        table.frame(tmp_path / "d")


def test_corrupt_parquet(tmp_path):
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(SchemaError, match="not a readable Parquet"):
        table.frame(path)


def test_non_numeric_reward_and_wrong_column_type():
    with pytest.raises(SchemaError, match="reward='great'"):
        table.frame([{"task_id": "a", "reward": "great"}])
    with pytest.raises(SchemaError, match="column 'reward'"):
        table.frame(pl.DataFrame({"task_id": ["a"], "reward": ["great"]}))


def test_markers_must_be_numbers():
    df = table.frame([{"task_id": "a", "markers": {"polite": True, "brief": 0.5}}])
    assert df["markers"][0] == {"polite": 1.0, "brief": 0.5}
    with pytest.raises(SchemaError, match="non-numeric marker"):
        table.frame([{"task_id": "a", "markers": {"polite": "yes"}}])


def test_single_dict_is_refused_with_fix():
    with pytest.raises(SchemaError, match="Wrap it in a list"):
        table.frame({"task_id": "a"})


def test_every_error_is_a_wai_error():
    for exc in (SchemaError, EmptyInputError, InputFileError):
        assert issubclass(exc, WaiError)
    assert issubclass(SchemaError, ValueError) and issubclass(InputFileError, FileNotFoundError)


def test_heterogeneous_nested_extra_is_kept_as_json():
    df = table.frame([{"task_id": "a", "meta": {"x": 1}}, {"task_id": "b", "meta": [1, "two"]}])
    assert table.rows(df)[1]["meta"] in ([1, "two"], '[1,"two"]')


def test_sharegpt_conversations():
    row = {"conversations": [{"from": "system", "value": "be kind"}, {"from": "human", "value": "hi"},
                             {"from": "gpt", "value": "hello"}]}
    df = table.frame([row])
    assert df["prompt"][0] == "hi" and df["final_text"][0] == "hello" and df["system_prompt"][0] == "be kind"
    assert [m["role"] for m in table.rows(df)[0]["messages"]] == ["system", "user", "assistant"]


def test_jsonl_read_in_batches_keeps_every_field(tmp_path, monkeypatch):
    monkeypatch.setattr("whileai.table._jsonl_plain.CHUNK_ROWS", 2)
    rows = [{"task_id": "a", "extra": {"x": 1}, "markers": {"m": 1}},
            {"task_id": "a", "extra": {"y": "2"}},
            {"task_id": "b", "extra": "plain text", "markers": {"n": 0}},
            {"task_id": "b", "note": 3},
            {"task_id": "c", "reward": 1}]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + "{oops\n")
    with pytest.raises(SchemaError, match="line 6"):
        table.frame(path)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    df = table.frame(path)
    assert df.height == 5 and df["task_key"].to_list() == ["a", "a", "b", "b", "c"]
    back = table.rows(df)
    assert back[0]["markers"] == {"m": 1.0} and back[2]["markers"] == {"n": 0.0}
    assert back[3]["note"] == 3 and back[2]["extra"] == "plain text"
    assert json.loads(back[0]["extra"]) == {"x": 1} if isinstance(back[0]["extra"], str) else back[0]["extra"] == {"x": 1}


def test_trl_conversational_prompt_completion_from_a_table(tmp_path):
    df = pl.DataFrame({"prompt": [[{"role": "user", "content": "q0"}]],
                       "completion": [[{"role": "assistant", "content": "a0"}]]})
    out = table.frame(df)
    assert out["prompt"].to_list() == ["q0"] and out["final_text"].to_list() == ["a0"]
    df.write_parquet(tmp_path / "pc.parquet")
    assert table.frame(tmp_path / "pc.parquet")["final_text"].to_list() == ["a0"]


def test_seeded_list_column_in_a_table_keeps_its_kinds():
    out = table.frame(pl.DataFrame({"task_id": ["a", "b"], "seeded": [["filler"], []]}))
    assert out["seeded"].to_list() == [True, False]
    assert out["seeded_kinds"].to_list() == [["filler"], []]
