"""A seeded agent for the page tests and the browser test: two versions, a frontier run, curves, rows, a figure."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import whileai.platform as wp

AGENT = "refund-agent"
SCRIPT = "<script>window.__pwned = 1</script>"
#: The agent the store tracks (re-tracking it on a copy of the store gives the same handle).
AGENT_SPEC = {"name": AGENT, "model": "Qwen/Qwen3-4B", "instructions": "You handle refunds.",
              "tools": ["lookup_order", "refund"]}


def _rows(n: int, passes: int) -> list[wp.Example]:
    out = []
    for i in range(n):
        ok = i < passes
        out.append(wp.Example(prompt=f"Refund order #{1000 + i}", reply="Refunded." if ok else "I refunded #9999.",
                              ok=ok, why="matched the order" if ok else "invented an order id",
                              reference=f"refund #{1000 + i}", tags={"tier": "hard" if i % 3 == 0 else "easy",
                                                                    "fault": "timeout" if i % 2 else "none"},
                              messages=_transcript(i, ok) if i < 2 or i == passes else None))
    return out


def _transcript(i: int, ok: bool) -> list[dict]:
    """A refund conversation with a tool call and its result, as the rollout table holds it."""
    order = 1000 + i if ok else 9999
    return [{"role": "system", "content": "You handle refunds."},
            {"role": "user", "content": f"Refund order #{1000 + i} {SCRIPT}"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "lookup_order", "arguments": {"order": order}}}]},
            {"role": "tool", "name": "lookup_order", "tool_call_id": f"c{i}", "content": '{"status": "paid"}'},
            {"role": "assistant", "content": "Refunded." if ok else "I refunded #9999."}]


def seed(store: str | Path) -> wp.Tracked:
    """Seed ``store`` with the refund agent (local account): base served, sft-v1 the candidate."""
    warnings.simplefilter("ignore")
    tracked = wp.track(AGENT_SPEC, store=str(store))
    tracked.experiment("Does **SFT** on passing refunds raise the held-out pass rate?",
                       hypothesis="+5 points or more on `refunds`", method="- SFT on passes\n- same prompt and tools",
                       measure="pass@1 on refunds-holdout@1", decide="promote sft-v1 if it beats base beyond the floor",
                       notes=f"posted text: {SCRIPT} and [a link](javascript:alert(1))")
    tracked.define(wp.Behavior(name="refunds", rubric="Pass: refunds only a verified order.\nFail: invents an id.",
                               graded_by="program", test_version="refunds-holdout@1", noise_floor=2.0,
                               contamination=0, reward_is_judge=False))
    tracked.define(wp.Behavior(name="tone", rubric="Pass: polite and brief.", test_version="tone@1", agreement=0.86,
                               human_n=120, kappa=0.62, length_bias=0.04, noise_floor=3.0, contamination=0,
                               reward_is_judge=False))
    base = tracked.run("base", harness=wp.Harness(label="v1@qwen3-4b", instructions="You handle refunds.",
                                                  model="Qwen/Qwen3-4B"))
    base.score("refunds", 62.0, ci=5.0, n=120, rows=_rows(120, 74))
    base.score("tone", 70.0, ci=4.0, n=120, rows=_rows(60, 42))
    base.finish(say=False, gpu="A10G", seconds=0, summary={"cost_per_1k": 1.4})
    frontier = tracked.run("gpt-frontier", record={"frontier": True, "optimizer": {"method": "none"}})
    frontier.score("refunds", 85.0, ci=3.0, n=120)
    frontier.finish(say=False, summary={"cost_per_1k": 9.5, "cost_per_1k_basis": "reported by the agent, not "
                                                                                "priced by the book"})
    run = tracked.run("sft-v1", total_steps=60, record={"optimizer": {"method": "sft", "learning_rate": 1e-5},
                                                        "target": "refunds"})
    for step in range(60):
        run.log(step=step, loss=2.0 * 0.97 ** step, lr=1e-5, proxy_reward=0.4 + 0.006 * step,
                gold_reward=0.4 + 0.004 * step, holdout_length=200 + 2 * step)
    run.score("refunds", 75.0, ci=5.0, n=120, rows=_rows(120, 90))
    run.score("tone", 69.0, ci=4.0, n=120, rows=_rows(60, 41))
    run.note(f"SFT on the passing rollouts. {SCRIPT}")
    run.finish(say=False, gpu="A10G", seconds=540, summary={"cost_per_1k": 1.5})
    tracked.figure("loss-by-tier", {"data": [{"type": "bar", "x": ["easy", "hard"], "y": [0.8, 0.5]},
                                             {"type": "scatter", "x": [0, 1], "y": [0.6, 0.7]}],
                                    "layout": {"title": {"text": "pass rate by tier"}}}, caption="pass rate by tier")
    tracked.figure("reward-curve", {"data": [{"x": list(range(20)), "y": [math.sin(i / 3) for i in range(20)]}],
                                    "layout": {}}, caption="reward over steps")
    return tracked
