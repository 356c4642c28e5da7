"""A reward model on pass-versus-fail pairs, then the model as a judge.

--tiny (offline, CPU, under a minute): a two-layer model built here learns to score the passing
side above the failing one; pair accuracy is read before and after, and wai.reward_model(result)
grades rows under the judge contract. Real mode: Qwen/Qwen2.5-0.5B-Instruct, on a GPU.

Run: python recipes/04-train/reward-model/reward_model.py --tiny
     python recipes/04-train/reward-model/reward_model.py --rows scored.jsonl --holdout holdout.jsonl
"""

import argparse
import sys
import tempfile
import warnings

import whileai as wai
from whileai.errors import MissingExtraError

parser = argparse.ArgumentParser()
parser.add_argument("--tiny", action="store_true", help="tiny local model, a few CPU steps")
parser.add_argument("--rows", help="graded rows to pair (real mode)")
parser.add_argument("--holdout", help="held-out rows (real mode)")
parser.add_argument("--base", default="Qwen/Qwen2.5-0.5B-Instruct")
parser.add_argument("--server", help="report the run to this wai server (needs --agent)")
parser.add_argument("--agent", help="the tracked agent the run belongs to (alone: WHILEAI_BASE_URL, the saved login, "
                    "else the local store)")
parser.add_argument("--key", help="the server's API key (default: WHILEAI_API_KEY, then the saved login's)")
parser.add_argument("--version", default="rm", help="what this run changed, as the run table shows it")
args = parser.parse_args()
if args.server and not args.agent:
    parser.error("--server needs --agent NAME, the tracked agent the run belongs to")

try:  # torch and TRL: without them, the pip line and exit 2, before anything is written
    wai.train.require_extra(what="recipes/04-train/reward-model")
except MissingExtraError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)

if args.tiny:
    rows = wai.train.tiny_rollouts(8, 4, seed=1)
    holdout = wai.train.tiny_rollouts(4, 4, seed=2, task_prefix="ho-")
    work = tempfile.mkdtemp(prefix="wai-rm-")
    base = wai.train.build_tiny_model(f"{work}/model", [*rows.to_dicts(), *holdout.to_dicts()])
    knobs = dict(steps=12, learning_rate=5e-3, batch_size=4, output=f"{work}/out")
else:
    rows, holdout, base, knobs = args.rows, args.holdout, args.base, {}

run = None  # with --agent: a tracked run, reported through wai.train.tracked_callback
if args.agent:
    import whileai.platform as wp

    tracked = wp.track({"name": args.agent, "model": str(base)}, base_url=args.server, api_key=args.key)
    run = tracked.run(args.version, base_model=str(base),
                      record={"method": "rm", "knobs": {k: v for k, v in knobs.items() if k != "output"}})

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the tiny set is under min_mixed_tasks on purpose
    result = wai.train.reward_model(rows, base, holdout=holdout, run=run, **knobs)
print(result)
judge = wai.reward_model(result)  # the trained model as a judge: reward 0/1 at its threshold, rm_score raw
graded = wai.frame(holdout).head(4).to_dicts()
for row in graded:
    print(f"{row['final_text'][:40]!r:44} reward {row['reward']:.0f}  judge {judge(row)}")
