"""TrainResult's knobs, curve, selection check and monitor points are typed and dump the JSON the dicts did (no torch).

``tests/data/blocks_pin/train.json`` holds, per scenario below, ``model_dump_json()``,
``to_json()``, ``repr(model_dump())`` and ``render()`` as the code before these fields were typed
wrote them (pinned by running these scenarios on it): the knobs of each method in the order its
call passes them, a curve with the trainer's extra numbers and a NaN loss, the selection check of
each method (SFT refused and warned), and monitor points with NaN proxy and gold.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest

from whileai import table
from whileai.testing import rollout_table
from whileai.train import SelectionReport
from whileai.train._knobs import check_knobs
from whileai.train._monitor import HackMonitor
from whileai.train._result import CurvePoint, Knobs, MonitorPoint, TrainResult
from whileai.train._trainers import _check_grouped, _check_sft

PINNED = json.loads((Path(__file__).parent / "data" / "blocks_pin" / "train.json").read_text())

CURVE_SFT = [{"step": 1, "loss": 2.5, "lr": 2e-4, "grad_norm": 1.25}, {"step": 2, "loss": 2.0, "lr": None, "grad_norm": 0.5}]
CURVE_GRPO = [{"step": 1, "loss": 0.0, "lr": 1e-6, "reward": 0.5, "rewards/gold/mean": 0.25, "completions/mean_length": 12.0,
               "kl": 0.0}]
GRPO_KNOBS = {"steps": 2, "generations": 4, "learning_rate": 1e-6, "beta": 0.04, "max_completion_length": 64,
              "temperature": 0.9, "loss_type": "dapo", "truncated": "mask"}


def _monitor() -> dict:
    mon = HackMonitor(kl_budget=0.5, stop_on=["feature"])
    mon.record_holdout(10, proxy=[0.5, 1.0, None], gold=[0.0, None, 1.0], lengths=[12, 14, 3], task_keys=["a", "b", "a"])
    mon.record_holdout(20, proxy=[None, None], gold=None, lengths=[10, 11], task_keys=["a", "b"])
    return mon.summary()


def _scenario(name: str) -> TrainResult:
    rows = rollout_table(6, 4, seed=3)
    passing = [r for r in table.rows(rows) if (r.get("reward") or 0) >= 0.5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "train_sft": lambda: TrainResult(method="sft", knobs=check_knobs("sft", {"epochs": 2, "learning_rate": 1e-4}),
                                             curve=CURVE_SFT, selection=_check_sft(passing, "error")),
            "train_sft_warn": lambda: TrainResult(method="sft", knobs=check_knobs("sft", {"epochs": None, "learning_rate": None}),
                                                  selection=_check_sft(rows, "warn")),
            "train_dpo": lambda: TrainResult(method="dpo", knobs=check_knobs("dpo", {"steps": 3, "beta": 0.1, "loss_type": "sigmoid",
                                                                                     "learning_rate": 5e-6}),
                                             selection=_check_grouped(rows, "dpo", 2)),
            "train_grpo": lambda: TrainResult(method="grpo", knobs=check_knobs("grpo", GRPO_KNOBS), curve=CURVE_GRPO,
                                              selection=_check_grouped(rows, "grpo", 100)),
            "train_rm": lambda: TrainResult(method="rm", knobs=check_knobs("rm", {"steps": 3, "learning_rate": 1e-5}),
                                            selection=_check_grouped(rows, "rm", 2)),
            "train_bare": lambda: TrainResult(),
            "train_monitor": lambda: TrainResult(method="grpo", monitor=_monitor(),
                                                 curve=[{"step": 3, "loss": float("nan"), "lr": 1e-6}]),
        }[name]()


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_result_dumps_what_it_did_and_loads_back(name):
    result = _scenario(name)
    pinned = PINNED[name]
    assert result.model_dump_json() == pinned["json"]
    assert result.to_json(indent=None) == pinned["to_json"]
    assert repr(result.model_dump()) == pinned["repr"]
    assert result.render() == pinned["render"]
    assert isinstance(result.knobs, Knobs) and all(isinstance(p, CurvePoint) for p in result.curve)
    assert result.selection is None or isinstance(result.selection, SelectionReport)
    assert result.monitor is None or all(isinstance(p, MonitorPoint) for p in result.monitor.points)
    back = TrainResult.model_validate_json(pinned["json"])  # a stored result: the knobs keep their order
    assert back.model_dump_json() == pinned["json"] and back.render() == pinned["render"]


def test_the_blocks_read_as_the_dicts_did():
    grpo = _scenario("train_grpo")
    assert grpo.knobs["beta"] == grpo.knobs.beta == 0.04 and "epochs" not in grpo.knobs
    assert grpo.knobs.keys() == list(GRPO_KNOBS) and grpo.knobs == GRPO_KNOBS
    dpo = _scenario("train_dpo")
    assert dpo.knobs.keys() == ["steps", "beta", "loss_type", "learning_rate"]  # as the call passed them
    point = grpo.curve[0]
    assert point["rewards/gold/mean"] == 0.25 and point.get("kl") == 0.0 and point.loss == 0.0
    assert point.keys() == list(CURVE_GRPO[0]) and point == CURVE_GRPO[0]
    assert grpo.selection["n_used"] == grpo.selection.n_used == 5 and grpo.selection.method == "grpo"
    assert not _scenario("train_bare").knobs and TrainResult().model_dump()["knobs"] == {}
    points = _scenario("train_monitor").monitor.points
    assert points[0]["gold_reward"] == 0.5 and math.isnan(points[1].proxy_reward)
