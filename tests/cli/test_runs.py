"""``wai runs`` on an empty store and its errors (recording is tested with record_run)."""

from __future__ import annotations

import json


def test_empty_store(wai):
    assert "no runs" in wai("runs", "list").out
    assert json.loads(wai("runs", "list", "--json").out) == []


def test_unknown_run(wai):
    res = wai("runs", "show", "r-nope")
    assert res.code == 2 and res.err.startswith("error: run must name a recorded run, got 'r-nope'")
