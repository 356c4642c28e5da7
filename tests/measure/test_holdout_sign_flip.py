"""holdout_size sizes for the exact sign-flip test that decides delta_report, checked by independent simulation.

The paired t test's answer gave the sign-flip test 0.69 to 0.78 power on binomial task rates
(0.68 at +0.40 from 0.3, 8 tasks). The answer is now the fewest tasks at which the simulated sign-flip
test reaches 0.80; here a fresh seed and the test itself (``sign_flip_test``, one eval at a time)
must find at least 0.80 less three Monte Carlo errors there.
"""

from __future__ import annotations

import numpy as np
import pytest

from whileai import holdout_size
from whileai.stats.permutation import sign_flip_test
from whileai.stats.power import sign_flip_power


def _power(effect, base, k, n, reps, seed):
    rng = np.random.default_rng(seed)
    a = rng.binomial(k, base, (reps, n))
    b = rng.binomial(k, base + effect, (reps, n))
    return float(np.mean([sign_flip_test((b[i] - a[i]) / k).p_value < 0.05 for i in range(reps)]))


@pytest.mark.parametrize(("effect", "base", "k", "n"), [(0.3, 0.5, 4, 12), (0.5, 0.3, 8, 6), (0.1, 0.5, 2, 40)])
def test_the_batched_power_is_the_test_run_one_eval_at_a_time(effect, base, k, n):
    assert sign_flip_power(effect, base, k, n, reps=1000, seed=5) == _power(effect, base, k, n, 1000, 5)


def test_past_the_exact_limit_the_normal_limit_decides_like_the_test():
    assert sign_flip_power(0.1, 0.5, 4, 150, reps=1000, seed=6) == pytest.approx(_power(0.1, 0.5, 4, 150, 1000, 6),
                                                                               abs=0.01)


@pytest.mark.parametrize(("effect", "base", "k"), [(0.4, 0.3, 4), (0.3, 0.5, 4), (0.2, 0.5, 4)])
def test_the_answer_gives_the_deciding_test_its_power(effect, base, k):
    r = holdout_size(effect, base=base, k=k)
    reps = 1000
    floor = 0.8 - 3 * (0.8 * 0.2 / reps) ** 0.5
    assert _power(effect, base, k, r.n_tasks, reps, seed=99) >= floor
    assert r.n_tasks_t_test is not None and r.n_tasks > r.n_tasks_t_test
    assert any("sign-flip" in n for n in r.notes)
    if effect == 0.4:  # the t test's answer, 8 tasks, fell short: 0.68
        assert _power(effect, base, k, r.n_tasks_t_test, reps, seed=99) < floor
