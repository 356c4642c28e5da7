"""The documentation site in a real browser: the system Chromium through Playwright against site/.

``make docs`` builds site/ first (.ci/run does, before ``make test-browser``). The site is served
from 127.0.0.1 on a free port, inside the test. The home page, a Learn lesson and an API page
are opened; each must load with no console error, no failed request and no request to any other
host (nothing from a CDN), and every link on them that stays on the site must answer 200 with its
anchor present. Screenshots go to ``$WAI_SCREENSHOT_DIR`` when set, else the test's temp folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import httpx
import pytest

SITE = Path(__file__).resolve().parents[2] / "site"
CHROMIUM = os.environ.get("WAI_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
PAGES = {"home": "index.html", "lesson": "learn/03-pass-at-k.html", "api": "reference/api/measure.html"}

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: make test-browser installs it")
if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
    pytest.skip(f"no Chromium at {CHROMIUM}: make test-browser installs Debian's chromium with apt-get",
                allow_module_level=True)
if not (SITE / "index.html").exists():
    pytest.skip("site/ is not built: run make docs first", allow_module_level=True)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def site_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(site_url):
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
                                    args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_loads_clean_with_no_broken_link(name, site_url, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    outside: list[str] = []
    failed: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("requestfailed", lambda req: failed.append(req.url))
    page.on("request", lambda req: outside.append(req.url) if urlparse(req.url).hostname not in ("127.0.0.1", None)
            and not req.url.startswith("data:") else None)
    url = urljoin(site_url, PAGES[name])
    response = page.goto(url, wait_until="networkidle")
    assert response is not None and response.status == 200
    shots = Path(os.environ.get("WAI_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"site-{name}.png"), full_page=False)
    assert not errors, errors
    assert not failed, failed
    assert not outside, f"requests left the site: {outside}"
    assert page.locator("h1").count() >= 1
    links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    page.close()
    checked = 0
    with httpx.Client() as client:
        for link in sorted(set(links)):
            target, anchor = urldefrag(link)
            if not target.startswith(site_url):
                continue
            answer = client.get(target)
            assert answer.status_code == 200, f"{PAGES[name]} links to {link}: {answer.status_code}"
            if anchor and target.endswith(".html"):
                assert f'id="{anchor}"' in answer.text, f"{PAGES[name]} links to {link}: no such anchor"
            checked += 1
    assert checked > 10
