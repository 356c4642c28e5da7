"""Hand-built rows with known truth, and plain-Python references the select step is checked against."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from typing import Any

PASS = 0.5


def row(task: str, reward: float | None, *, calls: tuple[tuple[str, dict], ...] = (("get_order", {"id": "A1"}),),
        reply: str | None = "Done, the order is on its way.", fault: str | None = None, truncated: bool | None = None,
        prompt: str | None = None, policy: str = "pol@1", source: str | None = None, index: int = 0,
        **extra: Any) -> dict[str, Any]:
    """One OpenAI-shaped rollout row: user turn, one assistant turn per tool call with its result, final reply."""
    prompt = prompt if prompt is not None else f"Please help with {task}"
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for j, (name, args) in enumerate(calls):
        cid = f"call_{index}_{j}"
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [{"id": cid, "type": "function",
                                         "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "name": name, "content": '{"status": "ok"}'})
    if reply is not None:
        messages.append({"role": "assistant", "content": reply})
    out: dict[str, Any] = {"scenario_id": task, "prompt": prompt, "messages": messages, "reward": reward,
                           "rollout_index": index, "policy_version": policy}
    if reply is not None:
        out["final_text"] = reply
    if fault is not None:
        out["fault_kind"] = fault
    if truncated is not None:
        out["truncated"] = truncated
    if source is not None:
        out["lineage"] = {"source": source}
    out.update(extra)
    return out


def group(task: str, rewards: list[float | None], **kw: Any) -> list[dict[str, Any]]:
    """k rollouts of one task with distinct replies (so none is a duplicate)."""
    return [row(task, r, reply=f"Reply {i} for {task}: done.", index=i, **kw) for i, r in enumerate(rewards)]


def wilson_reference(c: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson (1927) score interval written out from the formula."""
    p = c / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def reference_rl(rows: list[dict[str, Any]], *, band: tuple[float, float] = (0.2, 0.8),
                 truncated: str = "drop") -> dict[str, Any]:
    """The RL prune written as plain loops: drop counts per reason and the eligible tasks."""
    rate: dict[str, float] = {}
    graded: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r.get("reward") is not None:
            graded[r["scenario_id"]].append(r["reward"])
    for t, rewards in graded.items():
        rate[t] = sum(x >= PASS for x in rewards) / len(rewards)
    gates = Counter()
    left = []
    for r in rows:
        calls = [m for m in r["messages"] if m.get("tool_calls")]
        text = (r.get("final_text") or "")
        if not calls and not text.strip():
            gates["no_output"] += 1
        elif not calls and not any(ch.isalnum() for ch in text):
            gates["garbage"] += 1
        elif r.get("reward") is None:
            gates["ungraded"] += 1
        else:
            left.append(r)
    seen = set()
    dedup = []
    for r in left:
        sig = (r["scenario_id"], r.get("final_text") or "",
               tuple((c["function"]["name"], json.dumps(json.loads(c["function"]["arguments"]), sort_keys=True,
                                                        separators=(",", ":")))
                     for m in r["messages"] for c in (m.get("tool_calls") or [])))
        if sig in seen:
            continue
        seen.add(sig)
        dedup.append(r)
    n_dup = len(left) - len(dedup)
    trimmed = []
    n_trunc = 0
    for r in dedup:
        if r.get("truncated"):
            n_trunc += 1
            if truncated == "drop":
                continue
            if truncated == "penalize":
                r = {**r, "reward": 0.0}
        trimmed.append(r)
    by_task: dict[str, list[float]] = defaultdict(list)
    for r in trimmed:
        by_task[r["scenario_id"]].append(r["reward"])
    unanimous = {t for t, rw in by_task.items() if len(rw) < 2 or len(set(rw)) == 1}
    too_easy = {t for t in by_task if t not in unanimous and rate[t] > band[1]}
    too_hard = {t for t in by_task if t not in unanimous and rate[t] < band[0]}
    eligible = [t for t in by_task if t not in unanimous | too_easy | too_hard]
    return {
        "gates": dict(gates), "duplicates": n_dup, "truncated": n_trunc, "unanimous": unanimous,
        "too_easy": too_easy, "too_hard": too_hard, "eligible": eligible,
        "rows": {t: len(by_task[t]) for t in eligible}, "rate": rate,
        "unanimous_rows": sum(len(by_task[t]) for t in unanimous),
    }
