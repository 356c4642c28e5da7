"""HarnessSweep: one run per fingerprint on the same frozen asks, a floor from the first variant."""

from __future__ import annotations

import pytest

import whileai.platform as wp
from whileai.errors import ArgumentError
from whileai.simulation import seeded_agent, simulate, tool


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


def judge(row):
    return {"reward": 0.0 if row.get("seeded") else 1.0}


@pytest.fixture
def base():
    return simulate(seeded_agent([get_order], seed=1), tools=[get_order], budget=24, repeats=2, progress=False)


def variants():
    return [wp.Harness(label="short@seeded-a", instructions="Be brief.", model="seeded-a"),
            wp.Harness(label="long@seeded-b", instructions="Be thorough and polite.", model="seeded-b")]


def agent_for(harness):
    return seeded_agent([get_order], seed=7, rate=0.5 if harness.model == "seeded-a" else 0.1)


def test_sweep_posts_one_run_per_fingerprint(tmp_path, base):
    tracked = wp.track("support agent", name="sweep", store=tmp_path / "s.duckdb")
    sweep = wp.HarnessSweep(variants(), tasks=base, behavior="refunds", judge=judge, agent=agent_for,
                            tools=[get_order], noise_runs=3, concurrency=4)
    report = sweep.run(tracked)
    assert [a.label for a in report.arms] == ["short@seeded-a", "long@seeded-b"]
    assert all(a.refused is None and a.asks == report.arms[0].asks for a in report.arms)
    assert report.noise_floor is not None and tracked.behaviors()["refunds"].noise_floor == pytest.approx(report.noise_floor)
    runs = [tracked.open(i).record for i in tracked.runs()]
    assert [r.version for r in runs] == ["short@seeded-a", "long@seeded-b"]
    assert [r.record["provenance"]["pins"]["harness"] for r in runs] == [v.version for v in variants()]
    assert any("unproven under 50" in n for n in report.notes)
    assert "short@seeded-a" in str(report)


def test_sweep_refuses_bad_labels_before_any_rollout(tmp_path, base):
    tracked = wp.track("agent", name="s", store=tmp_path / "s.duckdb")
    calls = []

    def counting(h):
        calls.append(h)
        return agent_for(h)

    bad = [wp.Harness(label="no model here", instructions="x")]
    with pytest.raises(ArgumentError, match="variant label must be prompt@model"):
        wp.HarnessSweep(bad, tasks=base, behavior="refunds", judge=judge, agent=counting).run(tracked)
    twice = [variants()[0], variants()[0].model_copy(update={"label": "other@seeded-a"})]
    with pytest.raises(ArgumentError, match="one fingerprint"):
        wp.HarnessSweep(twice, tasks=base, behavior="refunds", judge=judge, agent=counting).run(tracked)
    with pytest.raises(ArgumentError, match="behavior name must be lower-case"):
        wp.HarnessSweep(variants(), tasks=base, behavior="refund policy", judge=judge, agent=counting).run(tracked)
    assert calls == [] and tracked.runs() == []


def test_an_arm_graded_on_other_rows_is_refused_by_name(tmp_path, base):
    tracked = wp.track("agent", name="s", store=tmp_path / "s.duckdb")

    def flaky(row):  # the judge fails on some rows of the second arm only
        if row.get("system_prompt") == "Be thorough and polite." and row.get("rollout_index") == 1:
            return {"reward": None}
        return judge(row)

    report = wp.HarnessSweep(variants(), tasks=base, behavior="refunds", judge=flaky, agent=agent_for,
                             tools=[get_order], concurrency=4).run(tracked)
    second = report.arms[1]
    assert second.refused and f"{second.graded_rows} rows over" in second.refused
    assert f"against {report.arms[0].graded_rows} over" in second.refused
    assert len(tracked.runs()) == 1 and any("df=1" in n for n in report.notes)
