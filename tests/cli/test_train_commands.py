"""``wai select``, ``wai export``, ``wai gate``, ``wai judge-trust``: each prints its library call's report."""

from __future__ import annotations

import json

import polars as pl
import pytest

from whileai import optimize, table
from whileai.exporters import export_dataset
from whileai.grade import attach_labels, judge_trust
from whileai.selection import publish_gate
from whileai.testing import rollout_table


@pytest.fixture
def rows_file(tmp_path):
    path = tmp_path / "rows.parquet"
    table.write(rollout_table(40, 8, seed=3, pass_rates=[0.5] * 40, messages=True), path)
    return path


def test_select_writes_what_optimize_keeps(wai, rows_file, tmp_path):
    out = tmp_path / "sel.jsonl"
    res = wai("select", rows_file, "--mode", "rl", "-o", out, "--target", "64")
    assert res.code == 0
    expected = optimize(table.frame(rows_file), mode="rl", target=64)
    assert res.out.strip() == str(expected.report).strip()
    got = table.frame(out)
    assert got["rollout_id"].to_list() == expected.df["rollout_id"].to_list()
    res = wai("select", rows_file, "--mode", "sft", "-o", tmp_path / "sft.parquet", "--json")
    assert res.code == 0 and json.loads(res.out)["n_selected"] == pl.read_parquet(tmp_path / "sft.parquet").height
    res = wai("select", rows_file, "--mode", "rl", "-o", tmp_path / "all.jsonl", "--target", "0", "--json")
    assert json.loads(res.out)["n_selected"] == optimize(table.frame(rows_file), mode="rl", target=None).report.n_selected


def test_select_refuses_ungraded_rows(wai, tmp_path):
    path = tmp_path / "ungraded.jsonl"
    table.write(rollout_table(10, 4, seed=1, messages=False).with_columns(pl.lit(None, pl.Float64).alias("reward")),
                path)
    res = wai("select", path, "--mode", "rl", "-o", tmp_path / "x.jsonl")
    assert res.code == 2 and res.err.startswith("error: ") and res.err.count("\n") == 1
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("extra", [[], ["--format", "trl", "--mask-mode", "final", "--unroll"]])
def test_export_matches_the_library(wai, rows_file, tmp_path, extra):
    out, ref = tmp_path / "train.jsonl", tmp_path / "ref.jsonl"
    res = wai("export", rows_file, "-o", out, *extra)
    assert res.code == 0
    kwargs = {"format": "trl", "mask_mode": "final", "unroll": True} if extra else {}
    report = export_dataset(str(rows_file), str(ref), **kwargs)
    assert res.out.strip() == str(report).strip().replace(str(ref), str(out))
    assert out.read_text() == ref.read_text()


def test_gate_exit_status(wai, rows_file, tmp_path):
    res = wai("gate", rows_file)
    assert res.code == 0 and res.out.strip() == str(publish_gate(table.frame(rows_file), strict=False)).strip()
    ungraded = tmp_path / "ungraded.jsonl"
    table.write(rollout_table(10, 4, seed=1, messages=False).with_columns(pl.lit(None, pl.Float64).alias("reward")),
                ungraded)
    res = wai("gate", ungraded, "--json")
    assert res.code == 1 and json.loads(res.out)["ok"] is False
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for res in (wai("gate", empty), wai("gate", "-", stdin="")):  # exit 0 before: "the gate checked nothing"
        assert res.code == 2 and res.out == "" and "must hold the rows to publish, got no rows" in res.err


def _labels(df, path, flip=0):
    records = [{"key": r["rollout_id"], "label": int(r["reward"] >= 0.5) ^ (i < flip)}
               for i, r in enumerate(table.rows(df.head(80)))]
    path.write_text("\n".join(json.dumps(r) for r in records))
    return path


def test_judge_trust_exit_status(wai, rows_file, tmp_path):
    df = table.frame(rows_file)
    good = _labels(df, tmp_path / "good.jsonl")
    res = wai("judge-trust", rows_file, "--labels", good)
    assert res.code == 0
    labeled, _ = attach_labels(df, str(good))
    assert res.out.strip() == str(judge_trust(labeled)).strip()
    bad = _labels(df, tmp_path / "bad.jsonl", flip=40)
    res = wai("judge-trust", rows_file, "--labels", bad, "--json")
    assert res.code == 1 and json.loads(res.out)["ok"] is False
