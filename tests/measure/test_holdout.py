"""holdout_size and detectable_effect: the documented numbers (docs/measure.md), the measured paths, saturation, bad input."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from whileai.errors import ArgumentError
from whileai.measure import detectable_effect, holdout_size
from whileai.measure._holdout import tasks_needed
from whileai.stats.power import z_sum
from whileai.testing import rollout_table, true_pass_rates


def test_model_path_reproduces_published_numbers():
    r = holdout_size(0.05)
    # Miller's equation 9 gives 367 and 409; the paired t test's power (noncentral t) asks two more each
    assert (r.n_tasks_t_test, r.n_tasks_concentrated, r.sd_source) == (369, 411, "model")
    assert r.n_tasks == 383  # sized for the sign-flip test that decides (tests/measure/test_holdout_sign_flip.py)
    assert r.task_std == pytest.approx(0.3419, abs=5e-5) and r.half_width == pytest.approx(0.0343, abs=5e-4)
    assert any("spread evenly" in n for n in r.notes)
    voice = holdout_size(0.127, base=0.0, k=4)
    assert (voice.n_tasks_t_test, voice.n_tasks, voice.n_tasks_concentrated) == (16, 18, 56)
    assert str(r).splitlines()[0] == "holdout 383 paired tasks for a +0.050 gain at k=4 (base 0.60, power 0.80, alpha 0.05)"


def test_detectable_effect():
    assert detectable_effect(100) == pytest.approx(0.0951, abs=5e-5)  # 0.0942 by equation 9's normal quantiles
    assert math.isnan(detectable_effect(1)) and math.isnan(detectable_effect(0)) and math.isnan(detectable_effect(5))
    assert detectable_effect(100, task_std=0.3) == pytest.approx(z_sum() * 0.03, rel=0.01)  # the t correction, ~1%
    assert holdout_size(detectable_effect(200)).n_tasks_t_test in (199, 200)


def test_rows_path_measures_the_paired_sd():
    rates = true_pass_rates(60, seed=4) * 0.6 + 0.1
    before = rollout_table(60, 4, seed=4, pass_rates=rates, messages=False)
    after = rollout_table(60, 4, seed=5, pass_rates=rates, shift=0.1, messages=False)
    r = holdout_size(0.1, before=before, after=after)
    a = before.group_by("scenario_id").agg(pl.col("reward").mean()).sort("scenario_id")["reward"].to_numpy()
    b = after.group_by("scenario_id").agg(pl.col("reward").mean()).sort("scenario_id")["reward"].to_numpy()
    sd = np.std(b - a, ddof=1)
    assert r.sd_source == "rows" and r.n_paired == 60 and r.task_std == pytest.approx(sd)
    assert r.n_tasks == tasks_needed(0.1, sd) and r.n_tasks - math.ceil((z_sum() * sd / 0.1) ** 2 - 1e-9) in (1, 2, 3)
    assert r.base == pytest.approx(a.mean())
    assert r.n_tasks_low <= r.n_tasks <= r.n_tasks_high and "percentile bootstrap" in r.n_tasks_range_method


def test_before_alone_reports_spread_and_ratio():
    # tasks spread around 0.5 with sd about 0.2: the model over-asks by about 1 / (1 - 0.04 / 0.25) = 1.19
    rng = np.random.default_rng(0)
    rates = np.clip(0.5 + 0.2 * rng.choice([-1, 1], 2000), 0, 1)
    before = rollout_table(2000, 8, seed=1, pass_rates=rates, messages=False)
    r = holdout_size(0.05, before=before)
    assert r.base_spread == pytest.approx(0.2, abs=0.015)
    assert r.spread_ratio == pytest.approx(1 / (1 - 0.04 / 0.25), abs=0.04)
    assert r.k == 8 and r.sd_source == "model"


def test_saturation_and_given_sd():
    high = rollout_table(30, 4, seed=2, pass_rates=np.full(30, 0.97), messages=False)
    r = holdout_size(0.05, before=high, after=high)
    assert r.saturated and r.base == 0.6 and r.n_tasks == 383
    assert "difficulty band" in r.warnings[0] and "the sd measured off them understates" in r.warnings[0]
    assert not holdout_size(0.05, base=0.95).saturated  # a base you pass is used as given
    given = holdout_size(0.05, task_std=0.3)
    assert given.sd_source == "given" and given.n_tasks == tasks_needed(0.05, 0.3) == math.ceil((z_sum() * 0.3 / 0.05) ** 2) + 2
    assert holdout_size(0.05, task_std=0.0).saturated


@pytest.mark.parametrize("args,kwargs,match", [
    ((0,), {}, "effect must be the gain in pass rate to prove, between 0 and 1, got 0"),
    ((-0.1,), {}, "effect must be"),
    ((0.5,), {"base": 0.6}, "base \\+ effect must be at most 1"),
    ((0.05,), {"after": []}, "after must come with before"),
    ((0.05,), {"task_std": -1}, "task_std must be a number >= 0"),
    ((0.05,), {"k": 0}, "k must be an integer >= 1"),
])
def test_bad_input(args, kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        holdout_size(*args, **kwargs)


def test_ungraded_before_raises():
    with pytest.raises(ArgumentError, match="before must hold graded rows"):
        holdout_size(0.05, before=[{"task_id": "a", "reward": None}])
