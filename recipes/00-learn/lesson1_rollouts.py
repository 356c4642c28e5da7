"""Lesson 1: what a rollout and a task are.

A task is one situation the agent meets (an ask, a world state, a user's stance); a rollout is one
attempt at it, the whole conversation. simulate runs each task k times (repeats=k), so the table
has one row per rollout and k rows per task. Offline: the template situation writer and a stand-in
agent, no model.

Run: python recipes/00-learn/lesson1_rollouts.py
"""

import whileai as wai


@wai.tool  # the function is the tool; its signature is the schema the agent sees
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(
    wai.seeded_agent([get_order]),  # a stand-in agent that misbehaves on a labeled share of rows
    tools=[get_order],
    system_prompt="Help customers with orders.",
    simulator=False,  # template situation writer: no model, no network
    repeats=4,  # k: rollouts per task
    budget=16,  # rollouts in all: 4 tasks x 4
)
df = data.df
print(f"{df.height} rollouts, {df['scenario_id'].n_unique()} tasks, k={data.k}")
first = df.row(0, named=True)
print("task:", first["scenario_id"], "| stance:", first["stance"], "| fault:", first["fault_kind"])
print("ask:", first["prompt"])
for message in first["messages"]:
    print(f"  {message['role']:>9}: {(message['content'] or '')[:70]!r}", "(tool call)" if message["tool_calls"] else "")
print("rows per task:", sorted(df.group_by("scenario_id").len()["len"].to_list()))
