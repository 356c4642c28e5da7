"""The simulation report's pairwise coverage and tier mix are typed blocks that dump the JSON they did as dicts."""

from __future__ import annotations

import json

from whileai.simulation._report import PairwiseCoverage, SimulationReport, TierMix

# as the report dumped them when they were dicts (the code before the blocks were typed)
STORED = {"pairwise": {"pairs_planned": 40, "pairs_covered": 37, "fraction": 0.925},
          "tier_mix": {"requested": 0.4, "realized": 0.375, "counts": {"easy": 5, "hard": 3}}}


def test_a_stored_report_loads_into_the_blocks_and_dumps_the_same_json():
    report = SimulationReport.model_validate({"rows": 8, **STORED})
    assert isinstance(report.pairwise, PairwiseCoverage) and isinstance(report.tier_mix, TierMix)
    dumped = json.loads(report.model_dump_json())
    assert {k: dumped[k] for k in STORED} == STORED
    assert report["pairwise"]["fraction"] == 0.925 and report.tier_mix.counts == {"easy": 5, "hard": 3}


def test_a_run_without_a_grid_dumps_empty_blocks_as_before():
    report = SimulationReport(rows=0)
    assert report.model_dump()["pairwise"] == {} and report.model_dump()["tier_mix"] == {}
    assert not report.pairwise and "pairwise coverage" not in report.render()
