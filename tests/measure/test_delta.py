"""delta_report: the verdict words, the headline, the re-run band, groups and bad input."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from whileai import compare
from whileai.errors import ArgumentError
from whileai.measure import delta_report, eval_variance, format_delta_report
from whileai.testing import true_pass_rates


def _table(rates, *, k=4, seed=0, marker_rates=None, prefix="t", eval_run=None, policy="v1", tier=None, extra=None):
    """Rows with known per-task pass rates (and per-task marker rates), one reward per rollout."""
    rng = np.random.default_rng(seed)
    rates = np.asarray(rates, float)
    n = rates.size
    task = np.repeat(np.arange(n), k)
    cols = {
        "scenario_id": [f"{prefix}{i:03d}" for i in task],
        "reward": (rng.random(n * k) < rates[task]).astype(float),
        "policy_version": [policy] * (n * k),
        "tier": [tier(i) if tier else ("even" if i % 2 == 0 else "odd") for i in task],
    }
    df = pl.DataFrame(cols)
    if marker_rates is not None:
        m = (rng.random(n * k) < np.asarray(marker_rates, float)[task]).astype(float)
        df = df.with_columns(pl.struct(pl.Series("honest_claims", m)).alias("markers"))
    if eval_run is not None:
        df = df.with_columns(pl.struct(pl.lit(eval_run).alias("eval_run")).alias("lineage"))
    if extra:
        df = df.with_columns(**{k_: pl.lit(v) for k_, v in extra.items()})
    return df


BASE = true_pass_rates(40, seed=1) * 0.7 + 0.1  # inside the band, room to move


def test_headline_pass_and_the_first_line():
    before = _table(BASE, seed=1)
    after = _table(np.clip(BASE + 0.3, 0, 1), seed=2, policy="v2")
    r = delta_report(before, after)
    assert str(r).splitlines()[0] == "PASS (UNREPLICATED: one eval run a side and no noise floor, so this could be eval noise)"
    assert r.ok and r.headline_verdict == "moved_unreplicated" and r.target_direction == "up"
    assert r.improved == ["pass_at_1"] and r.target == "pass_at_1"
    assert any("simulate(agent, tasks=base, runs=3)" in w for w in r.warnings)
    assert format_delta_report(r) == str(r)
    assert compare is delta_report


def test_headline_no_difference_and_fail():
    before = _table(BASE, seed=1)
    same = delta_report(before, _table(BASE, seed=3, policy="v2"))
    assert str(same).splitlines()[0] == "NO DIFFERENCE" and same.headline_verdict == "no_change_detected"
    assert same.ok and same.target_ci95[0] <= 0 <= same.target_ci95[1]
    worse = delta_report(before, _table(np.clip(BASE - 0.3, 0, 1), seed=4, policy="v2"))
    assert str(worse).splitlines()[0] == "FAIL" and not worse.ok and worse.headline_verdict == "regressed"
    assert worse.regressions == ["pass_at_1"]


def test_guard_regression_fails_and_other_drops_warn():
    before = _table(BASE, seed=1, marker_rates=np.full(40, 0.9))
    after = _table(np.clip(BASE + 0.3, 0, 1), seed=2, marker_rates=np.full(40, 0.4), policy="v2")
    guarded = delta_report(before, after, must_not_regress=["honest_claims"])
    assert guarded.headline == "FAIL" and guarded.guards_failed == ["honest_claims"]
    loose = delta_report(before, after)
    assert loose.headline.startswith("PASS (UNREPLICATED") and "honest_claims" in loose.regressions
    assert any("honest_claims dropped" in w and "must_not_regress" in w for w in loose.warnings)


def test_not_comparable_situations_ungraded_and_too_few():
    before = _table(BASE, seed=1)
    after = pl.concat([_table(BASE[:5], seed=2, policy="v2"), _table(BASE, seed=3, prefix="other", policy="v2")])
    r = delta_report(before, after)
    assert r.headline == "NOT COMPARABLE (situations)" and not r.ok and r.paired_share < 0.5
    assert any("tasks=base" in w for w in r.warnings)
    ungraded = delta_report(before, before.with_columns(pl.lit(None, pl.Float64).alias("reward")))
    assert ungraded.headline == "NOT COMPARABLE (ungraded)"
    one = delta_report(_table([0.5], seed=1), _table([0.7], seed=2, policy="v2"))
    assert one.headline == "NOT COMPARABLE (too_few_tasks)"
    none = delta_report([], [])
    assert none.headline.startswith("NOT COMPARABLE") and none.headline_verdict == "not_comparable"


def test_not_comparable_calls_nothing_moved_on_zero_paired_tasks():
    """Two arms on disjoint tasks with a large gap: the unpaired test rejects, but 0 tasks pair."""
    before = _table(np.full(30, 0.2), seed=1)
    after = _table(np.full(30, 0.9), seed=2, prefix="other", policy="v2")
    r = delta_report(before, after)
    assert r.headline == "NOT COMPARABLE (situations)" and r.n_paired_tasks == 0
    assert r.target_verdict == "insufficient_data" and not r.improved and not r.regressions
    assert all(m["gain_verdict"] == "insufficient_data" for m in r.metrics.values())
    assert "moved" not in str(r)


def test_seeded_arms_that_differ_in_seed_or_shift_are_two_setups():
    from whileai.testing import rollout_table

    base = rollout_table(20, 4, seed=1)
    assert not any("to itself" in w for w in delta_report(base, rollout_table(20, 4, seed=1, shift=0.2)).warnings)
    assert any("to itself" in w for w in delta_report(base, rollout_table(20, 4, seed=1, replica=1)).warnings)


def test_run_std_given_with_runs_uses_t_and_bare_warns():
    before = _table(BASE, seed=1)
    after = _table(np.clip(BASE + 0.3, 0, 1), seed=2, policy="v2")
    r = delta_report(before, after, run_std=0.01, run_std_runs=3)
    assert r.headline == "PASS" and r.headline_verdict == "moved" and r.run_std_df == 2
    assert r.noise_band == pytest.approx(stats.t.ppf(0.975, 2) * 0.01 * math.sqrt(2))
    assert "t(df=2)=4.30" in r.noise_rule
    bare = delta_report(before, after, run_std=0.01)
    assert bare.noise_band == pytest.approx(stats.norm.ppf(0.975) * 0.01 * math.sqrt(2))
    assert any("without run_std_runs" in w for w in bare.warnings)
    noisy = delta_report(before, after, run_std=0.5, run_std_runs=3)
    assert noisy.headline == "NO DIFFERENCE" and noisy.headline_verdict == "within_eval_noise"
    assert noisy.within_noise == ["pass_at_1"]


def test_eval_runs_in_rows_give_run_std_pooled_over_sides():
    before = pl.concat([_table(BASE, seed=10 + i, eval_run=i) for i in range(3)])
    after = pl.concat([_table(np.clip(BASE + 0.25, 0, 1), seed=20 + i, eval_run=i, policy="v2") for i in range(3)])
    r = delta_report(before, after)
    assert r.run_std_source == "rows" and r.replicated and r.eval_runs == {"before": 3, "after": 3}
    means = []
    for df in (before, after):
        per_run = (df.with_columns(pl.col("lineage").struct.field("eval_run").alias("run"))
                   .group_by(["run", "scenario_id"]).agg(pl.col("reward").mean())
                   .group_by("run").agg(pl.col("reward").mean())["reward"].to_numpy())
        means.append(per_run)
    pooled = math.sqrt((np.var(means[0], ddof=1) * 2 + np.var(means[1], ddof=1) * 2) / 4)
    assert r.run_std == pytest.approx(pooled, abs=1e-12) and r.run_std_df == 4
    assert r.noise_band == pytest.approx(stats.t.ppf(0.975, 4) * pooled * math.sqrt(2 / 3))
    assert "sqrt(1/3 + 1/3)" in r.noise_rule and r.headline == "PASS" and r.headline_verdict == "moved"
    ev = eval_variance(before)
    from_report = delta_report(before.filter(pl.col("lineage").struct.field("eval_run") == 0),
                               after.filter(pl.col("lineage").struct.field("eval_run") == 0), run_std=ev)
    assert from_report.run_std == pytest.approx(ev.run_std) and from_report.run_std_runs == 3


def test_by_groups_and_groups_down():
    rates_after = np.where(np.arange(40) % 2 == 0, np.clip(BASE + 0.45, 0, 1), np.clip(BASE - 0.3, 0, 1))
    before = _table(BASE, seed=1, k=8)
    after = _table(rates_after, seed=2, k=8, policy="v2")
    r = delta_report(before, after, by="tier")
    assert set(r.groups) == {"even", "odd"} and r.groups_down == ["odd"]
    assert r.groups["even"]["direction"] == "up"
    assert any("dropped significantly in group(s) odd" in w for w in r.warnings)
    by_fn = delta_report(before, after, by=lambda row: row["tier"])
    assert by_fn.groups_down == ["odd"]
    with pytest.raises(ArgumentError, match="by must name a row key or a marker"):
        delta_report(before, after, by="nope")
    marked = delta_report(_table(BASE, seed=1, marker_rates=np.full(40, 0.5)),
                          _table(BASE, seed=2, marker_rates=np.full(40, 0.5), policy="v2"), by="honest_claims")
    assert set(marked.groups) <= {"0.0", "1.0"} and marked.by == "honest_claims"


def test_unequal_k_warns_and_balance_rollouts_trims():
    before = _table(BASE, seed=1, k=8)
    after = _table(BASE, seed=2, k=4, policy="v2")
    r = delta_report(before, after)
    assert r.repeats == {"before": 8, "after": 4}
    assert any("k=8 before, k=4 after" in w for w in r.warnings)
    b = delta_report(before, after, balance_rollouts=True, seed=3)
    assert b.balanced == {"before": 160, "after": 0} and b.repeats == {"before": 4, "after": 4}
    assert b.to_dict() == delta_report(before, after, balance_rollouts=True, seed=3).to_dict()


def test_config_differences_ceiling_and_same_policy_warn():
    before = _table(np.full(20, 0.97), seed=1, extra={"temperature": 0.7})
    after = _table(np.full(20, 0.99), seed=2, policy="v2", extra={"temperature": 1.0})
    r = delta_report(before, after)
    assert r.config["before"]["temperature"] == "0.7" and r.config["after"]["temperature"] == "1.0"
    assert any("temperature differs" in w for w in r.warnings)
    assert r.ceiling and any("harder situations" in w for w in r.warnings)
    same = delta_report(_table(BASE, seed=1), _table(BASE, seed=2))
    assert any("same policy_version" in w for w in same.warnings)


def test_metrics_block_and_json():
    before = _table(BASE, seed=1, marker_rates=np.full(40, 0.8))
    after = _table(np.clip(BASE + 0.2, 0, 1), seed=2, marker_rates=np.full(40, 0.8), policy="v2")
    r = delta_report(before, after, target="pass_at_1", must_not_regress=["marker:honest_claims"])
    assert set(r.metrics) == {"pass_at_1", "honest_claims"} and r.n_metrics == 2
    assert r.metrics["pass_at_1"]["gain_verdict"] == r.target_verdict
    assert r.detectable_effect is not None and r.tasks_needed is not None and r.tasks_needed_source == "rows"
    import json

    assert json.loads(r.to_json())["headline"] == r.headline
    assert "sizing: 40 paired tasks detect" in str(r)


@pytest.mark.parametrize("kwargs,match", [
    ({"target": "nope"}, "target must name a metric both arms measure, got 'nope'"),
    ({"must_not_regress": ["nope"]}, "must_not_regress must name a metric both arms measure"),
    ({"run_std": -0.1}, "run_std must be a number >= 0"),
    ({"run_std_runs": 3}, "run_std_runs needs run_std"),
    ({"run_std": 0.1, "run_std_runs": 1}, "run_std_runs must be an integer >= 2"),
    ({"balance_rollouts": "yes"}, "balance_rollouts must be True or False"),
    ({"by": 3}, "by must be a row key"),
    ({"markers": ["nope"]}, "markers must be carried by both arms"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        delta_report(_table(BASE[:8], seed=1), _table(BASE[:8], seed=2), **kwargs)


def test_keywords_and_the_top_level_names():
    import whileai as wai

    assert wai.compare is wai.delta_report is delta_report
    before, after = _table(BASE[:10], seed=1), _table(BASE[:10], seed=2, policy="v2")
    assert wai.compare(before=before, after=after).headline == delta_report(before, after).headline


def test_band_states_the_smallest_gain_it_can_call_moved():
    """A real +0.10 at 50 tasks, k=4, with run_std from three re-runs reads moved rarely: the report says why."""
    from whileai.stats.power import detectable_moved
    from whileai.testing import rollout_table

    before = rollout_table(50, 4, seed=7, messages=False, markers=())
    after = rollout_table(50, 4, seed=7, messages=False, markers=(), shift=0.10, replica=1).with_columns(
        pl.lit("v2").alias("policy_version"))
    r = delta_report(before, after, run_std=0.03, run_std_runs=3)
    t = r.metrics["pass_at_1"]
    assert r.moved_detectable_effect == pytest.approx(
        detectable_moved(t["n_paired"], t["task_std"], r.noise_band, power=0.8, alpha=0.05))
    assert r.moved_detectable_effect > max(r.noise_band, r.detectable_effect) > 0.10
    assert "band cost: the noise band calls a gain moved at 80% power from" in str(r)
    plain = delta_report(before, after)
    assert plain.moved_detectable_effect is None and "band cost" not in str(plain)


def test_detectable_moved_has_the_power_it_states():
    """Seeded simulation of the rule (test and band both cleared) at the stated effect: power 0.8."""
    from scipy.special import ndtri

    from whileai.stats.power import detectable_moved

    rng = np.random.default_rng(0)
    for n, sd, band in ((50, 0.3, 0.18), (100, 0.3, 0.02), (200, 0.25, 0.05)):
        effect = detectable_moved(n, sd, band)
        d = rng.normal(effect, sd, size=(20000, n))
        mean, se = d.mean(axis=1), d.std(axis=1, ddof=1) / np.sqrt(n)
        moved = (np.abs(mean) > float(ndtri(0.975)) * se) & (np.abs(mean) > band)
        assert moved.mean() == pytest.approx(0.8, abs=0.02)
