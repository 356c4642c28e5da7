"""Lesson 7: exporting rows, training a tiny model, and the whole loop in one call.

export writes the selected rows in the shape a trainer takes (TRL's conversational rows, with the
tools and a loss mask: the model learns only the agent's own turns). With torch and TRL installed
(pip install 'whileai[train]'), the same rows train a two-layer model built on the spot, on the CPU,
in well under a minute; without them the lesson says so and goes on. It ends at the quickstart:
every step of lessons 1 to 6 in one call.

Run: python recipes/00-learn/lesson7_export_and_train.py
"""

import json

import whileai as wai
from whileai.errors import MissingExtraError


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=64)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
sft = scored.select(mode="sft")
print(sft.export("sft.jsonl", format="trl"))
first = json.loads(open("sft.jsonl", encoding="utf-8").readline())
print("one training row:", sorted(first))
print("roles:", [m["role"] for m in first["messages"]])

try:
    wai.train.require_extra(what="lesson 7")
except MissingExtraError as exc:
    print(f"training skipped: {exc}")
else:  # a two-layer model built here, a few CPU steps on tiny rows, the held-out delta at the end
    import polars as pl

    rows = wai.train.tiny_rollouts(6, 4, seed=1)
    holdout = wai.train.tiny_rollouts(3, 4, seed=2, task_prefix="ho-")
    base = wai.train.build_tiny_model("tiny-model", [*rows.to_dicts(), *holdout.to_dicts()])
    result = wai.train.sft(rows.filter(pl.col("reward") >= 0.5), base, holdout=holdout,
                           judge=lambda row: {"reward": float("resolved" in row["final_text"])},
                           epochs=4, learning_rate=5e-3, batch_size=4, output="tiny-out", max_new_tokens=12)
    print(result)

print()
summary = wai.quickstart(out="train.jsonl")  # the loop of lessons 1 to 6 in one call
print(summary["pass_at"])
print(summary["export"])
