"""Lesson 6: guarding against leaks and reward hacking.

Two ways training lies to you. A leak: eval asks (or near copies) in the training rows, so the
eval measures memory. decontaminate drops training rows that overlap the eval set. A hack: the
reward tracks something other than the job (a word the judge likes), so the policy learns the word.
hack_scan correlates reward with features of the reply within each task, against a shuffled
floor, and names what the policy would learn.

Run: python recipes/00-learn/lesson6_leaks_and_hacking.py
"""

import whileai as wai
from whileai.testing import rollout_table


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


def run(seed):
    return wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                        simulator=False, repeats=2, budget=40, seed=seed)


train = run(0).grade(judge=lambda row: {"reward": int(not row["seeded"])})
eval_set = run(1)
leaky_eval = [*eval_set.rows()[:6], *train.rows()[:4]]  # four training rows copied into the eval set
clean, report = wai.decontaminate(train, eval=leaky_eval)
print(report)
print(f"kept {clean.df.height} of {train.df.height} training rows")
print()

# A judge that pays for the word "certainly": 85% of passing and 15% of failing replies say it.
hacked = rollout_table(60, 8, seed=7, shortcut="certainly", shortcut_strength=0.85, outcome_signal=0.5)
print(wai.hack_scan(hacked, endorsed=["tool", "grounding"]))
