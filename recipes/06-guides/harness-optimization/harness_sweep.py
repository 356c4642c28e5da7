"""A HarnessSweep over two system prompts on the same frozen asks, graded by one judge, with the noise floor from re-scoring the first variant, tracked in a local store.

The program of docs/guides/harness-optimization.md, which shows it and what it printed when the site was built.

Run: python recipes/06-guides/harness-optimization/harness_sweep.py
"""

import whileai as wai
import whileai.platform as wp


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


SHORT = "Help customers with orders."
LONG = SHORT + " Look the order up before you answer, and never claim a result a tool did not return."
SLIPS = {SHORT: 0.35, LONG: 0.10}  # the stand-in agent's misbehaviour rate under each prompt

tasks = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt=SHORT,
                     simulator=False, repeats=2, budget=40)  # the frozen asks every variant re-runs
tracked = wp.track(None, name="orders-agent", store="runs.duckdb")
sweep = wp.HarnessSweep(
    [wp.Harness(label="short@stand-in", instructions=SHORT, model="stand-in"),
     wp.Harness(label="long@stand-in", instructions=LONG, model="stand-in")],
    tasks=tasks, behavior="orders", judge=lambda row: {"reward": int(not row["seeded"])},
    agent=lambda harness: wai.seeded_agent([get_order], rate=SLIPS[harness.instructions]),
    tools=[get_order], noise_runs=2,
)
print(sweep.run(tracked))
