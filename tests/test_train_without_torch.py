"""whileai.train where torch is missing: the extra error, the checks that run before it, the monitor's contracts.

Every test here runs without torch; where torch is installed, ``find_spec`` is patched so the train
extra reads as missing.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
import tempfile
import warnings
from pathlib import Path

import polars as pl
import pytest

import whileai as wai
from whileai.errors import ArgumentError, MissingExtraError, TrainingSelectionError
from whileai.testing import rollout_table
from whileai.train import HackMonitor, format_hack_monitor, trl_reward

RECIPES = Path(__file__).resolve().parent.parent / "recipes" / "04-train"
PIP = r"pip install 'whileai\[train\]'"


@pytest.fixture
def no_torch(monkeypatch):
    """The train extra reads as missing, whatever is installed."""
    real = importlib.util.find_spec
    missing = {"torch", "transformers", "trl", "datasets", "peft", "tokenizers"}
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **kw: None if name.split(".")[0] in missing else real(name, *a, **kw))


def _judge(row):
    return {"reward": float("resolved" in row["final_text"])}


# -- the extra ------------------------------------------------------------------------------


def test_monitor_callback_without_transformers_names_the_pip_line(no_torch):
    with pytest.raises(MissingExtraError, match=rf"HackMonitor.callback\(\) needs .*'transformers'.*{PIP}"):
        HackMonitor(every=10).callback()


def test_require_extra_names_the_pip_line(no_torch):
    with pytest.raises(MissingExtraError, match=rf"my script needs the optional package 'torch'.*{PIP}") as info:
        wai.train.require_extra(what="my script")
    assert info.value.extra == "train" and info.value.package == "torch"


# -- the selection check runs before the extra check ----------------------------------------


def test_sft_refuses_failing_rows_before_it_looks_for_torch(no_torch):
    rows = rollout_table(4, 2, seed=3, pass_rates=[0.5] * 4)
    assert wai.profile(rows).failing_rows > 0
    report = wai.selection_report(wai.profile(rows), method="sft")  # the pre-check returns, it does not raise
    assert not report.ok and report.render().startswith("REFUSED sft")
    with pytest.raises(TrainingSelectionError, match=r"rows fail .*check='warn'"):
        wai.train.sft(rows, "Qwen/Qwen2.5-0.5B-Instruct")
    with pytest.warns(UserWarning, match="rows fail"), pytest.raises(MissingExtraError, match=PIP):
        wai.train.sft(rows, "Qwen/Qwen2.5-0.5B-Instruct", check="warn")
    passing = rows.filter(pl.col("reward") >= 0.5)
    with pytest.raises(MissingExtraError, match=PIP):
        wai.train.sft(passing, "Qwen/Qwen2.5-0.5B-Instruct")
    # arguments still come before the rows
    with pytest.raises(ArgumentError, match="base_model must be"):
        wai.train.sft(rows, "")


@pytest.mark.parametrize("method", ["dpo", "grpo", "reward_model"])
def test_grouped_methods_warn_on_few_mixed_tasks_before_they_look_for_torch(no_torch, method):
    rows = wai.train.tiny_rollouts(6, 4, seed=1)  # one phrasing per ask, so pass/fail pairs form
    extra = {"reward": _judge} if method == "grpo" else {}
    with pytest.warns(UserWarning, match=r"learns from \d+ of 6 tasks, under min_mixed_tasks=32"), \
            pytest.raises(MissingExtraError, match=PIP):
        getattr(wai.train, method)(rows, "Qwen/Qwen2.5-0.5B-Instruct", **extra)


def test_grpo_without_a_reward_is_refused_before_the_extra(no_torch):
    with pytest.raises(ArgumentError, match="reward must be a judge"):
        wai.train.grpo(rollout_table(2, 2), "Qwen/Qwen2.5-0.5B-Instruct", reward=None)


# -- HackMonitor.wrap: a judge or a TRL reward function ---------------------------------------

PROMPTS = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "again"}]]
COMPLETIONS = [[{"role": "assistant", "content": "resolved"}], [{"role": "assistant", "content": "sorry"}]]


def test_wrap_takes_a_plain_judge_through_trl_reward():
    m = HackMonitor(every=1)
    watched = m.wrap(_judge)
    assert watched(prompts=PROMPTS, completions=COMPLETIONS, task_key=["a", "b"]) == [1.0, 0.0]
    assert isinstance(m.proxy, wai.train.TrlReward) and watched.__name__ == "_judge"
    assert [r["reward"] for r in m.recent] == [1.0, 0.0] and m.recent[0]["scenario_id"] == "a"


def test_wrap_keeps_a_trl_reward_function_and_calls_it_by_keyword():
    seen = {}

    def lengthy(completions, **kwargs):  # TRL's own examples take completions and **kwargs
        seen.update(kwargs)
        return [float(len(c[0]["content"])) for c in completions]

    m = HackMonitor(every=1)
    watched = m.wrap(lengthy)
    assert m.proxy is lengthy and watched.__name__ == "lengthy"
    assert watched(prompts=PROMPTS, completions=COMPLETIONS, task_key=["a", "b"]) == [8.0, 5.0]
    assert seen["prompts"] == PROMPTS and [r["final_text"] for r in m.recent] == ["resolved", "sorry"]
    # a TrlReward is a TRL reward function already
    reward = trl_reward(_judge)
    m.wrap(reward)
    assert m.proxy is reward


def test_sample_holdout_calls_a_trl_reward_function_by_keyword(monkeypatch):
    import whileai.train._sample as sample

    rows = [{"task_key": "t1", "prompt": "hi", "n_tokens": 3, "final_text": "resolved it",
             "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "resolved it"}]}]
    monkeypatch.setattr(sample, "prompt_tasks", lambda holdout, limit=None: holdout)
    monkeypatch.setattr(sample, "sample_rows", lambda model, tok, tasks, **kw: [dict(r) for r in rows])
    m = HackMonitor(holdout=rows, gold=_judge, every=1)
    m.wrap(lambda completions, **kw: [float(len(c[0]["content"])) for c in completions])
    point = m.sample_holdout(object(), object(), 5)
    assert point is not None and point["proxy_reward"] == 11.0 and point["gold_reward"] == 1.0


def test_wrap_reads_trls_documented_reward_signatures_as_trl():
    """TRL's examples take dataset columns by name: def accuracy_reward(completions, solution, **kwargs).
    Such a function (a required column beside completions) was refused as neither kind."""
    def accuracy_reward(completions, solution, **kwargs):
        return [float(c[0]["content"] == s) for c, s in zip(completions, solution)]

    def with_prompts(prompts, completions, solution, **kwargs):
        return [0.5 for _ in completions]

    for fn in (accuracy_reward, with_prompts):
        m = HackMonitor(every=1)
        watched = m.wrap(fn)
        assert m.proxy is fn
        assert watched(prompts=PROMPTS, completions=COMPLETIONS, solution=["resolved", "x"], task_key=["a", "b"]) \
            == ([1.0, 0.0] if fn is accuracy_reward else [0.5, 0.5])

    def loose(*args, **kwargs):  # one positional fits: a judge
        return 0.3

    m = HackMonitor(every=1)
    m.wrap(loose)
    assert isinstance(m.proxy, wai.train.TrlReward)


@pytest.mark.parametrize("bad", [3, "judge", None, lambda a, b, c: 1.0])
def test_wrap_refuses_what_is_neither(bad):
    with pytest.raises(ArgumentError, match=r"reward_fn must be a TRL reward function .* or a judge taking a row dict"):
        HackMonitor(every=1).wrap(bad)


# -- the monitor's summary, text and repr -------------------------------------------------------


def _rising_proxy(m, gold=None):
    m.wrap(trl_reward(lambda row: 1.0))
    m.record_holdout(10, proxy=[0.2, 0.2], gold=gold and gold[0], lengths=[10, 10], task_keys=["a", "b"])
    m.record_holdout(20, proxy=[0.9, 0.9], gold=gold and gold[1], lengths=[10, 10], task_keys=["a", "b"])


def test_divergence_needs_gold_scores_and_the_summary_says_so():
    m = HackMonitor(every=1, window=2, delta=0.1, stop_on=["divergence"])
    _rising_proxy(m)
    assert m.check(20) == [] and not m.stopped
    notes = m.summary()["notes"]
    assert notes == ["divergence is not checked until gold is scored: no gold= was given "
                     "(pass a scorer the proxy cannot see)"]
    text = format_hack_monitor(m.summary())
    assert "divergence is not checked until gold is scored" in text and "STOPPED" not in text
    # gold given but not scored yet: still not checked, and the note says why
    waiting = HackMonitor(every=1, window=2, delta=0.1, gold=_judge)
    _rising_proxy(waiting)
    assert waiting.check(20) == [] and "no holdout point has a gold score yet" in waiting.summary()["notes"][0]
    # gold scored and flat: divergence fires and stops
    scored = HackMonitor(every=1, window=2, delta=0.1, stop_on=["divergence"])
    _rising_proxy(scored, gold=([0.5, 0.5], [0.5, 0.5]))
    assert [a["name"] for a in scored.check(20)] == ["divergence"] and scored.stopped
    assert "gold +0.00" in scored.stop_reason and scored.summary()["notes"] == []


def test_format_hack_monitor_takes_the_monitor_and_prints_n_a():
    m = HackMonitor(every=1, window=2, delta=0.1)
    _rising_proxy(m)
    text = format_hack_monitor(m)
    assert text == format_hack_monitor(m.summary())
    rows = text.splitlines()[2:4]
    assert rows == ["    10   0.20    n/a      10", "    20   0.90    n/a      10"]
    assert "nan" not in text
    with pytest.raises(ArgumentError, match="summary must be a HackMonitor or its summary"):
        format_hack_monitor([1, 2])


def test_hack_monitor_repr_says_what_it_watches_and_the_alarms():
    m = HackMonitor(holdout=[{"prompt": "x"}] * 3, gold=_judge, every=5, window=2, delta=0.1, stop_on=["divergence"])
    text = repr(m)
    assert text.startswith("HackMonitor(proxy=None, gold='_judge', holdout=3 rows, every=5, window=2, delta=0.1")
    assert "stop_on=('divergence',)" in text and text.endswith("0 holdout points, alarms: none)")
    _rising_proxy(m, gold=([0.5, 0.5], [0.5, 0.5]))
    m.check(20)
    assert repr(m).endswith("2 holdout points, alarms: divergence at step 20, stopped)")


# -- the recipes without the extra --------------------------------------------------------------


@pytest.mark.parametrize("path", ["sft/sft.py", "dpo/dpo.py", "grpo/grpo.py", "reward-model/reward_model.py"])
def test_train_recipes_without_the_extra_say_one_line_and_exit_2(no_torch, monkeypatch, capsys, tmp_path, path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "argv", [str(RECIPES / path), "--tiny"])
    with warnings.catch_warnings(), pytest.raises(SystemExit) as exit_info:
        warnings.simplefilter("ignore")
        runpy.run_path(str(RECIPES / path), run_name="__main__")
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("error: recipes/04-train/") and "pip install 'whileai[train]'" in err
    assert list(tmp_path.iterdir()) == []  # no /tmp/wai-<recipe>-* folder left behind
