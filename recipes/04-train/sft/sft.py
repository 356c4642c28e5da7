"""SFT on the passing rollouts, LoRA on TRL, the held-out delta at the end.

--tiny (offline, CPU, under a minute): a two-layer model built here, a few epochs on the
passing rows. Real mode: Qwen/Qwen2.5-0.5B-Instruct on your selection, on a GPU.

Run: python recipes/04-train/sft/sft.py --tiny
     python recipes/04-train/sft/sft.py --rows train.jsonl --holdout holdout.jsonl
"""

import argparse
import sys
import tempfile

import polars as pl

import whileai as wai
from whileai.errors import MissingExtraError

parser = argparse.ArgumentParser()
parser.add_argument("--tiny", action="store_true", help="tiny local model, a few CPU steps")
parser.add_argument("--rows", help="graded rows to train on (real mode)")
parser.add_argument("--holdout", help="held-out rows (real mode)")
parser.add_argument("--base", default="Qwen/Qwen2.5-0.5B-Instruct")
parser.add_argument("--server", help="report the run to this wai server (needs --agent)")
parser.add_argument("--agent", help="the tracked agent the run belongs to (alone: WHILEAI_BASE_URL, the saved login, "
                    "else the local store)")
parser.add_argument("--key", help="the server's API key (default: WHILEAI_API_KEY, then the saved login's)")
parser.add_argument("--version", default="sft", help="what this run changed, as the run table shows it")
args = parser.parse_args()
if args.server and not args.agent:
    parser.error("--server needs --agent NAME, the tracked agent the run belongs to")

try:  # torch and TRL: without them, the pip line and exit 2, before anything is written
    wai.train.require_extra(what="recipes/04-train/sft")
except MissingExtraError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)


def judge(row):
    """The eval's judge: the reply says it resolved the case."""
    return {"reward": float("resolved" in row["final_text"])}


if args.tiny:
    rows = wai.train.tiny_rollouts(6, 4, seed=1)
    holdout = wai.train.tiny_rollouts(3, 4, seed=2, task_prefix="ho-")
    work = tempfile.mkdtemp(prefix="wai-sft-")
    base = wai.train.build_tiny_model(f"{work}/model", [*rows.to_dicts(), *holdout.to_dicts()])
    knobs = dict(epochs=4, learning_rate=5e-3, batch_size=4, output=f"{work}/out", max_new_tokens=12)
else:
    rows, holdout, base, knobs = wai.frame(args.rows), args.holdout, args.base, {}

run = None  # with --agent: a tracked run, reported through wai.train.tracked_callback
if args.agent:
    import whileai.platform as wp

    tracked = wp.track({"name": args.agent, "model": str(base)}, base_url=args.server, api_key=args.key)
    run = tracked.run(args.version, base_model=str(base),
                      record={"method": "sft", "knobs": {k: v for k, v in knobs.items() if k != "output"}})

passing = rows.filter(pl.col("reward") >= 0.5)  # SFT imitates every row: train on the passes
print(wai.selection_report(wai.profile(rows), method="sft"))  # what training on every row would do
result = wai.train.sft(passing, base, holdout=holdout, judge=judge, run=run, **knobs)
print(result)
