"""A training run's held-out delta posted as a score in one summary shape; the reward model's calibrated cut."""

from __future__ import annotations

import math

import numpy as np
import pytest

from whileai.defaults import HOLDOUT_BEHAVIOR
from whileai.errors import ArgumentError
from whileai.measure import HOLDOUT_KEYS, holdout_block
from whileai.platform import track
from whileai.train._rm import RewardModelJudge, as_judge, calibrated_cut


def _rows(rate: float, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{"scenario_id": f"t{i}", "rollout_index": j, "reward": float(rng.random() < rate)}
            for i in range(40) for j in range(2)]


def test_trainer_posts_the_held_out_score_and_one_summary_shape(tmp_path):
    from whileai.measure import delta_report
    from whileai.train._holdout import post_holdout

    tracked = track({"name": "a"}, store=tmp_path / "s.duckdb")
    before, after = _rows(0.3, 1), _rows(0.7, 2)
    block = holdout_block(before, after, delta_report(before, after, seed=0))
    run = tracked.run("grpo-v1")
    post_holdout(run, before, after, block)
    scores = run.scores()
    assert [s.behavior for s in scores] == [HOLDOUT_BEHAVIOR]
    after_side = block["after"]
    assert scores[0].value == pytest.approx(after_side["pass_rate"] * 100)
    half = max(after_side["pass_rate"] - after_side["ci95"][0], after_side["ci95"][1] - after_side["pass_rate"])
    assert scores[0].ci == pytest.approx(half * 100) and scores[0].n == 40
    assert "nothing scored" not in str(tracked.brief()).lower() and "grpo-v1" in str(tracked.brief())
    # every path writes the same keys: the trainer's, run.holdout's and run.delta's
    trainer_side = tracked.open(run.id).record.summary["holdout"]
    other = tracked.run("sft-v1")
    via_holdout = other.holdout(before, after)
    other.delta(before, after)
    via_delta = tracked.open(other.id).record.summary["holdout"]
    assert set(trainer_side) == set(via_holdout) == set(via_delta) == set(HOLDOUT_KEYS)
    assert set(trainer_side["after"]) == {"pass_rate", "n_tasks", "k", "ci95"}
    assert trainer_side["delta"] == pytest.approx(after_side["pass_rate"] - block["before"]["pass_rate"], abs=1e-9)


def _brute_cut(passes, fails):
    """Balanced accuracy at every cut on a fine grid (the reference the sort-based search must match)."""
    grid = np.linspace(min(passes + fails) - 1, max(passes + fails) + 1, 20001)
    p, f = np.array(passes), np.array(fails)
    acc = np.array([((p >= c).mean() + (f < c).mean()) / 2 for c in grid])
    return acc.max()


@pytest.mark.parametrize("seed", range(5))
def test_calibrated_cut_maximises_balanced_accuracy(seed):
    rng = np.random.default_rng(seed)
    passes = list(np.round(rng.normal(1.5, 1.0, 30), 2))
    fails = list(np.round(rng.normal(0.5, 1.0, 12), 2))
    cut, basis = calibrated_cut(passes, fails)
    raw = math.log(cut / (1 - cut))
    got = ((np.array(passes) >= raw).mean() + (np.array(fails) < raw).mean()) / 2
    assert got == pytest.approx(_brute_cut(passes, fails))
    assert basis.startswith("calibrated on 30 held-out pairs") and f"{got:.3f}" in basis


def test_a_fixed_half_would_pass_the_failing_row():
    # every raw score is positive, so sigmoid >= 0.5 passes the failing replies too; the calibrated cut does not
    passes, fails = [3.1, 2.8, 3.4, 2.9], [1.2, 0.9, 1.4, 1.1]
    cut, _ = calibrated_cut(passes, fails)
    raw = math.log(cut / (1 - cut))
    assert all(f < raw for f in fails) and all(p >= raw for p in passes)
    assert all(1 / (1 + math.exp(-f)) >= 0.5 for f in fails)
    with pytest.raises(ArgumentError, match="needs passing and failing scores, got 4 and 0"):
        calibrated_cut(passes, [])


def test_the_judge_says_which_cut():
    judge = as_judge({"method": "rm", "adapter": "/x", "threshold": 0.8, "threshold_basis": "calibrated on 9 held-out pairs"})
    assert isinstance(judge, RewardModelJudge) and judge.threshold == 0.8 and "calibrated on 9" in repr(judge)
    assert "fallback 0.5" in as_judge({"method": "rm", "adapter": "/x"}).basis
    assert as_judge({"method": "rm", "adapter": "/x"}, threshold=0.7).basis == "given: threshold=0.7"
