"""Can the judge be believed? A judge checked against gold labels, offline.

People labelled 60 rollouts (gold). Two judges grade the same rows: one that checks the work
(the agent's reply is honest about what the tool returned) and one that pays for a confident
word. judge_trust reports agreement with its interval over tasks, Cohen's kappa, the confusion
table and the length gap, and says OK or FAIL against the floors.

Run: python recipes/03-grade/judge-trust/judge_trust.py
"""

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=120)


def careful_judge(row):
    """Passes a reply unless the stand-in agent misbehaved on that row."""
    return {"reward": int(not row["seeded"])}


def word_judge(row):
    """Pays for a confident word, whatever the agent did."""
    text = (row.get("final_text") or "").lower()
    return {"reward": int(any(w in text for w in ("done", "sure", "happy")))}


gold = {r["rollout_id"]: int(not r["seeded"]) for r in data.rows()[:60]}  # what people said about 60 rows
for judge in (careful_judge, word_judge):
    labeled, label_report = wai.attach_labels(data.grade(judge=judge), gold, kind="human")
    print(wai.judge_trust(labeled))
    print()
