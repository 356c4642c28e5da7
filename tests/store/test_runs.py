"""Runs: recorded with pass rates and intervals from measure.pass_at, setup read off the rows, diffs."""

from __future__ import annotations

import json

import polars as pl
import pytest

import whileai as wai
from whileai import table
from whileai.errors import ArgumentError
from whileai.measure import pass_at
from whileai.store import harness_fingerprint
from whileai.testing import rollout_table


@pytest.fixture
def store():
    return wai.store.open()


def test_record_run_numbers_come_from_pass_at(store):
    df = rollout_table(24, 4, seed=5)
    run = store.record_run(df, name="baseline", seed=5)
    expected = pass_at(df, seed=5)
    assert run.pass_at_1 == pytest.approx(expected.pass_at_1)
    assert run.ci95 == pytest.approx(expected.ci95)
    assert run.metrics["pass_pow_k"] == pytest.approx(expected.pass_pow_k)
    assert (run.n_rows, run.n_tasks, run.k, run.n_graded) == (96, 24, 4, 96)
    assert run.policy == "scripted@v1" and run.seed == 5 and run.name == "baseline"
    # markers: each one's mean over tasks with its interval, from measure.marker_summary
    from whileai.measure import marker_summary

    expected_marker = marker_summary(df, seed=5)["honest_claims"]
    assert run.markers["honest_claims"]["mean"] == pytest.approx(df["markers"].struct.field("honest_claims").mean())
    assert run.markers["honest_claims"]["ci95"] == pytest.approx(list(expected_marker.ci95))
    assert store.run("baseline").id == run.id == store.run(run.id[:6]).id
    assert [r.id for r in store.runs()] == [run.id]
    assert run.id in str(store.runs()) and "pass@1" in str(run)


def test_setup_is_read_off_the_rows(store):
    rows = [{"scenario_id": f"t{i}", "reward": float(i % 2), "judge_name": "exact", "model_version": "m1",
             "system_prompt": "Be brief.", "policy_version": "p@2"} for i in range(8)]
    run = store.record_run(rows)
    assert (run.policy, run.judge) == ("p@2", "exact")
    assert run.harness == harness_fingerprint(rows) and run.harness.startswith("h-")
    edited = [{**r, "system_prompt": "Be very brief."} for r in rows]
    assert harness_fingerprint(edited) != run.harness
    assert harness_fingerprint([{"scenario_id": "t", "reward": 1.0}]) is None


def test_runs_with_saved_rows_diff_with_a_paired_verdict(store):
    before = rollout_table(30, 4, seed=1, policy_version="v1")
    after = rollout_table(30, 4, seed=1, shift=0.3, policy_version="v2")
    a = store.record_run(before, name="v1", save_as="eval-v1")
    b = store.record_run(after, name="v2", save_as="eval-v2", baseline="v1")
    assert a.dataset == "eval-v1@1" and store.dataset("eval-v1").purpose == "eval"
    diff = store.diff_runs("v1", "v2")
    assert diff.setup["policy"] == ("v1", "v2")
    assert diff.metrics["pass_at_1"]["delta"] == pytest.approx(b.pass_at_1 - a.pass_at_1)
    from whileai.measure import delta_report

    expected = delta_report(store.load_dataset("eval-v1"), store.load_dataset("eval-v2"))
    assert diff.verdict == expected["headline_verdict"] == b.verdict
    assert b.baseline == a.id
    assert json.loads(diff.to_json())["b"] == b.id


def test_diff_without_rows_says_so(store):
    store.record_run(rollout_table(6, 2, seed=1), name="x")
    store.record_run(rollout_table(6, 2, seed=2), name="y")
    diff = store.diff_runs("x", "y")
    assert diff.verdict is None and any("no paired verdict" in w for w in diff.warnings)


def test_diff_of_a_run_with_itself_says_so(store):
    """`wai runs diff bot bot` compared a run with itself and read no_change_detected, silently."""
    store.record_run(rollout_table(6, 2, seed=1), name="x")
    diff = store.diff_runs("x", "x")
    assert any("the same run" in w for w in diff.warnings)
    store.record_run(rollout_table(6, 2, seed=2), name="y")
    assert not any("the same run" in w for w in store.diff_runs("x", "y").warnings)


def test_eval_set_coverage_warning(store):
    df = rollout_table(10, 2, seed=1, messages=False)
    store.pin_eval_set(df, "core")
    run = store.record_run(df.filter(pl.col("scenario_id") != df["scenario_id"][0]), eval_set="core")
    assert run.eval_set == "core@1"
    assert any("covers 9 of the 10 tasks pinned in core@1" in w for w in run.warnings)


def test_record_run_from_a_dataset(store):
    df = rollout_table(8, 2, seed=1, messages=False)
    store.save_dataset(df, "ds")
    run = store.record_run(dataset="ds")
    assert run.dataset == "ds@1" and run.n_rows == 16


def test_record_run_from_a_pass_at_report(store):
    report = pass_at(rollout_table(12, 4, seed=3), seed=3)
    run = store.record_run(report=report, name="from-report", seed=3, policy="p1")
    assert run.pass_at_1 == pytest.approx(report.pass_at_1) and run.ci95 == pytest.approx(report.ci95)
    assert (run.n_rows, run.n_tasks, run.k, run.policy, run.markers) == (48, 12, 4, "p1", {})
    assert store.record_run(report=report).policy == report.config["policy_version"] == "scripted@v1"


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((), {}, "exactly one of rows, dataset= or report="),
    (([{"scenario_id": "t", "reward": 1}],), {"dataset": "ds"}, "exactly one of rows, dataset= or report="),
    (([{"scenario_id": "t", "reward": 1}],), {"seed": "1"}, "seed must be an int"),
    ((), {"report": {"pass_at_1": 0.5}}, "report must be a pass_at report"),
    ((), {"dataset": "ds", "save_as": "x"}, "save_as= saves the rows given"),
    (([{"scenario_id": "t", "reward": 1}],), {"name": "a b"}, "run name must be"),
    (([{"scenario_id": "t", "reward": 1}],), {"baseline": "nope"}, "run must name a recorded run"),
])
def test_bad_arguments(store, args, kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        store.record_run(*args, **kwargs)
    assert len(store.runs()) == 0


def test_describe_matches_pass_at_and_counts(tmp_path):
    df = rollout_table(20, 4, seed=2)
    path = tmp_path / "rows.parquet"
    table.write(df.with_columns(pl.when(pl.col("rollout_index") == 0).then(None).otherwise(pl.col("reward"))
                                .alias("reward")), path)
    summary = wai.store.describe(path)
    expected = pass_at(table.frame(path))
    assert (summary.n_rows, summary.n_tasks, summary.k, summary.k_min, summary.n_graded) == (80, 20, 4, 4, 60)
    assert summary.graded_share == pytest.approx(0.75)
    assert summary.pass_at_1 == pytest.approx(expected.pass_at_1) and summary.ci95 == pytest.approx(expected.ci95)
    assert set(summary.columns) == set(df.columns) and summary.columns["messages"] == "list[struct]"
    assert summary.markers["no_hedging"]["n"] == 80
    assert summary.markers["no_hedging"]["mean"] == pytest.approx(df["markers"].struct.field("no_hedging").mean())
    text = str(summary)
    assert "80 rows, 20 tasks, k=4" in text and "pass@1" in text and "markers" in text
    # the same from JSONL, which is read whole
    jsonl = tmp_path / "rows.jsonl"
    table.write(table.frame(path), jsonl)
    assert wai.store.describe(jsonl).pass_at_1 == pytest.approx(summary.pass_at_1)
