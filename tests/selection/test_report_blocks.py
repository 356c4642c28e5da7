"""The gate's and the RL selection's blocks are typed and dump the JSON the dicts did (issue 41).

``tests/data/blocks_pin/selection.json`` holds, per scenario below, ``model_dump_json()``,
``to_json()`` and ``render()`` as the code before the blocks were typed wrote them (pinned by
running these scenarios on it): ``signal``, ``calibration``, ``duplicates``,
``near_duplicate_prompts`` and ``length`` were dicts then. The scenarios reach each block full,
empty (no rows), with NaN k-way numbers (one rollout a task), refused (ungraded), with a named
policy and model, with a hack scan, and the RL selection's signal.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from pathlib import Path

import pytest

from whileai.guard import NearDuplicatePair, near_duplicate_prompts
from whileai.selection import (
    GateReport,
    GroupSignal,
    RLSelectionReport,
    publish_gate,
    select_for_rl,
)
from whileai.selection._calibration import CalibrationCounts
from whileai.selection._groups import Signal
from whileai.selection._hygiene import Duplicates, LengthSpread, NearDuplicateAsks
from whileai.testing import rollout_table

PINNED = json.loads((Path(__file__).parents[1] / "data" / "blocks_pin" / "selection.json").read_text())


def _row(t, r, i, text="ok", prompt=None):
    return {"scenario_id": t, "rollout_index": i, "reward": r, "prompt": prompt or f"please help with order {t} now",
            "final_text": text, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": text}]}


def _rich() -> list[dict]:
    """Five asks, three mixed, two all-pass; four near-duplicate asks, a duplicate rollout, one long reply an ask."""
    rows = []
    for j, t in enumerate(["a", "b", "c", "d", "e"]):
        for i, r in enumerate([1.0, 0.0, 1.0, 0.0] if j < 3 else [1.0, 1.0, 1.0]):
            rows.append(_row(t, r, i, text=("y" * 30 + str(i)) if i else "x" * 400,
                             prompt="cancel my order number 12 for me please today" + (" now" if t == "b" else "")))
    rows.append(copy.deepcopy(rows[1]))
    return rows


def _scenario(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "gate_rich": lambda: publish_gate(_rich(), strict=False),
            "gate_rich_policy": lambda: publish_gate(_rich(), strict=False, mode="rl", policy="p1", model="m1"),
            "gate_single": lambda: publish_gate([_row(f"t{i}", float(i % 2), 0) for i in range(4)], strict=False),
            "gate_empty": lambda: publish_gate([], strict=False),
            "gate_ungraded": lambda: publish_gate([_row("t", None, i) for i in range(3)], strict=False),
            "gate_table": lambda: publish_gate(rollout_table(6, 4, seed=1), strict=False, endorsed=[]),
            "gate_sft": lambda: publish_gate(rollout_table(4, 1, seed=2), strict=False, mode="sft", model="m2"),
            "rl_table": lambda: select_for_rl(rollout_table(8, 4, seed=0), target=None).report,
            "rl_rich": lambda: select_for_rl(_rich(), target=None, enforce_band=False).report,
        }[name]()


_FLOAT = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def _digits(text: str) -> str:
    """Every decimal number at 12 significant digits (the last digits of a float sum may move between releases)."""
    return _FLOAT.sub(lambda m: format(float(m.group()), ".12g"), text)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_report_dumps_what_it_did_and_loads_back(name):
    report = _scenario(name)
    pinned = PINNED[name]
    assert _digits(report.model_dump_json()) == _digits(pinned["json"])
    assert _digits(report.to_json(indent=None)) == _digits(pinned["to_json"])
    assert report.render() == pinned["render"]
    assert isinstance(report.signal, Signal) and isinstance(report.signal, GroupSignal)
    if isinstance(report, GateReport):
        assert isinstance(report.calibration, CalibrationCounts) and isinstance(report.duplicates, Duplicates)
        assert isinstance(report.near_duplicate_prompts, NearDuplicateAsks) and isinstance(report.length, LengthSpread)
        assert all(isinstance(p, NearDuplicatePair) for p in report.near_duplicate_prompts.examples)
    # a stored report (NaN written as null) loads into the blocks and dumps the same JSON
    back = type(report).model_validate_json(pinned["json"])
    assert back.model_dump_json() == pinned["json"] and back.render() == pinned["render"]


def test_the_blocks_read_as_the_dicts_did():
    gate = _scenario("gate_rich")
    assert gate.signal["n_mixed"] == gate.signal.n_mixed == 3 and gate.signal.get("n_in_band") == 3
    assert gate.duplicates["n_dropped"] == 1 and gate.duplicates["n"] == gate.duplicates.n_rows == 19
    assert gate.length["n_groups_wide_spread"] == 5 and gate.length.get("median_chars") == 31.0
    pair = gate.near_duplicate_prompts["examples"][-1]
    assert (pair["task_a"], pair["task_b"], pair["jaccard"]) == ("a", "b", 0.9)
    assert gate.calibration["n_stamped"] == 19 and gate.calibration["student"] == {}
    assert "warnings" in gate.signal and "warnings" not in gate.length and "warnings" not in gate.duplicates
    empty = _scenario("gate_empty")
    assert not empty.signal and not empty.length and empty.length.keys() == [] and empty.model_dump()["signal"] == {}


def test_a_signal_with_undefined_rates_is_nan_and_loads_from_null():
    signal = _scenario("gate_single").signal
    assert signal.n_single == 4 and signal.mixed_rate != signal.mixed_rate  # NaN: no task has two graded rollouts
    assert json.loads(signal.model_dump_json())["mixed_rate"] is None
    stored = GroupSignal.model_validate({"n_groups": 2, "mixed_rate": None, "pass_at_k": None})
    assert stored.mixed_rate != stored.mixed_rate and stored.pass_at_k != stored.pass_at_k


def test_the_rl_report_loads_a_stored_signal_dict():
    stored = json.loads(PINNED["rl_table"]["json"])
    back = RLSelectionReport.model_validate({"n_rows": 32, "signal": stored["signal"]})
    assert isinstance(back.signal, Signal) and back.signal.n_mixed == stored["signal"]["n_mixed"]


def test_guard_near_duplicate_pairs_name_only_the_prompts():
    report = near_duplicate_prompts([{"prompt": "cancel order 12 for me please now"},
                                     {"prompt": "cancel order 12 for me please now!"}, {"prompt": "hello"}])
    (pair,) = report.examples
    assert isinstance(pair, NearDuplicatePair) and pair.task_a is None
    assert json.loads(report.model_dump_json())["examples"] == [{"a": pair.a, "b": pair.b, "jaccard": pair.jaccard}]
