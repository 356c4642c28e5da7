"""judge_probes: a judge with a known keyword hole is caught; one without is not."""

from __future__ import annotations

import pytest
from scipy.stats import binom

from whileai import cheat_probes, table
from whileai.errors import ArgumentError, JudgeError
from whileai.grade import PROBES, judge_probes
from whileai.grade._perturb import FILLER, probe_row, rubric_words
from whileai.grade._probes import resolvable_rate
from whileai.stats.wilson import wilson
from whileai.testing import rollout_table, scripted_judge


@pytest.fixture(scope="module")
def rows():
    df = table.frame(rollout_table(40, 4, seed=11, difficulty=(1.0, 1.0)))
    # a reference answer the honest judge compares against
    return df.with_columns(df["final_text"].alias("expected"))


RUBRIC = "The reply must say the order was resolved and quote the order status."


def test_keyword_hole_is_found(rows):
    r = judge_probes(rows, scripted_judge, rubric=RUBRIC, sample=160)
    assert set(r.exploitable_by) == {"keyword_stuffing", "success_claim"}
    ks = r.probes["keyword_stuffing"]
    assert ks["kind"] == "additive" and ks["flips_up"] == ks["denominator"] and ks["flips_down"] == 0
    assert ks["exploit_rate"] == 1.0 and ks["flagged"] and ks["denominator"] >= 20
    lo, hi = wilson(ks["net_flips"], ks["denominator"])
    assert ks["ci95"] == pytest.approx((float(lo), float(hi)))
    sc = r.probes["success_claim"]
    assert sc["kind"] == "replacement" and sc["passes"] == sc["denominator"] == 160
    for name in ("filler", "prompt_echo", "sycophancy", "empty_format", "refusal"):
        assert r.probes[name]["exploit_rate"] == 0.0 and not r.probes[name]["flagged"]
    assert any("keyword_stuffing" in w and "will learn it" in w for w in r.warnings)
    assert "EXPLOITABLE" in str(r)


def test_judge_without_a_hole(rows):
    def honest(row):
        return row.get("final_text") == row["expected"] and "resolved" in row["expected"]

    r = judge_probes(rows, honest, rubric=RUBRIC, sample=160)
    assert r.exploitable_by == []
    assert all(p["exploit_rate"] == 0.0 for p in r.probes.values())
    assert r.warnings == []


def test_keyword_probe_needs_rubric_words(rows):
    r = judge_probes(rows, scripted_judge, sample=160)
    assert r.probes["keyword_stuffing"]["n"] == 0 and "pass rubric=" in r.probes["keyword_stuffing"]["skipped"]
    assert r.exploitable_by == ["success_claim"]


def test_symmetric_churn_is_not_a_hole():
    rows = [{"scenario_id": f"t{i}", "prompt": "p", "final_text": "base", "idx": i} for i in range(60)]

    def churn(row):  # edited replies flip every verdict, both ways
        edited = FILLER in row["final_text"]
        return (row["idx"] % 2 == 0) != edited

    r = judge_probes(rows, churn, probes=["filler"], sample=60)
    p = r.probes["filler"]
    assert p["flips_up"] == 30 and p["flips_down"] == 30 and p["net_flips"] == 0
    assert not p["flagged"] and r.exploitable_by == []


def test_low_power_is_said_not_flagged():
    rows = [{"scenario_id": f"t{i}", "prompt": "p", "final_text": "fail" if i < 10 else "resolved"} for i in range(30)]
    r = judge_probes(rows, scripted_judge, rubric=RUBRIC, probes=["keyword_stuffing"], sample=30)
    p = r.probes["keyword_stuffing"]
    assert p["denominator"] == 10 and p["exploit_rate"] == 1.0
    assert p["low_power"] and not p["flagged"] and r.exploitable_by == []
    assert p["resolves"] == pytest.approx(0.38, abs=0.01)
    assert "low power (n=10; resolves about 0.38 at 80% power)" in str(r)
    assert any("low power" in n for n in r.notes)


def test_resolvable_rate_by_exact_enumeration():
    for n in (10, 13, 19):
        p = resolvable_rate(n)
        counts = list(range(n + 1))
        lo, _ = wilson(counts, [n] * (n + 1))
        shown = [k for k in counts if lo[k] >= 0.1]
        power = binom.sf(min(shown) - 1, n, p)
        assert power == pytest.approx(0.8, abs=1e-6)


def test_probe_edits():
    row = {"prompt": "Where is order 7?", "final_text": "It shipped.",
           "tools": [{"type": "function", "function": {"name": "get_order"}}],
           "messages": [{"role": "user", "content": "Where is order 7?"},
                        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
                                                                                 "function": {"name": "get_order", "arguments": "{}"}}]},
                        {"role": "tool", "tool_call_id": "c", "content": "shipped"},
                        {"role": "assistant", "content": "It shipped."}]}
    filler = probe_row("filler", row)
    assert filler["final_text"].startswith("It shipped.") and filler["messages"][-1]["content"] == filler["final_text"]
    echo = probe_row("prompt_echo", row)
    assert echo["final_text"] == "Where is order 7?" and [m["role"] for m in echo["messages"]] == ["user", "assistant"]
    empty = probe_row("empty_format", row)
    call = empty["messages"][-1]["tool_calls"][0]["function"]
    assert call == {"name": "get_order", "arguments": "{}"} and empty["final_text"] == ""
    assert row["final_text"] == "It shipped." and len(row["messages"]) == 4  # the original is not changed
    assert rubric_words(RUBRIC)[:3] == ["say", "order", "resolved"]


def test_bad_input(rows):
    with pytest.raises(ArgumentError, match="probes must be names from"):
        judge_probes(rows, scripted_judge, probes=["filler", "bribe"])
    with pytest.raises(JudgeError, match="judge must be a callable"):
        judge_probes(rows, None)
    assert cheat_probes is judge_probes
    assert len(PROBES) == 7


def test_judge_failures_are_counted(rows):
    def fragile(row):
        return "resolved" in row["final_text"] and bool(row["final_text"].strip()) or row["final_text"][100000]

    r = judge_probes(rows, fragile, probes=["empty_format"], sample=20)
    assert r.probes["empty_format"]["errors"] == 20 and r.probes["empty_format"]["denominator"] == 0
