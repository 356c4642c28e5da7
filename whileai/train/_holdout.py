"""The held-out delta of a training run: grade the held-out samples, read the delta report, post it.

Shared by the trainers (``wai.train.sft`` and the others sample the holdout themselves) and by
``wai.train.tracked_callback`` (a user's own trainer), so both post the same score the same way
(docs/platform.md, "Report a training run").
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

from whileai.defaults import (
    HOLDOUT_BEHAVIOR,
    MONITOR_K,
    MONITOR_SAMPLE_TEMPERATURE,
    MONITOR_SAMPLE_TOP_P,
)
from whileai.train._result import HeldOutNumbers, HeldOutRates
from whileai.train._reward import TrlReward
from whileai.train._sample import sample_rows

__all__ = ["grade_rows", "holdout_delta", "post_holdout", "summary_holdout"]


def grade_rows(judge: TrlReward, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    judge.score_rows(rows)
    return rows


def holdout_delta(holdout: Any, judge: TrlReward, before: Any, after_model: Any, tok: Any, *, seed: int,
                   max_new_tokens: int, run: Any) -> HeldOutRates:
    """Sample the holdout before and after, grade both with the judge, and read the delta report."""
    from whileai.measure import delta_report

    after = grade_rows(judge, sample_rows(after_model, tok, holdout, k=MONITOR_K, max_new_tokens=max_new_tokens,
                                      temperature=MONITOR_SAMPLE_TEMPERATURE, top_p=MONITOR_SAMPLE_TOP_P, seed=seed))
    strip = ("n_tokens", "judge_status")
    before_rows = [{k: v for k, v in r.items() if k not in strip} for r in before]
    after_rows = [{k: v for k, v in r.items() if k not in strip} for r in after]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = delta_report(before_rows, after_rows, seed=seed)
    from whileai.measure import holdout_block

    block = holdout_block(before_rows, after_rows, report)
    if run is not None:
        post_holdout(run, before_rows, after_rows, block)
    return HeldOutRates(**block, judge=judge.name, headline=report.headline, judge_errors=judge.n_errors)


def summary_holdout(held: HeldOutRates | HeldOutNumbers) -> dict[str, Any]:
    """The run summary's ``holdout``: the keys of ``HOLDOUT_KEYS`` read off a result's held-out block (None where absent)."""
    from whileai.measure import HOLDOUT_KEYS

    dumped = held.model_dump()
    return {k: dumped.get(k) for k in HOLDOUT_KEYS}


def post_holdout(run: Any, before: Any, after: Any, block: Mapping[str, Any] | HeldOutRates, *,
                 behavior: str = HOLDOUT_BEHAVIOR) -> None:
    """Keep the held-out delta on a tracked run and post the trained version's held-out score.

    ``run.delta`` keeps the delta report and ``summary["holdout"]`` (when the rows are given); the
    after side's rate goes up as a score on ``behavior`` (``HOLDOUT_BEHAVIOR``), in points with its
    95% half-width and task count, so the brief and the verdicts read it. Never raises into
    training: a failed send is a warning.
    """
    if before is not None and after is not None and callable(getattr(run, "delta", None)):
        try:
            run.delta(before, after)
        except Exception as exc:  # boundary: a tracking or monitor failure warns, never stops training
            warnings.warn(f"run.delta failed and was skipped: {exc}", stacklevel=3)
    after_side = block.get("after") or {}
    rate, ci, n = after_side.get("pass_rate"), after_side.get("ci95"), after_side.get("n_tasks")
    if callable(getattr(run, "score", None)) and rate is not None and math.isfinite(rate):
        half = None if not ci or None in ci else max(rate - ci[0], ci[1] - rate)
        try:
            run.score(behavior, rate, ci=half, n=n, fraction=True)
        except Exception as exc:  # noqa: BLE001
            warnings.warn(f"run.score({behavior!r}) failed and was skipped: {exc}", stacklevel=3)
