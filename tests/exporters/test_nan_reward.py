"""export reads a NaN reward as ungraded, as pass_at and select do: the report counted it a pass,
the group stats gave its task n1=2 of k=4 and a null reward_mean."""

from __future__ import annotations

import json

import pytest

import whileai as wai
from tests.selection.test_nan_rewards import nan_source


@pytest.mark.parametrize("fmt", ["openai", "trl"])
@pytest.mark.parametrize("source", ["rows", "parquet"])
def test_a_nan_reward_is_exported_as_ungraded(tmp_path, fmt, source):
    src = nan_source(tmp_path, source)
    out = tmp_path / "out.jsonl"
    result = wai.export(src, out, format=fmt)
    report = result.report if hasattr(result, "report") else result
    assert (report.rewards.n_pass, report.rewards.n_fail, report.rewards.n_ungraded) == (5, 6, 1)
    assert any("reward NaN" in w for w in report.warnings)
    lines = [json.loads(x, parse_constant=lambda c: pytest.fail(f"{c} in the output")) for x in out.open()]
    t0 = [r for r in lines if r["scenario_id"] == "t0"]
    assert [r.get("reward") for r in t0] == [None, 0.0, 1.0, 0.0]  # an ungraded row carries no reward
    assert {(r["k"], r["n0"], r["n1"]) for r in t0} == {(3, 2, 1)}
    assert t0[0]["reward_mean"] == pytest.approx(1 / 3)
