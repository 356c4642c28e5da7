"""Sizing a delta report: what these paired tasks can detect, and what would settle a NO DIFFERENCE.

The smallest target gain the paired tasks detect at ``power`` (the paired t test's power by the
noncentral t, the rule ``holdout_size`` sizes by), the smallest the noise band lets through as
``moved``, and the paired tasks the observed delta needs; warnings for unequal rollouts per task
and for a before arm already at the ceiling. On NO DIFFERENCE with a gain on the point estimate,
the eval runs a side or paired tasks that bring the band under it, and the tasks the test needs
(docs/measure.md, "delta_report (and compare)").
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from whileai.defaults import MIN_PAIRED_TASKS, POWER, RESOLVE_MAX_EVAL_RUNS
from whileai.measure._delta import DeltaReport, DeltaResolve
from whileai.measure._format import fmt_signed
from whileai.measure._holdout import detectable_gain, tasks_needed
from whileai.measure._metrics import PASS_AT_1
from whileai.stats.power import detectable_moved, noise_band_width


def size_report(report: DeltaReport, a_vals: pl.DataFrame, *, power: float, level: float, ceiling_pass_rate: float,
                warnings: list[str]) -> None:
    """The sizing fields and warnings, then what would resolve a NO DIFFERENCE, on ``report``."""
    _sizing(report, a_vals, power, level, ceiling_pass_rate, warnings)
    _resolve(report, report.run_std_df, level)


def _resolve(report: DeltaReport, band_df: int | None, level: float) -> None:
    """What would turn a NO DIFFERENCE on a positive delta into a verdict, from the measured spread.

    The band ``q x run_std x sqrt(1/r + 1/r)`` with r eval runs a side, run_std pooled from them at
    ``2 (r - 1)`` degrees of freedom (what ``simulate(..., runs=r)`` on both arms gives), falls under
    the observed delta from the smallest r found here; with the runs kept, a band from rollout noise
    falls as 1/sqrt(tasks), so ``T (band / delta)^2`` tasks a run bring it under; the test alone
    needs ``tasks_needed`` paired tasks (the rule ``holdout_size`` uses).
    """
    delta = report.target_delta
    if report.headline != "NO DIFFERENCE" or not math.isfinite(delta) or delta <= 0.0:
        return
    out: dict[str, Any] = {"delta": delta, "eval_runs": None, "tasks_for_band": None,
                           "tasks_for_test": report.tasks_needed}
    parts: list[str] = []
    n = report.n_paired_tasks
    if report.noise_band is not None and report.run_std is not None and delta <= report.noise_band:
        runs_now = max(report.eval_runs.get("before", 1), report.eval_runs.get("after", 1))
        for r in range(max(2, runs_now), RESOLVE_MAX_EVAL_RUNS + 1):
            if noise_band_width(report.run_std, r, r, 2 * (r - 1), level=level) < delta:
                out["eval_runs"] = r
                break
        out["tasks_for_band"] = int(math.ceil(n * (report.noise_band / delta) ** 2)) if n else None
        if out["eval_runs"] is not None:
            parts.append(f"{out['eval_runs']} eval runs a side (now {runs_now}) bring the band under it at "
                         f"run_std {report.run_std:.3f}")
        else:
            parts.append(f"more eval runs alone do not bring the band under it at run_std {report.run_std:.3f} "
                         f"(not by {RESOLVE_MAX_EVAL_RUNS} a side)")
        if out["tasks_for_band"] is not None:
            parts.append(f"or about {out['tasks_for_band']} paired tasks a run (now {n}), if the re-run spread is "
                         "rollout noise")
    if report.target_verdict == "no_change_detected" and report.tasks_needed is not None:
        parts.append(f"the test needs about {report.tasks_needed} paired tasks (now {n}) to detect it at "
                     f"{POWER:.0%} power")
    if not parts:
        return
    out["line"] = (f"to resolve: the observed {fmt_signed(delta)} is not settled, not shown to be zero; "
                   + "; ".join(parts))
    report.resolve = DeltaResolve(**out)


def _sizing(report: DeltaReport, a_vals: pl.DataFrame, power: float, level: float, ceiling_pass_rate: float,
            warnings: list[str]) -> None:
    _detectable(report, power, level)
    _rollouts_warning(report, warnings)
    _ceiling(report, a_vals, ceiling_pass_rate, warnings)


def _detectable(report: DeltaReport, power: float, level: float) -> None:
    """The smallest gain the test (and the band) detect at ``power``, and the tasks the observed delta needs."""
    t = report.metrics[report.target]
    sd = t.get("task_std")
    n = t.get("n_paired", 0)
    if t.get("paired") and sd is not None and math.isfinite(sd) and sd > 0 and n >= 2:
        # the rule holdout_size sizes by: the paired t test's power (noncentral t), where the sign-flip test can reject
        alpha = 1.0 - level
        detectable = detectable_gain(n, lambda _gain: sd, power=power, alpha=alpha)
        if math.isfinite(detectable):
            report.detectable_effect = detectable
            if report.noise_band is not None:  # a gain called moved passes the test first: never under the test alone
                report.moved_detectable_effect = max(detectable, detectable_moved(n, sd, report.noise_band, power=power,
                                                                                  alpha=alpha))
        delta = report.target_delta
        if math.isfinite(delta) and delta != 0:
            report.tasks_needed = int(tasks_needed(abs(delta), sd, power=power, alpha=alpha))
        report.tasks_needed_source = "rows"


def _rollouts_warning(report: DeltaReport, warnings: list[str]) -> None:
    if report.repeats.get("before") != report.repeats.get("after") and report.repeats.get("before") and report.repeats.get("after"):
        warnings.append(f"the arms have different rollouts per task (k={report.repeats['before']} before, "
                        f"k={report.repeats['after']} after): rows lost at random only widen the interval, rows lost for a "
                        "reason (timeouts on hard tasks) bias it; re-run the short arm on its short tasks, or pass "
                        "balance_rollouts=True for one k.")


def _ceiling(report: DeltaReport, a_vals: pl.DataFrame, ceiling_pass_rate: float, warnings: list[str]) -> None:
    before_rate = report.metrics[PASS_AT_1]["mean_a"]
    if before_rate is not None and math.isfinite(before_rate) and a_vals.height:
        room = int((a_vals[PASS_AT_1].drop_nulls() < 1.0).sum())
        if before_rate >= ceiling_pass_rate or room < MIN_PAIRED_TASKS:
            report.ceiling = True
            warnings.append(f"the before run already passes {before_rate:.0%} of its tasks ({room} task(s) with room to "
                            "improve), so there is little gain this eval could show; use harder situations before "
                            "training again.")
