"""Sizing formulas against the published numbers and a simulation of the paired test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from whileai.stats.power import (
    binomial_paired_var,
    concentrated_paired_var,
    detectable_effect_binomial,
    detectable_effect_sd,
    noise_band_width,
    paired_tasks_needed,
    power_at,
    z_sum,
)


def test_z_sum_and_miller_worked_example():
    assert z_sum(0.8, 0.05) == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8))
    # Miller 2024 section 5: omega^2 = 1/9, delta = 0.03 -> about 969 questions
    assert paired_tasks_needed(0.03, math.sqrt(1 / 9)) == 969


def test_binomial_and_concentrated_models_reproduce_the_seed_examples():
    # whileai 0.131 holdout_size(0.05): 367 tasks, task_std 0.3419, concentrated 409
    sd = math.sqrt(binomial_paired_var(0.6, 0.05, 4))
    assert sd == pytest.approx(0.3419, abs=5e-5)
    assert paired_tasks_needed(0.05, sd) == 367
    assert paired_tasks_needed(0.05, math.sqrt(concentrated_paired_var(0.6, 0.05, 4))) == 409
    # docs/measure.md: a voice lane at 0 to 0.127 needed 54 tasks where the model said 14
    assert paired_tasks_needed(0.127, math.sqrt(binomial_paired_var(0.0, 0.127, 4))) == 14
    assert paired_tasks_needed(0.127, math.sqrt(concentrated_paired_var(0.0, 0.127, 4))) == 54


def test_concentrated_variance_by_direct_mixture():
    # share f of tasks go p -> 1, the rest stay at p; variance of the paired difference, computed by the law
    # of total variance from the mixture directly
    p, e, k = 0.4, 0.09, 4
    f = e / (1 - p)
    mean_within = (p * (1 - p) / k) + (1 - f) * p * (1 - p) / k
    gains = np.array([1 - p, 0.0])
    between = f * gains[0] ** 2 + (1 - f) * gains[1] ** 2 - e ** 2
    assert concentrated_paired_var(p, e, k) == pytest.approx(mean_within + between)


def test_detectable_effect_inverts_the_sample_size():
    assert detectable_effect_binomial(100, base=0.6, k=4) == pytest.approx(0.0942, abs=5e-5)
    e = detectable_effect_binomial(367, base=0.6, k=4)
    assert e == pytest.approx(0.05, abs=5e-4)
    assert detectable_effect_sd(100, 0.3) == pytest.approx(z_sum() * 0.03)
    assert math.isnan(detectable_effect_binomial(1, base=0.6, k=4))
    assert math.isnan(detectable_effect_binomial(2, base=0.99, k=1))


def test_power_formula_against_simulated_paired_test():
    # n tasks, per-task paired difference of Binomial(4, q)/4 - Binomial(4, p)/4; z-test on the mean
    rng = np.random.default_rng(1)
    p, e, k, n, reps = 0.5, 0.1, 4, 80, 20_000
    d = (rng.binomial(k, p + e, (reps, n)) - rng.binomial(k, p, (reps, n))) / k
    z = d.mean(1) / (d.std(1, ddof=1) / math.sqrt(n))
    simulated = np.mean(np.abs(z) > stats.norm.ppf(0.975))
    assert power_at(e, math.sqrt(binomial_paired_var(p, e, k)), n) == pytest.approx(simulated, abs=0.02)


def test_noise_band_width():
    assert noise_band_width(0.02) == pytest.approx(1.959963984540054 * math.sqrt(2) * 0.02)
    assert noise_band_width(0.02, 3, 3, df=4) == pytest.approx(stats.t.ppf(0.975, 4) * 0.02 * math.sqrt(2 / 3))
