"""Rows TRL takes as they are: SFT rows with tools and a loss mask, DPO pairs, GRPO prompts.

Exports the quickstart's selection in TRL's conversational shape (format="trl") to Parquet, the
preference pairs to JSONL, and reads them back with the datasets library when it is installed
(pip install 'whileai[trl]'), as TRL's trainers load them. make test-trl feeds the same rows to
TRL's own data utilities and trainer.

Run: python recipes/05-export/trl/trl_rows.py
"""

import importlib.util

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=64)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
print(wai.export_dataset(scored.select(mode="sft"), "sft.parquet", format="trl"))
print(wai.export_preference(wai.build_preference_pairs(scored), "dpo.jsonl", format="trl"))
if importlib.util.find_spec("datasets") is None:
    print("datasets is not installed: pip install 'whileai[trl]' to load the files as TRL does")
else:
    from datasets import load_dataset

    print(load_dataset("parquet", data_files="sft.parquet", split="train"))
    print(load_dataset("json", data_files="dpo.jsonl", split="train"))
