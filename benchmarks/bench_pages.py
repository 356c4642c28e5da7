"""The Runs page with 1,000 runs x 10 behaviors: server time to build and render it (target < 300 ms).

Fills the same store as bench_platform.py (1,000 runs of one agent, 10 behaviors each, 10,000
scores), then times, in-process and as medians: the dashboard (the rules over the store's rows),
the page's data and charts (``runs_page``), the Jinja2 render, and the whole page; then a GET of
``/agents/bench`` from a real ``wai server`` on a free loopback port, signed in with the link it
prints (the server's own log line gives its milliseconds).

Run: python benchmarks/bench_pages.py
"""

from __future__ import annotations

import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_platform import BEHAVIORS, RUNS, _free_port, _seed  # noqa: E402

REPEATS = 7


def _median(fn: Any) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(REPEATS):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def _in_process(store: Path) -> list[dict[str, Any]]:
    from whileai.platform._page import runs_page
    from whileai.platform._service import PlatformDB, Service
    from whileai.platform.pages import Pages
    from whileai.platform.pages._app import ASSETS
    from whileai.platform.pages._render import render

    db = PlatformDB(store, persistent=True)
    svc = Service(db)
    pages = Pages()
    s_dash, dash = _median(lambda: svc.dashboard("bench"))
    s_view, page = _median(lambda: runs_page(dash))
    s_render, body = _median(lambda: render("runs.html", assets=ASSETS, account="local", key_id=None, page=page,
                                            charts=page.charts()))
    s_all, body = _median(lambda: pages.render_runs_page(svc, "bench"))
    db.close()
    n = RUNS * BEHAVIORS
    return [
        {"call": "Service.dashboard", "rows": n, "seconds": s_dash, "note": "the rules over the store's rows"},
        {"call": "runs_page(dashboard)", "rows": n, "seconds": s_view, "note": f"the page's data and {len(page.charts())} charts"},
        {"call": "render runs.html", "rows": n, "seconds": s_render, "note": f"Jinja2, {len(body) / 1e6:.2f} MB of HTML"},
        {"call": "the Runs page, in-process", "rows": n, "seconds": s_all, "note": "all three; target < 0.300 s"},
    ]


def _served(store: Path) -> dict[str, Any]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "whileai.cli.main", "server", "--port", str(port), "--store",
                             str(store), "--log-level", "info"], stderr=subprocess.PIPE, text=True)
    try:
        link, logged = None, []
        deadline = time.monotonic() + 60
        while link is None and time.monotonic() < deadline:
            if select.select([proc.stderr], [], [], 1.0)[0]:
                m = re.search(r"(http://\S+/login\?token=\S+)", proc.stderr.readline())
                link = m.group(1) if m else None
        assert link, "wai server printed no sign-in link"
        with httpx.Client(timeout=60, headers={"accept": "text/html"}) as c:
            for _ in range(100):
                try:
                    c.get(link + "&next=/").raise_for_status()
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            url = link.split("/login")[0] + "/agents/bench"
            c.get(url).raise_for_status()
            times = []
            for _ in range(REPEATS):
                t = time.perf_counter()
                body = c.get(url).content
                times.append(time.perf_counter() - t)
        proc.terminate()
        _, err = proc.communicate(timeout=30)
        logged = [float(x) for x in re.findall(r"GET /agents/bench 200 key=- ([0-9.]+) ms", err)]
        server_ms = statistics.median(logged[-REPEATS:]) if logged else float("nan")
        return {"call": "GET /agents/bench (wai server)", "rows": RUNS * BEHAVIORS, "seconds": statistics.median(times),
                "note": f"server log {server_ms:.0f} ms median; {len(body) / 1e6:.2f} MB"}
    finally:
        if proc.poll() is None:
            proc.kill()


def run(sizes: list[int] | None = None) -> list[dict[str, Any]]:
    """The rows of the table (``sizes`` is ignored: the size is the issue's, 1,000 runs x 10 behaviors)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "pages.duckdb"
        _seed(store)
        rows = _in_process(store)
        rows.append(_served(store))
    for r in rows:
        r.setdefault("peak_mib", None)
    return rows


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    print(f"{'call':<34} {'rows':>8} {'seconds':>9}  note")
    for r in run():
        print(f"{r['call']:<34} {r['rows']:>8,} {r['seconds']:>9.3f}  {r['note']}")
