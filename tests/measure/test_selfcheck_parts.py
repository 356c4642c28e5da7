"""self_check's checks and unreplicated_pass are typed and dump as the dicts did."""

from __future__ import annotations

import json

from whileai.measure._selfcheck import SelfCheckCase, SelfCheckReport, UnreplicatedPass

# one check and the unreplicated block as the code before the blocks were typed wrote them (self_check(trials=20, n_boot=200))
OLD_CHECK = {"name": "false alarm, identical arms, 30 cases", "cases": 30, "effect": 0.0, "measured": 0.0,
             "target": 0.05, "mc_error": 0.04873397172404482, "side": "above", "flagged": False}
OLD_UNREPLICATED = {"measured": 0.0, "drift": 0.015, "cases": 100, "trials": 20, "alpha": 0.05}


def test_stored_blocks_load_and_dump_the_same_json():
    stored = {"trials": 20, "checks": [OLD_CHECK], "unreplicated_pass": OLD_UNREPLICATED}
    report = SelfCheckReport.model_validate(stored)
    assert isinstance(report.checks[0], SelfCheckCase) and isinstance(report.unreplicated_pass, UnreplicatedPass)
    out = report.to_dict()
    assert json.dumps(out["checks"][0]) == json.dumps(OLD_CHECK)
    assert json.dumps(out["unreplicated_pass"]) == json.dumps(OLD_UNREPLICATED)
    assert report.checks[0]["flagged"] is False and report.unreplicated_pass["drift"] == 0.015  # dict reads still read
    assert "unreplicated PASS on pure noise" in report.render()


def test_an_empty_block_dumps_empty_as_before():
    out = SelfCheckReport().to_dict()
    assert out["unreplicated_pass"] == {} and out["checks"] == []
    assert "unreplicated PASS" not in SelfCheckReport().render()
