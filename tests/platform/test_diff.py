"""Version against version: rows paired by task, checked against a hand count (store and REST alike)."""

from __future__ import annotations

import pytest

import whileai.platform as wp
from whileai.errors import PlatformError
from whileai.measure import compare_runs
from whileai.platform.server import create_app

# (task, ok) per row. base: t1 pass, t2 fail, t3 pass/fail, t4 fail, t5 pass, t6 pass, t7 fail (only base)
BASE = [("t1", True), ("t2", False), ("t3", True), ("t3", False), ("t4", False), ("t5", True), ("t6", True),
        ("t7", False)]
# sft, posted in another order: t2 pass (improved), t3 pass/pass (improved), t4 fail (same), t5 fail (regressed),
# t6 pass (same), t1 pass (same), t8 pass (only sft)
SFT = [("t6", True), ("t5", False), ("t4", False), ("t3", True), ("t8", True), ("t2", True), ("t3", True),
       ("t1", True)]


@pytest.fixture(params=["store", "app"])
def tracked(request, tmp_path):
    if request.param == "store":
        yield wp.track({"name": "refunds-agent"}, store=tmp_path / "s.duckdb")
        return
    app = create_app(tmp_path / "app.duckdb")
    yield wp.track({"name": "refunds-agent"}, transport=app)
    app.state.db.close()


def _post(tracked, version, rows):
    run = tracked.run(version)
    run.score("refunds", 100 * sum(ok for _, ok in rows) / len(rows), ci=10, n=len(rows),
              rows=[wp.Example(prompt=f"ask {t}", reply=f"{version} on {t}", ok=ok, why="checked", task=t)
                    for t, ok in rows])


def test_diff_pairs_by_task_against_a_hand_count(tracked):
    _post(tracked, "base", BASE)
    _post(tracked, "sft-v1", SFT)
    d = tracked.diff("refunds", "base", "sft-v1")
    assert sorted(c.task for c in d.improved) == ["t2", "t3"]
    assert [c.task for c in d.regressed] == ["t5"]
    assert sorted(c.task for c in d.same) == ["t1", "t4", "t6"]
    assert (d.n_paired, d.only_a, d.only_b) == (6, 1, 1)
    t3 = next(c for c in d.improved if c.task == "t3")
    assert (t3.a_rate, t3.b_rate, t3.a_n, t3.b_n) == (0.5, 1.0, 2, 2)
    # paired delta by hand: mean over the 6 shared tasks of (sft rate - base rate), in points
    hand = 100 * ((1 - 1) + (1 - 0) + (1 - 0.5) + (0 - 0) + (0 - 1) + (1 - 1)) / 6
    assert d.delta == pytest.approx(hand)
    ref = compare_runs([{"scenario_id": t, "reward": float(ok)} for t, ok in BASE],
                       [{"scenario_id": t, "reward": float(ok)} for t, ok in SFT], seed=0)
    assert d.ci95 == pytest.approx((100 * ref.ci95[0], 100 * ref.ci95[1]))
    assert d.verdict == ref.verdict and d.p_value == pytest.approx(ref.p_value)
    assert "2 improved, 1 regressed, 3 same" in d.line and "1 task(s) only on base and 1 only on sft-v1" in d.line
    # by row position the same rows would read differently: row 0 is t1 on base and t6 on sft
    assert [t for t, _ in BASE][0] != [t for t, _ in SFT][0]


def test_diff_refuses_what_it_cannot_pair(tracked):
    _post(tracked, "base", BASE)
    with pytest.raises(PlatformError, match="score 'v9 on refunds' does not exist"):
        tracked.diff("refunds", "base", "v9")
    bare = tracked.run("no-rows")
    bare.score("refunds", 50, ci=5, n=60)
    with pytest.raises(PlatformError, match="graded rows must be posted behind no-rows's score on 'refunds'"):
        tracked.diff("refunds", "base", "no-rows")


def test_diff_over_rest_json(tmp_path):
    from starlette.testclient import TestClient

    app = create_app(tmp_path / "app.duckdb")
    try:
        tracked = wp.track({"name": "refunds-agent"}, transport=app)
        _post(tracked, "base", BASE)
        _post(tracked, "sft-v1", SFT)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            body = client.get("/agents/refunds-agent/diff", params={"behavior": "refunds", "a": "base", "b": "sft-v1"}).json()
            assert body["n_paired"] == 6 and len(body["improved"]) == 2 and len(body["regressed"]) == 1
            missing = client.get("/agents/refunds-agent/diff", params={"behavior": "refunds", "a": "base"})
            assert missing.status_code == 422 and "'b' is required" in missing.json()["error"]["message"]
    finally:
        app.state.db.close()
