"""Lesson 5: selecting the rows RL and SFT learn from.

A grouped RL update (GRPO) learns from the spread of rewards within a task: a task every try passes
or every try fails has no spread and teaches nothing, so select(mode="rl") keeps tasks inside the
20 to 80% difficulty band (DIFFICULTY_BAND) and drops unanimous groups. SFT imitates, so
select(mode="sft") keeps the best passing rollout per task (rejection sampling).

Run: python recipes/00-learn/lesson5_selecting_rows.py
"""

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order], rate=0.4), tools=[get_order],
                    system_prompt="Help customers with orders.", simulator=False, repeats=8, budget=160)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
print(scored.pass_at)
print()
rl = scored.select(mode="rl")
print(rl.report)
print()
sft = scored.select(mode="sft")
print(sft.report)
print()
print(f"RL keeps {rl.df.height} rows in {rl.df['scenario_id'].n_unique()} tasks; SFT keeps {sft.df.height} rows, "
      f"all passing: {bool((sft.df['reward'] == 1).all())}")
