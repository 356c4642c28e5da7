"""The trust report's typed blocks (floors, skipped, the grade's trust stamp) serialise as the dicts did."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.grade.test_trust import _table
from whileai.grade import GradeReport, JudgeTrustReport, judge_trust, run_judge
from whileai.grade._trust import TrustFloors, TrustSkipped, TrustStamp

# captured from the code before the blocks were typed (judge_trust(_table(53, 2, 2, 23, partial=3, ungraded=2)))
OLD_FLOORS = {"min_agreement": 0.8, "min_kappa": 0.6, "max_skipped_share": 0.1}
OLD_SKIPPED = {"partial": 3, "ungraded": 2, "model_gold": 0, "share": 0.03614457831325301}
# and from run_judge on 40 labeled rows whose judge returns the gold label
OLD_STAMP = {"agreement": 1.0, "agreement_low": 0.9123783988027133, "kappa": 1.0, "n_gold": 40, "ok": True,
             "status": "ok"}


def test_blocks_dump_the_dicts_they_replace():
    r = judge_trust(_table(53, 2, 2, 23, partial=3, ungraded=2))
    assert isinstance(r.floors, TrustFloors) and isinstance(r.skipped, TrustSkipped)
    out = r.to_dict()
    assert out["floors"] == OLD_FLOORS and list(out["floors"]) == list(OLD_FLOORS)
    assert out["skipped"] == OLD_SKIPPED and list(out["skipped"]) == list(OLD_SKIPPED)
    assert json.loads(r.model_dump_json())["skipped"] == OLD_SKIPPED
    assert r.skipped["partial"] == 3 and r.skipped.partial == 3 and r.floors.get("min_kappa") == 0.6


def test_a_block_never_filled_dumps_empty_as_before():
    out = JudgeTrustReport().to_dict()
    assert out["floors"] == {} and out["skipped"] == {}
    assert not JudgeTrustReport().skipped and "partial" not in JudgeTrustReport().skipped
    assert judge_trust([{"prompt": "p", "final_text": "x", "reward": 1.0}]).to_dict()["skipped"] == {}


def test_a_stored_report_loads_back_to_the_same_json():
    stored = judge_trust(_table(53, 2, 2, 23, partial=3, ungraded=2)).model_dump_json()
    back = JudgeTrustReport.model_validate_json(stored)
    assert back.model_dump_json() == stored and back.skipped == TrustSkipped(**OLD_SKIPPED)
    partial = JudgeTrustReport.model_validate({"skipped": {"partial": 0, "ungraded": 0, "model_gold": 4,
                                                           "share": None}})  # NaN as to_dict() writes it
    assert partial.to_dict()["skipped"] == {"partial": 0, "ungraded": 0, "model_gold": 4, "share": None}
    with pytest.raises(ValueError, match="not_a_key"):
        JudgeTrustReport.model_validate({"floors": {"not_a_key": 1.0}})


def test_grade_trust_stamp_dumps_as_before():
    df = pl.DataFrame(_table(20, 2, 2, 16)).drop("reward")
    gold = {r["rollout_id"]: r["gold_reward"] for r in df.to_dicts()}
    report = run_judge(df, lambda row: {"reward": gold[row["rollout_id"]]}).report
    assert isinstance(report.trust, TrustStamp)
    assert report.to_dict()["trust"] == OLD_STAMP and list(report.to_dict()["trust"]) == list(OLD_STAMP)
    assert GradeReport.model_validate(report.to_dict() | {"trust": OLD_STAMP}).trust == TrustStamp(**OLD_STAMP)
    assert report.trust["kappa"] == 1.0


# held_out_halves and the gold_0 side of length_sensitivity as the code before wrote them for the same rows
OLD_HALF_A = {"n": 40, "n_tasks": 5, "agreement": 0.925, "ci95": [0.8013576647568947, 0.9741639742254118],
              "kappa": 0.8255813953488373}
OLD_GOLD_0 = {"median_chars": 43.0, "short": {"n": 14, "pass_rate": 0.0}, "long": {"n": 11, "pass_rate": 0.18181818181818182},
              "gap": 0.18181818181818182, "flagged": True}


def test_halves_and_length_dump_as_before_and_their_skipped_forms_too():
    from whileai.grade._trust import TrustHalves, TrustLength

    r = judge_trust(_table(53, 2, 2, 23, partial=3, ungraded=2))
    assert isinstance(r.held_out_halves, TrustHalves) and isinstance(r.length_sensitivity, TrustLength)
    out = r.to_dict()
    assert list(out["held_out_halves"]) == ["a", "b", "gap"] and out["held_out_halves"]["a"] == OLD_HALF_A
    assert json.dumps(out["length_sensitivity"]["gold_0"]) == json.dumps(OLD_GOLD_0)
    assert list(out["length_sensitivity"]) == ["gold_1", "gold_0", "max_gap", "flagged"]
    assert r.held_out_halves["a"]["agreement"] == 0.925 and r.length_sensitivity.get("skipped") is None
    assert judge_trust(_table(30, 0, 4, 0)).to_dict()["length_sensitivity"] == {"skipped": "gold has one class only"}
    assert judge_trust(_table(20, 1, 1, 10, tasks=1)).to_dict()["held_out_halves"] == {
        "skipped": "fewer than two labeled tasks"}
    back = JudgeTrustReport.model_validate_json(r.model_dump_json())
    assert back.model_dump_json() == r.model_dump_json()


def test_perturbation_is_typed_and_reads_as_before():
    from whileai.grade._trust import TrustPerturbation

    def judge(row):
        return {"reward": 1.0 if len(row["final_text"]) > 100 else float(row["rollout_id"][1:]) % 2}

    r = judge_trust(_table(30, 3, 3, 24, long_pass_bias=True), judge, sample=40)
    assert isinstance(r.perturbation, TrustPerturbation)
    p = r.to_dict()["perturbation"]
    assert list(p)[:4] == ["n", "consistency_n", "consistency_flips", "consistency_flip_rate"] and len(p) == 14
    assert (p["n"], p["consistency_flips"], p["filler_flips"], p["filler_flips_up"]) == (40, 9, 10, 10)
    assert "re-judge flips 22% (n=40), filler flips 25% (n=40)" in str(r)
