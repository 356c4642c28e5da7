"""Push training rows to a Hugging Face Hub dataset repo with a dataset card, pinned by a tag.

With HF_TOKEN set (and WAI_HF_REPO naming a repo you can write to, e.g. "you/orders-sft") this
pushes to the real Hub. Without HF_TOKEN it runs offline against a fake Hub on 127.0.0.1
(whileai.testing.fake_hf_hub) and reads the card and whileai.json back at the pinned revision.
Needs pip install 'whileai[hf]'.

Run: python recipes/05-export/hugging-face/push_dataset.py
"""

import contextlib
import importlib.util
import json
import os

import whileai as wai
from whileai.testing import fake_hf_hub


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=64)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
rows = scored.select(mode="sft")
print(f"{len(rows)} rows of the sft selection to push")
if importlib.util.find_spec("huggingface_hub") is None:
    print("huggingface_hub is not installed: pip install 'whileai[hf]' to push a dataset to the Hub")
    raise SystemExit(0)

real = bool(os.environ.get("HF_TOKEN"))
repo = os.environ.get("WAI_HF_REPO", "you/orders-sft")
if real and "WAI_HF_REPO" not in os.environ:
    print("HF_TOKEN is set: name the repo to push to with WAI_HF_REPO=you/orders-sft")
    raise SystemExit(0)
with contextlib.nullcontext(None) if real else fake_hf_hub() as hub:
    push = rows.push_to_hub(repo, token=None if real else "offline", endpoint=None if hub is None else hub.url)
    # = wai.push_to_hub(rows, repo, ...); a mapping {"train": rows, "test": held_out} pushes several splits
    print(push)
    if hub is not None:
        files = hub.repos[repo].files(push.revision)
        print("files at", push.revision + ":", ", ".join(sorted(files)))
        print(files["README.md"].decode())
        print(json.dumps(json.loads(files["whileai.json"]), indent=2))
