"""0.131's request shapes on our routes (``ALIASES_0131``), posted with a TestClient: no 0.131 needed.

The bodies are the ones 0.131's client sends (camelCase, lists of scores and points, ``PATCH`` with a
status); each is checked against what our own routes then answer, so a translation that drops or
misplaces a field fails here.
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from whileai.platform._routes import ALIASES_0131, ROUTES
from whileai.platform.server import create_app

SDK = {"User-Agent": "whileai-sdk"}


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path / "s.duckdb")
    with TestClient(app, base_url="http://127.0.0.1") as c:
        yield c


def test_every_shared_alias_is_one_of_our_routes_and_every_gone_one_names_an_equivalent():
    ours = {(r.method, r.path) for r in ROUTES}
    assert all((a.method, a.path) in ours for a in ALIASES_0131 if a.shared)
    assert all(a.note and a.equivalent for a in ALIASES_0131 if a.handler is None)


def test_the_tracked_story_lands_on_our_records(client):
    agent = client.post("/agents", json={"id": "bot", "name": "Bot", "model": "m1", "frontier": {"name": "big"},
                                         "harness": {"label": "h", "instructions": "Be brief.", "tools": ["a"],
                                                     "model": "m1", "hash": "abc"}})
    assert agent.status_code == 200 and agent.json()["id"] == "bot"
    assert client.get("/agents/bot").json()["instructions"] == "Be brief."  # our shape, our route
    assert client.get("/agents", headers=SDK).json()["agents"][0]["id"] == "bot"
    beh = client.put("/agents/bot/behaviors/refunds", json={"testVersion": "v2", "n": 120, "noiseFloor": 2.0,
                                                           "judge": {"agreement": 0.9, "humanN": 60,
                                                                     "lengthBias": 0.05}})
    assert beh.json()["judge"] == {"agreement": 0.9, "humanN": 60, "lengthBias": 0.05}
    ours = client.get("/agents/bot/behaviors").json()["refunds"]
    assert (ours["test_version"], ours["noise_floor"], ours["agreement"], ours["human_n"]) == ("v2", 2.0, 0.9, 60)
    assert client.get("/agents/bot/behaviors", headers=SDK).json()["behaviors"][0]["testVersion"] == "v2"

    made = client.post("/runs", json={"agent": "bot", "version": "v1", "base": "m1", "method": "GRPO",
                                      "targets": ["refunds"], "trainedOn": ["refunds-grpo"],
                                      "record": {"optimizer": {"lossType": "dapo", "lr": 5e-5},
                                                 "provenance": {"pins": {"trlVersion": "1.13"}}}})
    assert made.status_code == 201
    run_id = made.json()["runId"]
    run = client.get(f"/runs/{run_id}").json()
    assert run["base_model"] == "m1" and run["record"]["method"] == "GRPO"
    assert run["record"]["trained_on"] == ["refunds-grpo"]
    assert run["record"]["optimizer"] == {"loss_type": "dapo", "lr": 5e-5}
    assert run["record"]["provenance"]["pins"] == {"trlVersion": "1.13"}  # library names keep their spelling

    logged = client.post(f"/runs/{run_id}/train", json=[{"step": 1, "reward": 0.4, "kl": 0.01}, {"step": 2, "loss": 1}])
    assert logged.json()["accepted"] == 2
    assert client.get(f"/runs/{run_id}/points").json()[0] == {"step": 1, "loss": None, "lr": None, "reward": 0.4,
                                                             "kl": 0.01}
    posted = client.post(f"/runs/{run_id}/evals", json=[{"behavior": "refunds", "score": 82, "ci": 2.5, "n": 120,
                                                        "testVersion": "v2", "examples": [{"ok": False, "score": 0.0,
                                                                                           "prompt": "p"}]}])
    assert posted.status_code == 201 and posted.json()["evals"][0]["score"] == 82
    score = client.get(f"/runs/{run_id}/scores").json()[0]
    assert (score["value"], score["ci"], score["n"], score["examples"][0]["prompt"]) == (82, 2.5, 120, "p")
    assert client.delete(f"/runs/{run_id}/evals/refunds/rows").json() == {"deleted": 0}
    rows = [{"prompt": f"p{i}", "reply": "r", "ok": i % 2 == 0, "tags": {"d": "hard"}} for i in range(3)]
    assert client.post(f"/runs/{run_id}/evals/refunds/rows", json={"rows": rows, "offset": 0}).json()["accepted"] == 3
    assert [r["prompt"] for r in client.get(f"/runs/{run_id}/rows", params={"behavior": "refunds"}).json()] == \
        ["p0", "p1", "p2"]
    assert len(client.get(f"/runs/{run_id}/evals/refunds/rows").json()["rows"]) == 3
    again = client.delete(f"/runs/{run_id}/evals/refunds/rows")  # rows are kept as posted
    assert again.status_code == 409 and "Post a new score" in again.json()["error"]["message"]

    assert client.patch(f"/runs/{run_id}", json={"notes": "flat at 25"}).json()["notes"] == "flat at 25"
    done = client.patch(f"/runs/{run_id}", json={"status": "evaluated", "hours": 1.5, "gpu": "1xH100",
                                                 "costUsd": 6.0, "steps": 30, "record": {"data": {"nTrain": 1024}}})
    assert done.status_code == 200
    run = client.get(f"/runs/{run_id}").json()
    assert (run["status"], run["hours"], run["cost_usd"], run["total_steps"]) == ("done", 1.5, 6.0, 30)
    assert run["record"]["data"] == {"n_train": 1024} and run["record"]["method"] == "GRPO"  # merged
    listed = client.get("/runs", params={"agent": "bot"}, headers=SDK).json()["runs"]
    assert listed[0]["evals"][0]["score"] == 82 and listed[0]["method"] == "GRPO"
    assert client.get("/runs", params={"agent": "bot"}).json()[0]["id"] == run_id  # ours: a list
    assert client.get(f"/runs/{run_id}", headers=SDK).json()["train"][1]["loss"] == 1

    assert client.get("/agents/bot/experiment").status_code == 404
    assert client.put("/agents/bot/experiment", json={"question": "Does it?"}).status_code == 200
    assert client.get("/agents/bot/experiment").json() == {"question": "Does it?"}
    fig = client.put("/agents/bot/figures/reward", json={"figure": {"data": [{"y": [1, 2]}]}, "caption": "c",
                                                         "run": run_id})
    assert fig.json()["name"] == "reward" and client.get("/agents/bot/figures").json()["figures"][0]["caption"] == "c"
    live = client.post("/live", json=[{"agent": "bot", "day": "2026-12-01", "version": "v1", "replies": 10,
                                       "flagged": 1, "p50s": 0.4}])
    assert live.json()["live"][0]["replies"] == 10
    dash = client.get("/agents/bot/dashboard", params={"behavior": "refunds"}, headers=SDK).json()
    assert dash["agent"]["id"] == "bot" and dash["versions"] == [{"v": "v1", "score": 82.0, "ci": 2.5, "n": 120,
                                                                  "run": run_id}]
    assert "verdicts" in client.get("/agents/bot/dashboard").json()  # ours without the 0.131 User-Agent


def test_the_plain_trainer_story(client):
    made = client.post("/runs", json={"name": "sft-v3", "dataset_id": "ds", "base_model": "m", "total_steps": 20,
                                      "trainer": "trl", "config": {"lr": 1e-5}})
    run_id = made.json()["runId"]
    assert client.get(f"/runs/{run_id}").json()["record"] == {"trainer": "trl", "config": {"lr": 1e-5}}
    tick = client.post(f"/runs/{run_id}/log", json={"points": [{"step": 0, "ts": 1.7e9}], "total_steps": 40})
    assert tick.json()["accepted"] == 0 and client.get(f"/runs/{run_id}").json()["total_steps"] == 40
    client.post(f"/runs/{run_id}/log", json={"points": [{"step": 1, "ts": 1.7e9, "loss": 2.0}]})
    assert client.get(f"/runs/{run_id}/points").json() == [{"step": 1, "loss": 2.0, "lr": None}]  # no ts metric
    failed = client.post(f"/runs/{run_id}/finish", json={"status": "failed", "error": "CUDA OOM"})
    assert failed.json()["status"] == "failed" and failed.json()["summary"]["error"] == "CUDA OOM"


def test_edges_and_refusals_are_one_line(client):
    bad = client.post("/runs/x/evals", content=b'[{"behavior": "r", "score": Infinity}]',
                      headers={"content-type": "application/json"})
    assert bad.status_code == 422 and "finite" in bad.json()["error"]["message"]
    assert client.post("/runs/x/train", content=b"[]", headers={"content-type": "text/plain"}).status_code == 415
    client.post("/agents", json={"id": "bot"})
    extra = client.put("/agents/bot/behaviors/refunds", json={"testVersion": "v2", "bogus": 1})
    assert extra.status_code == 422 and extra.json()["error"]["field"] == "bogus"
    status = client.post("/runs", json={"agent": "bot", "version": "v1", "method": "SFT"}).json()["id"]
    wrong = client.patch(f"/runs/{status}", json={"status": "exploded"})
    assert wrong.status_code == 422 and wrong.json()["error"]["field"] == "status"
    for method, path, equivalent in (("POST", "/datasets/ds_1/train", "wai.train"), ("GET", "/models", "serve"),
                                     ("DELETE", "/models/m1", "serve"), ("POST", "/runs/r1/score", "reward_model"),
                                     ("POST", "/device/code", "wai keys create"), ("GET", "/me", "/whoami"),
                                     ("GET", "/traces?agent=bot", "rows")):
        resp = client.request(method, path)
        message = resp.json()["error"]["message"]
        assert resp.status_code == 410 and "\n" not in message, (path, resp.text)
        assert message.startswith(f"{method} {path.split('?')[0]} is 0.131's") and equivalent in message
    cross = client.post("/runs/x/train", json=[], headers={"Origin": "http://evil.example"})
    assert cross.status_code == 403
    rebound = client.post("/runs/x/evals", json=[], headers={"Host": "evil.example"})
    assert rebound.status_code == 421
