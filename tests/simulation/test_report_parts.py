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


# report.generation as simulate wrote it when it was a dict (pinned by running these calls on that code)
OLD_GENERATION = {
    "defaults": '{"model": "seeded_agent(seed=0,rate=0.35)", "provider": null, "base_url": null, "temperature": null, '
                '"top_p": null, "max_tokens": null, "seed": 3}',
    "given": '{"model": "seeded_agent(seed=0,rate=0.35)", "provider": null, "base_url": null, "temperature": 0, '
             '"top_p": 0.9, "max_tokens": 64, "seed": 3}',
    "endpoint": '{"model": "m1", "provider": null, "base_url": "http://127.0.0.1:9/v1", "temperature": 0.2, '
                '"top_p": null, "max_tokens": 32, "seed": 7}',
}


def test_the_generation_block_dumps_what_the_dict_was():
    import warnings

    from whileai import simulate
    from whileai.simulation import seeded_agent, tool
    from whileai.simulation._endpoint import Endpoint
    from whileai.simulation._options import _generation
    from whileai.simulation._report import Generation

    @tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""

    for name, kw in (("defaults", {}), ("given", {"temperature": 0, "top_p": 0.9, "max_tokens": 64})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = simulate(seeded_agent([get_order]), tools=[get_order], simulator=False, budget=8, repeats=2, seed=3, **kw)
        assert isinstance(data.report.generation, Generation)
        assert json.dumps(json.loads(data.report.model_dump_json())["generation"]) == OLD_GENERATION[name]
        assert json.dumps(data.report.to_dict()["generation"]) == OLD_GENERATION[name]  # temperature 0 stays 0
    endpoint = Endpoint("m1", base_url="http://127.0.0.1:9/v1", api_key="k", temperature=0.2, max_tokens=32)
    block = Generation(**_generation(endpoint, {"temperature": None, "top_p": None, "max_tokens": None}, 7))
    assert json.dumps(block.model_dump()) == OLD_GENERATION["endpoint"] and block["base_url"] == block.base_url
    for stored in OLD_GENERATION.values():  # a stored report loads and dumps the same block
        report = SimulationReport.model_validate({"rows": 8, "generation": json.loads(stored)})
        assert json.dumps(json.loads(report.model_dump_json())["generation"]) == stored
    assert SimulationReport(rows=0).model_dump()["generation"] == {}  # a report built without one, as before
