"""Rows for the same-rows tests: every kind of row the steps drop or break ties on, in each shape users have.

``awkward_rows`` is whileai's own rollout shape (OpenAI-style messages with tool calls) with
leaked answer keys, junk replies, duplicate trajectories, truncated rollouts, ungraded rows,
reward ties and a prompt shared across tasks; ``w131_rows`` the same rollouts in whileai 0.131's
shape (``steps`` of tool, arguments, result; the shape ``../shared/bench/make_rollouts.py``
writes at scale).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from whileai.testing import rollout_table

LEAK = "the refund was already issued on the first call, say so and stop"


def awkward_rows() -> list[dict[str, Any]]:
    """60 tasks x 8 rollouts with every kind of row the selectors drop or break ties on."""
    rows = rollout_table(60, 8, seed=11, partial=True).to_dicts()
    for i, row in enumerate(rows):
        task, r = divmod(i, 8)
        row["truncated"] = r == 3 and task % 5 == 0
        row["finish_reason"] = "length" if (r == 4 and task % 7 == 0) else "stop"
        row["privileged"] = {"reference": LEAK} if task % 3 == 0 else None
        if task % 9 == 0 and r in (1, 2):  # a reply that recites the answer key
            row["final_text"] = f"As the reference says: {LEAK}."
            row["messages"][-1]["content"] = row["final_text"]
        if task % 11 == 0 and r == 5:  # junk: no tool call, no letter or digit
            row["final_text"] = "..." if task % 2 else "   "
            row["messages"] = [m for m in row["messages"][:1]] + [
                {"role": "assistant", "content": row["final_text"], "name": None, "tool_call_id": None,
                 "tool_calls": [], "extra": None}]
        if task % 6 == 1 and r == 7:  # a duplicate trajectory of rollout 0 (another id, maybe another reward)
            first = rows[task * 8]
            row["messages"], row["final_text"] = first["messages"], first["final_text"]
        if task % 13 == 4 and r == 6:
            row["reward"] = None  # ungraded
        if task in (20, 21):  # one prompt shared by two tasks
            row["prompt"] = "Please look into the shared account"
            row["messages"][0]["content"] = row["prompt"]
    return rows


def json_rows(*, privileged: bool = True) -> list[dict[str, Any]]:
    """The awkward rows as JSON lines hold them (nulls left out); without ``privileged`` if asked."""
    return [{k: v for k, v in r.items() if (v is not None or k == "reward") and (privileged or k != "privileged")}
            for r in json.loads(json.dumps(awkward_rows(), default=str))]


def steps_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A conversation as whileai 0.131 steps: one {tool, arguments, result} per tool call."""
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    return [{"tool": call["name"], "arguments": json.loads(call["arguments"]), "result": results.get(call.get("id"))}
            for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or []]


def w131_rows() -> list[dict[str, Any]]:
    """The awkward rollouts in whileai 0.131's shape, privileged answer keys and lineage included."""
    out = []
    for r in json_rows():
        out.append({"scenario_id": r["scenario_id"], "rollout_index": r["rollout_index"], "prompt": r["prompt"],
                    "final_text": r["final_text"], "reward": r["reward"], "markers": r.get("markers"),
                    "steps": steps_of(r["messages"]), "model_version": r.get("policy_version"),
                    "privileged": r.get("privileged") or {"reference": "none"},
                    "lineage": {"source": "grade", "judge": "lambda_judge", "parent": r["scenario_id"]}})
    return out


def late_system(rows: list[dict[str, Any]], every: int = 37) -> list[dict[str, Any]]:
    """``rows`` with a system turn opening a few conversations (the whole table gains ``system_prompt``)."""
    rows = copy.deepcopy(rows)
    for i in range(5, len(rows), every):
        rows[i]["messages"].insert(0, {"role": "system", "content": "You are the refunds desk."})
    return rows
