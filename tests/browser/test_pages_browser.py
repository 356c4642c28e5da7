"""The Runs pages in a real browser: the system Chromium through Playwright against a real ``wai server``.

Skips with the reason when Playwright or /usr/bin/chromium is missing (``make test-browser``
installs both). Screenshots go to ``$WAI_SCREENSHOT_DIR`` when set (docs/img in the docs build).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.pages.seed import AGENT, seed

CHROMIUM = os.environ.get("WAI_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: make test-browser installs it")
if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
    pytest.skip(f"no Chromium at {CHROMIUM}: make test-browser installs Debian's chromium with apt-get",
                allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    store = tmp_path_factory.mktemp("browser") / "pages.duckdb"
    tracked = seed(store)
    expected = tracked.brief().markdown()
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115
    # The server's output goes to a file, not a pipe read with select(): select() cannot see lines
    # Python already buffered, so two lines arriving together used to hang the fixture for a minute.
    proc = subprocess.Popen([sys.executable, "-m", "whileai.cli.main", "server", "--port", str(port), "--store",
                             str(store), "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    link, deadline = None, time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"{url}/openapi.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        printed = log_path.read_text(errors="replace")
        m = re.search(r"(http://127\.0\.0\.1:\d+/login\?token=\S+)", printed)
        link = m.group(1) if m else None
        assert link, f"wai server did not print its sign-in link (exit {proc.poll()}): {printed[-2000:]}"
        yield {"url": url, "link": link, "brief": expected}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def browser_page(server):
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
                                    args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server["url"])
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server['link']}&next=/agents/{AGENT}")
        page.wait_for_load_state("networkidle")
        yield page, errors
        assert errors == [], f"console errors: {errors}"
        context.close()
        browser.close()


def _shot(page, name: str) -> None:
    where = os.environ.get("WAI_SCREENSHOT_DIR")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"pages-{name}.png"), full_page=name in ("rows-x",))


def test_signin_link_lands_on_the_runs_page(browser_page):
    page, _ = browser_page
    assert page.url.endswith(f"/agents/{AGENT}")
    assert page.locator("h1").first.inner_text() == AGENT
    page.locator(".main-svg").first.wait_for()
    _shot(page, "runs")


def test_brief_text_is_brief_markdown(browser_page, server):
    page, _ = browser_page
    assert page.locator("#brief-md").text_content() == server["brief"]
    assert page.evaluate("JSON.parse(document.getElementById('brief-json').textContent)") == server["brief"]


def test_copy_button_puts_the_brief_on_the_clipboard(browser_page, server):
    page, _ = browser_page
    page.locator("#copy-brief").focus()
    page.keyboard.press("Enter")  # keyboard-reachable
    page.wait_for_function("document.getElementById('copy-status').textContent === 'copied'")
    assert page.evaluate("navigator.clipboard.readText()") == server["brief"]


def test_every_chart_has_drawn_with_its_traces(browser_page):
    page, _ = browser_page
    charts = page.locator("div.chart[data-traces]")
    assert charts.count() >= 6  # two behaviors, the curve, the cost, two posted figures
    for i in range(charts.count()):
        node = charts.nth(i)
        node.locator(".main-svg").first.wait_for()
        want = int(node.get_attribute("data-traces"))
        assert node.evaluate("n => n.data.length") == want
        assert node.evaluate("n => n._fullData.length") == want
        assert node.locator("g.trace").count() >= 1
    page.locator("#scores").evaluate("n => n.scrollIntoView()")
    _shot(page, "runs-charts")
    page.locator("#moved").evaluate("n => n.scrollIntoView()")
    _shot(page, "runs-tables")


def test_posted_script_does_not_run(browser_page):
    page, _ = browser_page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert "<script>window.__pwned = 1</script>" in page.locator("#experiment").inner_text()
    assert page.locator("#experiment a[href^='javascript']").count() == 0


def test_rows_page_filters_change_the_row_count(browser_page, server):
    page, _ = browser_page
    page.locator("#runs-table a").last.click()
    page.wait_for_load_state("networkidle")
    _shot(page, "run")
    page.locator("#scores-table a", has_text="refunds").click()
    page.wait_for_load_state("networkidle")
    everything = page.locator("#rows-table tbody tr").count()
    page.locator("#show-failed").click()
    page.wait_for_load_state("networkidle")
    failed = page.locator("#rows-table tbody tr").count()
    assert (everything, failed) == (120, 30)
    assert page.locator("#rows-table tbody tr.passed").count() == 0
    page.locator("#show-passed").click()
    assert page.locator("#rows-table tbody tr").count() == 90
    assert page.locator("#tag-table tbody tr").count() == 4
    assert page.locator("#sample-table tbody tr").count() == 20
    _shot(page, "rows")


def test_promote_changes_the_served_version_and_the_verdict(browser_page, server):
    page, _ = browser_page
    page.goto(f"{server['url']}/agents/{AGENT}")
    before = page.locator("#verdict-table tr[data-behavior=refunds]").inner_text()
    assert page.locator("#served-version").inner_text() == "base"
    page.locator("#promote-version").select_option("sft-v1")
    page.locator("#promote").click()
    page.wait_for_load_state("networkidle")
    _shot(page, "promote")
    page.locator("#confirm-promote").click()
    page.wait_for_load_state("networkidle")
    assert page.locator("#served-version").inner_text() == "sft-v1"
    after = page.locator("#verdict-table tr[data-behavior=refunds]").inner_text()
    assert after != before and "sft-v1" in page.locator("#verdict-table tr[data-behavior=refunds] td.served").inner_text()
    dash = httpx.get(f"{server['url']}/agents/{AGENT}/dashboard").json()
    assert dash["agent"]["served"] == "sft-v1"
    promoted = [r["summary"].get("promoted") for r in dash["runs"] if r["version"] == "sft-v1"]
    assert promoted[-1]["from"] == "base"
    assert "sft-v1" in next(v["line"] for v in dash["verdicts"] if v["behavior"] == "refunds")


def test_agents_and_login_pages(browser_page, server):
    page, _ = browser_page
    page.goto(f"{server['url']}/")
    assert page.locator("table a", has_text=AGENT).count() == 1
    _shot(page, "agents")
    fresh = page.context.browser.new_context()
    other = fresh.new_page()
    other.goto(f"{server['url']}/agents/{AGENT}")
    assert "/login" in other.url  # no session: the sign-in form
    _shot(other, "login")
    fresh.close()


def test_static_report_draws_offline_from_a_file(browser_page, tmp_path):
    from whileai.platform.pages import write_report
    from whileai.testing import rollout_table

    a, b = tmp_path / "base.parquet", tmp_path / "sft.parquet"
    rollout_table(60, 4, seed=1, policy_version="base").write_parquet(a)
    rollout_table(60, 4, seed=1, shift=0.15, replica=3, policy_version="sft").write_parquet(b)
    out = write_report([a, b], tmp_path / "report.html")
    page, _ = browser_page
    fresh = page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    other = fresh.new_page()
    errors: list[str] = []
    other.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    other.on("pageerror", lambda exc: errors.append(str(exc)))
    other.goto(out.as_uri())
    other.set_viewport_size({"width": 420, "height": 900})
    assert other.evaluate("document.documentElement.scrollWidth") <= 420
    assert other.evaluate(DUPLICATE_IDS) == []
    other.set_viewport_size({"width": 1280, "height": 900})
    charts = other.locator("div.chart[data-traces]")
    assert charts.count() >= 2
    for i in range(charts.count()):
        node = charts.nth(i)
        node.locator(".main-svg").first.wait_for()
        assert node.evaluate("n => n.data.length") == int(node.get_attribute("data-traces"))
    assert other.locator("#pass-rates tbody tr").count() == 2
    _shot(other, "report")
    fresh.close()
    assert errors == []


# --- a page people can read (issue 37, feature 6) ---------------------------------------------------


def _rest_verdicts(server) -> list[dict]:
    return httpx.get(f"{server['url']}/agents/{AGENT}/dashboard").json()["verdicts"]


def test_verdicts_are_a_table_whose_rows_match_the_rest_verdicts(browser_page, server):
    page, _ = browser_page
    page.goto(f"{server['url']}/agents/{AGENT}")
    rows = page.locator("#verdict-table tbody tr")
    want = _rest_verdicts(server)
    assert rows.count() == len(want) >= 2
    for i, v in enumerate(want):
        cells = [c.strip() for c in rows.nth(i).locator("th, td").all_inner_texts()]
        lo, hi = v["ci95"]
        word = v["word"].replace("_", " ") + (" (unproven)" if v["unproven"] else "")
        assert cells == [v["behavior"], f"{v['served']} {v['served_score']:.1f}",
                         f"{v['candidate']} {v['candidate_score']:.1f}", f"{v['delta']:+.1f}", f"{lo:+.1f}..{hi:+.1f}",
                         word]
    assert not page.locator("#verdict-lines").evaluate("n => n.open")  # the sentences folded under the table


def test_posted_figures_draw_at_a_readable_height(browser_page, server):
    page, _ = browser_page
    page.goto(f"{server['url']}/agents/{AGENT}")
    figures = page.locator("#figures div.chart")
    assert figures.count() == 2
    for i in range(figures.count()):
        node = figures.nth(i)
        node.locator(".main-svg").first.wait_for()
        # the plot area itself, inside the margins (it was 20 px: a 200 px box less Plotly's 180 px of margins)
        assert node.evaluate("n => n._fullLayout._size.h") > 150
        assert node.evaluate("n => n.getBoundingClientRect().height") > 150


def test_run_page_keeps_its_raw_json_behind_a_toggle(browser_page, server):
    page, _ = browser_page
    page.goto(f"{server['url']}/agents/{AGENT}")
    page.locator("#runs-table a").last.click()
    page.wait_for_load_state("networkidle")
    assert page.locator("#record-table").is_visible()
    raw = page.locator("#raw-json")
    assert not raw.evaluate("n => n.open") and not page.locator("#record-json").is_visible()
    raw.locator("summary").click()
    assert page.locator("#record-json").is_visible() and '"optimizer"' in page.locator("#record-json").inner_text()


def _pages_to_check(server) -> list[str]:
    runs = httpx.get(f"{server['url']}/runs", params={"agent": AGENT}).json()
    sft = next(r["id"] for r in runs if r["version"] == "sft-v1")
    return ["/", f"/agents/{AGENT}", f"/runs/{sft}", f"/runs/{sft}/evals/refunds",
            f"/agents/{AGENT}/diff?behavior=refunds&a=base&b=sft-v1", f"/runs?agent={AGENT}",
            f"/runs?pick={sft}&pick={runs[0]['id']}&archived=true", f"/agents/{AGENT}/promote/confirm?version=base"]


DUPLICATE_IDS = """() => { const seen = {}; for (const n of document.querySelectorAll('[id]')) seen[n.id] = (seen[n.id] || 0) + 1;
                          return Object.keys(seen).filter(k => seen[k] > 1); }"""


def test_every_page_has_unique_ids_and_no_horizontal_scroll_at_420_px(browser_page, server):
    page, _ = browser_page
    page.set_viewport_size({"width": 420, "height": 900})
    try:
        for path in _pages_to_check(server):
            page.goto(f"{server['url']}{path}")
            page.wait_for_load_state("networkidle")
            assert page.evaluate(DUPLICATE_IDS) == [], path
            assert page.evaluate("document.documentElement.scrollWidth") <= 420, path
            for opened in page.locator("details:not([open]) > summary").all()[:20]:
                if opened.is_visible():
                    opened.click()  # opened blocks must not widen the page either
            assert page.evaluate("document.documentElement.scrollWidth") <= 420, f"{path} (blocks opened)"
        fresh = page.context.browser.new_context(viewport={"width": 420, "height": 900})
        login = fresh.new_page()
        login.goto(f"{server['url']}/login")
        assert login.evaluate("document.documentElement.scrollWidth") <= 420
        assert login.evaluate(DUPLICATE_IDS) == []
        fresh.close()
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


# --- run exploration (issue 37, feature 3) ------------------------------------------------------------

EXPLORE_AGENT = "sweep-agent"


@pytest.fixture(scope="module")
def sweep(server):
    """Three runs of another agent with curves, over REST: two kept, one archived."""
    c = httpx.Client(base_url=server["url"], timeout=30)
    c.post("/agents", json={"name": EXPLORE_AGENT})
    ids = {}
    for version, lr, archived in (("lr-1e-5", 1e-5, False), ("lr-3e-5", 3e-5, False), ("lr-old", 1e-4, True)):
        run_id = c.post("/runs", json={"agent": EXPLORE_AGENT, "version": version,
                                       "record": {"optimizer": {"learning_rate": lr}, "seed": 7}}).json()["runId"]
        points = [{"step": s, "loss": 2.0 - s * lr * 1000, "lr": lr, "reward": 0.3 + s / 100} for s in range(40)]
        assert c.post(f"/runs/{run_id}/log", json={"points": points}).status_code == 200
        if archived:
            assert c.patch(f"/runs/{run_id}", json={"archived": True}).status_code == 200
        ids[version] = run_id
    c.close()
    return ids


def _visible_runs(page) -> set[str]:
    return set(page.locator("#explore-table tbody tr:not([hidden])").evaluate_all("rows => rows.map(r => r.dataset.run)"))


def test_archived_runs_hide_until_the_toggle_and_search_filters(browser_page, server, sweep):
    page, _ = browser_page
    page.goto(f"{server['url']}/runs")
    page.wait_for_load_state("networkidle")
    everything = {r["id"] for r in httpx.get(f"{server['url']}/runs", params={"archived": "true"}).json()}
    archived = sweep["lr-old"]
    assert archived in everything and _visible_runs(page) == everything - {archived}
    page.locator("#f-archived").check()
    assert _visible_runs(page) == everything
    page.locator("#f-archived").uncheck()
    page.locator("#f-q").fill("LR-3E")  # case-insensitive
    assert _visible_runs(page) == {sweep["lr-3e-5"]}
    assert page.locator("#shown-count").inner_text() == f"1 of {len(everything)} run(s) shown"
    page.locator("#f-q").fill("")
    page.locator("#f-agent").select_option(EXPLORE_AGENT)
    assert _visible_runs(page) == {sweep["lr-1e-5"], sweep["lr-3e-5"]}
    page.locator("#f-archived").check()
    page.locator("#f-state").select_option("running")
    assert _visible_runs(page) == set(sweep.values())
    # the same filters from the address (no script needed): the server hides the same rows
    page.goto(f"{server['url']}/runs?q=lr-&agent={EXPLORE_AGENT}")
    assert _visible_runs(page) == {sweep["lr-1e-5"], sweep["lr-3e-5"]}


def test_overlay_draws_one_series_per_picked_run_with_smoothing_and_zoom(browser_page, server, sweep):
    page, _ = browser_page
    page.goto(f"{server['url']}/runs?agent={EXPLORE_AGENT}&archived=true")
    for version in ("lr-1e-5", "lr-3e-5", "lr-old"):
        page.locator(f"#explore-table tr[data-run={sweep[version]}] input[name=pick]").check()
    page.locator("#compare-button").click()
    page.wait_for_load_state("networkidle")
    overlay = page.locator("#overlay")
    overlay.locator(".main-svg").first.wait_for()
    assert overlay.evaluate("n => n.data.length") == 3 == int(overlay.get_attribute("data-traces"))
    assert overlay.evaluate("n => n._fullData.length") == 3 and overlay.locator("g.trace").count() == 3
    assert overlay.evaluate("n => n._fullLayout._size.h") > 150
    page.locator("#compare").evaluate("n => n.scrollIntoView()")
    _shot(page, "explore")
    rest = httpx.get(f"{server['url']}/compare", params={"runs": ",".join(sweep.values()), "metric": "loss"}).json()
    assert overlay.evaluate("n => n.data.map(t => t.y)") == [s["values"] for s in rest["series"]]
    page.locator("#c-metric").select_option("reward")
    assert overlay.evaluate("n => n.data[0].name").startswith("lr-1e-5")
    raw = [0.3 + s / 100 for s in range(40)]
    page.locator("#c-smooth").fill("0.6")
    smoothed = overlay.evaluate("n => n.data[0].y")
    want, last = [], 0.0
    for i, v in enumerate(raw, 1):  # TensorBoard's debiased exponential moving average, by hand
        last = 0.6 * last + 0.4 * v
        want.append(last / (1 - 0.6 ** i))
    assert smoothed == pytest.approx(want)
    page.locator("#c-from").fill("10")
    page.locator("#c-to").fill("20")
    assert overlay.evaluate("n => n._fullLayout.xaxis.range") == [10, 20]
    config = page.locator("#config-table")
    assert config.locator("thead th").count() == 4
    lr_row = config.locator("tbody tr", has=page.locator("th", has_text="record.optimizer.learning_rate"))
    assert lr_row.locator("td").all_inner_texts() == ["1e-05", "3e-05", "0.0001"]
    assert "differs" in lr_row.get_attribute("class")
    seed_row = config.locator("tbody tr", has=page.locator("th", has_text="record.seed"))
    page.locator("#c-differs").check()
    assert seed_row.is_hidden() and lr_row.is_visible()
