"""The Runs pages in-process: sign-in, sessions, accounts, the blocks of the page, Promote, the rows page."""

from __future__ import annotations

import re

import pytest

import whileai.platform as wp
from tests.pages.conftest import client_for
from tests.pages.seed import AGENT, SCRIPT
from whileai.defaults import SESSION_COOKIE
from whileai.platform.pages import safe_next

HTML = {"accept": "text/html"}


def _signed_in(store):
    c, pages = client_for(store)
    r = c.get(f"/login?token=tok&next=/agents/{AGENT}", headers=HTML, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/agents/{AGENT}"
    return c, pages, r


def test_a_page_without_a_session_redirects_to_login(seeded):
    store, _ = seeded
    c, _ = client_for(store)
    with c:
        for path in ("/", f"/agents/{AGENT}", "/runs", "/runs/x", "/runs/x/evals/refunds", f"/agents/{AGENT}/promote/confirm"):
            r = c.get(path, headers=HTML, follow_redirects=False)
            assert r.status_code == 303 and r.headers["location"].startswith("/login?next=/"), path
        form = c.get("/login", headers=HTML)
        assert form.status_code == 200 and 'name="key"' in form.text


def test_login_sets_a_signed_httponly_strict_cookie_without_the_key(seeded):
    store, _ = seeded
    c, pages, r = _signed_in(store)
    with c:
        cookie = r.headers["set-cookie"]
        assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower() and "Path=/" in cookie
        value = re.search(rf"{SESSION_COOKIE}=([^;]+)", cookie).group(1)
        assert "tok" not in value and re.fullmatch(r"[A-Za-z0-9_-]+\.[0-9a-f]{64}", value)
        assert c.get(f"/agents/{AGENT}", headers=HTML).status_code == 200
        # a tampered signature is no session (the jar emptied first: a second cookie of the same
        # name under another domain would be sent beside the good one)
        c.cookies.clear()
        c.cookies.set(SESSION_COOKIE, value[:-1] + ("0" if value[-1] != "0" else "1"))
        assert c.get("/", headers=HTML, follow_redirects=False).status_code == 303


def test_a_wrong_token_is_refused_and_next_stays_on_site(seeded):
    store, _ = seeded
    c, _ = client_for(store)
    with c:
        bad = c.get("/login?token=nope&next=/agents/x", headers=HTML, follow_redirects=False)
        assert bad.status_code == 401 and "not the one this server printed" in bad.text
        assert "set-cookie" not in bad.headers
        r = c.post("/login", content="key=tok&next=https%3A%2F%2Fevil.example%2F", follow_redirects=False,
                   headers={"content-type": "application/x-www-form-urlencoded"})
        assert r.status_code == 303 and r.headers["location"] == "/"
        out = c.post("/logout", follow_redirects=False)
        assert out.status_code == 303 and c.get("/", headers=HTML, follow_redirects=False).status_code == 303


@pytest.mark.parametrize("value, want", [("/agents/a?x=1", "/agents/a?x=1"), ("//evil.example", "/"),
                                         ("https://evil.example/", "/"), ("/\\evil.example", "/"),
                                         ("agents", "/"), ("", "/"), (None, "/"), ("/a\nb", "/")])
def test_safe_next(value, want):
    assert safe_next(value) == want


def test_the_rest_routes_still_answer_json(seeded):
    store, _ = seeded
    c, _, _ = _signed_in(store)
    with c:
        r = c.get(f"/agents/{AGENT}")
        assert r.headers["content-type"].startswith("application/json") and r.json()["name"] == AGENT
        r = c.get(f"/agents/{AGENT}", headers={**HTML, "X-Api-Key": "x"})  # a key means the API
        assert r.headers["content-type"].startswith("application/json")


def test_a_key_sees_only_its_own_accounts_agents(tmp_path):
    store = tmp_path / "keys.duckdb"
    ka, kb = wp._service.create_key("alice", store=store), wp._service.create_key("bob", store=store)
    wp.track({"name": "alice-agent"}, store=str(store), api_key=ka.key).run("v1").score("refunds", 50.0, ci=5, n=60)
    wp.track({"name": "bob-agent"}, store=str(store), api_key=kb.key)
    c, pages = client_for(store)
    with c:
        assert c.get(f"/login?token={pages.login_token}", headers=HTML, follow_redirects=False).status_code == 401
        assert c.get(f"/login?token={ka.key}&next=/", headers=HTML, follow_redirects=False).status_code == 303
        listing = c.get("/", headers=HTML).text
        assert "alice-agent" in listing and "bob-agent" not in listing
        # the served column names the version the rules serve (the first scored), not a description
        row = re.search(r"<tr><td><a href=\"/agents/alice-agent\">.*?</tr>", listing).group(0)
        assert "<td>v1 <span" in row and "first scored" in row
        assert ka.key not in c.cookies.get(SESSION_COOKIE)
        assert c.get("/agents/bob-agent", headers=HTML).status_code == 404
        assert c.get("/agents/alice-agent", headers=HTML).status_code == 200


def test_runs_page_shows_every_block_from_the_dashboard(seeded):
    store, tracked = seeded
    c, _, _ = _signed_in(store)
    dash, brief = tracked.dashboard(), tracked.brief()
    with c:
        r = c.get(f"/agents/{AGENT}", headers=HTML)
        page = r.text
    assert r.headers["content-security-policy"].startswith("default-src 'self'; script-src 'self'")
    for block in ("brief", "experiment", "verdict", "scores", "training", "moved", "judge-table", "evals-table",
                  "cost", "runs-table", "figures", "missing"):
        assert f'id="{block}"' in page, block
    import html as h
    import json

    blob = re.search(r'<script type="application/json" id="brief-json">(.*?)</script>', page, re.S).group(1)
    assert json.loads(blob) == brief.markdown()
    pre = re.search(r'<pre id="brief-md">(.*?)</pre>', page, re.S).group(1)
    assert h.unescape(pre) == brief.markdown()
    for v in dash.verdicts:
        assert h.escape(v.line, quote=True) in page
    assert "<script>window" not in page and h.escape(SCRIPT) in page  # escaped, shown as text
    assert 'href="javascript' not in page
    assert page.count('class="chart"') == 2 + 1 + 1 + 2  # two behaviors, the curve, the cost, two figures
    assert "frontier gpt-frontier 85.0" in page  # the line to beat, not a bar
    assert page.count("<th scope=\"col\"") > 40 and page.count("<th scope=\"row\">") >= 6  # semantic tables
    assert "reported by the agent, not priced by the book" in page
    assert "A10G at $1.10/h" in page  # the training cost line


def test_promote_has_a_confirm_step_a_form_token_and_is_recorded(seeded):
    store, _ = seeded
    c, _, _ = _signed_in(store)
    with c:
        confirm = c.get(f"/agents/{AGENT}/promote/confirm?version=sft-v1", headers=HTML)
        assert confirm.status_code == 200 and "Yes, promote sft-v1" in confirm.text
        token = re.search(r'name="csrf" value="([^"]+)"', confirm.text).group(1)
        form = {"content-type": "application/x-www-form-urlencoded"}
        forged = c.post(f"/agents/{AGENT}/promote/confirm", content="version=sft-v1&csrf=wrong", headers=form,
                        follow_redirects=False)
        assert forged.status_code == 403
        assert c.get(f"/agents/{AGENT}").json()["served"] is None
        r = c.post(f"/agents/{AGENT}/promote/confirm", content=f"version=sft-v1&csrf={token}", headers=form,
                   follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == f"/agents/{AGENT}#verdict"
        assert c.get(f"/agents/{AGENT}").json()["served"] == "sft-v1"
        runs = c.get(f"/runs?agent={AGENT}").json()
        promoted = [x["summary"].get("promoted") for x in runs if x["version"] == "sft-v1"][-1]
        assert promoted["from"] == "base" and promoted["by"] == "local"
        page = c.get(f"/agents/{AGENT}", headers=HTML).text
        assert '<strong id="served-version">sft-v1</strong>' in page
        unknown = c.post(f"/agents/{AGENT}/promote/confirm", content=f"version=nope&csrf={token}", headers=form)
        assert unknown.status_code == 422 and "version must be one of" in unknown.text
        for query in ("?version=nope", ""):  # the confirm page asked "Promote nope?" with a Yes button
            asked = c.get(f"/agents/{AGENT}/promote/confirm{query}", headers=HTML)
            assert asked.status_code == 422 and "version must be one of" in asked.text and "Yes, promote" not in asked.text
            assert "sft-v1" in asked.text  # the versions that can be served are listed


def test_tracked_promote_records_on_the_run(seeded):
    _, tracked = seeded
    info = tracked.promote("sft-v1")
    assert info.served == "sft-v1"
    run = tracked.open(tracked.runs()[-1])
    assert run.record.summary["promoted"]["from"] == "base"
    with pytest.raises(wp.PlatformError, match="version must be one of"):
        tracked.promote("never-ran")


def test_run_page_and_rows_page(seeded):
    store, tracked = seeded
    run_id = tracked.runs()[-1]
    c, _, _ = _signed_in(store)
    with c:
        run = c.get(f"/runs/{run_id}", headers=HTML).text
        assert "SFT on the passing rollouts." in run and "<script>window" not in run
        assert f'href="/runs/{run_id}/evals/refunds"' in run
        counts = {}
        for show in ("all", "passed", "failed"):
            page = c.get(f"/runs/{run_id}/evals/refunds?show={show}", headers=HTML).text
            table = page.split('id="rows-table"')[1].split("</table>")[0]
            counts[show] = table.count("<tr class=")
        assert counts == {"all": 120, "passed": 90, "failed": 30}
        assert "Pass: refunds only a verified order." in page and "refunds-holdout@1" in page
        bad = c.get(f"/runs/{run_id}/evals/refunds?show=some", headers=HTML)
        assert bad.status_code == 422 and "show must be one of" in bad.text
        assert c.get("/runs/nope", headers=HTML).status_code == 404


def test_static_assets_are_served_from_the_package(seeded):
    store, _ = seeded
    c, _ = client_for(store)
    with c:
        js = c.get("/static/plotly-basic.min.js")
        assert js.status_code == 200 and len(js.content) > 1_000_000
        assert c.get("/static/page.js").status_code == 200 and c.get("/static/page.css").status_code == 200
        assert c.get("/favicon.ico").status_code == 204
