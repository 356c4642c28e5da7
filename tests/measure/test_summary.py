"""metric_summary and marker_summary: task means, t intervals, degenerate markers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from whileai.errors import ArgumentError
from whileai.measure import marker_summary, metric_summary
from whileai.testing import rollout_table


def test_metric_summary_against_task_means():
    df = rollout_table(30, 4, seed=3, messages=False)
    s = metric_summary(df)
    means = df.group_by("scenario_id").agg(pl.col("reward").mean())["reward"].to_numpy()
    assert s.mean == pytest.approx(means.mean()) and s.n_tasks == 30 and s.n_rows == 120
    lo, hi = stats.t.interval(0.95, 29, loc=means.mean(), scale=stats.sem(means))
    assert metric_summary(df, ci_method="t").ci95 == pytest.approx((lo, hi))
    assert s.n_rows_at_1 + s.n_rows_at_0 == 120
    m = metric_summary(df, "marker:no_hedging")
    marker_means = (df.with_columns(pl.col("markers").struct.field("no_hedging").alias("m"))
                    .group_by("scenario_id").agg(pl.col("m").mean())["m"].to_numpy())
    assert m.mean == pytest.approx(marker_means.mean()) and m.metric == "marker:no_hedging"


def test_metric_summary_pass_at_1_gives_the_interval_pass_at_gives():
    # One interval per concept: pass@1's score interval, wherever pass@1 is summarised.
    from whileai.measure import pass_at

    for seed in range(3):
        df = rollout_table(12, 3, seed=seed, messages=False)
        s, p = metric_summary(df), pass_at(df)
        assert s.mean == pytest.approx(p.pass_at_1) and s.ci95 == pytest.approx(p.ci95)
        assert s.ci_method == p.ci_method
    with pytest.raises(ArgumentError, match="ci_method must be one of"):
        metric_summary(df, "marker:no_hedging", ci_method="wald")  # type: ignore[arg-type]


def test_marker_summary_degenerate_markers_share_one_warning():
    rows = [{"task_id": t, "reward": 1, "markers": {"polite": 1.0, "brief": v, "safe": 0.0}}
            for t, v in zip("abcdef", (1.0, 0.0, 1.0, 1.0, 0.0, 1.0))]
    r = marker_summary(rows)
    assert r.degenerate == ["polite", "safe"]
    assert len(r.warnings) == 1 and "polite, safe" in r.warnings[0]
    assert r["polite"].ci95 is None and r["polite"].degenerate and r["brief"].ci95 is not None
    text = str(r)
    assert "degenerate: all 6 rows scored 1.00, no interval" in text
    assert set(marker_summary(rows, names=["brief"]).markers) == {"brief"}


def test_bad_input_and_empty():
    df = rollout_table(5, 2, seed=1, messages=False)
    with pytest.raises(ArgumentError, match="metric must be pass_at_1 or a marker"):
        metric_summary(df, "nope")
    with pytest.raises(ArgumentError, match="names must be markers the rows carry"):
        marker_summary(df, names=["nope"])
    assert marker_summary([]).markers == {}
    assert np.isnan(metric_summary([]).mean)
    plain = marker_summary([{"task_id": "a", "reward": 1}])
    assert plain.markers == {} and "no markers" in str(plain)
