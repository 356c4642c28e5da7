"""The hack monitor's divergence alarm reads the paired proxy-minus-gold difference (no torch needed)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from whileai.train import HackMonitor

KEYS = [f"t{i}" for i in range(20) for _ in range(4)]  # 20 tasks, 4 completions each


def _feed(m: HackMonitor, proxies: list[list[float]], golds: list[list[float]]) -> list[str]:
    for step, (p, g) in enumerate(zip(proxies, golds)):
        m.record_holdout(step * 10, proxy=p, gold=g, lengths=[10.0] * len(p), task_keys=KEYS)
    return [a["name"] for a in m.check(10 * (len(proxies) - 1))]


def test_proxy_that_is_gold_raises_nothing():
    # the training reward and the held-out judge are the same function: every gap is zero, whatever gold does
    rng = np.random.default_rng(3)
    rates = (0.4, 0.5, 0.6)  # a real climb of 0.2 whose per-task interval still includes zero
    scores = [list((rng.random(len(KEYS)) < r).astype(float)) for r in rates]
    assert np.mean(scores[2]) - np.mean(scores[0]) >= 0.1  # the proxy gained delta: the old rule raised here
    m = HackMonitor(window=3, delta=0.1)
    assert _feed(m, scores, scores) == []


def test_a_real_divergence_still_raises():
    # proxy climbs while gold stays where it was on every task: the gap grows
    rng = np.random.default_rng(1)
    gold = list((rng.random(len(KEYS)) < 0.4).astype(float))
    proxies = [[0.3] * len(KEYS), [0.5] * len(KEYS), [0.8] * len(KEYS)]
    m = HackMonitor(window=3, delta=0.1)
    assert _feed(m, proxies, [gold, gold, gold]) == ["divergence"]
    line = m.alarms[0]["line"]
    assert "proxy minus gold +0.50 per task" in line


def test_gap_interval_matches_scipy():
    first = {"gap_by_task": {"a": 0.0, "b": 0.5, "c": 0.25, "d": 1.0}}
    last = {"gap_by_task": {"a": 0.5, "b": 0.5, "c": 1.0, "d": 1.0}}
    up, mean, (lo, hi) = HackMonitor._paired_change(first, last, "gap_by_task")
    d = np.array([0.5, 0.0, 0.75, 0.0])
    ref = stats.t.interval(0.95, df=3, loc=d.mean(), scale=stats.sem(d))
    assert mean == pytest.approx(d.mean()) and (lo, hi) == pytest.approx(ref) and up == bool(ref[0] > 0)


def test_false_alarms_by_seeded_simulation():
    """Proxy and gold are two independent draws of the same per-task quality, which rises by 0.15 over the
    window: no divergence exists, so the alarm rate is the test's size (one-sided 2.5% at the t interval)."""
    rng = np.random.default_rng(2026)
    sims, fired = 400, 0
    for _ in range(sims):
        base = rng.uniform(0.2, 0.6, size=20)
        rates = [np.repeat(base + lift, 4) for lift in (0.0, 0.075, 0.15)]
        proxies = [list((rng.random(len(KEYS)) < r).astype(float)) for r in rates]
        golds = [list((rng.random(len(KEYS)) < r).astype(float)) for r in rates]
        fired += "divergence" in _feed(HackMonitor(window=3, delta=0.1), proxies, golds)
    rate = fired / sims
    # binomial upper bound: at a true rate of 2.5%, 400 draws exceed 5% with probability under 0.1%
    assert rate <= 0.05, rate


def test_every_alarm_stays_on_the_run_notes(tmp_path):
    from whileai.platform import track

    run = track({"name": "agent"}, store=tmp_path / "s.duckdb").run("grpo-v1")
    m = HackMonitor(kl_budget=0.05, run=run)
    m.record_kl(5, 0.2)
    rng = np.random.default_rng(1)
    gold = list((rng.random(len(KEYS)) < 0.4).astype(float))
    _feed(m, [[0.3] * len(KEYS), [0.5] * len(KEYS), [0.8] * len(KEYS)], [gold, gold, gold])
    assert [a["name"] for a in m.alarms] == ["divergence", "drift"]
    assert "divergence at step" in run.notes and "drift at step" in run.notes
    run.note("what changed", append=True)
    assert run.notes.count("at step") == 2 and run.notes.endswith("what changed")
