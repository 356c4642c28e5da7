"""Lesson 2: a grader and its contract.

A judge is any function that takes one rollout as a dict and returns {"reward": ..., "markers":
{...}}: the reward the trainer sees, and named behaviours (1.0 is the good outcome) that measure
and guard read. A verifier is a judge whose verdict a program computes. grade calls the judge on
every row and writes the answers back as columns; a judge that raises marks its row, never the run.

Run: python recipes/00-learn/lesson2_graders.py
"""

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32)


def judge(row):
    """Pass when the agent looked the order up before answering; mark whether it claimed success."""
    called = any(m.get("tool_calls") for m in row["messages"] if m["role"] == "assistant")
    claims_done = "done" in (row["final_text"] or "").lower()
    return {"reward": int(called and not row["seeded"]), "markers": {"looked_up": float(called),
                                                                      "no_claim": float(not claims_done)}}


scored = data.grade(judge=judge)
df = scored.df
print("columns the grade wrote:", [c for c in ("reward", "judge_status", "judge_name", "markers") if c in df.columns])
print("rewards:", df["reward"].value_counts().sort("reward").rows())
print("judge_status:", df["judge_status"].value_counts().rows())


def flaky(row):
    if row["rollout_index"] == 0:
        raise TimeoutError("the judge model did not answer")
    return {"reward": 1}


flaky_scored = data.grade(judge=flaky)
print("a judge that raises on some rows:", flaky_scored.df["judge_status"].value_counts().sort("judge_status").rows())
print("those rows have no reward (null), so no statistic counts them:", flaky_scored.df["reward"].null_count(), "nulls")

# a verifier: the number in the reply must equal the reference, checked by a program (no model)
check = wai.verify.MathEqual()
print(check({"final_text": "The answer is 42", "reference": "42"}))
print(check({"final_text": "I think it is 41", "reference": "42"}))
