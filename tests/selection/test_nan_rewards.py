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


@pytest.mark.parametrize("source", ["rows", "parquet"])
def test_rl_reads_a_nan_reward_as_ungraded(tmp_path, source):
    rows: object = _rows()
    if source == "parquet":
        rows = tmp_path / "r.parquet"
        table.write(table.frame(_rows()), rows)
    s = wai.select(rows, mode="rl")
    t0 = s.df.filter(s.df["scenario_id"] == "t0")
    assert t0["calibration"][0]["pass_rate"] == pytest.approx(1 / 3) and t0["calibration"][0]["n"] == 3
    assert t0["reward"].is_nan().sum() == 0
    assert any("reward NaN" in w for w in s.report.warnings)


@pytest.mark.parametrize("source", ["rows", "parquet"])
def test_sft_never_keeps_a_nan_reward(tmp_path, source):
    rows: object = _rows()
    if source == "parquet":
        rows = tmp_path / "r.parquet"
        table.write(table.frame(_rows()), rows)
    s = wai.select(rows, mode="sft", min_reward=0.0, select="top_k_overall", k=12)
    assert s.report.n_ungraded == 1 and s.df.height == 11
    assert s.df["reward"].is_nan().sum() == 0
    assert any("reward NaN" in w for w in s.report.warnings)
