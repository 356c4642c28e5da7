"""``wai runs``: the tracked runs, the same ones tracked.runs() lists (one name per concept)."""

from __future__ import annotations

import json

import whileai.platform as wp


def _seed(store):
    tracked = wp.track({"name": "refund-agent"}, store=store)
    for version, value in (("base", 60.0), ("sft-v1", 72.0)):
        run = tracked.run(version)
        run.score("refunds", value, ci=3.0, n=120,
                  rows=[wp.Example(prompt=f"ask {i}", ok=i < value / 10, task=f"t{i}") for i in range(10)])
        run.finish(say=False)
    return tracked


def test_runs_lists_the_tracked_runs(wai, tmp_path):
    store = str(tmp_path / "s.duckdb")
    tracked = _seed(store)
    listed = json.loads(wai("runs", "list", "--store", store, "--json").out)
    assert [r["id"] for r in listed] == tracked.runs() and len(listed) == 2
    assert "refund-agent" in wai("runs", "agents", "--store", store).out
    assert json.loads(wai("runs", "agents", "--store", store, "--json").out)[0]["name"] == "refund-agent"
    shown = json.loads(wai("runs", "show", tracked.runs()[0], "--store", store, "--json").out)
    assert shown["run"]["version"] == "base" and shown["scores"][0]["value"] == 60.0


def test_verdict_brief_and_diff(wai, tmp_path):
    store = str(tmp_path / "s.duckdb")
    tracked = _seed(store)
    out = wai("runs", "verdict", "refund-agent", "refunds", "--store", store).out
    assert out.strip() == tracked.verdict("refunds").line
    assert json.loads(wai("runs", "verdict", "refund-agent", "refunds", "--store", store, "--json").out)["word"] == "beats"
    assert wai("runs", "brief", "refund-agent", "--store", store, "--markdown").out.strip() == tracked.brief().markdown().strip()
    d = json.loads(wai("runs", "diff", "refund-agent", "refunds", "base", "sft-v1", "--store", store, "--json").out)
    assert d["n_paired"] == 10 and sorted(c["task"] for c in d["improved"]) == ["t6", "t7"]


def test_promote_and_archive_need_yes(wai, tmp_path):
    store = str(tmp_path / "s.duckdb")
    tracked = _seed(store)
    refused = wai("runs", "promote", "refund-agent", "sft-v1", "--store", store)
    assert refused.code == 2 and refused.err.startswith("error: promote changes 'refund-agent'")
    assert "--yes" in refused.err and tracked.verdict("refunds").served == "base"
    done = wai("runs", "promote", "refund-agent", "sft-v1", "--yes", "--store", store, "--json")
    assert done.code == 0 and json.loads(done.out)["served"] == "sft-v1"
    run_id = tracked.runs()[0]
    refused = wai("runs", "archive", run_id, "--store", store)
    assert refused.code == 2 and "needs --yes" in refused.err and run_id in tracked.runs()
    assert wai("runs", "archive", run_id, "--yes", "--store", store).code == 0
    assert run_id not in tracked.runs()
    assert run_id in wai("runs", "list", "--archived", "--store", store).out
    unknown = wai("runs", "archive", "tr-nope", "--yes", "--store", store)
    assert unknown.code == 2 and "run 'tr-nope' does not exist" in unknown.err
