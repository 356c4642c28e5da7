"""The run explorer and the readable blocks, in-process: server-side filters, the picked runs, points, folds."""

from __future__ import annotations

import html
import re

import pytest

from tests.pages.seed import AGENT
from tests.pages.test_pages import HTML, _signed_in
from whileai.errors import ArgumentError
from whileai.platform._models import RunRecord
from whileai.platform._page import ExploreRow, explore_view, run_shown
from whileai.platform.pages._render import _points, _points_interval, _points_signed


def _rows_shown(text: str) -> list[str]:
    return re.findall(r'<tr data-run="([^"]+)"[^>]*?(?<! hidden)>', text)


def test_explorer_hides_archived_runs_and_filters_on_the_server(seeded):
    store, tracked = seeded
    old = tracked.run("old-try")
    old.note("a forgotten LR sweep")
    old.archive()
    ids = tracked.runs()
    c, _, _ = _signed_in(store)
    with c:
        page = c.get("/runs", headers=HTML).text
        assert set(_rows_shown(page)) == set(ids) and old.id in page  # listed, hidden
        assert set(_rows_shown(c.get("/runs?archived=true", headers=HTML).text)) == {*ids, old.id}
        assert _rows_shown(c.get("/runs?archived=true&q=lr%20SWEEP", headers=HTML).text) == [old.id]
        assert _rows_shown(c.get("/runs?q=lr%20sweep", headers=HTML).text) == []  # archived: hidden unless asked
        picked = c.get(f"/runs?q=nothing-matches&pick={old.id}", headers=HTML).text
        assert _rows_shown(picked) == [old.id] and 'id="config-table"' in picked  # a picked run always shows
        bad = c.get("/runs?smooth=2", headers=HTML)
        assert bad.status_code == 422 and "smooth must be from 0 to 0.99, got 2.0" in html.unescape(bad.text)
        assert c.get("/runs?from=a", headers=HTML).status_code == 422
        assert c.get("/runs", headers={"accept": "application/json"}).json()[0]["id"] == ids[0]  # REST unchanged


def test_run_shown_is_the_rule_the_script_applies():
    run = RunRecord(id="tr-1", agent="a", version="sft-v2", status="done", created_at="", archived=True, notes="Note")
    row = ExploreRow(run=run, text="tr-1 a sft-v2 done note")
    assert not run_shown(row) and run_shown(row, archived=True)
    assert run_shown(row, archived=True, q="SFT") and not run_shown(row, archived=True, q="grpo")
    assert not run_shown(row, archived=True, agent="b") and not run_shown(row, archived=True, state="running")
    assert run_shown(row.model_copy(update={"picked": True}), q="grpo", agent="b")
    with pytest.raises(ArgumentError, match="smooth must be from 0 to 0.99, got 1.5"):
        explore_view([run], smooth=1.5)
    with pytest.raises(ArgumentError, match="to must be at or after from, got from=5 to=2"):
        explore_view([run], step_from=5, step_to=2)


def test_rates_read_in_points_like_the_rest_of_the_page():
    assert (_points(0.62), _points_signed(0.131), _points_interval((0.05, 0.2))) == ("62.0", "+13.1", "+5.0..+20.0")
    assert (_points(None), _points_signed(float("nan")), _points_interval(None)) == ("–", "–", "–")


def test_run_page_folds_its_raw_json_and_reads_the_delta_in_points(seeded):
    store, tracked = seeded
    run = tracked.run("sft-v2")
    run._patch(delta={"headline": "PASS", "headline_verdict": "moved", "target": "pass_at_1", "target_delta": 0.131,
                      "target_ci95": [0.05, 0.2]}, summary={"holdout": {"verdict": "up", "before": {"pass_rate": 0.6},
                                                                         "after": {"pass_rate": 0.7}}})
    c, _, _ = _signed_in(store)
    with c:
        page = c.get(f"/runs/{run.id}", headers=HTML).text
        runs_page = c.get(f"/agents/{AGENT}", headers=HTML).text
    block = re.search(r'<table id="delta-block">(.*?)</table>', page, re.S).group(1)
    assert "<strong>+13.1</strong> points (95% +5.0..+20.0)" in block and "60.0 → 70.0 points" in block
    assert re.search(r'<details class="fold" id="raw-json">.*<pre id="record-json">.*<pre id="delta-json">', page, re.S)
    deltas = re.search(r'<table id="run-deltas">(.*?)</table>', runs_page, re.S).group(1)
    assert '<td class="num">+13.1</td><td>+5.0..+20.0</td>' in deltas and "up 60.0 → 70.0" in deltas


def test_a_key_explores_and_compares_only_its_own_accounts_runs(tmp_path):
    import whileai.platform as wp
    from tests.pages.conftest import client_for
    from whileai.defaults import API_KEY_HEADER

    store = tmp_path / "keys.duckdb"
    ka, kb = wp._service.create_key("alice", store=store), wp._service.create_key("bob", store=store)
    alice = wp.track({"name": "alice-agent"}, store=str(store), api_key=ka.key).run("v1")
    alice.log(step=0, loss=1.0)
    alice.flush()
    bob = wp.track({"name": "bob-agent"}, store=str(store), api_key=kb.key).run("v1")
    c, _ = client_for(store)
    with c:
        assert c.get(f"/login?token={kb.key}&next=/runs", headers=HTML, follow_redirects=False).status_code == 303
        page = c.get("/runs", headers=HTML).text
        assert bob.id in page and alice.id not in page
        assert c.get(f"/runs?pick={alice.id}", headers=HTML).status_code == 404  # another account's run
        rest = c.get("/compare", params={"runs": alice.id}, headers={API_KEY_HEADER: kb.key})
        assert rest.status_code == 404
        assert c.get("/compare", params={"runs": alice.id}).status_code == 401  # REST wants the key, not the cookie
        mine = c.get("/compare", params={"runs": alice.id}, headers={API_KEY_HEADER: ka.key}).json()
        assert mine["metrics"] == ["loss"] and mine["series"][0]["values"] == [1.0]
