"""A simulated user and max_turns: a rollout cut for turns ends on the agent's reply, not on a
user message nobody answers (its final_text was None and the unanswered turn was counted)."""

from __future__ import annotations

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


def _asker(messages, tools):
    return "Which order do you mean?"


def test_a_cut_rollout_ends_on_the_agents_reply():
    d = wai.simulate(_asker, tools=[get_order], system_prompt="Help customers with orders.", repeats=1, budget=1,
                     progress=False, user_simulator="template", max_user_turns=3, max_turns=2)
    r = d.df.row(0, named=True)
    assert [m["role"] for m in r["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    assert r["final_text"] == "Which order do you mean?"
    assert r["truncated"] is True and r["finish_reason"] == "length"
    assert d.report.user_turns == 1


def test_room_for_the_answer_keeps_the_conversation_going():
    d = wai.simulate(_asker, tools=[get_order], system_prompt="Help customers with orders.", repeats=1, budget=1,
                     progress=False, user_simulator="template", max_user_turns=1, max_turns=4)
    r = d.df.row(0, named=True)
    assert [m["role"] for m in r["messages"]][-2:] == ["user", "assistant"]
    assert r["final_text"] == "Which order do you mean?" and d.report.user_turns == 1
