"""A verifiers environment for GRPO: the selected tasks, the tools and the judge as one package.

export_environment writes an installable package (dataset, tool schemas, and the reward as
module:function, which the trainer imports); load_environment reads it back. make test-verifiers
runs the package through vf-eval in real verifiers releases against a loopback fake model.

Run: python recipes/05-export/verifiers/environment.py
"""

import pathlib
import sys

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


# the reward the trainer imports: a top-level function in a module on its path
pathlib.Path("order_judges.py").write_text('def reward(row):\n    return {"reward": int(not row["seeded"])}\n')
sys.path.insert(0, ".")

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=64)
rows = data.grade(judge=lambda row: {"reward": int(not row["seeded"])}).select(mode="rl")
print(wai.export_environment(rows, "orders_env", reward="order_judges:reward"))
print(sorted(p.name for p in pathlib.Path("orders_env").iterdir()))
