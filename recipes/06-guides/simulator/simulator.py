"""How the simulator thinks: the covering grid a small run covers (stances, world states, faults, tiers) and the simulated user's turns, from simulate's own report.

The program of docs/guides/how-it-works.md, which shows it and what it printed when the site was built.

Run: python recipes/06-guides/simulator/simulator.py
"""

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


@wai.tool
def refund_order(order_id: str, reason: str) -> dict:
    """Refund an order."""
    return {"order_id": order_id, "refunded": True}


policy = "Help customers with orders. Never refund an order without looking it up first."
data = wai.simulate(wai.seeded_agent([get_order, refund_order], rate=0.0), tools=[get_order, refund_order],
                    system_prompt=policy, simulator=False, user_simulator="template", repeats=1, budget=40)
df = data.df
print(data.report)
print()
print("stances:", dict(df["stance"].value_counts().sort("stance").rows()))
print("world states:", dict(df["world_state"].value_counts().sort("world_state").rows()))
print("faults:", dict(df["fault_kind"].fill_null("(none)").value_counts().sort("fault_kind").rows()))
print("tiers:", dict(df["tier"].value_counts().sort("tier").rows()))
