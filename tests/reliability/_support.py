"""Rows and runners the reliability tests share (a module, not a conftest, so test folders stay independent)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

WAI = os.path.join(os.path.dirname(sys.executable), "wai")


class Result(NamedTuple):
    code: int
    out: str
    err: str


def rows(n_tasks: int = 2, k: int = 2) -> list[dict[str, Any]]:
    """Graded chat rows: task i passes on even rollouts."""
    return [
        {"scenario_id": f"t{t}", "rollout_index": r, "reward": float(r % 2 == 0),
         "messages": [{"role": "user", "content": f"question {t}"}, {"role": "assistant", "content": f"answer {t}.{r}"}]}
        for t in range(n_tasks) for r in range(k)
    ]


def write_rows(path: Path, items: list[dict[str, Any]] | None = None) -> Path:
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in (items if items is not None else rows())))
    return path


def wai(capsys: Any, monkeypatch: Any, *args: Any, stdin: str | None = None) -> Result:
    """Run ``wai`` in-process through ``main()`` (the real error handler)."""
    from whileai.cli.main import main

    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return Result(code, out, err)


def wai_process(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess:
    """Run the installed ``wai`` as a subprocess (exit codes, signals, real file descriptors)."""
    return subprocess.run([WAI, *map(str, args)], capture_output=True, text=True, timeout=120, **kwargs)


def temp_files(folder: Path) -> list[str]:
    """Leftover temporary files of whileai's writer (or of its older ``.tmp`` naming)."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".wai-tmp", ".tmp")))


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the OS picks it)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RunningServer:
    """``wai server`` as a child process on 127.0.0.1 and a free port; the test that starts it stops it."""

    def __init__(self, store: Path, log: Path, *extra: str) -> None:
        import time

        import httpx

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self.log = open(log, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "whileai.cli.main", "server", "--host", "127.0.0.1",
                                      "--port", str(self.port), "--store", str(store), *extra],
                                     stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        for _ in range(600):  # 60 s at most
            if self.proc.poll() is not None:
                raise RuntimeError(f"wai server exited {self.proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/openapi.json", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"wai server did not answer: {log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.log.close()
