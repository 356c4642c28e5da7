"""Whether the arms compare at all, and the headline a person reads first.

NOT COMPARABLE (causes) when a side holds no graded rows (ungraded), under half the tasks pair
(situations: the arms drew different tasks), or too few paired tasks give an interval
(too_few_tasks); then no metric is called moved on zero paired tasks. Otherwise a guard
(``must_not_regress``) that moved down, or a target that did, is FAIL; a target that moved up is
PASS, or PASS (UNREPLICATED: ...) on one eval run a side with no noise floor; anything else is NO
DIFFERENCE (docs/measure.md, "delta_report (and compare)"). The warnings that qualify the reading
(degenerate guards, confounded or identical setups, an unguarded drop, an unreplicated move) are
written here too.
"""

from __future__ import annotations

import math

from whileai.defaults import EVAL_RUNS, MIN_PAIRED_SHARE
from whileai.measure._delta import DeltaReport, MetricDelta
from whileai.measure._delta_sides import DeltaSide
from whileai.measure._delta_text import _tuple
from whileai.measure._format import fmt_interval, fmt_signed
from whileai.measure._metrics import PASS_AT_1

_CONFOUNDS = ("temperature", "top_p", "max_tokens", "provider", "base_url", "judge_name", "judge_version", "user_model",
              "writer_model")

#: The headline of a PASS that rests on one eval run a side with no noise floor: it says so on the first line.
UNREPLICATED_PASS = "PASS (UNREPLICATED: one eval run a side and no noise floor, so this could be eval noise)"


def settle_verdict(report: DeltaReport, a: DeltaSide, b: DeltaSide, guards: list[str], warnings: list[str]) -> None:
    """Comparability, the verdicts of a NOT COMPARABLE report, the guards, then the headline, on ``report``."""
    _comparability(report, a, b, warnings)
    _unpaired_verdicts(report)
    _guards(report, guards, a, b, warnings)
    _headline(report)


def _comparability(report: DeltaReport, a: DeltaSide, b: DeltaSide, warnings: list[str]) -> None:
    causes: list[str] = []
    graded_a, graded_b = a.n_graded, b.n_graded
    if not a.n_rows or not b.n_rows:
        causes.append("ungraded")  # no rows at all: nothing graded either
        empty = " and ".join(side for side, n in (("before", a.n_rows), ("after", b.n_rows)) if not n)
        warnings.append(f"the {empty} side holds no rows ({a.n_rows} before, {b.n_rows} after), so there is nothing to "
                        "compare. Check the file path, or run the eval that should have filled it.")
    elif not graded_a or not graded_b:
        causes.append("ungraded")
        warnings.append(f"one arm has no graded rows ({graded_a} before, {graded_b} after): grade both arms first.")
    elif not math.isfinite(report.paired_share) or report.paired_share < MIN_PAIRED_SHARE:
        causes.append("situations")
        share = 0.0 if not math.isfinite(report.paired_share) else report.paired_share
        warnings.append(f"only {share:.0%} of tasks pair ({report.n_paired_tasks} shared, {report.n_unpaired_tasks} on one "
                        "side only): the two arms drew different situations, so the delta is between two evals. Pin the "
                        "after side to the baseline's tasks (simulate(..., tasks=base)) or compare per tier.")
    elif report.metrics[PASS_AT_1]["verdict"] == "insufficient_data":
        causes.append("too_few_tasks")
        warnings.append(f"{report.n_paired_tasks} paired task(s) give no interval: an interval needs 3 tasks. Evaluate "
                        "more tasks (holdout_size says how many).")
    if report.target != PASS_AT_1 and not causes and report.metrics[report.target]["verdict"] == "insufficient_data":
        causes.append("too_few_tasks")
        warnings.append(f"the target {report.target} has too few tasks with a value on both sides for an interval.")
    report.not_comparable = causes


def _unpaired_verdicts(report: DeltaReport) -> None:
    """A NOT COMPARABLE report calls no metric moved on 0 paired tasks: its verdict is insufficient_data."""
    if not report.not_comparable:
        return
    entries: dict[str, MetricDelta] = {}
    for name, m in report.metrics.items():
        if not m.n_paired and m.gain_verdict != "insufficient_data":
            m = m.model_copy(update={"gain_verdict": "insufficient_data"})
            for bucket in (report.improved, report.regressions, report.within_noise):
                if name in bucket:
                    bucket.remove(name)
        entries[name] = m
    report.metrics = entries
    report.target_verdict = report.metrics[report.target].gain_verdict


def _guards(report: DeltaReport, guards: list[str], a: DeltaSide, b: DeltaSide, warnings: list[str]) -> None:
    for g in guards:
        m = report.metrics[g]
        if m["gain_verdict"] in ("moved", "moved_unreplicated") and m["direction"] == "down":
            report.guards_failed.append(g)
        if g != PASS_AT_1:
            lo_hi = [side.marker_range[g] for side in (a, b) if side.n_rows and g in side.marker_range]
            values = {v for pair in lo_hi for v in pair if v is not None}
            if len(values) <= 1:
                report.degenerate_guards.append(g)
    if report.degenerate_guards:
        warnings.append(f"guard(s) {', '.join(report.degenerate_guards)} have the same value on every row of both arms, "
                        "so they cannot fail; check that the marker can come out any other way.")


def _headline(report: DeltaReport) -> None:
    if report.not_comparable:
        report.headline = f"NOT COMPARABLE ({', '.join(report.not_comparable)})"
        report.headline_verdict = "not_comparable"
        report.ok = False
        return
    v, d = report.target_verdict, report.target_direction
    if report.guards_failed or (v in ("moved", "moved_unreplicated") and d == "down"):
        report.headline, report.headline_verdict, report.ok = "FAIL", "regressed", False
    elif v == "moved_unreplicated":
        report.headline, report.headline_verdict, report.ok = UNREPLICATED_PASS, v, True
    elif v == "moved":
        report.headline, report.headline_verdict, report.ok = "PASS", v, True
    elif v == "within_eval_noise":
        report.headline, report.headline_verdict, report.ok = "NO DIFFERENCE", "within_eval_noise", True
    else:
        report.headline, report.headline_verdict, report.ok = "NO DIFFERENCE", "no_change_detected", True


def config_warnings(report: DeltaReport, warnings: list[str]) -> None:
    ca, cb = report.config.get("before", {}), report.config.get("after", {})
    for key in _CONFOUNDS:
        if key in ca and key in cb and ca[key] != cb[key]:
            warnings.append(f"{key} differs between the arms ({ca[key]!r} before, {cb[key]!r} after): the delta mixes the "
                            "change with that.")
    same = [k for k in ("policy_version", "model_version", "system_prompt_hash") if k in ca and k in cb]
    if same and all(ca[k] == cb[k] for k in same):
        warnings.append(f"before and after carry the same {', '.join(same)}: this compares a setup to itself. Stamp the "
                        "arms distinguishably (policy_version or model_version).")


def movement_warnings(report: DeltaReport, *, target_name: str, guards: list[str], warnings: list[str]) -> None:
    """A metric that dropped but is guarded by nothing; a target that moved in one eval run a side."""
    for name in report.regressions:
        if name != target_name and name not in guards:
            m = report.metrics[name]
            warnings.append(f"{name} dropped ({fmt_signed(m['delta'])} {fmt_interval(_tuple(m['ci95']), signed=True)}); "
                            f"name it in must_not_regress= to fail on it.")
    if report.target_verdict == "moved_unreplicated" and report.headline == UNREPLICATED_PASS:
        warnings.append(f"{target_name} moved in one eval run a side, which could be noise: re-run both arms with "
                        f"simulate(agent, tasks=base, runs={EVAL_RUNS}) and compare again, or pass run_std= and run_std_runs=.")


