"""Under load and under SIGKILL: every acknowledged point and row is stored exactly once."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter

import httpx

import whileai.platform as wp
from whileai.platform._service import Service

CLIENTS = 32
POINTS = 20_000
ROWS = 2_000
JOIN_TIMEOUT_S = 240.0


def test_32_clients_at_once_store_every_point_and_row_once(server):
    owner = wp.track("load test agent", name="load", base_url=server.url)
    shared = owner.run("shared")
    per_client = POINTS // CLIENTS
    errors: list[BaseException] = []
    score_ids: dict[int, str] = {}
    start = threading.Barrier(CLIENTS)

    def client(i: int) -> None:
        try:
            tracked = wp.track("load test agent", name="load", base_url=server.url)  # its own connection pool
            run = tracked.open(shared.id)
            start.wait(timeout=60)
            for step in range(i * per_client, (i + 1) * per_client):
                run.log(step=step, loss=step / POINTS)
            assert run.flush()
            mine = tracked.run(f"client-{i}")
            lo, hi = i * ROWS // CLIENTS, (i + 1) * ROWS // CLIENTS
            rows = [wp.Example(prompt=f"row {j}", reply="r", ok=j % 3 == 0) for j in range(lo, hi)]
            score_ids[i] = mine.score("refunds", 50, ci=5, n=hi - lo, rows=rows).id
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(CLIENTS)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1.0, JOIN_TIMEOUT_S - (time.monotonic() - began)))
    assert not any(t.is_alive() for t in threads), "clients still running past the bound"
    assert not errors, errors[:3]
    steps = Counter(p["step"] for p in shared.points())
    assert len(steps) == POINTS and set(steps.values()) == {1} and set(steps) == set(range(POINTS))
    prompts = Counter()
    for run_id in owner.runs():
        if run_id != shared.id:
            prompts.update(r.prompt for r in owner.open(run_id).rows("refunds"))
    assert len(prompts) == ROWS and set(prompts.values()) == {1}
    assert len(score_ids) == CLIENTS


def test_sigkill_mid_write_loses_no_acknowledged_write(tmp_path, start_server):
    store = tmp_path / "killed.duckdb"
    server = start_server(store)
    run_id = httpx.post(f"{server.url}/runs", json={"name": "kill-me"}, timeout=10).json()["runId"]
    acked: list[int] = []
    sent: list[int] = []
    stop = threading.Event()
    batch = 50

    def writer() -> None:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            b = 0
            while not stop.is_set() and b < 100_000:
                sent.append(b)
                try:
                    resp = c.post(f"/runs/{run_id}/log", json={"points": [{"step": b * batch + j, "loss": 0.1}
                                                                          for j in range(batch)],
                                                               "batch_id": f"b{b}"})
                except httpx.HTTPError:
                    # a slow reply on a loaded host, or the kill: the same batch again (its batch_id
                    # makes a second delivery a no-op) until the test stops the writer
                    time.sleep(0.05)
                    continue
                if resp.status_code == 200:
                    acked.append(b)
                b += 1

    threads = [threading.Thread(target=writer, daemon=True) for _ in range(1)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while len(acked) < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=15)
    stop.set()
    for t in threads:
        t.join(timeout=15)
    assert len(acked) >= 40
    points = Service.local(store).points(run_id)
    steps = Counter(p["step"] for p in points)
    assert set(steps.values()) <= {1}
    for b in acked:
        assert all(steps[b * batch + j] == 1 for j in range(batch)), f"acknowledged batch {b} lost"
    # a batch is all there or not there (one transaction each)
    by_batch = Counter(s // batch for s in steps)
    assert set(by_batch.values()) == {batch}
