"""A PASS that rests on one eval run a side with no noise floor says UNREPLICATED on its first line; self_check counts it."""

from __future__ import annotations

import whileai as wai
from whileai.cli.compare import exit_status


def _arms():
    a = [{"task_id": f"t{i}", "reward": r} for i in range(8) for r in (0, 1, 0, 0)]
    b = [{"task_id": f"t{i}", "reward": r} for i in range(8) for r in (1, 1, 1, 0)]
    return a, b


def test_the_unreplicated_pass_headline_says_so_and_exits_as_a_pass():
    a, b = _arms()
    r = wai.delta_report(a, b)
    first = str(r).splitlines()[0]
    assert r.headline_verdict == "moved_unreplicated" and first == r.headline
    assert first.startswith("PASS (UNREPLICATED") and "could be eval noise" in first
    assert exit_status(first) == 0 and r.verdict_word()[0] == "PASS"
    replicated = wai.delta_report(a, b, run_std=0.01, run_std_runs=3)
    assert replicated.headline == "PASS" and replicated.headline_verdict == "moved"


def test_self_check_counts_the_unreplicated_pass_on_a_drifting_eval():
    r = wai.self_check(trials=400, scope="compare")
    u = r.unreplicated_pass
    assert u["cases"] == 100 and u["trials"] == 400 and u["drift"] > 0
    assert u["measured"] >= 0.025  # the exact test's one-sided rate with no drift; the drift only adds
    assert "unreplicated PASS on pure noise" in str(r)
