"""``wai server`` over real HTTP on 127.0.0.1: the REST routes, JSON errors, API keys and accounts."""

from __future__ import annotations

import json

import duckdb
import httpx
import pytest

import whileai.platform as wp
from whileai.errors import ArgumentError
from whileai.platform._routes import ROUTES
from whileai.platform.server import serve

VALID = {
    "AgentSpec": {"name": "agent"}, "Behavior": {"name": "refunds"}, "Experiment": {"question": "q"},
    "Figure": {"name": "f", "figure": {"data": [{}]}}, "LiveDay": {"day": "2026-12-01", "replies": 1},
    "RunSpec": {"name": "r"}, "RunPatch": {"hours": 1.0}, "LogBody": {"points": [{"step": 0}]},
    "FinishBody": {"status": "done"}, "ScoreBody": {"behavior": "refunds", "value": 50},
    "RowsBody": {"rows": [{"ok": True}]}, "Promote": {"version": "v1"}, "DatasetPush": {"name": "d", "rows": [{"scenario_id": "t", "reward": 1.0}]},
}


def test_plain_http_trainer_and_openapi(server):
    c = httpx.Client(base_url=server.url, timeout=10)
    doc = c.get("/openapi.json").json()
    assert {"/runs", "/runs/{run_id}/log", "/runs/{run_id}/finish", "/agents/{agent}/dashboard"} <= set(doc["paths"])
    assert "patch" in doc["paths"]["/runs/{run_id}"] and "RunSpec" in doc["components"]["schemas"]
    assert set(doc["paths"]["/whoami"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["properties"]) \
        == set(c.get("/whoami").json())  # the two routes docs/platform.md lists beside the table
    assert doc["paths"]["/openapi.json"]["get"]["operationId"] == "openapi"
    made = c.post("/runs", json={"name": "grpo-1", "dataset_id": "refunds@2", "base_model": "Qwen/Qwen3-4B",
                                 "total_steps": 100})
    assert made.status_code == 201
    run_id = made.json()["runId"]
    assert c.post(f"/runs/{run_id}/log", json={"points": [{"step": i, "loss": 1.0, "lr": 1e-5, "kl": 0.1}
                                                          for i in range(500)]}).json() == {"accepted": 500,
                                                                                             "duplicate": False}
    assert c.post(f"/runs/{run_id}/log", json={"points": [{"step": 0}] * 501}).status_code == 422
    done = c.post(f"/runs/{run_id}/finish", json={"status": "done", "summary": {"reward": 0.7}, "adapter": "s3://a"})
    assert done.json()["status"] == "done" and done.json()["summary"] == {"reward": 0.7}
    again = c.post("/runs", json={"id": run_id, "name": "grpo-1"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
    assert c.get(f"/runs/{run_id}").json()["n_points"] == 500  # never reset
    patched = c.patch(f"/runs/{run_id}", json={"hours": 0.5, "cost_usd": 1.2, "record": {"optimizer": {"lr": 1e-5}}})
    assert patched.json()["hours"] == 0.5 and patched.json()["record"] == {"optimizer": {"lr": 1e-5}}


def _call(c, route, body=None, **path):
    url = route.path.format(**{p: path.get(p, "nope") for p in route.path_params})
    params = {q: "refunds" for q in route.required_query}
    return c.request(route.method, url, json=body, params=params)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    from tests.platform.conftest import Server

    folder = tmp_path_factory.mktemp("shared")
    server = Server(folder / "shared.duckdb", folder / "server.log")
    yield server
    server.stop()


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_every_route_answers_json_errors(shared_server, route):
    c = httpx.Client(base_url=shared_server.url, timeout=10)
    valid = VALID[route.body[1].__name__] if route.body else None
    if route.path_params:
        resp = _call(c, route, valid)
        assert resp.status_code == 404, resp.text
        err = resp.json()["error"]
        assert err["code"] == "not_found" and "does not exist" in err["message"]
    if route.body:
        resp = _call(c, route, {**valid, "bogus_field": 1})
        assert resp.status_code == 422 and resp.json()["error"]["field"] == "bogus_field"
        assert "body field 'bogus_field'" in resp.json()["error"]["message"]
        url = route.path.format(**{p: "x" for p in route.path_params})
        resp = c.request(route.method, url, content=b"{not json", headers={"content-type": "application/json"})
        assert resp.status_code in (400, 404) and "error" in resp.json()
        resp = c.request(route.method, url, content=json.dumps(valid).encode(), headers={"content-type": "text/plain"})
        assert resp.status_code == 415 and "application/json" in resp.json()["error"]["message"]
    if route.required_query:
        url = route.path.format(**{p: "x" for p in route.path_params})
        resp = c.get(url)
        assert resp.status_code == 422 and resp.json()["error"]["field"] == route.required_query[0]


def test_named_bad_inputs(server):
    c = httpx.Client(base_url=server.url, timeout=10)
    c.post("/agents", json={"name": "a"})
    run_id = c.post("/runs", json={"agent": "a", "version": "v0"}).json()["runId"]
    bad_name = c.post(f"/runs/{run_id}/scores", json={"behavior": "refund policy", "value": 50})
    assert bad_name.status_code == 422 and bad_name.json()["error"]["field"] == "behavior"
    assert "refund policy" in bad_name.json()["error"]["message"]
    big = c.put("/agents/a/figures", json={"name": "big", "figure": {"data": [{"y": list(range(60_000))}]}})
    assert big.status_code == 422 and "at most 200000 bytes of JSON" in big.json()["error"]["message"]
    assert c.get("/no/such/route").json()["error"]["code"] == "not_found"
    assert c.put("/runs").status_code == 405 and c.put("/runs").json()["error"]["code"] == "method_not_allowed"
    bad_step = c.post(f"/runs/{run_id}/log", json={"points": [{"step": -1}]})
    assert bad_step.json()["error"]["field"] == "points.0.step"
    score = c.post(f"/runs/{run_id}/scores", json={"behavior": "refunds", "value": 50}).json()
    wrong = c.post(f"/runs/{run_id}/scores/sc-nope/rows", json={"rows": [{"ok": True}]})
    assert wrong.status_code == 404 and "score 'sc-nope'" in wrong.json()["error"]["message"]
    assert c.post(f"/runs/{run_id}/scores/{score['id']}/rows", json={"rows": [{"ok": True}]}).status_code == 200
    for behavior in ("Bad Name", "", "x" * 5000):  # was a 500 (pydantic's ValidationError from the rules)
        resp = c.get("/agents/a/verdict", params={"behavior": behavior})
        assert resp.status_code == 422 and "behavior name must be lower-case" in resp.json()["error"]["message"], resp.text
    huge = c.post(f"/runs/{run_id}/log", content=b'{"points": [{"step": 99999999999999999999, "loss": 1}]}',
                  headers={"content-type": "application/json"})
    assert huge.status_code == 422 and huge.json()["error"]["field"] == "points.0.step"  # was a 500 (OverflowError)


def test_keys_accounts_and_the_log_line(tmp_path, start_server):
    store = tmp_path / "keys.duckdb"
    alice, alice2, bob = wp.create_key("alice", store=store), wp.create_key("alice", store=store), wp.create_key("bob", store=store)
    con = duckdb.connect(str(store))
    stored = con.execute("SELECT id, account_id, key_hash FROM api_keys").fetchall()
    con.close()
    assert len(stored) == 3 and len({row[1] for row in stored}) == 2
    assert not any(k.key in repr(stored) for k in (alice, alice2, bob))  # only hashes
    server = start_server(store)
    anon = httpx.Client(base_url=server.url, timeout=10)
    missing = anon.get("/runs")
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "missing_key"
    wrong = anon.get("/runs", headers={"X-Api-Key": alice.key[:-2] + "xx"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "unauthorized"
    a = wp.track("agent", name="support", base_url=server.url, api_key=alice.key)
    run = a.run("v0")
    assert wp.track("agent", name="support", base_url=server.url, api_key=alice2.key).open(run.id).id == run.id
    b = wp.track("agent", name="support", base_url=server.url, api_key=bob.key)
    with pytest.raises(wp.PlatformError) as info:
        b.open(run.id)
    assert info.value.status == 404 and b.runs() == []
    log = server.output()
    assert f"key={alice.key_id}" in log and f"key={bob.key_id}" in log
    assert not any(k.key in log for k in (alice, alice2, bob))


def test_saved_login_and_environment_resolution(server, monkeypatch):
    key = None
    wp.save_login(server.url, key)
    tracked = wp.track("agent", name="saved")  # the saved server, no argument
    assert tracked.backend.describe() == f"server {server.url}"
    assert wp.status()["server_source"].endswith("credentials.json")
    monkeypatch.setenv("WHILEAI_API_KEY", "wai_abc_envkey")
    assert wp.resolve_api_key(None) == ("wai_abc_envkey", "WHILEAI_API_KEY")
    assert wp.resolve_api_key("wai_arg_k")[1] == "argument"
    monkeypatch.setenv("WHILEAI_BASE_URL", "http://127.0.0.1:1")
    assert wp.resolve_base_url(None)[0] == "http://127.0.0.1:1"  # the environment before the saved login, as for keys
    wp.logout()
    assert wp.resolve_base_url(None) == ("http://127.0.0.1:1", "WHILEAI_BASE_URL")


def test_unreachable_server_is_a_platform_error(tmp_path):
    from tests.platform.conftest import free_port

    tracked_url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(wp.PlatformError, match="cannot be reached") as info:
        wp.track("agent", name="x", base_url=tracked_url)
    assert info.value.status == 503 and info.value.code == "unreachable"


def test_a_non_loopback_host_needs_keys(tmp_path):
    with pytest.raises(ArgumentError, match="host must be a loopback address while API keys are off, got '0.0.0.0'"):
        serve("0.0.0.0", 8484, store=tmp_path / "s.duckdb")


def test_a_port_in_use_is_one_line_and_exit_2_before_anything_is_made(tmp_path):
    """uvicorn found the port taken after the URL and the sign-in link were printed and the store was
    made, logged its own lines and exited 3 ("not comparable" in the CLI's table)."""
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = subprocess.run([sys.executable, "-m", "whileai.cli.main", "server", "--host", "127.0.0.1", "--port",
                              str(port), "--store", str(tmp_path / "s.duckdb")], capture_output=True, text=True,
                             timeout=60)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == (f"error: port must be free, got {port}, which another program already listens on at "
                          "127.0.0.1. Pass another --port, or stop that program.\n")
    assert not (tmp_path / "s.duckdb").exists()
