"""Platform benchmarks: POST throughput of log points, and the dashboard at 1,000 runs x 10 behaviors.

A real ``wai server`` child process on a free 127.0.0.1 port over a fresh store. Throughput is
log points per second through ``POST /runs/{id}/log`` (500 a call), from one client and from 32 at
once. The dashboard store is seeded in bulk (1,000 runs of one agent, each scored on 10
behaviors, 10,000 scores), then ``GET /agents/{name}/dashboard`` and the in-process
``Service.dashboard`` are timed (median of 7; target under 100 ms).
``python benchmarks/bench_platform.py`` prints the rows; ``run(sizes)`` returns them.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import status_mib  # noqa: E402

RUNS = 1_000
BEHAVIORS = 10
POINTS_ONE_CLIENT = 100_000
CLIENTS = 32
POINTS_PER_CLIENT = 5_000
BATCH = 500
REPEATS = 7


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(store: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "whileai.cli.main", "server", "--port", str(port), "--store",
                             str(store), "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/openapi.json", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("wai server did not start")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def _post_points(url: str, run_id: str, n: int, offset: int = 0) -> None:
    with httpx.Client(base_url=url, timeout=60) as c:
        for start in range(0, n, BATCH):
            points = [{"step": offset + s, "loss": 0.5, "lr": 1e-5} for s in range(start, min(n, start + BATCH))]
            resp = c.post(f"/runs/{run_id}/log", json={"points": points, "batch_id": uuid.uuid4().hex})
            resp.raise_for_status()


def _throughput(url: str) -> list[dict[str, Any]]:
    rows = []
    run_id = httpx.post(f"{url}/runs", json={"name": "bench"}, timeout=10).json()["runId"]
    t = time.perf_counter()
    _post_points(url, run_id, POINTS_ONE_CLIENT)
    s = time.perf_counter() - t
    rows.append({"call": "POST /runs/{id}/log, 1 client", "rows": POINTS_ONE_CLIENT, "seconds": s,
                 "note": f"{POINTS_ONE_CLIENT / s:,.0f} points/s, {BATCH} a call"})
    threads = [threading.Thread(target=_post_points, args=(url, run_id, POINTS_PER_CLIENT, (i + 1) * 10_000_000))
               for i in range(CLIENTS)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=600)
    s = time.perf_counter() - t
    total = CLIENTS * POINTS_PER_CLIENT
    rows.append({"call": f"POST /runs/{{id}}/log, {CLIENTS} clients", "rows": total, "seconds": s,
                 "note": f"{total / s:,.0f} points/s"})
    return rows


def _seed(store: Path) -> None:
    """1,000 runs of one agent, 10 behaviors each, written in bulk (the timed part is the read)."""
    import pyarrow as pa

    from whileai.platform import AgentSpec, Behavior
    from whileai.platform._service import PlatformDB, Service
    from whileai.store._migrations import utcnow

    svc = Service.local(store)
    svc.put_agent(AgentSpec(name="bench"))
    for b in range(BEHAVIORS):
        svc.put_behavior("bench", Behavior(name=f"behavior_{b}", agreement=0.9, human_n=100, noise_floor=2.0))
    now = utcnow()
    run_ids = [f"tr-bench{i:05d}" for i in range(RUNS)]
    runs = pa.table({"id": run_ids, "version": [f"v{i}" for i in range(RUNS)]})
    n = RUNS * BEHAVIORS
    scores = pa.table({
        "id": [f"sc-bench{i:06d}" for i in range(n)],
        "run_id": [run_ids[i // BEHAVIORS] for i in range(n)],
        "behavior": [f"behavior_{i % BEHAVIORS}" for i in range(n)],
        "value": [50.0 + (i * 7919 % 400) / 10.0 for i in range(n)],
        "ci": [3.0] * n, "n": [100] * n,
    })
    db = PlatformDB(store)
    with db.write() as con:
        con.register("_runs", runs)
        con.execute("INSERT INTO tracked_runs SELECT id, 'local', 'bench', version, version, NULL, NULL, NULL, 'done', "
                    "?, ?, '{\"optimizer\": {}}', '{}', 1.0, 1.0, 'reported', NULL, NULL, FALSE, NULL FROM _runs",
                    [now, now])
        con.register("_scores", scores)
        con.execute("INSERT INTO scores SELECT id, run_id, behavior, value, ci, n, '[]', nextval('platform_seq'), ? "
                    "FROM _scores", [now])


def _dashboard(tmp: Path) -> list[dict[str, Any]]:
    from whileai.platform._service import PlatformDB, Service

    store = tmp / "dash.duckdb"
    _seed(store)
    db = PlatformDB(store, persistent=True)
    svc = Service(db)
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        dash = svc.dashboard("bench")
        times.append(time.perf_counter() - t)
    assert len(dash.runs) == RUNS and len(dash.verdicts) == BEHAVIORS
    rows = [{"call": "Service.dashboard (in-process)", "rows": RUNS * BEHAVIORS, "seconds": statistics.median(times),
             "note": f"{RUNS} runs x {BEHAVIORS} behaviors, median of {REPEATS}; target < 0.100 s"}]
    db.close()
    proc, url = _start(store)
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            c.get("/agents/bench/dashboard").raise_for_status()
            times = []
            for _ in range(REPEATS):
                t = time.perf_counter()
                body = c.get("/agents/bench/dashboard").content
                times.append(time.perf_counter() - t)
        rows.append({"call": "GET /agents/{name}/dashboard", "rows": RUNS * BEHAVIORS,
                     "seconds": statistics.median(times), "peak_mib": status_mib("VmHWM", proc.pid),
                     "note": f"median of {REPEATS}, {len(body) / 1e6:.1f} MB of JSON; target < 0.100 s"})
    finally:
        _stop(proc)
    return rows


def run(sizes: list[int] | None = None) -> list[dict[str, Any]]:
    """The throughput and dashboard rows (``sizes`` is ignored: the sizes are the issue's)."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _start(Path(tmp) / "tput.duckdb")
        try:
            rows = _throughput(url)
            peak = status_mib("VmHWM", proc.pid)
            for r in rows:
                r["peak_mib"] = peak
        finally:
            _stop(proc)
        rows += _dashboard(Path(tmp))
    for r in rows:
        r.setdefault("peak_mib", None)
    return rows


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    print(f"{'call':<40} {'rows':>8} {'seconds':>9} {'peak MiB':>9}  note")
    for r in run():
        peak = "-" if r["peak_mib"] is None else f"{r['peak_mib']:.0f}"
        print(f"{r['call']:<40} {r['rows']:>8,} {r['seconds']:>9.3f} {peak:>9}  {r['note']}")
    print(json.dumps({"cpu_seconds_self": resource.getrusage(resource.RUSAGE_SELF).ru_utime}))
