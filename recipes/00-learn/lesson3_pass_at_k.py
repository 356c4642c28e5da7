"""Lesson 3: pass@1, pass^k, pass@k, and why the interval is over tasks.

pass@1 is how often one try passes; pass^k how often all k tries of a task pass (reliability);
pass@k how often at least one does (what an RL update can reach). The k tries of one task are not
independent (an easy task passes every time), so the honest sample size is the number of tasks,
not of rollouts: an interval that treats 64 rollouts as 64 independent draws is too narrow.

Run: python recipes/00-learn/lesson3_pass_at_k.py
"""

import math

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=64)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
report = scored.pass_at
print(report)  # the one line
print(report.table(style="text"))  # the same numbers as a table, with what each one says

# Why over tasks: 16 tasks, 8 that always pass and 8 that always fail (32 of 64 rollouts pass).
rows = [{"task_id": f"task-{t}", "rollout_index": j, "reward": int(t < 8)} for t in range(16) for j in range(4)]
ours = wai.pass_at(rows, k=4)
low, high = ours.ci95
n, p, z = len(rows), 0.5, 1.959964  # Wilson's interval over 64 rollouts, as if independent
half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
print(f"over rollouts (too narrow, n={n}): {0.5 - half:.2f} to {0.5 + half:.2f}")
print(f"over tasks (n={ours.n_tasks}): {low:.2f} to {high:.2f}")
