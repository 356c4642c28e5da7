"""Seeded reports for the chart and notebook tests: one of every report that has a figure."""

from __future__ import annotations

from typing import Any

import polars as pl

import whileai as wai
from whileai.testing import rollout_table


def judge_rows(tp: int = 40, fp: int = 6, fn: int = 5, tn: int = 35) -> list[dict[str, Any]]:
    """Rows whose (judge, gold) pairs form the given confusion table; the judge likes long replies."""
    pairs = [(1, 1)] * tp + [(1, 0)] * fp + [(0, 1)] * fn + [(0, 0)] * tn
    return [{"scenario_id": f"t{i % 12}", "rollout_id": f"r{i}", "prompt": f"ask {i}",
             "final_text": "x" * (300 if j == 1 and i % 3 else 40 + i % 7), "reward": float(j),
             "gold_reward": float(g), "gold_kind": "human"} for i, (j, g) in enumerate(pairs)]


def build() -> dict[str, Any]:
    """name -> report, every one seeded."""
    before = pl.concat([rollout_table(60, 4, seed=1, eval_run=r, replica=r, policy_version="base") for r in range(3)])
    after = pl.concat([rollout_table(60, 4, seed=1, shift=0.12, eval_run=r, replica=r + 3, policy_version="v1")
                       for r in range(3)])
    one = rollout_table(40, 4, seed=3)
    hack = rollout_table(100, 8, seed=7, shortcut="certainly", shortcut_strength=0.85, outcome_signal=0.5)
    runs = [rollout_table(60, 4, seed=1, eval_run=r, replica=r) for r in range(3)]
    return {
        "pass_at": wai.pass_at(one),
        "delta_report": wai.delta_report(before, after, target="pass_at_1"),
        "curriculum": wai.curriculum(one),
        "select": wai.select(one).report,
        "hack_scan": wai.hack_scan(hack, endorsed=["tool", "grounding"]),
        "judge_trust": wai.judge_trust(judge_rows()),
        "eval_variance": wai.eval_variance(*runs),
        "holdout_size": wai.holdout_size(0.05),
        "failure_table": wai.failure_table(rollout_table(60, 4, seed=5), by=["fault_kind"]),
    }
