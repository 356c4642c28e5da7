"""Row dicts for judges: column-built rows equal table.rows, and lazy rows behave as dicts."""

from __future__ import annotations

import copy
import json
import pickle

import polars as pl
import pytest

from whileai import table
from whileai.grade._rows import LazyRow, iter_row_chunks, lazy_rows, row_dicts
from whileai.testing import rollout_table


@pytest.fixture(scope="module")
def varied():
    rows = [
        {"scenario_id": "s", "prompt": "p", "tools": [{"type": "function", "function": {"name": "f"}}],
         "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "image", "url": "x"}]},
                      {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
                      {"role": "tool", "content": "r", "name": "f"}, {"role": "assistant", "content": "done"}],
         "lineage": {"a": 1, "b": None}, "x": [1, None], "y": {"q": None, "z": 1}, "reward": None},
        {"scenario_id": "s2", "final_text": "hi", "x": None, "markers": {"m": 1}, "reward": 0.5},
        {"scenario_id": "s3", "messages": [], "judge_meta": {"k": [1, 2]}},
    ]
    return table.frame(rows)


def test_row_dicts_equal_table_rows(varied):
    assert row_dicts(varied) == table.rows(varied)
    df = table.frame(rollout_table(20, 3, seed=4, eval_run=1))
    assert row_dicts(df) == table.rows(df)


def test_lazy_rows_equal_table_rows(varied):
    assert lazy_rows(varied) == table.rows(varied)
    df = table.frame(rollout_table(20, 3, seed=4))
    assert [dict(r) for r in lazy_rows(df)] == table.rows(df)


def test_lazy_row_acts_as_a_dict(varied):
    want = table.rows(varied)[0]

    def fresh():
        return lazy_rows(varied)[0]

    assert isinstance(fresh(), dict)
    assert fresh()["messages"] == want["messages"]  # a heavy key loads on demand
    assert fresh().get("tools") == want["tools"]
    assert "messages" in fresh() and "nope" not in fresh()
    assert sorted(fresh()) == sorted(want) and len(fresh()) == len(want)
    assert dict(fresh().items()) == want
    assert json.loads(json.dumps(fresh())) == json.loads(json.dumps(want))
    assert {**fresh()} == want and dict(fresh()) == want
    assert pickle.loads(pickle.dumps(fresh())) == want
    deep = copy.deepcopy(fresh())
    assert type(deep) is dict and deep == want
    row = fresh()
    row["messages"] = "mine"  # a write wins over the lazy value
    assert row["messages"] == "mine"
    row = fresh()
    assert row.pop("tools") == want["tools"] and "tools" not in row
    with pytest.raises(KeyError):
        fresh()["nope"]
    assert repr(fresh()) == repr(dict(fresh()))
    assert fresh() != {}


def test_light_keys_do_not_load_heavy_columns():
    df = table.frame(rollout_table(3, 2, seed=0))
    rows = lazy_rows(df)
    assert rows[0]["final_text"]
    assert dict.__contains__(rows[0], "messages") is False  # not converted yet
    assert rows[0]["messages"]
    assert dict.__contains__(rows[0], "messages") is True


def test_chunks_cover_every_row():
    df = table.frame(rollout_table(10, 3, seed=0))
    chunks = list(iter_row_chunks(df, chunk_rows=7))
    assert [len(c) for c in chunks] == [7, 7, 7, 7, 2]
    assert [r for c in chunks for r in c] == table.rows(df)
    assert all(isinstance(r, LazyRow) for c in chunks for r in c)


def test_empty_and_no_columns():
    assert row_dicts(pl.DataFrame()) == []
    assert row_dicts(pl.DataFrame({"task_key": ["a"]})) == [{}]


def test_lazy_rows_read_only_what_is_asked():
    df = table.frame(rollout_table(3, 2, seed=0))
    rows = lazy_rows(df)
    assert rows[0]["final_text"] == table.rows(df)[0]["final_text"]
    assert not dict.__contains__(rows[0], "prompt")  # untouched columns are not filled
    assert rows[1].get("prompt") == table.rows(df)[1]["prompt"] and "rollout_id" in rows[1]
    assert not dict.__contains__(rows[1], "messages")  # get and in fill only their key
    assert rows[1].get("nope", 7) == 7 and "nope" not in rows[1]
    with pytest.raises(KeyError):
        rows[0]["fault_kind"] if rows[0].get("fault_kind") is None else rows[0]["nope"]
    assert json.loads(json.dumps(lazy_rows(df)[1])) == json.loads(json.dumps(table.rows(df)[1]))


def test_lazy_rows_when_every_column_has_a_null():
    df = table.frame([{"scenario_id": "a", "prompt": None, "x": 1}, {"scenario_id": None, "prompt": "q", "x": None}])
    assert lazy_rows(df) == table.rows(df)
