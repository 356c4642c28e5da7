"""Rubric, Criterion and rubric_judge over a fake chat endpoint."""

from __future__ import annotations

import json

import pytest

from whileai import run_judge
from whileai.errors import JudgeError
from whileai.grade import Criterion, Rubric, judge_trust, rubric_judge
from whileai.grade._rubric import tool_facts


class FakeEndpoint:
    """Answers like a chat model: a JSON verdict per criterion, decided by a function of the prompt."""

    def __init__(self, decide):
        self.decide = decide
        self.calls = []

    def chat(self, messages, *, tools=None, **params):
        self.calls.append({"messages": messages, "tools": tools, "params": params})
        return {"role": "assistant", "content": self.decide(messages[-1]["content"])}


RUBRIC = Rubric([Criterion("Looks up the order before answering", kind="hard"),
                 Criterion("States the order status"), "Offers further help"], name="orders")


def _row(**over):
    row = {
        "prompt": "Where is order A1?",
        "tools": [{"type": "function", "function": {"name": "get_order"}},
                  {"type": "function", "function": {"name": "refund_order"}}],
        "messages": [
            {"role": "user", "content": "Where is order A1?"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"id":"A1"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "get_order", "content": '{"status":"shipped"}'},
            {"role": "assistant", "content": "It has shipped."},
        ],
        "final_text": "It has shipped.",
    }
    row.update(over)
    return row


def test_rubric_scoring():
    names = [c.name for c in RUBRIC.criteria]
    assert names == ["looks_up_order_before", "states_order_status", "offers_further_help"]
    assert RUBRIC.score(dict.fromkeys(names, True)) == 1.0
    assert RUBRIC.score({"looks_up_order_before": True, "states_order_status": True}) == pytest.approx(2 / 3)
    assert RUBRIC.score({"states_order_status": True, "offers_further_help": True}) == 0.0  # a hard one failed
    assert not RUBRIC.exact
    hard = Rubric([Criterion("a thing", kind="hard"), Criterion("another", kind="hard")])
    assert hard.exact and hard.score({"thing": True}) == 0.0
    dup = Rubric(["Be brief", "Be brief"])
    assert [c.name for c in dup.criteria] == ["brief", "brief_2"]


@pytest.mark.parametrize("criteria", [[], ()])
def test_rubric_needs_criteria(criteria):
    with pytest.raises(JudgeError, match=r"Rubric criteria must hold at least one criterion, got \[\]"):
        Rubric(criteria)


def test_bad_criteria():
    with pytest.raises(JudgeError, match="kind must be 'hard' or 'soft', got 'must'"):
        Criterion("x", kind="must")
    with pytest.raises(JudgeError, match="non-empty string"):
        Criterion("  ")
    with pytest.raises(JudgeError, match="a Criterion, a string"):
        Rubric([3])


def test_tool_facts():
    facts = tool_facts(_row())
    assert facts == {"tools_called": ["get_order"], "tools_not_called": ["refund_order"], "calls_without_result": []}
    announced = _row(messages=[{"role": "user", "content": "refund A1"},
                               {"role": "assistant", "content": "Refunded!",
                                "tool_calls": [{"id": "c9", "function": {"name": "refund_order"}}]}])
    facts = tool_facts(announced)
    assert facts["tools_called"] == [] and facts["calls_without_result"] == ["refund_order"]
    assert facts["tools_not_called"] == ["get_order", "refund_order"]


def test_rubric_judge_grades_through_the_contract():
    endpoint = FakeEndpoint(lambda prompt: json.dumps({"criteria": [
        {"id": 1, "met": '"get_order"' in prompt.split("tools_called:")[1].split("\n")[0], "why": "called"},
        {"id": 2, "met": True, "why": "says shipped"},
        {"id": 3, "met": False, "why": "no offer of help"}]}))
    judge = rubric_judge(RUBRIC, endpoint)
    scored = run_judge([_row(), _row(messages=[{"role": "user", "content": "Where is order A1?"},
                                               {"role": "assistant", "content": "I looked it up: shipped."}])], judge)
    assert scored.df["judge_status"].to_list() == ["ok", "ok"]
    assert scored.df["reward"].to_list() == [pytest.approx(2 / 3), 0.0]
    markers = scored.df["markers"].struct.unnest()
    assert markers["looks_up_order_before"].to_list() == [1.0, 0.0]
    assert markers["offers_further_help"].to_list() == [0.0, 0.0]
    assert scored.df["judge_name"][0] == "rubric_judge:orders"
    assert "offers_further_help: no offer of help" in scored.df["reason"][0]
    sent = endpoint.calls[0]
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert "has not done it" in system and "tools_called" in system
    assert 'tools_called: ["get_order"]' in user and 'tools_not_called: ["refund_order"]' in user
    assert "1. [hard] Looks up the order before answering" in user and "It has shipped." in user
    assert sent["params"] == {"temperature": 0}
    meta = json.loads(scored.df["judge_meta"][0])
    assert meta["rubric"] == "orders" and meta["criteria_met"] == 2 and meta["hard_failed"] == []


def test_unparseable_reply_is_an_error_row():
    judge = rubric_judge(RUBRIC, FakeEndpoint(lambda prompt: "looks good to me"))
    scored = run_judge([_row()], judge)
    assert scored.df["judge_status"][0] == "error" and scored.df["reward"][0] is None
    assert "JSON" in scored.df["reason"][0]
    judge = rubric_judge(RUBRIC, FakeEndpoint(lambda prompt: '{"criteria": [{"id": 1, "met": true}]}'))
    assert run_judge([_row()], judge).df["judge_status"][0] == "error"


def test_partial_credit_makes_trust_inconclusive_and_hard_fixes_it():
    soft = Rubric(["Clear", "Correct"])
    endpoint = FakeEndpoint(lambda prompt: json.dumps({"criteria": [{"id": 1, "met": True},
                                                                     {"id": 2, "met": "pass" in prompt}]}))
    rows = [{"scenario_id": f"t{i}", "prompt": "p", "final_text": "pass" if i % 2 else "no",
             "gold_reward": float(i % 2), "gold_kind": "human"} for i in range(40)]
    scored = run_judge(rows, rubric_judge(soft, endpoint))
    assert scored.report.trust is None or not scored.report.trust["ok"]
    report = judge_trust(scored)
    assert report.status == "inconclusive" and report.skipped["partial"] == 20
    hard = Rubric([Criterion("Clear", kind="hard"), Criterion("Correct", kind="hard")])
    report = judge_trust(run_judge(rows, rubric_judge(hard, endpoint)))
    assert report.ok and report.agreement == 1.0


def test_endpoint_must_chat():
    with pytest.raises(JudgeError, match="endpoint must have a chat"):
        rubric_judge(RUBRIC, 42)
    assert rubric_judge(["Be brief"], lambda messages: {"content": '{"criteria": [true]}'})({"prompt": "p"})["reward"] == 1.0
