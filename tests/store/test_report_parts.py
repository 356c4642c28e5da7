"""A recorded run's markers and a run diff's numbers are typed; stored JSON loads and dumps as before."""

from __future__ import annotations

import json

import whileai as wai
from whileai.store._reports import MarkerMean, MetricPair, RunDiff, RunInfo
from whileai.testing import rollout_table

# as the code before the blocks were typed stored and printed them (rollout_table(6, 3, seed=1) and seed=3)
OLD_MARKERS = {"argument_grounding": {"mean": 0.611111111111111, "ci95": [0.3475319553821743, 0.82257268143065]},
               "no_hedging": {"mean": 0.7777777777777777, "ci95": None}}
OLD_PAIR = {"a": 0.7222222222222222, "a_ci95": [0.4470198084449017, 0.9180464000716947], "b": 0.7222222222222222,
            "b_ci95": [0.4470198084449017, 0.9180464000716947], "delta": 0.0}


def test_stored_markers_load_as_typed_and_dump_the_same():
    run = RunInfo.model_validate({"id": "r-1", "created_at": "2026-12-07", "markers": OLD_MARKERS})
    assert all(isinstance(m, MarkerMean) for m in run.markers.values())
    assert json.dumps(run.to_dict()["markers"]) == json.dumps(OLD_MARKERS)
    assert run.markers["argument_grounding"]["mean"] == 0.611111111111111 and run.markers["no_hedging"].ci95 is None
    assert "marker no_hedging" in run.render()


def test_a_run_diff_dumps_each_number_in_the_old_key_order(tmp_path):
    store = wai.store.Store(tmp_path / "s.duckdb")
    a = store.record_run(rollout_table(6, 3, seed=1), name="a")
    c = store.record_run(rollout_table(6, 3, seed=3), name="c")
    back = store.run(a.id)  # read back from DuckDB's JSON
    assert isinstance(next(iter(back.markers.values())), MarkerMean)
    diff = store.diff_runs(a.id, c.id)
    assert all(isinstance(m, MetricPair) for m in diff.metrics.values())
    pair = diff.to_dict()["metrics"]["pass_at_1"]
    assert list(pair) == list(OLD_PAIR) and pair == OLD_PAIR
    assert RunDiff.model_validate_json(diff.model_dump_json()).model_dump_json() == diff.model_dump_json()


# describe's markers as the code before MarkerRows wrote them (rollout_table(6, 3, seed=1), and one row of two carrying x)
OLD_DESCRIBED = {"no_hedging": {"n": 18, "mean": 0.7777777777777778}, "honest_claims": {"n": 18, "mean": 0.7777777777777778},
                 "argument_grounding": {"n": 18, "mean": 0.6111111111111112}}
OLD_RENDER_LINE = "  markers  no_hedging 0.78 (n=18), honest_claims 0.78 (n=18), argument_grounding 0.61 (n=18)"


def test_describe_markers_are_typed_and_dump_the_same():
    from whileai.store._describe import MarkerRows, RolloutSummary

    summary = wai.store.describe(rollout_table(6, 3, seed=1))
    assert all(isinstance(m, MarkerRows) for m in summary.markers.values())
    assert json.dumps(json.loads(summary.model_dump_json())["markers"]) == json.dumps(OLD_DESCRIBED)
    assert json.dumps(summary.to_dict()["markers"]) == json.dumps(OLD_DESCRIBED) and OLD_RENDER_LINE in summary.render()
    assert summary.markers["no_hedging"]["n"] == summary.markers["no_hedging"].n == 18
    partial = wai.store.describe([{"scenario_id": "a", "reward": 1.0, "markers": {"x": 1.0}}, {"scenario_id": "a", "reward": 0.0}])
    assert partial.to_dict()["markers"] == {"x": {"n": 1, "mean": 1.0}}
    back = RolloutSummary.model_validate_json(summary.model_dump_json())  # a stored summary loads and dumps the same
    assert back.model_dump_json() == summary.model_dump_json()
