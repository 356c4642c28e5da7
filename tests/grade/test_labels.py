"""attach_labels: every key form, warnings for unknown keys, raises before any change."""

from __future__ import annotations

import json

import polars as pl
import pytest

from whileai import table
from whileai.data import ScoredData, SimulationData
from whileai.errors import JudgeError
from whileai.grade import attach_labels


def _rows():
    """Plain rows as a DataFrame (attach_labels hands rows back in the kind they came in)."""
    return pl.DataFrame([
        {"rollout_id": "r0", "scenario_id": "s1", "rollout_index": 0, "prompt": "alpha"},
        {"rollout_id": "r1", "scenario_id": "s1", "rollout_index": 1, "prompt": "alpha"},
        {"rollout_id": "r2", "scenario_id": "s2", "rollout_index": 0, "prompt": "beta"},
        {"rollout_id": "r3", "scenario_id": "s3", "rollout_index": 0, "prompt": "gamma", "gold_reward": 1,
         "gold_kind": "program"},
    ])


def test_key_forms():
    labels = [
        {"key": "r0", "label": 1},                            # rollout_id as a key
        {"key": "s1#1", "label": 0},                          # scenario_id#rollout_index as a key
        {"scenario_id": "s2", "rollout_index": 0, "label": True},  # two fields
        {"prompt": "gamma", "label": 0},                      # the prompt
    ]
    df, report = attach_labels(_rows(), labels, kind="human")
    assert df["gold_reward"].to_list() == [1.0, 0.0, 1.0, 0.0]
    assert df["gold_kind"].to_list() == ["human"] * 4
    assert report.matched == 4 and report.unmatched == 0 and report.rows_labeled == 4
    assert report.by_form == {"prompt": 1, "rollout_id": 1, "scenario_id#rollout_index": 2}
    assert "attached 4 of 4 human labels" in str(report)


def test_dict_labels_and_rows_left_alone():
    df, report = attach_labels(_rows(), {"r2": 0})
    assert df["gold_reward"].to_list() == [None, None, 0.0, 1.0]  # r3 keeps what it had
    assert df["gold_kind"].to_list() == [None, None, "human", "program"]
    assert report.rows_labeled == 1


def test_unknown_keys_warn_and_none_raises():
    df, report = attach_labels(_rows(), {"r0": 1, "nope": 0, "s9#4": 1})
    assert report.unmatched == 2 and report.matched == 1
    assert any("2 of 3 labels named no row" in w and "'nope'" in w for w in report.warnings)
    assert "rollout_id / scenario_id#rollout_index / prompt" in report.unmatched_keys[0]
    with pytest.raises(JudgeError, match="name none"):
        attach_labels(_rows(), {"nope": 1})


def test_key_naming_two_rows_raises_before_any_change():
    rows = _rows().to_dicts()
    before = json.dumps(rows, sort_keys=True)
    with pytest.raises(JudgeError, match="name more than one .* unique rollout_id") as info:
        attach_labels(rows, [{"key": "r0", "label": 1}, {"prompt": "alpha", "label": 0}])
    assert "Nothing was changed" in str(info.value)
    assert json.dumps(rows, sort_keys=True) == before
    pooled = [{"scenario_id": "s", "rollout_index": 0, "prompt": "a"}, {"scenario_id": "s", "rollout_index": 0, "prompt": "b"}]
    with pytest.raises(JudgeError, match="'s#0' as scenario_id#rollout_index names 2 rows"):
        attach_labels(pooled, {"s#0": 1})


@pytest.mark.parametrize("bad", [0.5, 2, "yes", None, -1])
def test_labels_must_be_zero_or_one(bad):
    with pytest.raises(JudgeError, match=r"a label must be 0 or 1, got .* for key 'r0'"):
        attach_labels(_rows(), {"r0": bad})


@pytest.mark.parametrize("kind", ["crowd", "", None, 1])
def test_unknown_kind(kind):
    with pytest.raises(JudgeError, match="kind must be one of 'human', 'program' .* or 'model', got"):
        attach_labels(_rows(), {"r0": 1}, kind=kind)


def test_verifier_reads_as_program_and_model_kind():
    df, report = attach_labels(_rows(), {"r0": 1}, kind="verifier")
    assert df["gold_kind"][0] == "program" and report.kind == "program"
    df, _ = attach_labels(_rows(), {"r0": 1}, kind="model")
    assert df["gold_kind"][0] == "model"


def test_bad_label_records():
    with pytest.raises(JudgeError, match="label 0 must be a dict"):
        attach_labels(_rows(), [0, 1, 1])
    with pytest.raises(JudgeError, match="must carry 'label'"):
        attach_labels(_rows(), [{"key": "r0"}])
    with pytest.raises(JudgeError, match="must name its row"):
        attach_labels(_rows(), [{"label": 1}])
    with pytest.raises(JudgeError, match="at least one label"):
        attach_labels(_rows(), [])


def test_majority_and_ties():
    labels = [{"key": "r0", "label": 1}, {"key": "r0", "label": 1}, {"key": "r0", "label": 0},
              {"key": "r1", "label": 1}, {"key": "r1", "label": 0}]
    df, report = attach_labels(_rows(), labels)
    assert df["gold_reward"].to_list()[:2] == [1.0, None]
    assert report.ties == 1 and any("tie" in w for w in report.warnings)


def test_fluent_objects_keep_their_class_and_meta(tmp_path):
    data = SimulationData(table.frame(_rows()), meta={"mode": "rl"})
    labeled, _ = attach_labels(data, {"r1": 1})
    assert isinstance(labeled, SimulationData) and labeled.meta == {"mode": "rl"}
    assert data.df["gold_reward"].to_list() == [None, None, None, 1.0]  # the original is not changed
    scored, _ = attach_labels(ScoredData(table.frame(_rows())), {"r1": 1})
    assert isinstance(scored, ScoredData)
    path = tmp_path / "labels.jsonl"
    path.write_text('{"key": "r2", "label": 1}\n')
    df, report = attach_labels(_rows(), path)
    assert df["gold_reward"][2] == 1.0


def test_result_comes_back_in_the_kind_it_came_in():
    labeled = attach_labels(_rows(), {"r0": 1})
    assert isinstance(labeled.rows, pl.DataFrame) and labeled.report.matched == 1
    as_list = attach_labels(_rows().to_dicts(), {"r0": 1})
    assert isinstance(as_list.rows, list) and as_list.rows[0]["gold_reward"] == 1.0
