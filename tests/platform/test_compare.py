"""Runs side by side (``tracked.compare``, ``GET /compare``): series per run, thinning, configs, the edge rules."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import whileai.platform as wp
from whileai.defaults import COMPARE_RUNS_MAX, PAGE_CURVE_POINTS
from whileai.errors import PlatformError
from whileai.platform._compare import flatten, thin_indices
from whileai.platform.server import create_app


@pytest.fixture(params=["store", "app"])
def tracked(request, tmp_path):
    if request.param == "store":
        yield wp.track({"name": "refunds-agent"}, store=tmp_path / "s.duckdb")
        return
    app = create_app(tmp_path / "app.duckdb")
    yield wp.track({"name": "refunds-agent"}, transport=app)
    app.state.db.close()


def _two_runs(tracked):
    a = tracked.run("sft-lr1", record={"optimizer": {"method": "sft", "learning_rate": 1e-5}, "seed": 1})
    for step in range(1200):  # past the cap: thinned
        a.log(step=step, loss=2.0 - step / 1000, lr=1e-5, proxy_reward=0.4)
    a.finish(say=False, summary={"cost_per_1k": 1.5})
    b = tracked.run("sft-lr3", record={"optimizer": {"method": "sft", "learning_rate": 3e-5}, "seed": 1})
    for step in range(10):
        b.log(step=step, loss=1.5 - step / 100, lr=3e-5, gold_reward=0.5 + step / 100)
    b.finish(say=False)
    return a, b


def test_compare_gives_one_series_per_run_and_metric_and_a_config_table(tracked):
    a, b = _two_runs(tracked)
    c = tracked.compare([a, b.id])
    assert [r.id for r in c.runs] == [a.id, b.id]
    assert c.metrics == ["loss", "lr", "proxy_reward", "gold_reward"]
    loss = [s for s in c.series if s.metric == "loss"]
    assert [(s.run_id, s.label, s.n, len(s.steps)) for s in loss] == [(a.id, "sft-lr1", 1200, PAGE_CURVE_POINTS),
                                                                      (b.id, "sft-lr3", 10, 10)]
    keep = np.unique(np.linspace(0, 1199, PAGE_CURVE_POINTS).round().astype(int))  # evenly spread, ends kept
    assert loss[0].steps == keep.tolist() and loss[0].steps[0] == 0 and loss[0].steps[-1] == 1199
    assert loss[0].values == pytest.approx([2.0 - s / 1000 for s in keep])
    assert loss[1].values == pytest.approx([1.5 - s / 100 for s in range(10)])
    assert {s.run_id for s in c.series if s.metric == "gold_reward"} == {b.id}
    rows = {r.key: r for r in c.config}
    assert rows["record.optimizer.learning_rate"].values == ["1e-05", "3e-05"]
    assert rows["record.optimizer.learning_rate"].differs
    assert rows["record.seed"].values == ["1", "1"] and not rows["record.seed"].differs
    assert rows["summary.cost_per_1k"].values == ["1.5", None] and rows["summary.cost_per_1k"].differs
    assert rows["version"].values == ["sft-lr1", "sft-lr3"] and not rows["agent"].differs
    assert "record.optimizer.learning_rate: 1e-05 | 3e-05" in str(c)

    one = tracked.compare([a.id, b.id], metric="gold_reward")
    assert [(s.metric, s.run_id) for s in one.series] == [("gold_reward", b.id)] and one.metrics == c.metrics


def test_compare_refuses_bad_asks_with_the_fix(tracked):
    a, _ = _two_runs(tracked)
    with pytest.raises(PlatformError, match=r"metric must be one the runs logged \(loss, lr, proxy_reward\), got 'kl'"):
        tracked.compare([a.id], metric="kl")
    with pytest.raises(PlatformError, match="runs must name 1 to 20 run ids, got 0"):
        tracked.compare([])
    with pytest.raises(PlatformError, match=f"runs must name 1 to {COMPARE_RUNS_MAX} run ids, got 21"):
        tracked.compare([f"r{i}" for i in range(21)])
    with pytest.raises(PlatformError) as err:
        tracked.compare([a.id, "no-such-run"])
    assert err.value.status == 404


def test_compare_names_archived_runs_and_keeps_the_order_asked(tracked):
    a, b = _two_runs(tracked)
    b.archive()
    assert tracked.runs() == [a.id]
    c = tracked.compare([b.id, a.id])
    assert [r.id for r in c.runs] == [b.id, a.id] and c.runs[0].archived


def test_get_compare_over_rest_is_json_and_keeps_the_server_rules(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    app = create_app(tmp_path / "rest.duckdb")
    tracked = wp.track({"name": "refunds-agent"}, transport=app)
    a, b = _two_runs(tracked)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        r = client.get("/compare", params={"runs": f"{a.id},{b.id}", "metric": "loss"})
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        body = r.json()
        assert [s["run_id"] for s in body["series"]] == [a.id, b.id] and body["metrics"][0] == "loss"
        assert any(row["key"] == "record.optimizer.learning_rate" and row["differs"] for row in body["config"])
        missing = client.get("/compare")
        assert missing.status_code == 422 and "query parameter 'runs' is required" in missing.json()["error"]["message"]
        bad = client.get("/compare", params={"runs": a.id, "metric": "kl"})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "metric"
        assert client.get("/compare", params={"runs": "nope"}).status_code == 404
        assert client.get("/compare", params={"runs": a.id}, headers={"Host": "evil.example"}).status_code == 421
        assert client.post("/compare").status_code == 405
    app.state.db.close()


def test_thinning_and_flattening_against_plain_references():
    for n, cap in [(0, 5), (3, 5), (5, 5), (6, 5), (1000, 7), (1201, 500)]:
        idx = thin_indices(n, cap).tolist()
        assert len(idx) == min(n, cap) and idx == sorted(set(idx))
        if n:
            assert idx[0] == 0 and idx[-1] == n - 1
        if n > cap:  # each kept position is the nearest to its even spot
            assert idx == [round(i * (n - 1) / (cap - 1)) for i in range(cap)]
    assert flatten({"a": {"b": {"c": 1}, "d": []}, "e": {}}, "record") == {"record.a.b.c": 1, "record.a.d": [],
                                                                          "record.e": {}}
