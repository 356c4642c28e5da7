"""Tasks on both sides are compared paired at any count from 3: with 4 shared tasks the unpaired
fallback treated the pairs as independent (p = 2 / C(8, 4) = 0.029, PASS) while 5 tasks with the
same gain read the paired 0.0625 (NO DIFFERENCE): more evidence turned a PASS into no difference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import whileai as wai


def _exact_sign_flip(d: np.ndarray) -> float:
    """Two-sided sign-flip p by enumerating every sign pattern (the reference)."""
    obs = abs(d.mean())
    flips = [abs((d * np.array(s)).mean()) >= obs - 1e-12 for s in itertools.product((1, -1), repeat=d.size)]
    return float(np.mean(flips))


@pytest.mark.parametrize("n_tasks", [3, 4, 5, 6, 7])
def test_fully_paired_tasks_take_the_paired_test_at_any_count(n_tasks):
    a = [{"task_id": f"t{i}", "reward": r} for i in range(n_tasks) for r in (0, 0, 0, 1)]
    b = [{"task_id": f"t{i}", "reward": r} for i in range(n_tasks) for r in (1, 1, 1, 0)]
    c = wai.compare_runs(a, b)
    assert c.paired and c.test == "sign_flip"
    assert c.p_value == pytest.approx(_exact_sign_flip(np.full(n_tasks, 0.5)))
    assert (c.verdict == "b_better") == (c.p_value < 0.05)


def test_the_verdict_never_turns_back_as_tasks_are_added():
    verdicts = []
    for n_tasks in range(3, 10):
        a = [{"task_id": f"t{i}", "reward": r} for i in range(n_tasks) for r in (0, 0, 0, 1)]
        b = [{"task_id": f"t{i}", "reward": r} for i in range(n_tasks) for r in (1, 1, 1, 0)]
        verdicts.append(wai.compare_runs(a, b).verdict == "b_better")
    assert verdicts == sorted(verdicts)  # False ... False, True ... True


def test_runs_on_different_tasks_still_fall_back_to_unpaired_means():
    a = [{"task_id": f"a{i}", "reward": r} for i in range(4) for r in (0, 1)]
    b = [{"task_id": f"b{i}", "reward": r} for i in range(4) for r in (1, 1)]
    c = wai.compare_runs(a, b)
    assert not c.paired and c.test == "welch"


@pytest.mark.parametrize("extra", ["only_before", "only_after"])
def test_a_task_on_one_side_does_not_unpair_the_shared_ones(extra):
    """4 shared tasks and one on one side only took Welch over 9 task means (p 0.008, PASS)."""
    a = [{"task_id": f"t{i}", "reward": 0.0} for i in range(4) for _ in range(4)]
    b = [{"task_id": f"t{i}", "reward": 1.0} for i in range(4) for _ in range(4)]
    (a if extra == "only_before" else b).extend({"task_id": "x", "reward": 0.5} for _ in range(4))
    c = wai.compare_runs(a, b)
    assert c.paired and c.n_paired == 4 and c.p_value == pytest.approx(0.125) and c.verdict == "no_difference_detected"
    assert c.delta == 1.0 and c.ci95[0] < c.delta <= c.ci95[1]


def test_the_unpaired_fallback_says_welch():
    a = [{"task_id": f"a{i}", "reward": r} for i in range(4) for r in (0, 1)]
    b = [{"task_id": f"b{i}", "reward": r} for i in range(4) for r in (1, 1)]
    assert wai.compare_runs(a, b).ci_method == "welch"
