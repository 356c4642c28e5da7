"""whileai.train without torch: knobs, profile, selection rules, the trl_reward contract, monitor logic."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

import whileai as wai
from whileai.defaults import TRAINING_KNOBS
from whileai.errors import ArgumentError, JudgeError
from whileai.testing import rollout_table
from whileai.train import (
    HackMonitor,
    check_knobs,
    cost_line,
    format_hack_monitor,
    profile,
    selection_report,
    trl_reward,
)


def test_knobs_accept_the_range_and_refuse_with_the_reference():
    assert check_knobs("grpo", {"generations": 64, "beta": 0.04, "loss_type": "dapo", "truncated": "mask"}) == {
        "generations": 64, "beta": 0.04, "loss_type": "dapo", "truncated": "mask"}
    with pytest.raises(ArgumentError, match=r"generations must be a whole number in \[2, 256\], got 1\. The cited paper used 64"):
        check_knobs("grpo", {"generations": 1})
    with pytest.raises(ArgumentError, match=r"loss_type must be one of grpo, dr_grpo, dapo, bnpo for grpo, got 'sigmoid'.*used 'dapo'"):
        check_knobs("grpo", {"loss_type": "sigmoid"})
    with pytest.raises(ArgumentError, match=r"steps must be set only for dpo, grpo, rm.*SFT takes epochs="):
        check_knobs("sft", {"steps": 3})
    with pytest.raises(ArgumentError, match=r"knob must be one of .*got 'lr'"):
        check_knobs("sft", {"lr": 1e-5})
    with pytest.raises(ArgumentError, match="learning_rate must be a number"):
        check_knobs("dpo", {"learning_rate": float("nan")})
    every = {"epochs", "steps", "generations", "learning_rate", "beta", "max_completion_length", "temperature",
             "loss_type", "truncated"}
    assert set(TRAINING_KNOBS) == every
    assert all("source" in spec and "paper" in spec for spec in TRAINING_KNOBS.values())


def test_profile_counts_match_a_python_reference():
    df = rollout_table(30, 4, seed=5)
    df = df.with_columns(pl.when(pl.col("rollout_index") == 0).then(None).otherwise(pl.col("reward")).alias("reward"))
    p = profile(df)
    by_task: dict[str, list[float]] = {}
    for sid, r in zip(df["scenario_id"], df["reward"]):
        by_task.setdefault(sid, [])
        if r is not None:
            by_task[sid].append(r)
    mixed = sum(1 for v in by_task.values() if any(x >= 0.5 for x in v) and any(x < 0.5 for x in v))
    assert p.mixed_tasks == mixed
    assert p.all_pass_tasks == sum(1 for v in by_task.values() if len(v) >= 2 and all(x >= 0.5 for x in v))
    assert p.ungraded_rows == 30 and p.n_graded == 90 and p.n_tasks == 30
    assert p.passing_rows + p.failing_rows == p.n_graded


def test_sft_selection_refuses_failing_rows_and_grouped_methods_warn_with_reasons():
    df = rollout_table(10, 4, seed=2, pass_rates=[0.5] * 5 + [1.0] * 5)
    sft = selection_report(profile(df), method="sft")
    assert not sft.ok and "check='warn'" in sft.warnings[0] and sft.dropped["failing"] == profile(df).failing_rows
    passing = selection_report(profile(df.filter(pl.col("reward") >= 0.5)), method="sft")
    assert passing.ok and not passing.warnings
    g = selection_report(profile(df), method="grpo")
    assert g.ok and g.n_used == profile(df).mixed_tasks and g.n_given == 10
    assert g.warnings and f"{g.n_used} of 10 tasks, under min_mixed_tasks=32" in g.warnings[0]
    assert "all_pass" in g.warnings[0] and "zero advantage" in g.reasons["all_pass"]
    assert not selection_report(profile(df), method="dpo", min_mixed_tasks=2).warnings
    with pytest.raises(ArgumentError, match="method must be one of"):
        selection_report(profile(df), method="ppo")


def test_trl_reward_keeps_the_judge_contract_and_counts_errors():
    seen = []

    def judge(row):
        seen.append(row)
        if "boom" in row["final_text"]:
            raise RuntimeError("judge down")
        if "bad" in row["final_text"]:
            return "yes"
        return {"reward": float(row["final_text"] == row["answer"]), "markers": {"polite": 1.0}}

    reward = trl_reward(judge)
    prompts = [[{"role": "user", "content": "2+2?"}]] * 4
    completions = [[{"role": "assistant", "content": t}] for t in ("4", "5", "boom", "bad")]
    out = reward(prompts, completions, answer=["4"] * 4, trainer_state=object())
    assert out == [1.0, 0.0, None, None]
    assert reward.statuses == {"ok": 2, "error": 1, "invalid_result": 1} and reward.n_errors == 2
    assert reward.marker_means() == {"polite": 1.0}
    assert seen[0]["prompt"] == "2+2?" and seen[0]["messages"][-1] == {"role": "assistant", "content": "4"}
    assert "trainer_state" not in seen[0] and seen[0]["answer"] == "4"
    zero = trl_reward(judge, on_error="zero")
    assert zero(["q"] * 2, ["boom", "4"], answer=["4", "4"]) == [0.0, 1.0]
    assert reward.__name__ == "judge"
    with pytest.raises(JudgeError, match="judge must be a callable"):
        trl_reward(None)


def _scripted(monitor, fn, rng, steps, n_prompts=8, k=4, words=None):
    words = words or "the order was lost refund it now please check certainly status ok yes no help you".split()
    for step in range(steps):
        monitor.step = step
        prompts = [f"ask {p}" for p in range(n_prompts) for _ in range(k)]
        comps = [" ".join(rng.choice(words, 10)) for _ in prompts]
        fn(prompts, comps, task_key=[p.replace("ask ", "t") for p in prompts])


def test_monitor_raises_feature_on_a_phrase_judge_and_not_on_a_clean_one():
    rng = np.random.default_rng(0)

    def hack(row):
        return {"reward": float("certainly" in row["final_text"]), "markers": {"correct": float(rng.random() < 0.5)}}

    def clean(row):
        c = float(rng.random() < 0.5)
        return {"reward": c, "markers": {"correct": c}}

    alarms = {}
    for name, judge in (("hack", hack), ("clean", clean)):
        m = HackMonitor(endorsed=["marker:correct"], stop_on=("feature",))
        _scripted(m, m.wrap(trl_reward(judge)), rng, steps=4)
        alarms[name] = [a["name"] for a in m.check()]
        if name == "hack":
            assert m.stopped and "contains:certainly" in m.stop_reason
        else:
            assert not m.stopped
    assert alarms == {"hack": ["feature"], "clean": []}


def test_divergence_and_length_alarms_read_the_gold_interval():
    m = HackMonitor(window=3, delta=0.1)
    keys = [f"t{i}" for i in range(20) for _ in range(2)]
    rng = np.random.default_rng(1)
    for step, (proxy, length) in enumerate(((0.3, 10), (0.4, 11), (0.6, 14))):
        gold = list(rng.random(40) < 0.5)
        m.record_holdout(step * 10, proxy=[proxy] * 40, gold=[float(g) for g in gold], lengths=[length] * 40, task_keys=keys)
    names = [a["name"] for a in m.check(20)]
    assert names == ["divergence", "length"]
    assert m.check(30) == []  # each alarm once
    # gold rising with the proxy is not divergence
    up = HackMonitor(window=2, delta=0.1)
    up.record_holdout(0, proxy=[0.2] * 40, gold=[0.0] * 40, lengths=[10] * 40, task_keys=keys)
    up.record_holdout(10, proxy=[0.6] * 40, gold=[1.0] * 40, lengths=[10] * 40, task_keys=keys)
    assert up.check(10) == []


def test_gold_interval_matches_scipy():
    m = HackMonitor()
    first = {"gold_by_task": {"a": 0.0, "b": 0.5, "c": 0.25, "d": 1.0}}
    last = {"gold_by_task": {"a": 0.5, "b": 0.5, "c": 1.0, "d": 1.0}}
    up, mean, (lo, hi) = m._gold_moved_up(first, last)
    d = np.array([0.5, 0.0, 0.75, 0.0])
    ref = stats.t.interval(0.95, df=3, loc=d.mean(), scale=stats.sem(d))
    assert mean == pytest.approx(d.mean()) and (lo, hi) == pytest.approx(ref) and up == bool(ref[0] > 0)


def test_drift_alarm_and_the_run_log():
    class Run:
        def __init__(self):
            self.points, self.notes = [], []

        def log(self, *, step, loss=None, lr=None, **metrics):
            self.points.append({"step": step, **metrics})

        def note(self, text):
            self.notes.append(text)

    run = Run()
    m = HackMonitor(kl_budget=0.05, stop_on=["drift"], run=run)
    m.record_kl(5, 0.2)
    m.record_holdout(5, proxy=[1.0], gold=[0.0], lengths=[3], task_keys=["a"])
    assert [a["name"] for a in m.check(5)] == ["drift"] and m.stopped
    assert run.points == [{"step": 5, "proxy_reward": 1.0, "gold_reward": 0.0, "holdout_length": 3.0}]
    assert run.notes and run.notes[0].startswith("drift at step 5: KL 0.200")
    text = format_hack_monitor(m.summary())
    assert "STOPPED" in text and "! drift at step 5" in text


def test_monitor_arguments_are_checked():
    with pytest.raises(ArgumentError, match="stop_on must name alarms among"):
        HackMonitor(stop_on=("lenght",))
    with pytest.raises(ArgumentError, match="kl_budget must be a positive number"):
        HackMonitor(kl_budget=-1)


def test_cost_line_to_the_cent():
    cost, basis = cost_line(56, "NVIDIA A10G", 1.10)
    assert cost == round(56 / 3600 * 1.10, 2) and "estimate" in basis
    none, why = cost_line(56, "NVIDIA H200", None)
    assert none is None and "GPU rate unknown" in why


def test_import_whileai_does_not_load_torch_and_a_missing_extra_names_pip(monkeypatch):
    import subprocess
    import sys

    code = "import whileai, whileai.train, sys; print('torch' in sys.modules, 'trl' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False False"
    import importlib.util

    from whileai.errors import MissingExtraError
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "trl" else real(name, *a))
    with pytest.raises(MissingExtraError, match=r"pip install 'whileai\[train\]'"):
        wai.train.sft(rollout_table(2, 2).filter(pl.col("reward") >= 0.5), "x")  # passing rows: the extra is next


def test_reward_model_judge_refuses_other_results():
    with pytest.raises(ArgumentError, match="result must be a reward-model TrainResult"):
        wai.reward_model(wai.TrainResult(method="sft", adapter="x"))
    assert math.isclose(wai.reward_model({"method": "rm", "adapter": "p", "threshold": 0.7}).threshold, 0.7)
