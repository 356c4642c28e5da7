"""A training result's reward counters and monitor summary are typed and dump as the dicts did (no torch needed)."""

from __future__ import annotations

import json

from whileai.train._monitor import HackMonitor
from whileai.train._result import JudgeCalls, MonitorSummary, TrainResult
from whileai.train._reward import trl_reward

# HackMonitor.summary() and TrlReward.stats() as the code before the blocks were typed wrote them (the setup below)
OLD_MONITOR = {"notes": ["divergence is not checked until gold is scored: no gold= was given (pass a scorer the proxy "
                         "cannot see)"],
               "points": [], "alarms": [{"name": "feature", "step": 3, "line": "x", "stops": True}], "stopped": False,
               "stop_reason": None, "stop_on": ["feature"], "kl": [{"step": 3, "kl": 0.5}], "n_recent": 0, "scan": None,
               "settings": {"every": 10, "window": 3, "delta": 0.1, "kl_budget": 1, "length_pct": 0.25,
                            "endorsed": ["tool_calls"]}}
OLD_REWARD = {"judge": "j", "n_batches": 1, "n_calls": 1, "n_errors": 0, "statuses": {"ok": 1}, "markers": {"a": 1.0}}


def _setup() -> tuple[dict, dict]:
    monitor = HackMonitor(kl_budget=1, stop_on=["feature"], endorsed=["tool_calls"])
    monitor.kl.append((3, 0.5))
    monitor.alarms.append({"name": "feature", "step": 3, "line": "x", "stops": True})
    judge = trl_reward(lambda row: {"reward": 1.0, "markers": {"a": 1.0}}, name="j")
    judge(prompts=["hi"], completions=["yo"])
    return monitor.summary(), judge.stats()


def test_the_blocks_dump_what_the_dicts_were():
    monitor, reward = _setup()
    assert monitor == OLD_MONITOR and reward == OLD_REWARD  # the sources are unchanged
    result = TrainResult(method="grpo", reward=reward, monitor=monitor)
    assert isinstance(result.reward, JudgeCalls) and isinstance(result.monitor, MonitorSummary)
    out = result.to_dict()
    assert out["monitor"] == OLD_MONITOR and out["reward"] == OLD_REWARD
    assert json.dumps(out["monitor"]) == json.dumps(OLD_MONITOR)  # same keys in the same order, kl_budget stays 1
    assert json.loads(result.model_dump_json())["monitor"] == OLD_MONITOR


def test_old_reads_still_read():
    monitor, reward = _setup()
    result = TrainResult(method="grpo", reward=reward, monitor=monitor)
    assert [a["line"] for a in result.monitor.get("alarms", [])] == ["x"]  # what _finish reads into the run summary
    assert result.reward["n_calls"] == 1 and result.reward["judge"] == "j" and result.monitor.alarms[0].stops
    back = TrainResult.model_validate_json(result.model_dump_json())
    assert back.model_dump_json() == result.model_dump_json()
    assert TrainResult(method="sft").to_dict()["monitor"] is None
