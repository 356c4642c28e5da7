"""Character training's first half: a spec of traits (load_spec), style markers with intervals over tasks (style_report), and the preference pairs that would move a trait.

The program of docs/guides/character-training.md, which shows it and what it printed when the site was built.

Run: python recipes/06-guides/character-training/character.py
"""

import whileai as wai

spec = wai.load_spec({"source": "orders-agent", "traits": [
    {"id": "no_boilerplate", "name": "Plain", "principle": "No stock phrases.", "authority": "team"},
    {"id": "honest_claims", "name": "Honest", "principle": "Never claim a result a tool did not return.",
     "authority": "team"},
]})
print("spec", spec.version, spec.behaviors())


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=64)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"]),
                                       "markers": {"honest_claims": float(not row["seeded"])}})
marked = wai.style_markers(scored)
print(wai.style_report(marked))
print(wai.build_preference_pairs(marked).report)
