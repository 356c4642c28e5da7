"""calibrate and calibration_of: stamps against the Wilson formula, carried stamps, typed read-back."""

from __future__ import annotations

import json

import pytest

from tests.selection._helpers import group, wilson_reference
from whileai import calibrate, select_for_rl
from whileai.data import ScoredData, Selection
from whileai.selection import Calibration, calibration_of
from whileai.testing import rollout_table


def test_calibrate_stamps_every_graded_row_with_the_wilson_interval():
    rows = group("a", [1.0, 0.0, 1.0, None]) + group("b", [0.0, 0.0, 0.0, 1.0, 1.0])
    out = calibrate(rows)
    assert isinstance(out, ScoredData)
    assert (out.report.n_stamped, out.report.n_unstamped, out.report.n_tasks) == (8, 1, 2)
    stamps = [calibration_of(r) for r in out.rows()]
    assert stamps[3] is None  # the ungraded row
    a, b = stamps[0], stamps[4]
    assert (a.n, a.pass_rate) == (3, pytest.approx(2 / 3))
    assert a.pass_rate_ci95 == pytest.approx(tuple(round(x, 4) for x in wilson_reference(2, 3)))
    assert (b.n, b.pass_rate) == (5, pytest.approx(0.4))
    assert b.pass_rate_ci95 == pytest.approx(tuple(round(x, 4) for x in wilson_reference(2, 5)))
    assert a.student.version == "pol@1"


def test_policy_and_model_on_the_call_override_the_rows():
    out = calibrate(group("a", [1.0, 0.0]), policy="v2", model="qwen")
    cal = calibration_of(out[0])
    assert (cal.student.version, cal.student.model) == ("v2", "qwen")


def test_a_stamp_over_more_repeats_is_carried_not_remeasured():
    df = rollout_table(30, 16, seed=6)
    sel = select_for_rl(df, target=None)
    assert isinstance(sel, Selection)
    before = {r["scenario_id"]: calibration_of(r) for r in sel.rows()}
    again = calibrate(sel)
    assert isinstance(again, Selection) and again.meta["mode"] == "rl"
    after = {r["scenario_id"]: calibration_of(r) for r in again.rows()}
    assert before == after
    shrunk = sel.df.group_by("task_key").len().filter(sel.df.group_by("task_key").len()["len"] < 16)
    assert again.report.n_carried == int(sel.df.filter(sel.df["task_key"].is_in(shrunk["task_key"].implode())).height)


def test_calibration_of_reads_dicts_json_text_and_rejects_bad_stamps():
    good = {"task_id": "t", "n": 8, "pass_rate": 0.5, "pass_rate_ci95": [0.2, 0.8],
            "student": {"name": "", "model": None, "prompt_hash": None, "version": "v1"}}
    assert calibration_of({"calibration": good}) == Calibration(**{**good, "pass_rate_ci95": (0.2, 0.8)})
    assert calibration_of({"calibration": json.dumps(good)}).n == 8
    assert calibration_of({"calibration": {**good, "n": 0}}) is None
    assert calibration_of({"calibration": {**good, "pass_rate": 1.5}}) is None
    assert calibration_of({"calibration": "not json"}) is None
    assert calibration_of({}) is None and calibration_of("row") is None
    # whileai 0.131 row value: a tuple interval and a student with an empty name
    old = {"task_id": "sc-8e74322acd", "student": {"name": "", "model": None, "prompt_hash": None,
                                                   "version": "seeded_agent@2144a6098b9f9279"},
           "n": 4, "pass_rate": 1.0, "mean_kl": None, "pass_rate_ci95": [0.5101, 1.0]}
    assert calibration_of({"calibration": old}).pass_rate_ci95 == (0.5101, 1.0)


def test_calibrate_without_rewards_warns_and_stamps_nothing():
    out = calibrate([{"scenario_id": "a", "prompt": "x"}])
    assert out.report.n_stamped == 0 and out.report.warnings
