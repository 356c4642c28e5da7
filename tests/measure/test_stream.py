"""A Parquet run read by the streaming engine gives the same report, bit for bit, as the eager read.

Each case writes seeded tables to Parquet and runs compare, compare_runs, delta_report and
holdout_size twice:
on the paths (the streaming engine where the sums are exact in any order) and on the same rows
handed over as DataFrames (the eager read), and compares the reports as JSON text.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import whileai as wai
from whileai.errors import SchemaError
from whileai.measure._stream import stream_side
from whileai.testing import rollout_table


def _json(report: Any) -> str:
    return json.dumps(report.to_dict(), sort_keys=True, default=str)


def _reports(a: Any, b: Any, **kw: Any) -> list[str]:
    """compare (delta_report's other name), compare_runs, delta_report with options, holdout_size."""
    return [_json(wai.compare(a, b)), _json(wai.compare_runs(a, b, **kw.get("compare", {}))),
            _json(wai.delta_report(a, b, **kw.get("delta", {}))), _json(wai.holdout_size(0.05, before=a, after=b))]


def _write(df: pl.DataFrame, path: Path) -> str:
    df.write_parquet(path)
    return str(path)


def _arms(seed: int, *, partial: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two seeded arms with ungraded rows, tasks in one arm only, two policies and markers."""
    rng = np.random.default_rng(seed)
    a = rollout_table(40, 4, seed=seed, partial=partial, messages=False, policy_version="v1")
    b = rollout_table(40, 4, seed=seed + 100, shift=0.15, partial=partial, messages=False, policy_version="v2")
    b = pl.concat([b.filter(~pl.col("scenario_id").is_in([f"sc-{i:08d}" for i in range(5)])),
                   rollout_table(3, 4, seed=seed + 7, messages=False, task_prefix="new-", policy_version="v2")],
                  how="diagonal_relaxed")
    out = []
    for df in (a, b):
        ungraded = rng.random(df.height) < 0.1
        df = df.with_columns(pl.when(pl.Series(ungraded)).then(None).otherwise(pl.col("reward")).alias("reward"))
        marker = pl.col("markers").struct.field("honest_claims")
        nulls = pl.Series(rng.random(df.height) < 0.2)
        out.append(df.with_columns(
            pl.col("markers").struct.with_fields(pl.when(nulls).then(None).otherwise(marker).alias("honest_claims")),
            pl.when(pl.Series(rng.random(df.height) < 0.5)).then(pl.lit("v2-beta")).otherwise(pl.col("policy_version"))
            .alias("policy_version") if df is b else pl.col("policy_version"),
            pl.Series("truncated", rng.random(df.height) < 0.05),
            pl.Series("system_prompt", np.asarray(["be brief", "be kind"])[rng.integers(0, 2, df.height)]),
        ))
    return out[0], out[1]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("partial", [False, True])
def test_streamed_reports_match_the_eager_read(tmp_path: Path, seed: int, partial: bool) -> None:
    a, b = _arms(seed, partial=partial)
    pa_, pb = _write(a, tmp_path / "a.parquet"), _write(b, tmp_path / "b.parquet")
    assert stream_side(pa_) is not None and stream_side(pb) is not None  # the streaming engine is what is tested
    opts = {"compare": {"metric": "marker:honest_claims"}, "delta": {"must_not_regress": ["no_hedging"]}}
    assert _reports(pa_, pb) == _reports(a, b)
    assert _reports(pa_, pb, **opts) == _reports(a, b, **opts)
    assert _reports(pa_, b) == _reports(a, b)  # one arm streamed, the other read eagerly


def test_values_are_the_task_means(tmp_path: Path) -> None:
    a, _ = _arms(5)
    side = stream_side(_write(a, tmp_path / "a.parquet"))
    assert side is not None
    got = {r["task_key"]: r["pass_at_1"] for r in side.values.iter_rows(named=True)}
    for task, rewards in a.group_by("scenario_id").agg("reward").iter_rows():
        graded = [r for r in rewards if r is not None]
        want = sum(graded) / len(graded) if graded else None
        assert got[task] == want
    assert side.n_rows == a.height and side.n_graded == a["reward"].count()


def test_duplicates_nan_and_eval_runs_warn_and_band_alike(tmp_path: Path) -> None:
    runs = [rollout_table(30, 4, seed=9, eval_run=r, replica=r, messages=False, policy_version=p)
            for p in ("v1", "v2") for r in range(3)]
    a = pl.concat(runs[:3], how="diagonal_relaxed")
    b = pl.concat(runs[3:], how="diagonal_relaxed")
    a = pl.concat([a, a.head(7)])  # rows repeated within one eval run
    b = b.with_columns(pl.when(pl.int_range(pl.len()) % 17 == 0).then(float("nan")).otherwise(pl.col("reward"))
                       .alias("reward"))
    pa_, pb = _write(a, tmp_path / "a.parquet"), _write(b, tmp_path / "b.parquet")
    side_a, side_b = stream_side(pa_), stream_side(pb)
    assert side_a is not None and side_b is not None and side_a.run_label == "eval_run"
    assert "7 row(s) repeat" in side_a.warnings[0] and "reward NaN" in side_b.warnings[0]
    streamed, eager = _reports(pa_, pb), _reports(a, b)
    assert streamed == eager
    assert json.loads(streamed[2])["run_std_source"] == "rows"


def test_aliases_casts_and_folders_stream(tmp_path: Path) -> None:
    a, b = _arms(4)
    a = a.rename({"scenario_id": "task_id"}).with_columns(pl.col("rollout_index").cast(pl.Int32),
                                                          pl.col("markers").cast(pl.Struct({"no_hedging": pl.Int8,
                                                                                            "honest_claims": pl.Float32,
                                                                                            "argument_grounding": pl.Boolean})))
    folder = tmp_path / "b"
    folder.mkdir()
    b.head(60).write_parquet(folder / "part-0.parquet")
    b.slice(60).write_parquet(folder / "part-1.parquet")
    pa_ = _write(a, tmp_path / "a.parquet")
    assert stream_side(pa_) is not None and stream_side(str(folder)) is not None
    assert _reports(pa_, str(folder)) == _reports(a, b)


@pytest.mark.parametrize("change", ["tenths", "nan_marker", "null_keys", "strings"])
def test_other_inputs_are_read_eagerly_with_the_same_numbers(tmp_path: Path, change: str) -> None:
    a, b = _arms(6)
    if change == "tenths":  # 0.1 is no multiple of 2**-24: a streamed sum could move in its last bit
        a = a.with_columns((pl.col("reward") * 0.7 + 0.1).round(1))
    elif change == "nan_marker":  # NaN in a min, a max or a mean: left to the one engine that always read it
        a = a.with_columns(pl.col("markers").struct.with_fields(
            pl.when(pl.int_range(pl.len()) == 5).then(float("nan")).otherwise(pl.field("no_hedging")).alias("no_hedging")))
    elif change == "null_keys":  # those rows are keyed by a prompt hash, which only the eager read gives
        a = a.with_columns(pl.when(pl.int_range(pl.len()) < 8).then(None).otherwise(pl.col("scenario_id")).alias("scenario_id"))
    else:  # rewards held as text: the eager read converts them
        a = a.with_columns(pl.col("reward").cast(pl.String))
    pa_ = _write(a, tmp_path / "a.parquet")
    assert stream_side(pa_) is None
    if change != "tenths":
        assert _reports(pa_, b) == _reports(wai.table.frame(pa_), b)
        return
    # Sums of tenths depend on their order, and the in-memory group-by's order is its own from call
    # to call (a last bit moves), which is why they are not streamed: here only to within rounding.
    got, want = wai.delta_report(pa_, b), wai.delta_report(wai.table.frame(pa_), b)
    assert got.headline == want.headline and got.n_paired_tasks == want.n_paired_tasks
    assert got.target_delta == pytest.approx(want.target_delta, rel=1e-12, abs=1e-15)


def test_a_bad_reward_raises_the_eager_error(tmp_path: Path) -> None:
    a, b = _arms(7)
    a = a.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(4.0).otherwise(pl.col("reward")).alias("reward"))
    pa_ = _write(a, tmp_path / "a.parquet")
    with pytest.raises(SchemaError, match=r"reward must be in \[0, 1\], got 4.0 on 1 row"):
        wai.compare(pa_, b)
    with pytest.raises(SchemaError, match=r"reward must be in \[0, 1\]"):
        wai.delta_report(pa_, b)


def test_a_run_with_no_reward_column_reads_as_ungraded(tmp_path: Path) -> None:
    a, b = _arms(8)
    pa_ = _write(a.drop("reward"), tmp_path / "a.parquet")
    side = stream_side(pa_)
    assert side is not None and side.n_graded == 0
    streamed, eager = wai.delta_report(pa_, b), wai.delta_report(a.drop("reward"), b)
    assert _json(streamed) == _json(eager) and streamed.not_comparable == ["ungraded"]
    assert math.isnan(wai.compare_runs(pa_, b).delta)
