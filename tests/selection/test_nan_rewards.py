"""A NaN reward is ungraded in select as in pass_at: Polars orders NaN above every number, so it
passed every threshold (a task of 1 pass in 3 graded read 2 of 4), and JSON has no NaN to write."""

from __future__ import annotations

import pytest

import whileai as wai
from whileai import table


def _rows() -> list[dict]:
    rows = [{"scenario_id": f"t{t}", "rollout_index": i, "prompt": f"Ask {t}", "final_text": f"reply {t} {i}",
             "reward": [1.0, 0.0, 1.0, 0.0][i]} for t in range(3) for i in range(4)]
    rows[0]["reward"] = float("nan")
    return rows


def nan_source(tmp_path, source: str) -> object:
    """The rows above as given ("rows") or as a Parquet file written by Polars ("parquet")."""
    if source == "rows":
        return _rows()
    path = tmp_path / "r.parquet"
    table.write(table.frame(_rows()), path)
    return path


@pytest.mark.parametrize("source", ["rows", "parquet"])
def test_rl_reads_a_nan_reward_as_ungraded(tmp_path, source):
    rows = nan_source(tmp_path, source)
    s = wai.select(rows, mode="rl")
    t0 = s.df.filter(s.df["scenario_id"] == "t0")
    assert t0["calibration"][0]["pass_rate"] == pytest.approx(1 / 3) and t0["calibration"][0]["n"] == 3
    assert t0["reward"].is_nan().sum() == 0
    assert any("reward NaN" in w for w in s.report.warnings)


@pytest.mark.parametrize("source", ["rows", "parquet"])
def test_sft_never_keeps_a_nan_reward(tmp_path, source):
    rows = nan_source(tmp_path, source)
    s = wai.select(rows, mode="sft", min_reward=0.0, select="top_k_overall", k=12)
    assert s.report.n_ungraded == 1 and s.df.height == 11
    assert s.df["reward"].is_nan().sum() == 0
    assert any("reward NaN" in w for w in s.report.warnings)


def test_group_stats_and_task_stats_read_nan_as_ungraded():
    """task_stats is where every pass count comes from (group_stats, group_signal, curriculum,
    export on Ray): NaN counted as a pass there (an all-NaN task read n1=4 and retired as solved)."""
    import polars as pl

    from whileai.measure import group_stats, task_stats

    df = pl.DataFrame({"task_key": ["a"] * 4 + ["b"] * 4,
                       "reward": [1.0, 0.0, float("nan"), 0.0] + [float("nan")] * 4})
    assert task_stats(df).rows() == [("a", 4, 3, 1, 1.0, 1 / 3), ("b", 4, 0, 0, 0.0, None)]
    g = {r["task_key"]: r for r in group_stats(df).to_dicts()}
    assert (g["a"]["k"], g["a"]["n0"], g["a"]["n1"]) == (3, 2, 1) and g["a"]["reward_std"] == pytest.approx(0.4714045)
    assert (g["b"]["k"], g["b"]["n1"], g["b"]["reward_mean"]) == (0, 0, None)
