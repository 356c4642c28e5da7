"""``wai keys create``, ``wai login`` / ``status`` / ``logout`` and ``wai server``'s refusals."""

from __future__ import annotations

import json
import os
import stat

import duckdb
import pytest

from tests.platform.conftest import Server


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("WHILEAI_API_KEY", "WHILEAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_keys_create_prints_the_key_once_and_stores_its_hash(wai, tmp_path):
    store = tmp_path / "s.duckdb"
    res = wai("keys", "create", "alice", "--store", store)
    assert res.code == 0
    key = res.out.strip()
    assert key.startswith("wai_") and "shown once" in res.err
    con = duckdb.connect(str(store))
    assert key not in repr(con.execute("SELECT * FROM api_keys").fetchall())
    con.close()
    assert wai("keys", "create", "bad name!", "--store", store).code == 2


def test_login_status_logout(wai, tmp_path):
    store = tmp_path / "s.duckdb"
    key = wai("keys", "create", "alice", "--store", store).out.strip()
    server = Server(store, tmp_path / "server.log")
    try:
        assert wai("login", "--server", server.url, "--key", "wai_x_wrong").code == 2
        res = wai("login", "--server", server.url, "--key", key)
        assert res.code == 0 and "as acct-" in res.out
    finally:
        server.stop()
    path = tmp_path / "home" / ".whileai" / "credentials.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text()) == {"base_url": server.url, "api_key": key}
    status = wai("status")
    key_id = key.split("_")[1]
    assert status.code == 0 and f"server: {server.url}" in status.out and f"key: {key_id}" in status.out
    assert key not in status.out
    assert json.loads(wai("status", "--json").out)["key_id"] == key_id
    assert wai("logout").out.strip() == "logged out: credentials removed" and not path.exists()
    assert "none (the local store)" in wai("status").out


def test_login_to_nothing_fails_in_one_line(wai):
    from tests.platform.conftest import free_port

    res = wai("login", "--server", f"http://127.0.0.1:{free_port()}")
    assert res.code == 2 and res.err.startswith("error: server must answer at")


def test_server_refuses_a_public_host_without_keys(wai, tmp_path):
    res = wai("server", "--host", "0.0.0.0", "--store", tmp_path / "s.duckdb")
    assert res.code == 2 and "host must be a loopback address while API keys are off" in res.err
