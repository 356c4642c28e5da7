"""The leak check reads the agent's tool calls (name and arguments) as part of its turns.

docs/export.md ("Checks that refuse": privileged_leak) and docs/select.md step 0: a row whose agent
turns quote its own privileged context is refused or dropped; a tool call's arguments are trained on.
"""

from __future__ import annotations

import json

import pytest

import whileai as wai
from whileai.errors import TrainingSelectionError
from whileai.guard import leak_report

REF = 'The refund limit for this customer is "250 dollars" exactly.'


def _row(i: int, args: object, reply: str, *, shown: str = "Refund please") -> dict:
    text = args if isinstance(args, str) else json.dumps(args)
    return {"scenario_id": "t", "rollout_index": i, "prompt": shown, "reward": float(i % 2),
            "privileged": {"reference": REF},
            "messages": [{"role": "user", "content": shown},
                         {"role": "assistant", "content": "", "tool_calls": [
                             {"id": f"c{i}", "type": "function",
                              "function": {"name": "submit_note", "arguments": text}}]},
                         {"role": "tool", "tool_call_id": f"c{i}", "content": "saved"},
                         {"role": "assistant", "content": reply}]}


@pytest.mark.parametrize("args", [{"note": REF}, {"notes": [{"text": "Per policy: " + REF.upper()}]},
                                  "not json: " + REF])
def test_reference_quoted_in_tool_arguments_is_a_leak(args):
    rows = [_row(0, args, "Done."), _row(1, {"note": "checked"}, "Done!")]
    r = leak_report(rows)
    assert (r.n_checked, r.n_leaked) == (2, 1)
    assert r.leaked[0]["index"] == 0 and r.leaked[0]["field"] == "reference"


def test_export_refuses_and_select_drops_tool_argument_leak(tmp_path):
    rows = [_row(0, {"note": REF}, "Done."), _row(1, {"note": "checked"}, "Done!")]
    with pytest.raises(TrainingSelectionError, match="privileged_leak"):
        wai.export(rows, tmp_path / "train.jsonl")
    with pytest.raises(TrainingSelectionError, match="privileged_leak"):
        wai.training_rows(rows)
    more = [*rows, _row(2, {"note": "x"}, "ok"), _row(3, {"note": "y"}, "ok")]
    kept = wai.select(more, mode="rl")
    assert sorted(r["rollout_index"] for r in kept) == [1, 2, 3]


def test_tool_name_is_read_too():
    rows = [{"scenario_id": "t", "prompt": "p", "privileged": {"hidden_state": {"tool": "escalate_to_fraud_team"}},
             "messages": [{"role": "user", "content": "p"},
                          {"role": "assistant", "content": "", "tool_calls": [
                              {"id": "c", "type": "function",
                               "function": {"name": "escalate_to_fraud_team", "arguments": "{}"}}]}]}]
    assert leak_report(rows).n_leaked == 1


def test_arguments_the_agent_was_shown_are_not_a_leak():
    rows = [_row(0, {"note": REF}, "Done.", shown="Please note: " + REF)]
    assert leak_report(rows).n_leaked == 0
