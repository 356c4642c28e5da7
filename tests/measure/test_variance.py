"""eval_variance and noise_band against numpy and the t quantile."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from whileai.errors import ArgumentError
from whileai.measure import eval_variance, noise_band
from whileai.testing import rollout_table, true_pass_rates

RATES = true_pass_rates(25, seed=3)


def _runs(n=3, k=4):
    return [rollout_table(25, k, seed=50 + i, pass_rates=RATES, messages=False) for i in range(n)]


def test_separate_runs_against_numpy():
    runs = _runs(3)
    r = eval_variance(*runs)
    means = [df.group_by("scenario_id").agg(pl.col("reward").mean())["reward"].mean() for df in runs]
    assert r.n_runs == 3 and r.means == pytest.approx(dict(zip(["run_1", "run_2", "run_3"], means)))
    assert r.run_std == pytest.approx(np.std(means, ddof=1), abs=1e-12)
    assert r.noise_band == pytest.approx(stats.t.ppf(0.975, 2) * math.sqrt(2) * r.run_std)
    assert r.noise_band_df == 2 and r.tasks_in_every_run == 25
    assert r.run_std_points == pytest.approx(100 * r.run_std)
    assert set(r.run_std_by_metric) == {"pass_at_1", "argument_grounding", "honest_claims", "no_hedging"}
    assert r.stability in {"very_stable", "stable", "noisy", "high_variance"}
    assert str(r).startswith("eval_variance pass_at_1: run_std")


def test_one_table_split_by_eval_run_and_only_shared_tasks():
    runs = [rollout_table(25, 4, seed=50 + i, pass_rates=RATES, messages=False, eval_run=i) for i in range(3)]
    runs[2] = runs[2].filter(pl.col("scenario_id") != "sc-00000000")  # one task missing from run 2
    r = eval_variance(pl.concat(runs))
    assert r.n_runs == 3 and r.run_source == "lineage.eval_run" and r.tasks_in_every_run == 24
    means = [df.filter(pl.col("scenario_id") != "sc-00000000").group_by("scenario_id")
             .agg(pl.col("reward").mean())["reward"].mean() for df in runs]
    assert r.run_std == pytest.approx(np.std(means, ddof=1), abs=1e-12)
    by_col = eval_variance(pl.concat([df.with_columns(pl.lit(str(i)).alias("rep")) for i, df in enumerate(runs)]), by="rep")
    assert by_col.run_std == pytest.approx(r.run_std)


def test_two_runs_note_one_run_warning_and_marker_metric():
    two = eval_variance(*_runs(2))
    assert two.n_runs == 2 and any("two is a difference" in n for n in two.notes)
    one = eval_variance(_runs(1)[0])
    assert one.n_runs == 1 and math.isnan(one.run_std) and "Run the eval 3 times" in one.warnings[0]
    marker = eval_variance(*_runs(3), metric="marker:no_hedging")
    assert marker.metric == "marker:no_hedging" and marker.run_std == pytest.approx(marker.run_std_by_metric["no_hedging"])


def test_bad_input():
    with pytest.raises(ArgumentError, match="eval_variance needs at least one row set"):
        eval_variance()
    with pytest.raises(ArgumentError, match="metric must be measured in every run"):
        eval_variance(*_runs(2), metric="politeness")
    with pytest.raises(ArgumentError, match="by must name a column or lineage field"):
        eval_variance(_runs(1)[0], by="nope")
    assert eval_variance([]).n_runs == 0


def test_noise_band_values_and_validation():
    assert noise_band(0.02) == pytest.approx(1.959963984540054 * math.sqrt(2) * 0.02)
    assert noise_band(0.02, 3, 3, df=4) == pytest.approx(stats.t.ppf(0.975, 4) * 0.02 * math.sqrt(2 / 3))
    assert noise_band(0.0) == 0.0
    for bad, match in [((-1,), "run_std must be a finite number >= 0, got -1"),
                       ((float("nan"),), "run_std must be a finite number"),
                       ((0.1, 0), "n_a must be the number of eval runs"),
                       ((0.1, 1, 1, 0), "df must be None or the re-runs")]:
        with pytest.raises(ArgumentError, match=match):
            noise_band(*bad)
