"""The Runs page's wrong answers, each pinned by a test that fails on the old rules (issue 37)."""

from __future__ import annotations

import json
import math

import pytest

from whileai.platform import AgentInfo, Behavior, RunRecord, ScoreRecord, track
from whileai.platform._credentials import resolve_api_key, resolve_base_url, save_login
from whileai.platform._page import runs_page
from whileai.platform._rules import dashboard_of, served_because, served_of, verdict_of
from whileai.platform._views import AgentState

TRUSTED = dict(agreement=0.9, human_n=120, noise_floor=2.0)


def _story(tmp_path):
    """A frontier line posted first, then three versions scored on four behaviors."""
    tracked = track({"name": "refunds-agent", "model": "m"}, store=tmp_path / "s.duckdb")
    for name in ("refunds", "tone", "escalation", "verbosity"):
        tracked.define(Behavior(name=name, **TRUSTED))
    frontier = tracked.run("gpt-frontier", record={"frontier": True})
    for b in ("refunds", "tone", "escalation", "verbosity"):
        frontier.score(b, 90.0, ci=2.0, n=200)
    frontier.finish(say=False)
    for version, base in (("base", 60.0), ("sft-v1", 66.0), ("sft-v2", 75.0)):
        run = tracked.run(version)
        for i, b in enumerate(("refunds", "tone", "escalation", "verbosity")):
            run.score(b, base + i, ci=3.0, n=120)
        run.finish(say=False)
    return tracked


def test_frontier_posted_first_is_never_the_baseline(tmp_path):
    tracked = _story(tmp_path)
    dash = tracked.dashboard()
    assert dash.agent.served == "base" and dash.agent.candidate == "sft-v2"
    assert len(dash.verdicts) == 4
    for v in dash.verdicts:  # every verdict's baseline is the first version scored that is not the frontier
        assert v.served == "base", v.line
        assert v.candidate == "sft-v2", v.line
        assert "Served version base: not promoted" in v.line and "frontier" in v.served_because
    assert any("Served version base" in line for line in dash.brief.happened)
    # live traffic with no version is booked to the served version, not the frontier line
    assert tracked.live("2026-12-01", replies=100).version == "base"
    tracked.promote("sft-v1")
    v = tracked.verdict("refunds")
    assert v.served == "sft-v1" and v.served_because == "promoted" and "not promoted" not in v.line


def test_only_frontier_scored_serves_nothing():
    st = AgentState(agent=AgentInfo(name="a", created_at=""),
                    runs=[RunRecord(id="f", version="gpt", created_at="", record={"frontier": True})],
                    scores=[ScoreRecord(id="s", run_id="f", version="gpt", behavior="b", value=90, seq=1, created_at="")])
    assert served_of(st) is None and "only frontier runs" in served_because(st)
    v = verdict_of(st, "b")
    assert v.word == "no_comparison" and v.candidate is None


def test_promote_selector_starts_on_a_verdict_not_the_newest(tmp_path):
    tracked = _story(tmp_path)
    sweep = tracked.run("sweep-arm-7")  # newest scored, on one behavior, no comparison worth serving
    sweep.score("tone", 40.0, ci=9.0, n=7)
    page = runs_page(tracked.dashboard())
    assert page.versions[-1] == "sweep-arm-7"
    assert page.promote_default == "sft-v2"  # the candidate a proven verdict says beats base
    # with no verdict that beats, the selector starts on the served version (a no-op), never the newest
    lone = track({"name": "other"}, store=tmp_path / "s.duckdb")
    lone.run("v0").score("tone", 60.0, ci=3.0, n=100)
    lone.run("v1").score("tone", 59.0, ci=3.0, n=100)
    assert runs_page(lone.dashboard()).promote_default == "v0"


def test_define_keeps_a_measured_noise_floor(tmp_path):
    tracked = track({"name": "a"}, store=tmp_path / "s.duckdb")
    runs = [[{"scenario_id": f"t{i}", "reward": float(i < 12 + 3 * j)} for i in range(30)] for j in range(3)]
    floor = tracked.noise_floor("refunds", *runs)
    assert floor > 0
    tracked.define(Behavior(name="refunds", rubric="what passes"))
    got = tracked.behaviors()["refunds"]
    assert got.noise_floor == pytest.approx(floor) and got.rubric == "what passes"
    tracked.define(Behavior(name="refunds", noise_floor=None))  # set on purpose: cleared
    assert tracked.behaviors()["refunds"].noise_floor is None


def test_archive_hides_the_run_everywhere_unless_asked(tmp_path):
    tracked = _story(tmp_path)
    smoke = tracked.run("smoke-test", base_model="tiny")
    smoke.score("refunds", 99.0, ci=1.0, n=120)
    smoke.finish(say=False)
    assert tracked.verdict("refunds").candidate == "smoke-test"
    smoke.archive()
    assert smoke.id not in tracked.runs() and smoke.id in tracked.runs(archived=True)
    dash = tracked.dashboard()
    assert smoke.id not in [r.id for r in dash.runs] and smoke.id not in [m.run_id for m in dash.missing]
    assert tracked.verdict("refunds").candidate == "sft-v2"
    assert "smoke-test" not in str(dash.brief) and "smoke-test" not in runs_page(dash).versions
    assert f"{len(dash.runs)} run(s)" in str(dash) and len(dash.runs) == 4


def test_missing_asks_hours_and_cost_only_of_runs_that_trained(tmp_path):
    tracked = _story(tmp_path)
    trained = tracked.run("grpo-v1", base_model="Qwen/Qwen2.5-0.5B", total_steps=10)
    trained.log(step=1, loss=1.0)
    trained.finish(say=False)
    missing = {m.version: m for m in tracked.dashboard().missing}
    for version in ("gpt-frontier", "base", "sft-v1", "sft-v2"):
        assert "hours + cost" not in missing[version].missing, version
        assert "hours" not in missing[version].patch
    assert "hours + cost" in missing["grpo-v1"].missing
    assert missing["grpo-v1"].patch["hours"] == "..." and missing["grpo-v1"].patch["cost_usd"] == "..."
    assert json.dumps(missing["grpo-v1"].patch).count("0.0") == 0


def _state(scores, behaviors):
    recs = [ScoreRecord(id=f"s{i}", run_id=r, version=v, behavior=b, value=val, ci=ci, n=n, seq=i, created_at="")
            for i, (r, v, b, val, ci, n) in enumerate(scores)]
    runs = list(dict.fromkeys((r, v) for r, v, *_ in scores))
    return AgentState(agent=AgentInfo(name="a", created_at="", served="v0"), behaviors={b.name: b for b in behaviors},
                      runs=[RunRecord(id=r, version=v, created_at="") for r, v in runs], scores=recs)


def test_other_behaviors_lower_uses_the_interval_it_has():
    st = _state([("r0", "v0", "refunds", 60, 3, 100), ("r0", "v0", "tone", 80, 3, 100), ("r0", "v0", "brevity", 70, 3, 100),
                 ("r0", "v0", "style", 70, None, 100),
                 ("r1", "v1", "refunds", 70, 3, 100), ("r1", "v1", "tone", 59, 3, 100), ("r1", "v1", "brevity", 68, 3, 100),
                 ("r1", "v1", "style", 65, None, 100)],
                [Behavior(name=n, **TRUSTED) for n in ("refunds", "tone", "brevity", "style")])
    v = verdict_of(st, "refunds")
    assert v.trails_elsewhere == ["tone"] and v.lower_elsewhere == ["brevity", "style", "tone"]
    half = math.sqrt(3 ** 2 + 3 ** 2)
    assert f"tone -21.0 (95% {-21 - half:+.1f}..{-21 + half:+.1f})" in v.line
    assert "interval below zero" in v.line
    assert "brevity -2.0, interval includes zero" in v.line and "style -5.0, no interval yet" in v.line
    assert "tone -21.0, no interval" not in v.line


def test_replicated_counts_only_proven_behaviors():
    scores = [("r0", "v0", "refunds", 60, 3, 100), ("r0", "v0", "tone", 60, 3, 100), ("r0", "v0", "style", 60, 3, 100),
              ("r1", "v1", "refunds", 70, 3, 100), ("r2", "v1", "tone", 70, 3, 100), ("r2", "v1", "style", 70, 3, 100)]
    proven = Behavior(name="tone", **TRUSTED)
    unproven = Behavior(name="style", noise_floor=2.0)  # judge agreement unmeasured: itself unproven
    v = verdict_of(_state(scores, [Behavior(name="refunds", **TRUSTED), proven, unproven]), "refunds")
    assert v.word == "beats" and v.replicated_on == ["tone"] and "replicated on tone." in v.line
    small = [*scores[:5], ("r2", "v1", "style", 70, 3, 20)]  # n=20 under 50: unproven too
    v = verdict_of(_state(small, [Behavior(name="refunds", **TRUSTED), proven, Behavior(name="style", **TRUSTED)]), "refunds")
    assert v.replicated_on == ["tone"]


def test_dashboard_rules_match_on_the_store(tmp_path):
    tracked = _story(tmp_path)
    state = tracked.backend.call("state", agent=tracked.name)
    assert dashboard_of(state).verdicts == tracked.dashboard().verdicts


def test_saved_key_is_never_sent_to_another_server(tmp_path, monkeypatch):
    save_login("http://saved.example:8000", "wai_abc_saved")
    assert resolve_base_url() == ("http://saved.example:8000", str(tmp_path / "home" / ".whileai" / "credentials.json"))
    assert resolve_api_key(server="http://saved.example:8000")[0] == "wai_abc_saved"
    assert resolve_api_key(server="http://other.example:9000") == (None, None)
    from whileai.platform._backend import backend_for

    named = backend_for(base_url="http://other.example:9000")
    assert "x-api-key" not in {k.lower() for k in named.client.headers}
    monkeypatch.setenv("WHILEAI_BASE_URL", "http://env.example:7000")
    assert resolve_base_url()[0] == "http://env.example:7000"  # the environment before the saved login, as for the key
    assert "x-api-key" not in {k.lower() for k in backend_for().client.headers}
    monkeypatch.setenv("WHILEAI_API_KEY", "wai_env_key")
    assert backend_for().client.headers["x-api-key"] == "wai_env_key"
    monkeypatch.delenv("WHILEAI_BASE_URL")
    monkeypatch.delenv("WHILEAI_API_KEY")
    assert backend_for().client.headers["x-api-key"] == "wai_abc_saved"
