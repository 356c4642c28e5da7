from __future__ import annotations

import math

import pytest

from whileai.simulation import tool
from whileai.simulation._tools import normalize_tools
from whileai.simulation._writer import (
    FAULT_KINDS,
    HARD_TIERS,
    STANCES,
    WORLD_STATES,
    plan_tasks,
    split_clauses,
    tier_of,
)


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@tool
def refund_order(order_id: str, amount: float, reason: str) -> dict:
    """Refund an order."""


TOOLS = normalize_tools([get_order, refund_order])
POLICY = ("You help customers with orders. Never refund more than $100 without a manager. "
          "Always confirm the order id before acting.")


def plan(n=40, *, policy=POLICY, seed=0, hard_share=0.4, fault_rate=0.25, tools=TOOLS):
    return plan_tasks(tools, policy, n_tasks=n, seed=seed, hard_share=hard_share, fault_rate=fault_rate,
                      clause_share=0.1)


def test_split_clauses_keeps_rules_not_role_statements():
    assert split_clauses("Help customers with orders.") == []
    assert split_clauses(POLICY) == ["Never refund more than $100 without a manager.",
                                     "Always confirm the order id before acting."]
    bullets = "Rules:\n- Do not share internal notes.\n- You must verify identity.\n1) Only refund once."
    assert split_clauses(bullets) == ["Do not share internal notes.", "You must verify identity.", "Only refund once."]
    assert split_clauses("Never lie. never   LIE.") == ["Never lie."]
    assert split_clauses("You are a support agent for ACME, founded over 20 years ago. Refunds over $100 need a "
                         "manager. Verify identity first. Be polite.") == [
        "Refunds over $100 need a manager.", "Verify identity first.", "Be polite."]
    assert split_clauses("You are a bot that must never swear.") == ["You are a bot that must never swear."]
    assert split_clauses("Rules:\n- No refunds after 30 days.\n- Answer in English, e.g. like this.") == [
        "No refunds after 30 days.", "Answer in English, e.g. like this."]
    assert split_clauses(None) == [] and split_clauses("") == []


def test_same_seed_same_tasks_and_different_seed_different_draw():
    a, b = plan(seed=3), plan(seed=3)
    assert [(t.scenario_id, t.prompt) for t in a.tasks] == [(t.scenario_id, t.prompt) for t in b.tasks]
    c = plan(seed=4)
    assert {t.scenario_id for t in a.tasks} != {t.scenario_id for t in c.tasks}
    # a task is its cell: the same cell drawn under two seeds is the same task, word for word
    by_id = {t.scenario_id: t for t in a.tasks}
    shared = [t for t in c.tasks if t.scenario_id in by_id]
    assert shared and all(by_id[t.scenario_id].prompt == t.prompt for t in shared)


def test_main_cells_carry_no_clause_and_clause_cells_one_each():
    p = plan()
    assert p.clauses == split_clauses(POLICY)
    per_clause = max(1, math.floor(40 * 0.1 + 0.5))
    assert p.clause_tasks == per_clause * 2
    main = [t for t in p.tasks if t.block == "main"]
    clause = [t for t in p.tasks if t.block == "clause"]
    assert all(t.clause is None and t.ask_family != "policy" for t in main)
    assert [t.clause for t in clause].count(p.clauses[0]) == per_clause
    assert all(t.ask_family == "policy" for t in clause)
    assert len(main) == 40 - per_clause * 2


def test_editing_one_clause_changes_only_that_clause_s_tasks():
    before = plan(n=60)
    edited = POLICY.replace("more than $100", "more than $150")
    after = plan(n=60, policy=edited)
    old = {t.scenario_id: t for t in before.tasks}
    new = {t.scenario_id: t for t in after.tasks}
    changed_old = {i for i in old if i not in new}
    changed_new = {i for i in new if i not in old}
    assert changed_old and all(old[i].clause == "Never refund more than $100 without a manager." for i in changed_old)
    assert all(new[i].clause == "Never refund more than $150 without a manager." for i in changed_new)
    assert len(changed_old) == len(changed_new) == before.clause_tasks // 2


def test_adding_a_clause_keeps_the_other_clauses_and_displaces_only_the_last_main_tasks():
    before = plan(n=60)
    after = plan(n=60, policy=POLICY + " Do not share internal notes.")
    old_main = [t.scenario_id for t in before.tasks if t.block == "main"]
    new_main = [t.scenario_id for t in after.tasks if t.block == "main"]
    assert new_main == old_main[: len(new_main)]  # a prefix: the order never depends on the run size
    old_clause = {t.scenario_id for t in before.tasks if t.block == "clause"}
    new_clause = {t.scenario_id for t in after.tasks if t.block == "clause"}
    assert old_clause <= new_clause


def test_hard_share_is_kept_and_tiers_follow_the_cell():
    for share in (0.0, 0.4, 1.0):
        p = plan(n=50, hard_share=share, policy="")
        hard = sum(t.tier in HARD_TIERS for t in p.tasks)
        assert hard == math.floor(50 * share + 0.5)
    assert tier_of("adversarial", "found", None) == "adversarial"
    assert tier_of("off_topic", "found", None) == "boundary"
    assert tier_of("impatient", "found", "Never x.") == "boundary"
    assert tier_of("vague", "found", None) == "ambiguous"
    assert tier_of("cooperative", "ambiguous", None) == "ambiguous"
    assert tier_of("cooperative", "found", None) == "ordinary"


def test_pairwise_coverage_is_complete_once_the_run_is_large_enough():
    p = plan(n=80, policy="", hard_share=0.4)
    assert p.pairs_covered == p.pairs_planned
    small = plan(n=8, policy="")
    assert small.pairs_covered < small.pairs_planned


def test_fault_share_and_stability_under_a_rate_change():
    big = plan(n=3000, policy="", fault_rate=0.25, tools=TOOLS[:1])
    faulted = [t for t in big.tasks if t.fault is not None]
    share = len(faulted) / len(big.tasks)
    sd = math.sqrt(0.25 * 0.75 / len(big.tasks))
    assert abs(share - 0.25) < 4 * sd
    assert {t.fault for t in faulted} == set(FAULT_KINDS)
    assert all(t.fault_calls in ("first", "all") for t in faulted)
    assert all(t.fault_calls == "all" for t in faulted if t.fault in ("malformed_output", "empty_result", "partial_result"))
    none = plan(n=200, policy="", fault_rate=0.0)
    assert all(t.fault is None and t.fault_calls == "none" for t in none.tasks)
    # raising the rate only adds faults: tasks faulted at 0.1 keep the same fault at 0.3
    low = {t.dimensions_json.split('"fault":')[0]: t for t in plan(n=300, policy="", fault_rate=0.1).tasks}
    high = {t.dimensions_json.split('"fault":')[0]: t for t in plan(n=300, policy="", fault_rate=0.3).tasks}
    for key, t in low.items():
        if t.fault is not None and key in high:
            assert high[key].fault == t.fault


def test_prompts_state_what_the_world_needs():
    p = plan(n=120, policy="")
    for t in p.tasks:
        assert t.prompt and t.world_state in WORLD_STATES and t.stance in STANCES
        if t.tool == "refund_order" and t.stance not in ("vague",) and (t.stance != "off_topic" or t.ask_family == "compound"):
            assert t.entity in t.prompt
            assert str(t.arguments["amount"]) in t.prompt and t.arguments["reason"] in t.prompt
        if t.stance == "vague":
            assert t.entity not in t.prompt
        assert t.scenario_id.startswith("sc-") and len(t.scenario_id) == 19
    assert len({t.scenario_id for t in p.tasks}) == len(p.tasks)


def test_no_tools_still_plans():
    p = plan(n=10, policy="", tools=[])
    assert len(p.tasks) == 10 and all(t.tool is None and t.entity is None for t in p.tasks)


def test_too_few_tasks_for_the_clauses_warns():
    p = plan_tasks(TOOLS, POLICY + " Do not x. Do not y.", n_tasks=3, seed=0, hard_share=0.4, fault_rate=0.25,
                   clause_share=0.1)
    assert p.clause_tasks == 0 and p.warnings and "too few" in p.warnings[0]


@pytest.mark.parametrize("n", [1, 2, 5])
def test_tiny_runs(n):
    assert len(plan(n=n, policy="").tasks) == n
