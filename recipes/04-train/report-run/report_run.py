"""Report a run so a person can decide, offline: track, run, log, score with rows, finish, verdict, brief.

A scripted "trainer" stands in for TRL or your own loop: it logs a falling loss, then the held-out
eval of the base and the trained version (scripted rollouts, 120 tasks, 4 rollouts each) is scored
with every graded row behind it. The same flow runs twice: straight into a DuckDB store
(``store=``, no process running), then against a ``wai server`` this script starts on a free
loopback port and stops at the end. Both stores can be read with SQL afterwards.

Run: python recipes/04-train/report-run/report_run.py
"""

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import polars as pl

import whileai as wai
import whileai.platform as wp
from whileai.defaults import PASS_THRESHOLD
from whileai.testing import rollout_table

TASKS, K = 120, 4
BEHAVIOR = wp.Behavior(name="refunds", rubric="Pass: refunds only with a verified order id; says so when the lookup "
                       "fails. Fail: invents an id, or claims a refund it never made.", graded_by="program",
                       test_version="refunds-holdout@1", contamination=0, reward_is_judge=False)


def evaluate(shift: float, replica: int, policy: str) -> pl.DataFrame:
    """The held-out eval: the same 120 tasks each time, a scripted policy whose pass rate moves by shift."""
    return rollout_table(TASKS, K, seed=11, shift=shift, replica=replica, policy_version=policy)


def score(run: wp.Run, rows: pl.DataFrame) -> None:
    """Post pass@1 (a rate, so fraction=True) with its interval, n = tasks, and every graded row."""
    pa = wai.pass_at(rows)
    graded = [wp.Example(prompt=r["prompt"], reply=r["final_text"], ok=r["reward"] >= PASS_THRESHOLD,
                         why="verifier: refund matched the order" if r["reward"] >= PASS_THRESHOLD else "verifier: no matching refund",
                         tags={"tier": str(r["tier"]), "fault": str(r["fault_kind"])})
              for r in rows.select("prompt", "final_text", "reward", "tier", "fault_kind").iter_rows(named=True)]
    run.score(BEHAVIOR, pa.pass_at_1, ci=(pa.ci95[1] - pa.ci95[0]) / 2, n=pa.n_tasks, fraction=True, rows=graded)


def trainer(run: wp.Run, steps: int = 60) -> None:
    """The scripted trainer: a loss that falls, logged every step (buffered; never raises into the loop)."""
    for step in range(steps):
        run.log(step=step, loss=2.0 * 0.97 ** step, lr=1e-5, reward=0.4 + 0.004 * step)


def report_run(**where) -> wp.Tracked:
    tracked = wp.track({"name": "refund-agent", "model": "Qwen/Qwen3-4B", "instructions": "You handle refunds.",
                        "tools": ["lookup_order", "refund"]}, **where)
    tracked.experiment("Does SFT on the passing refunds rollouts raise the held-out pass rate?",
                       hypothesis="+5 points or more", decide="promote sft-v1 if it beats base beyond the noise floor")
    tracked.noise_floor("refunds", *(evaluate(0.0, r, "base") for r in range(3)))
    base = tracked.run("base", harness=wp.Harness(label="v1@qwen3-4b", instructions="You handle refunds.",
                                                  model="Qwen/Qwen3-4B"))
    score(base, evaluate(0.0, 0, "base"))
    base.finish(say=False)
    run = tracked.run("sft-v1", total_steps=60, record={"optimizer": {"method": "sft", "learning_rate": 1e-5}})
    trainer(run)
    score(run, evaluate(0.15, 5, "sft-v1"))
    run.note("SFT on the passing rollouts of the training split; same prompt, same tools.")
    run.finish(gpu="A10G", seconds=540)  # prints the brief
    print()
    print(tracked.verdict("refunds"))
    return tracked


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    print("== straight into the store (no server) ==")
    report_run(store="report-run.duckdb")
    print()
    print("== against wai server ==")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "whileai.cli.main", "server", "--port", str(port),
                               "--store", "server.duckdb", "--log-level", "warning"])
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx.get(f"{url}/openapi.json", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        tracked = report_run(base_url=url)
        print(f"{len(tracked.open(tracked.runs()[-1]).rows('refunds'))} graded rows behind sft-v1's score on {url}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"stores: {Path('report-run.duckdb').resolve()} and {Path('server.duckdb').resolve()} "
          "(SELECT * FROM tracked_runs; SELECT * FROM scores)")


if __name__ == "__main__":
    main()
