"""compare_runs on a handful of tasks: no verdict from two tasks a side, and when neither side
varies, the exact permutation test's p-value (checked by enumerating every split of the tasks)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import whileai as wai


def _rows(tasks, reward):
    return [{"scenario_id": t, "reward": reward} for t in tasks]


def test_two_tasks_a_side_give_no_verdict():
    """Welch on 2 + 2 tasks that do not vary had p = 0: a PASS (exit 0) or FAIL on two tasks."""
    out = wai.compare_runs(_rows("ab", 0.0), _rows("ab", 1.0))
    assert out.verdict == "insufficient_data" and out.ci95 is None
    assert "an unpaired interval needs 3 tasks a side" in out.note
    assert str(wai.delta_report(_rows("ab", 0.0), _rows("ab", 1.0))).startswith("NOT COMPARABLE (too_few_tasks)")


def _exact_p(a, b):
    """Two-sided permutation p-value of mean(b) - mean(a), by enumerating every split."""
    values = np.array(a + b, dtype=float)
    observed = abs(np.mean(b) - np.mean(a))
    hits = total = 0
    for chosen in itertools.combinations(range(len(values)), len(b)):
        mask = np.zeros(len(values), dtype=bool)
        mask[list(chosen)] = True
        total += 1
        hits += abs(values[mask].mean() - values[~mask].mean()) >= observed - 1e-12
    return hits / total


@pytest.mark.parametrize(("n_a", "n_b"), [(3, 3), (3, 4), (4, 4), (3, 5)])
def test_sides_that_do_not_vary_get_the_exact_permutation_p(n_a, n_b):
    a, b = [0.0] * n_a, [1.0] * n_b
    out = wai.compare_runs(_rows([f"a{i}" for i in range(n_a)], 0.0), _rows([f"b{i}" for i in range(n_b)], 1.0))
    assert out.test == "welch" and out.p_value == pytest.approx(_exact_p(a, b), abs=1e-12)
    assert out.p_value == pytest.approx((2 if n_a == n_b else 1) / math.comb(n_a + n_b, n_a))
    assert out.verdict == ("b_better" if out.p_value < 0.05 else "no_difference_detected")
