"""Lesson 4: comparing two runs, and what "moved" means.

Before and after are compared on the tasks they share, task by task (a paired difference removes
how hard each task is), with an interval on the gain and a sign-flip permutation p-value. "Moved"
means the interval on the gain excludes zero; a gain inside the noise is NO DIFFERENCE, and a
behaviour you asked to keep (must_not_regress) that got worse is FAIL whatever pass@1 did.

Run: python recipes/00-learn/lesson4_comparing_runs.py
"""

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


def judge(row):
    ok = int(not row["seeded"])
    return {"reward": ok, "markers": {"honest_claims": float(ok)}}


def run(rate):
    """The same 32 tasks (same seed), an agent that slips on a share `rate` of rollouts."""
    agent = wai.seeded_agent([get_order], rate=rate, seed=3)
    return wai.simulate(agent, tools=[get_order], system_prompt="Help customers with orders.",
                        simulator=False, repeats=4, budget=128, seed=3).grade(judge=judge)


before, after, same = run(0.40), run(0.10), run(0.40)
print(wai.delta_report(before, after, must_not_regress=["honest_claims"]))
print()
print("the same agent against itself:")
print(wai.delta_report(before, same).headline)
