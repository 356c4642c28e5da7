"""group_stats and group_signal against numpy on generated tables."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from whileai import table
from whileai.measure import group_stats
from whileai.selection import group_signal
from whileai.testing import rollout_table


def test_group_stats_match_numpy_per_task():
    df = table.frame(rollout_table(40, 6, seed=8, partial=True))
    df = df.with_columns(pl.when(pl.int_range(pl.len()) % 7 == 3).then(None).otherwise(pl.col("reward")).alias("reward"))
    stats = group_stats(df)
    assert stats.columns == ["task_key", "k", "n0", "n1", "reward_mean", "reward_std"]
    assert stats["task_key"].to_list() == df["task_key"].unique(maintain_order=True).to_list()
    for key, k, n0, n1, mean, std in stats.iter_rows():
        r = df.filter(pl.col("task_key") == key)["reward"].drop_nulls().to_numpy()
        assert k == r.size and n1 == int((r >= 0.5).sum()) and n0 == int((r < 0.5).sum())
        assert mean == pytest.approx(r.mean()) and std == pytest.approx(r.std(ddof=0))


def test_group_stats_on_ungraded_rows_gives_zero_counts_and_nulls():
    stats = group_stats([{"scenario_id": "a", "prompt": "x"}, {"scenario_id": "a", "prompt": "y"}])
    assert stats.row(0) == ("a", 0, 0, 0, None, None)


def test_group_signal_counts_against_a_plain_count():
    df = rollout_table(300, 5, seed=2)
    df = pl.concat([df, rollout_table(7, 1, seed=3, task_prefix="single-")])
    sig = group_signal(df)
    per = df.group_by("scenario_id").agg(pl.len().alias("n"), (pl.col("reward") >= 0.5).sum().alias("c"))
    n, c = per["n"].to_numpy(), per["c"].to_numpy()
    multi = n >= 2
    mixed = multi & (c > 0) & (c < n)
    p = c / n
    assert sig.n_groups == 307 and sig.n_single == 7
    assert sig.n_mixed == int(mixed.sum())
    assert sig.n_all_zero == int((multi & (c == 0)).sum()) and sig.n_all_one == int((multi & (c == n)).sum())
    assert sig.n_in_band == int((mixed & (p >= 0.2) & (p <= 0.8)).sum())
    assert sig.mixed_rate == pytest.approx(mixed.sum() / multi.sum())
    assert sig.pass_at_1 == pytest.approx(p.mean())
    assert "groups 307" in str(sig)


def test_group_signal_k_way_numbers_come_from_measure_pass_at():
    from whileai import measure

    df = rollout_table(50, 4, seed=1)
    sig = group_signal(df)
    pa = measure.pass_at(df)
    assert sig.k == pa.k
    assert sig.pass_pow_k == pytest.approx(pa.pass_pow_k, nan_ok=True)
    assert sig.pass_at_k == pytest.approx(pa.pass_at_k, nan_ok=True)
    # exact per-task pass^k for k = 4 with 4 rollouts: 1 if all pass; pass@k: 1 if any passes
    per = df.group_by("scenario_id").agg((pl.col("reward") >= 0.5).sum().alias("c"))["c"].to_numpy()
    assert sig.pass_pow_k == pytest.approx(np.mean(per == 4))
    assert sig.pass_at_k == pytest.approx(np.mean(per > 0))


def test_group_signal_without_rewards_warns():
    sig = group_signal([{"scenario_id": "a", "prompt": "x"}])
    assert sig.n_groups == 0 and math.isnan(sig.mixed_rate)
    assert any("grade first" in w for w in sig.warnings)


def test_matches_whileai_0131_on_its_quickstart_rows():
    from pathlib import Path

    sig = group_signal(Path(__file__).parents[1] / "data" / "wai131" / "scored.jsonl")
    # whileai 0.131 group_signal on the same rows
    assert (sig.n_groups, sig.n_mixed, sig.n_all_one, sig.n_all_zero, sig.n_in_band) == (7, 4, 3, 0, 4)
    assert sig.mixed_rate == pytest.approx(0.5714285714285714)
    assert sig.pass_at_1 == pytest.approx(0.8214285714285714)
