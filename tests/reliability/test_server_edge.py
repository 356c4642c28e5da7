"""wai server's edge: non-finite numbers, cross-site requests, DNS rebinding, body size, nesting, keys.

Each test is a case of docs/security.md ("wai server") or docs/reliability.md; servers bind
127.0.0.1 on a free port (or run in-process) and stop inside the test.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from whileai.defaults import SERVER_BODY_MAX_BYTES
from whileai.platform.server import create_app

from ._support import RunningServer, wai

JSON = {"content-type": "application/json"}
pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


@pytest.fixture
def client(tmp_path):
    from starlette.testclient import TestClient

    app = create_app(tmp_path / "s.duckdb")
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


def _run(client) -> str:
    answer = client.post("/runs", json={"name": "r1", "agent": "bot", "version": "v1"})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


@pytest.mark.parametrize(("body", "field"), [(b'{"status": "done", "hours": Infinity}', "hours"),
                                             (b'{"status": "done", "cost_usd": 1e309}', "cost_usd"),
                                             (b'{"status": "done", "summary": {"loss": NaN}}', "summary.loss")])
def test_server_nonfinite_finish_is_422_naming_the_field(client, body, field):
    run = _run(client)
    answer = client.post(f"/runs/{run}/finish", content=body, headers=JSON)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field
    assert field in answer.json()["error"]["message"]
    assert client.get("/runs").status_code == 200
    assert client.get(f"/runs/{run}").json()["status"] != "done"  # nothing was stored


def test_server_nonfinite_score_ci_is_422_and_the_dashboard_reads(client):
    run = _run(client)
    answer = client.post(f"/runs/{run}/scores", content=b'{"behavior": "b", "value": 50, "ci": Infinity}',
                         headers=JSON)
    assert answer.status_code == 422 and answer.json()["error"]["field"] == "ci", answer.text
    assert client.get(f"/runs/{run}/scores").json() == []


def test_server_nonfinite_already_stored_reads_answer(tmp_path):
    """Values a server stored before the edge checks (an old store) read back as null, not 500."""
    from starlette.testclient import TestClient

    store = tmp_path / "s.duckdb"
    app = create_app(store)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        run = _run(c)
        assert c.post(f"/runs/{run}/scores", json={"behavior": "b", "value": 50, "ci": 2}).status_code == 201
        agent = c.get(f"/runs/{run}").json()["agent"]
    app.state.db.close()
    con = duckdb.connect(str(store))
    con.execute("UPDATE tracked_runs SET hours = 'inf'::DOUBLE, cost_usd = 'nan'::DOUBLE, "
                "summary = '{\"loss\": Infinity}'")
    con.execute("UPDATE scores SET ci = 'inf'::DOUBLE")
    con.close()
    app = create_app(store)  # a restart
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        for path in ("/runs", f"/runs/{run}", f"/runs/{run}/scores", f"/agents/{agent}/dashboard",
                     f"/agents/{agent}/brief", f"/agents/{agent}/verdict?behavior=b"):
            answer = c.get(path)
            assert answer.status_code == 200, (path, answer.text)
        assert c.get(f"/runs/{run}").json()["hours"] is None
        assert c.get(f"/runs/{run}/scores").json()[0]["ci"] is None


def test_server_cross_site_text_plain_post_is_refused(client):
    """A form or fetch from another page posts text/plain (no CORS preflight): it must not reach a route."""
    answer = client.post("/agents", content=b'{"name": "evil", "model": "m"}', headers={"content-type": "text/plain"})
    assert answer.status_code == 415, answer.text
    assert "application/json" in answer.json()["error"]["message"]
    assert client.get("/agents").json() == []


@pytest.mark.parametrize("headers", [{"origin": "http://evil.example"}, {"origin": "null"},
                                     {"sec-fetch-site": "cross-site"}, {"sec-fetch-site": "same-site"}])
def test_server_cross_site_origin_is_refused_on_every_write(client, headers):
    for method, path in (("POST", "/agents"), ("DELETE", "/agents/x"), ("PATCH", "/runs/x"), ("PUT", "/agents/x/figures")):
        answer = client.request(method, path, content=b'{"name": "evil", "model": "m"}', headers={**JSON, **headers})
        assert answer.status_code == 403, (method, path, answer.text)
        assert answer.json()["error"]["code"] == "cross_site"
    assert client.get("/agents").json() == []
    same = client.post("/agents", json={"name": "ok", "model": "m"},
                       headers={"origin": "http://127.0.0.1", "sec-fetch-site": "same-origin"})
    assert same.status_code == 200, same.text
    # a page under a strict Referrer-Policy posts its own forms with Origin: null; the browser's
    # Sec-Fetch-Site still says same-origin, which script cannot forge
    own_form = client.post("/agents", json={"name": "ok2", "model": "m"},
                           headers={"origin": "null", "sec-fetch-site": "same-origin"})
    assert own_form.status_code == 200, own_form.text


def test_server_dns_rebinding_host_is_refused(tmp_path):
    import httpx

    server = RunningServer(tmp_path / "s.duckdb", tmp_path / "server.log", "--allow-host", "wai.example")
    try:
        with httpx.Client(base_url=server.url, timeout=10) as c:
            assert c.post("/agents", json={"name": "a", "model": "m"}).status_code == 200
            for method in ("GET", "DELETE"):
                answer = c.request(method, "/agents/a", headers={"host": f"rebind.example:{server.port}"})
                assert answer.status_code == 421, answer.text
                assert "rebind.example" in answer.json()["error"]["message"]
            assert c.get("/agents", headers={"host": f"localhost:{server.port}"}).status_code == 200
            assert c.get("/agents", headers={"host": "wai.example"}).status_code == 200
            assert [a["name"] for a in c.get("/agents").json()] == ["a"]
    finally:
        server.stop()


def test_server_body_limit_is_413_naming_the_limit(tmp_path):
    from starlette.testclient import TestClient

    assert SERVER_BODY_MAX_BYTES <= 25 * 1024 * 1024
    app = create_app(tmp_path / "s.duckdb", max_body=4096)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        run = _run(c)
        big = json.dumps({"record": {"blob": "x" * 10_000}}).encode()
        answer = c.patch(f"/runs/{run}", content=big, headers=JSON)
        assert answer.status_code == 413, answer.text
        assert "4,096 bytes" in answer.json()["error"]["message"]

        def chunks():  # no Content-Length: the limit is counted as the body arrives
            for _ in range(10):
                yield b" " * 1000
            yield b"{}"

        answer = c.patch(f"/runs/{run}", content=chunks(), headers=JSON)
        assert answer.status_code == 413, answer.text
        assert c.get(f"/runs/{run}").json()["record"] == {}


def test_server_deep_json_is_400(client):
    run = _run(client)
    for depth in (100, 1000, 100_000):
        body = '{"record": {"a": ' + "[" * depth + "]" * depth + "}}"
        answer = client.patch(f"/runs/{run}", content=body.encode(), headers=JSON)
        assert answer.status_code == 400, (depth, answer.text)
        assert answer.json()["error"]["code"] == "too_deep"


@pytest.mark.parametrize(("body", "field"), [('{"record": {"a": 1%s}}' % ("0" * 400), "record.a"),
                                             ('{"points": [{"step": 1, "metrics": {"m": 1%s}}]}' % ("0" * 30),
                                              "points.0.metrics.m")])
def test_server_huge_integer_is_422(client, body, field):
    run = _run(client)
    path = f"/runs/{run}/log" if "points" in body else f"/runs/{run}"
    answer = client.request("POST" if "points" in body else "PATCH", path, content=body.encode(), headers=JSON)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field
    assert client.get(f"/runs/{run}").status_code == 200


def test_keys_list_and_revoke_answer_401_at_once(tmp_path, capsys, monkeypatch):
    """wai keys list / revoke on the store of a running server: the revoked key answers 401 on its next request."""
    import httpx

    store = tmp_path / "s.duckdb"
    made = wai(capsys, monkeypatch, "keys", "create", "alice", "--store", store)
    assert made.code == 0, made.err
    key = made.out.strip()
    key_id = key.split("_")[1]
    server = RunningServer(store, tmp_path / "server.log")
    try:
        with httpx.Client(base_url=server.url, timeout=10, headers={"X-Api-Key": key}) as c:
            assert c.get("/runs").status_code == 200
            listed = wai(capsys, monkeypatch, "keys", "list", "--json", "--store", store)
            assert listed.code == 0, listed.err
            (row,) = json.loads(listed.out)
            assert row == {"key_id": key_id, "account": "alice", "created_at": row["created_at"], "revoked": False}
            assert key not in listed.out
            revoked = wai(capsys, monkeypatch, "keys", "revoke", key_id, "--store", store)
            assert revoked.code == 0, revoked.err
            assert c.get("/runs").status_code == 401
            assert c.get("/runs", headers={"X-Api-Key": ""}).status_code == 401  # keys stay on
        listed = wai(capsys, monkeypatch, "keys", "list", "--json", "--store", store)
        assert json.loads(listed.out)[0]["revoked"] is True
        unknown = wai(capsys, monkeypatch, "keys", "revoke", "nope", "--store", store)
        assert unknown.code == 2 and key_id in unknown.err, unknown.err
    finally:
        server.stop()


def test_store_cli_reads_while_the_server_runs(tmp_path, capsys, monkeypatch):
    """The server does not hold the store between requests: CLI reads and writes run beside it."""
    import httpx

    store = tmp_path / "s.duckdb"
    server = RunningServer(store, tmp_path / "server.log")
    try:
        with httpx.Client(base_url=server.url, timeout=10) as c:
            assert c.post("/runs", json={"name": "r1"}).status_code == 201
        listed = wai(capsys, monkeypatch, "sql", "SELECT name FROM tracked_runs", "--format", "json", "--store", store)
        assert listed.code == 0, listed.err
        assert "r1" in listed.out
        made = wai(capsys, monkeypatch, "keys", "create", "alice", "--store", store)  # a write, too
        assert made.code == 0, made.err
        with httpx.Client(base_url=server.url, timeout=10, headers={"X-Api-Key": made.out.strip()}) as c:
            assert c.post("/runs", json={"name": "r2"}).status_code == 201
    finally:
        server.stop()
