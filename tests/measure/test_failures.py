"""failure_table and pass_at(by=): numbers against a plain reference, flags at their stated level."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import whileai as wai
from whileai.errors import ArgumentError
from whileai.measure import failure_table, pass_at
from whileai.stats.score import cluster_wilson
from whileai.testing import rollout_table


def _rows(seed: int, *, tasks: int = 30, k: int = 4, planted: float = 0.0) -> pl.DataFrame:
    """Tasks with pass rates in (0.2, 0.7); rows in group 'd' pass ``planted`` less often."""
    g = np.random.default_rng(seed)
    p = g.uniform(0.2, 0.7, tasks)
    task = np.repeat(np.arange(tasks), k)
    group = g.choice(["a", "b", "c", "d"], size=task.size)
    rate = np.clip(p[task] - planted * (group == "d"), 0.0, 1.0)
    return pl.DataFrame({"task_id": [f"t{t:03d}" for t in task], "reward": (g.random(task.size) < rate).astype(float),
                         "group": group})


def test_numbers_match_a_plain_reference():
    df = _rows(1)
    r = failure_table(df, by="group")
    fails_all = int((df["reward"] < 0.5).sum())
    assert r.n_graded == df.height and r.n_failures == fails_all and r.n_tasks == 30
    for g in r.groups:
        sub = df.filter(pl.col("group") == g.group)
        assert g.rows == sub.height and g.tasks == sub["task_id"].n_unique()
        assert g.pass_rate == pytest.approx(float(sub["reward"].mean()))
        assert g.failure_share == pytest.approx(int((sub["reward"] < 0.5).sum()) / fails_all)
        per = sub.group_by("task_id").agg(pl.col("reward").sum().alias("x"), pl.len().alias("n"))
        lo, hi = cluster_wilson(per["x"].to_numpy(), per["n"].to_numpy())
        assert g.ci95 == pytest.approx((float(lo), float(hi)))
        rest = df.filter(pl.col("group") != g.group)
        assert g.rest_pass_rate == pytest.approx(float(rest["reward"].mean()))
    assert sum(g.failure_share for g in r.groups) == pytest.approx(1.0)
    assert [g.failures for g in r.groups] == sorted((g.failures for g in r.groups), reverse=True)


def test_flags_hold_family_wise_under_the_null_and_find_a_planted_group():
    runs = 150
    false = sum(bool(failure_table(_rows(s), by="group").below) for s in range(runs))
    assert false / runs <= 0.05 + 3 * (0.05 * 0.95 / runs) ** 0.5
    found = [failure_table(_rows(1000 + s, tasks=60, planted=0.3), by="group").below for s in range(20)]
    assert sum(b == ["group=d"] for b in found) >= 16


def test_several_dimensions_markers_tools_and_failure_class():
    df = rollout_table(30, 4, seed=2)
    df = df.with_columns(pl.when(pl.col("reward") < 0.5)
                         .then(pl.when(pl.col("rollout_index") % 2 == 0).then(pl.lit("wrong_tool")).otherwise(pl.lit("gave_up")))
                         .otherwise(None).alias("failure_class"))
    r = wai.failure_table(df, by=("fault_kind", "tier", "tools_used", "no_hedging"))
    assert r.by == ["fault_kind", "tier", "tools_used", "marker:no_hedging"]
    assert {g.dimension for g in r.groups} == set(r.by)
    assert sum(r.failure_classes.values()) == r.n_failures
    assert all(g.top_failure_class in ("wrong_tool", "gave_up") for g in r.groups if g.failures)
    assert all(set(g.markers) == {"no_hedging", "honest_claims", "argument_grounding"} for g in r.groups)
    text = str(r)
    assert "fault_kind" in text and "tools_used" in text and "failure_class:" in text and "clustered by task" in text
    data = json.loads(r.to_json())
    assert data["groups"][0]["dimension"] == "fault_kind" and data["interval_method"] == "cluster_wilson"


def test_pass_at_by_measures_each_group_on_its_own():
    df = rollout_table(20, 4, seed=3)
    r = pass_at(df, by="tier")
    assert r.by == ["tier"] and len(r.groups) == 4
    for name, g in r.groups.items():
        alone = pass_at(df.filter(pl.col("tier") == name.split("=", 1)[1]))
        assert g["pass_at_1"] == pytest.approx(alone.pass_at_1) and g["ci95"] == pytest.approx(alone.ci95)
    assert "tier=ordinary: pass@1" in str(r)
    assert "tier=ordinary" in r.to_dict()["groups"]


def test_bad_by_and_empty_input():
    with pytest.raises(ArgumentError, match="by must name a column or a marker, got 'nope'"):
        failure_table(rollout_table(4, 2, seed=0), by="nope")
    with pytest.raises(ArgumentError, match="by must be a column or marker name"):
        failure_table(rollout_table(4, 2, seed=0), by=3)  # type: ignore[arg-type]
    r = failure_table([{"task_id": "a", "reward": None, "fault_kind": "timeout"}])
    assert r.n_graded == 0 and "Grade first" in r.warnings[0]


def test_cli_failures(tmp_path):
    from click.testing import CliRunner

    from whileai.cli.main import cli

    path = tmp_path / "rows.jsonl"
    rollout_table(12, 4, seed=5).drop("messages").write_ndjson(path)
    res = CliRunner().invoke(cli, ["failures", str(path), "--by", "fault_kind", "--by", "tier"])
    assert res.exit_code == 0 and res.output.strip() == str(failure_table(str(path), by=("fault_kind", "tier"))).strip()
    res = CliRunner().invoke(cli, ["failures", str(path), "--json"])
    assert json.loads(res.output)["by"] == ["fault_kind"]
