"""Platform fixtures: HOME in tmp_path (the saved login), and a real ``wai server`` on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

START_TIMEOUT_S = 60.0

#: Run by whileai 0.131's Python (test_client131.py), never imported here: it imports 0.131's names.
collect_ignore = ["client131_story.py"]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("WHILEAI_API_KEY", "WHILEAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    yield


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A ``wai server`` child process on 127.0.0.1, stopped (or killed) by the test that started it."""

    def __init__(self, store: Path, log: Path) -> None:
        self.store, self.log_path = store, log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log, "wb")  # noqa: SIM115
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "whileai.cli.main", "server", "--host", "127.0.0.1",
                                      "--port", str(self.port), "--store", str(store)],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"wai server exited {self.proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/openapi.json", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"wai server did not answer in {START_TIMEOUT_S} s: {log.read_text()[-2000:]}")
            time.sleep(0.1)

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.log.close()


@pytest.fixture
def start_server(tmp_path):
    started: list[Server] = []

    def start(store: Path | None = None) -> Server:
        server = Server(store or tmp_path / "server.duckdb", tmp_path / f"server-{len(started)}.log")
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def server(start_server):
    return start_server()
