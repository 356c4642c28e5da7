"""GradeReport.failures is a list of GradeFailure and dumps the JSON the dicts did (issue 41).

``tests/data/blocks_pin/grade.json`` holds, per scenario below, ``model_dump_json()``,
``to_json()`` and ``repr(model_dump())`` (without the wall time and the scoring run id, which
change every run) and ``render()`` (its run id masked) as the code before the entries were typed
wrote them (pinned by running these scenarios on it): a judge that raises and one that gives no
reward, and a clean grade.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from whileai.grade import GradeReport, run_judge
from whileai.grade._run import GradeFailure
from whileai.testing import rollout_table

PINNED = json.loads((Path(__file__).parents[1] / "data" / "blocks_pin" / "grade.json").read_text())


def _judge(row):
    i = int(row["rollout_index"])
    if i == 1:
        raise RuntimeError("judge down")
    if i == 2:
        return {"markers": {}}
    return {"reward": 1.0}


def _scenario(name: str) -> GradeReport:
    if name == "grade_failures":
        return run_judge(rollout_table(3, 3, seed=1), _judge, judge_name="j", trust="off").report
    assert name == "grade_ok"
    return run_judge(rollout_table(2, 2, seed=1), lambda r: {"reward": 0.5}, judge_name="k", trust="off").report


def _without_run(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in ("seconds", "scoring_run_id")}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_report_dumps_what_it_did_and_loads_back(name):
    report = _scenario(name)
    pinned = PINNED[name]
    assert json.dumps(_without_run(json.loads(report.model_dump_json()))) == pinned["json"]
    assert json.dumps(_without_run(json.loads(report.to_json()))) == pinned["to_json"]
    assert repr(_without_run(report.model_dump())) == pinned["repr"]
    assert re.sub(r"score_[0-9a-f]+", "score_<id>", report.render()) == pinned["render"]
    assert all(isinstance(f, GradeFailure) for f in report.failures)
    back = GradeReport.model_validate_json(report.model_dump_json())  # a stored report loads and dumps the same
    assert back.model_dump_json() == report.model_dump_json()


def test_a_failure_reads_as_the_dict_did():
    first = _scenario("grade_failures").failures[0]
    assert (first["row"], first["status"], first.get("reason")) == (1, "error", "the judge raised RuntimeError: judge down")
    assert first == {"row": 1, "status": "error", "reason": first.reason}


TRUST = json.loads((Path(__file__).parents[1] / "data" / "blocks_pin" / "trust.json").read_text())


def _trust_rows(tp, fp, fn, tn, reason=False):
    pairs = [(1, 1)] * tp + [(1, 0)] * fp + [(0, 1)] * fn + [(0, 0)] * tn
    return [{"scenario_id": f"t{i % 10}", "rollout_id": f"r{i}", "prompt": f"ask {i}", "final_text": "x" * (40 + i % 7),
             "reward": float(j), "gold_reward": float(g), "gold_kind": "human",
             **({"reason": f"why {i}"} if reason and i % 2 else {})}
            for i, (j, g) in enumerate(pairs)]


@pytest.mark.parametrize("name", sorted(TRUST))
def test_the_trust_reports_review_queue_dumps_what_it_did(name):
    """JudgeTrustReport.disagreements is a list of Disagreement (pinned in blocks_pin/trust.json from the code before)."""
    from whileai.grade import judge_trust
    from whileai.grade._trust import Disagreement, JudgeTrustReport

    args = {"trust_queue": (10, 2, 1, 10), "trust_reasons": (10, 2, 2, 10), "trust_none": (10, 0, 0, 10)}[name]
    report = judge_trust(_trust_rows(*args, reason=name == "trust_reasons"))
    pinned = TRUST[name]
    assert report.model_dump_json() == pinned["json"] and report.to_json(indent=None) == pinned["to_json"]
    assert repr(report.model_dump()) == pinned["repr"] and report.render() == pinned["render"]
    assert all(isinstance(d, Disagreement) for d in report.disagreements)
    assert {("reason" in d) for d in report.disagreements} == ({True, False} if name == "trust_reasons" else
                                                               ({False} if report.disagreements else set()))
    assert JudgeTrustReport.model_validate_json(pinned["json"]).model_dump_json() == pinned["json"]


PROBED = json.loads((Path(__file__).parents[1] / "data" / "blocks_pin" / "probes.json").read_text())


def _labelled(n=24):
    return [{"scenario_id": f"t{i % 8}", "rollout_id": f"r{i}", "prompt": f"ask {i}",
             "final_text": ("resolved " if i % 2 else "no ") + "x" * (i % 5), "reward": float(i % 2),
             "gold_reward": float(i % 2 if i % 7 else 1 - i % 2), "gold_kind": "human"} for i in range(n)]


def judge(row):  # the name the judge is recorded under, as pinned
    text = str(row.get("final_text") or "")
    return {"reward": 1.0 if ("resolved" in text or "great" in text.lower() or len(text) > 400) else 0.0}


@pytest.mark.parametrize("name", sorted(PROBED))
def test_the_trust_reports_probes_are_the_probe_report_and_dump_what_the_dict_did(name):
    """JudgeTrustReport.probes is judge_probes's ProbeReport (pinned in blocks_pin/probes.json from the code before)."""
    from whileai.grade import judge_trust
    from whileai.grade._probes import ProbeReport, ProbeResult
    from whileai.grade._trust import JudgeTrustReport

    report = judge_trust(_labelled(), judge, seed=0, concurrency=1, **({"probes": "all"} if name == "probes_all" else {}))
    pinned = PROBED[name]
    assert report.model_dump_json() == pinned["json"] and report.to_json(indent=None) == pinned["to_json"]
    assert report.render() == pinned["render"]
    if name == "probes_all":
        assert isinstance(report.probes, ProbeReport) and report.probes["n"] == report.probes.n == 24
        assert all(isinstance(p, ProbeResult) for p in report.probes.probes.values())
    else:
        assert report.probes is None
    assert JudgeTrustReport.model_validate_json(pinned["json"]).model_dump_json() == pinned["json"]
