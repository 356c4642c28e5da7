"""``wai datasets``: save, list, show, diff against the store the autouse fixture points at."""

from __future__ import annotations

import json

import whileai as wai_lib
from whileai import table
from whileai.testing import rollout_table


def _files(tmp_path):
    df = rollout_table(30, 4, seed=2, messages=False)
    a, b = tmp_path / "a.parquet", tmp_path / "b.jsonl"
    table.write(df, a)
    table.write(df.head(60), b)
    return a, b


def test_save_list_show_diff(wai, tmp_path):
    a, b = _files(tmp_path)
    res = wai("datasets", "save", a, "refunds")
    assert res.code == 0 and res.out.startswith("dataset refunds@1 (train): 120 rows, 30 tasks, k=4")
    res = wai("datasets", "save", b, "refunds", "--json")
    saved = json.loads(res.out)
    assert saved["id"] == "refunds@2" and saved["parent"] == "refunds@1"
    listing = wai("datasets", "list")
    assert "refunds@2" in listing.out and "refunds@1" in listing.out
    shown = wai("datasets", "show", "refunds@1", "--json")
    assert json.loads(shown.out)["n_rows"] == 120
    diff = wai("datasets", "diff", "refunds@1", "refunds@2")
    assert diff.code == 0 and "15 shared, 15 only in refunds@1" in diff.out
    assert [d.id for d in wai_lib.store.open().datasets()] == ["refunds@2", "refunds@1"]


def test_save_from_stdin_and_with_a_holdout(wai, tmp_path):
    lines = "\n".join(json.dumps({"scenario_id": f"t{i}", "reward": float(i % 2)}) for i in range(40))
    res = wai("datasets", "save", "-", "stdin-set", "--purpose", "eval", stdin=lines)
    assert res.code == 0 and "stdin-set@1 (eval): 40 rows" in res.out
    a, _ = _files(tmp_path)
    res = wai("datasets", "save", a, "loop", "--holdout", "0.3", "--json")
    data = json.loads(res.out)
    assert data["train"]["id"] == "loop@1" and data["holdout"]["id"] == "loop-holdout@1"
    assert data["train"]["n_tasks"] + data["holdout"]["n_tasks"] == 30


def test_explicit_store_path(wai, tmp_path):
    a, _ = _files(tmp_path)
    other = tmp_path / "elsewhere" / "s.duckdb"
    assert wai("datasets", "save", a, "x", "--store", other).code == 0
    assert "x@1" in wai("datasets", "list", "--store", other).out
    assert "no datasets" in wai("datasets", "list").out


def test_errors_are_one_line(wai, tmp_path):
    res = wai("datasets", "show", "nope")
    assert res.code == 2 and res.err.startswith("error: dataset must name a dataset in the store, got 'nope'")
    a, _ = _files(tmp_path)
    res = wai("datasets", "save", a, "bad name")
    assert res.code == 2 and "dataset name must be" in res.err
    res = wai("datasets", "save", a, "ok", "--holdout", "2")
    assert res.code == 2 and "holdout must be a share of tasks" in res.err
