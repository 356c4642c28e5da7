"""A projected read is the full read narrowed, and a Parquet file of rows reads as their JSONL.

``table.frame(path, columns=[...])`` must give the columns ``table.frame(path)`` gives, restricted
to those (same values, same dtypes), on every row shape we read (OpenAI ``messages``, whileai 0.131
``steps``, prompt/completion), whatever kinds of value a field holds and wherever in the file a
kind changes: the first line, a batch past the head, a ``.jsonl.gz``. And a Parquet file of
whileai 0.131 rows (a ``steps`` list column, as pandas or Polars write them) reads as the same
rows read from JSONL: conversation, ``steps`` text, and what select, export and pass_at give.
"""

from __future__ import annotations

import gzip
import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import whileai as wai
from tests._same import same
from whileai import table
from whileai.measure._rows import MEASURE_COLUMNS
from whileai.table import _jsonl_engine, _jsonl_plain, _lazy

COLUMN_SETS = [["reward"], list(MEASURE_COLUMNS), ["reward", "system_prompt", "final_text"], ["messages"]]


def _write(tmp_path, rows, name="r.jsonl"):
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def _agrees(path, columns_sets=COLUMN_SETS):
    full = table.frame(path)
    for columns in columns_sets:
        narrow = table.frame(path, columns=columns)
        assert_frame_equal(narrow, full.select(narrow.columns))  # values and dtypes
        assert "task_key" in narrow.columns
        lazy = _lazy.lazy_frame(path, columns)  # a Parquet path: None, or the same frame
        if lazy is not None:
            lazy = lazy.collect()
            assert_frame_equal(lazy, narrow.select(lazy.columns))
    same(wai.pass_at(path).to_dict(), wai.pass_at(full).to_dict())
    return full


# ---- rows of three shapes, each with a field that holds two kinds of value -------------------------


def _openai(i):
    return {"messages": [{"role": "user", "content": f"q{i % 5}"}, {"role": "assistant", "content": "a"}],
            "prompt": f"q{i % 5}", "reward": float(i % 2)}


def _w131(i):
    return {"prompt": f"q{i % 5}", "steps": [{"tool": "lookup", "arguments": {"id": f"x{i}"}, "result": {"ok": True}}],
            "final_text": "done", "reward": float(i % 3 == 0)}


def _prompt_completion(i):
    return {"prompt": f"q{i % 5}", "completion": "a", "reward": float(i % 2)}


SHAPES = {"openai": _openai, "w131": _w131, "prompt_completion": _prompt_completion}
ODD_PROMPTS = {
    "messages": [{"role": "user", "content": "qq"}],
    "object": {"role": "user", "content": "qq"},
    "number": 12,
    "flag": True,
    "float": 1e20,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("odd", sorted(ODD_PROMPTS))
@pytest.mark.parametrize("where", ["first", "late", "gz_first", "gz_late"])
def test_a_field_of_two_kinds_reads_as_the_full_read(tmp_path, monkeypatch, shape, odd, where):
    if "late" in where:  # the odd row past the head, in a later batch
        monkeypatch.setattr(_jsonl_engine, "JSONL_SCHEMA_HEAD_LINES", 4)
        monkeypatch.setattr(_jsonl_plain, "CHUNK_ROWS", 8)
    rows = [SHAPES[shape](i) for i in range(40)]
    at = 0 if "first" in where else 33
    rows[at] = {**rows[at], "prompt": ODD_PROMPTS[odd]}
    if shape == "prompt_completion" and odd == "messages":
        rows[at]["completion"] = [{"role": "assistant", "content": "a"}]
    _agrees(_write(tmp_path, rows, "r.jsonl.gz" if where.startswith("gz") else "r.jsonl"))


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("where", ["first", "late"])
def test_an_extra_field_of_two_kinds_reads_as_the_full_read(tmp_path, monkeypatch, shape, where):
    if where == "late":
        monkeypatch.setattr(_jsonl_engine, "JSONL_SCHEMA_HEAD_LINES", 4)
        monkeypatch.setattr(_jsonl_plain, "CHUNK_ROWS", 8)
    rows = [{**SHAPES[shape](i), "scenario_id": f"t{i % 4}", "arm": "a"} for i in range(40)]
    at = 0 if where == "first" else 33
    for odd in ([1, 2], {"b": 1.0}, True, 1e20):
        rows[at] = {**rows[at], "arm": odd}
        path = _write(tmp_path, rows)
        full = table.frame(path)
        narrow = table.frame(path, columns=["reward", "arm"])
        assert_frame_equal(narrow, full.select(narrow.columns))


@pytest.mark.parametrize("shape", ["openai", "openai_nokey"])
@pytest.mark.parametrize("where", ["first", "late"])
def test_a_content_field_some_rows_lack_is_filled_from_the_conversation(tmp_path, monkeypatch, shape, where):
    # the full read fills a missing prompt / system_prompt / final_text from the conversation
    if where == "late":
        monkeypatch.setattr(_jsonl_engine, "JSONL_SCHEMA_HEAD_LINES", 4)
        monkeypatch.setattr(_jsonl_plain, "CHUNK_ROWS", 8)
    rows = []
    for i in range(40):
        row = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": f"q{i % 5}"},
                            {"role": "assistant", "content": "a"}],
               "prompt": f"q{i % 5}", "system_prompt": "X", "final_text": "a", "reward": float(i % 2)}
        if shape == "openai":
            row["scenario_id"] = f"t{i % 5}"
        rows.append(row)
    lacking = [0, 7] if where == "first" else [33, 37]
    for name, at in (("prompt", lacking[0]), ("system_prompt", lacking[1]), ("final_text", lacking[1])):
        rows[at] = {k: v for k, v in rows[at].items() if k != name}
    for gz in ("r.jsonl", "r.jsonl.gz"):
        full = _agrees(_write(tmp_path, rows, gz))
        assert full["prompt"].null_count() == 0 and full["system_prompt"][lacking[1]] == "S"


@pytest.mark.parametrize("keyed", [True, False])
def test_a_table_in_memory_is_filled_as_its_file_and_its_rows_are(tmp_path, keyed):
    # one rule for every source: a null prompt, reply or system prompt beside a conversation is the
    # conversation's, so a DataFrame, its rows as dicts and its Parquet file give the same table and
    # the same steps (before, the DataFrame kept the nulls: without scenario_id it raised, and sft
    # took a null reply beside an assistant turn for junk)
    rows = []
    for i in range(48):
        row = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": f"q{i // 8}"},
                            {"role": "assistant", "content": f"answer {i}"}],
               "prompt": None if i % 3 == 0 else f"q{i // 8}", "final_text": None if i % 4 == 0 else f"answer {i}",
               "system_prompt": None if i % 5 == 0 else "S", "reward": float(i % 2 or i % 8 == 0)}
        if keyed:
            row["scenario_id"] = f"t{i // 8}"
        rows.append(row)
    df = pl.DataFrame(rows)
    path = tmp_path / "r.parquet"
    df.write_parquet(path)
    from_file = table.frame(path)
    assert from_file["prompt"].null_count() == from_file["final_text"].null_count() == 0
    assert from_file["system_prompt"].null_count() == 0
    assert_frame_equal(table.frame(df), from_file)
    assert_frame_equal(table.frame(rows), from_file)
    same(wai.pass_at(df).model_dump(mode="json"), wai.pass_at(path).model_dump(mode="json"))
    for mode in ("sft", "rl"):
        assert_frame_equal(wai.select(df, mode=mode).df, wai.select(path, mode=mode).df)


# ---- system_prompt "" -------------------------------------------------------------------------------


def _system_rows(system):
    rows = []
    for i in range(6):
        row = {"scenario_id": f"t{i % 3}", "reward": float(i % 2),
               "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": f"q{i}"},
                            {"role": "assistant", "content": "a"}]}
        value = system(i)
        if value is not None:
            row["system_prompt"] = value
        rows.append(row)
    return rows


@pytest.mark.parametrize("case", ["empty", "some_rows", "differs", "empty_some_rows"])
@pytest.mark.parametrize("suffix", ["jsonl", "jsonl.gz", "parquet"])
def test_system_prompt_reads_as_given(tmp_path, case, suffix):
    system = {"empty": lambda i: "", "some_rows": lambda i: "X" if i % 2 else None,
              "differs": lambda i: "OTHER", "empty_some_rows": lambda i: "" if i % 2 else None}[case]
    rows = _system_rows(system)
    path = _write(tmp_path, rows, "r.jsonl" if suffix == "parquet" else f"r.{suffix}")
    if suffix == "parquet":
        parquet = tmp_path / "r.parquet"
        pl.DataFrame(rows).write_parquet(parquet)
        assert_frame_equal(table.frame(parquet), table.frame(path), check_column_order=False)
        path = parquet
    full = _agrees(path)
    expect = [system(i) if system(i) is not None else "S" for i in range(6)]
    assert full["system_prompt"].to_list() == expect


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_an_empty_system_prompt_opens_no_conversation_turn(tmp_path, suffix):
    rows = [{"scenario_id": f"t{i}", "prompt": f"q{i}", "system_prompt": "", "final_text": "a", "reward": 1.0}
            for i in range(4)]
    path = _write(tmp_path, rows)
    if suffix == "parquet":
        pl.DataFrame(rows).write_parquet(path := tmp_path / "r.parquet")
    full = _agrees(path)
    assert full["system_prompt"].to_list() == [""] * 4
    assert [m["role"] for m in full["messages"][0]] == ["user", "assistant"]


# ---- Parquet files of whileai 0.131 rows -----------------------------------------------------------


def _w131_rows(n=24):
    return [{"scenario_id": f"t{i // 3}", "rollout_index": i % 3, "prompt": f"question {i // 3}",
             "system_prompt": "Be careful." if i % 4 else "",
             "steps": [{"tool": "lookup", "arguments": {"order_id": f"o{i}"}, "result": {"status": "ok", "n": 2}},
                       {"user": "and then?"},
                       {"tool": "refund", "arguments": {"order_id": f"o{i}"}, "result": {"status": "done", "n": 1}, "text": "refunding"}]
             if i % 5 else [{"tool": "lookup", "arguments": {"order_id": f"o{i}"}, "result": {"status": "missing", "n": 0}}],
             "final_text": f"answer {i}", "reward": float(i % 3 != 1),
             "markers": {"no_hedging": 1.0, "honest_claims": float(i % 2)}, "model_version": "m1"}
            for i in range(n)]


def _parquet_writers():
    writers = {"polars": lambda rows, path: pl.DataFrame(rows).write_parquet(path)}
    try:
        import pandas as pd
        import pyarrow  # noqa: F401
    except ImportError:
        return writers
    writers["pandas"] = lambda rows, path: pd.DataFrame(rows).to_parquet(path)
    return writers


@pytest.mark.parametrize("writer", ["polars", "pandas"])
def test_a_parquet_file_of_0131_rows_reads_as_their_jsonl(tmp_path, writer):
    if writer not in _parquet_writers():
        pytest.importorskip("pandas", reason="pandas writes the second kind of Parquet file")
    rows = _w131_rows()
    jsonl = _write(tmp_path, rows)
    parquet = tmp_path / "r.parquet"
    _parquet_writers()[writer](rows, parquet)
    expect = table.frame(jsonl)
    assert [m["role"] for m in expect["messages"][1]] == ["system", "user", "assistant", "tool", "user",
                                                          "assistant", "tool", "assistant"]
    got = table.frame(parquet)
    assert_frame_equal(got, expect.select(got.columns))
    assert set(got.columns) == set(expect.columns)
    folder = tmp_path / "runs"
    folder.mkdir()
    _parquet_writers()[writer](rows[:12], folder / "a.parquet")
    _parquet_writers()[writer](rows[12:], folder / "b.parquet")
    assert_frame_equal(table.frame(folder), got)
    for columns in COLUMN_SETS + [["steps"], ["reward", "final_text"]]:
        narrow = table.frame(parquet, columns=columns)
        assert_frame_equal(narrow, table.frame(jsonl, columns=columns).select(narrow.columns))
        assert_frame_equal(narrow, got.select(narrow.columns))
        lazy = _lazy.lazy_frame(parquet, columns)
        if lazy is not None:
            assert_frame_equal(lazy.collect(), narrow.select(lazy.collect_schema().names()))
    _agrees(parquet)


@pytest.mark.parametrize("writer", ["polars", "pandas"])
def test_steps_in_parquet_give_the_jsonl_select_export_and_pass_at(tmp_path, writer):
    if writer not in _parquet_writers():
        pytest.importorskip("pandas", reason="pandas writes the second kind of Parquet file")
    rows = _w131_rows(60)
    jsonl = _write(tmp_path, rows)
    parquet = tmp_path / "r.parquet"
    _parquet_writers()[writer](rows, parquet)
    same(wai.pass_at(parquet).to_dict(), wai.pass_at(jsonl).to_dict())
    a, b = wai.select(parquet, mode="sft"), wai.select(jsonl, mode="sft")
    assert_frame_equal(a.df, b.df)
    for fmt in ("openai", "trl"):
        out_a, out_b = tmp_path / f"a_{fmt}.jsonl", tmp_path / f"b_{fmt}.jsonl"
        wai.export(parquet, out_a, format=fmt)
        wai.export(jsonl, out_b, format=fmt)
        assert out_a.read_text(encoding="utf-8") == out_b.read_text(encoding="utf-8")
        assert out_a.stat().st_size > 0
