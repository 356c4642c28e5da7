"""``wai records`` on an empty store and its errors (recording is tested with record_run)."""

from __future__ import annotations

import json


def test_empty_store(wai):
    assert "no runs" in wai("records", "list").out
    assert json.loads(wai("records", "list", "--json").out) == []


def test_unknown_run(wai):
    res = wai("records", "show", "r-nope")
    assert res.code == 2 and res.err.startswith("error: run must name a recorded run, got 'r-nope'") and "wai records list" in res.err
