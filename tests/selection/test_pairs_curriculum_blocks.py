"""PairsReport.length and CurriculumReport's task lists are typed and dump the JSON the dicts did (issue 41).

``tests/data/blocks_pin/pairs_curriculum.json`` holds, per scenario below, ``model_dump_json()``,
``to_json()``, ``repr(model_dump())`` and ``render()`` as the code before ``PairLengths`` and
``CurriculumTask`` wrote them (pinned by running these scenarios on it): a pair's length check,
no pair (the None numbers), an empty report, a curriculum in three tiers and one of thin tasks.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from whileai.selection import CurriculumReport, PairsReport, build_preference_pairs, curriculum
from whileai.selection._curriculum import CurriculumTask
from whileai.selection._pairs import PairLengths
from whileai.testing import rollout_table

PINNED = json.loads((Path(__file__).parents[1] / "data" / "blocks_pin" / "pairs_curriculum.json").read_text())


def _scenario(name: str) -> PairsReport | CurriculumReport:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "pairs_table": lambda: build_preference_pairs(rollout_table(8, 4, seed=0)).report,
            "pairs_none": lambda: build_preference_pairs(
                [{"scenario_id": "a", "reward": 1.0, "prompt": "p", "final_text": "x"}]).report,
            "pairs_empty_report": lambda: PairsReport(),
            "curriculum_table": lambda: curriculum(rollout_table(12, 6, seed=4), tiers=3),
            "curriculum_thin": lambda: curriculum(rollout_table(3, 2, seed=5), min_rollouts=4),
            "curriculum_empty_report": lambda: CurriculumReport(),
        }[name]()


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_report_dumps_what_it_did_and_loads_back(name):
    report = _scenario(name)
    pinned = PINNED[name]
    assert report.model_dump_json(indent=None) == json.dumps(json.loads(pinned["json"]), separators=(",", ":"))
    assert json.dumps(json.loads(report.to_json())) == pinned["to_json"]
    assert repr(report.model_dump()) == pinned["repr"] and report.render() == pinned["render"]
    if isinstance(report, PairsReport):
        assert isinstance(report.length, PairLengths)
    else:
        tasks = [*report.trainable, *report.retired, *report.not_ready, *report.thin, *(t for b in report.tiers for t in b)]
        assert all(isinstance(t, CurriculumTask) for t in tasks)
    back = type(report).model_validate_json(report.model_dump_json())  # a stored report loads and dumps the same
    assert back.model_dump_json() == report.model_dump_json()


def test_the_entries_read_as_the_dicts_did():
    pairs = _scenario("pairs_table")
    assert pairs.length["chosen_longer"] == pairs.length.chosen_longer and pairs.length.get("median_delta") == -47.0
    assert not _scenario("pairs_empty_report").length
    cur = _scenario("curriculum_table")
    first = cur.trainable[0]
    assert first["task_id"] == cur.schedule[0] and first.get("pass_rate") == first.pass_rate
    assert [t.task_id for b in cur.tiers for t in b] == cur.schedule
    assert first == {"task_id": first.task_id, "prompt": first.prompt, "n": first.n, "pass_rate": first.pass_rate}
