"""The report of a simulate run: why it stopped, what it ran, lost, met and sent.

After the rollouts, :func:`_after_run` decides why the run stopped and which warnings its losses
call for; :func:`_report` builds the :class:`SimulationReport` from the counts read off the rows
and the plan; the helpers add the simulated user's errors, dynamic sampling's counts, the seeded
agent's shortfall and the egress (per endpoint: requests, tokens, and the row fields sent).
"""

from __future__ import annotations

import os
import time
import warnings as _warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from whileai import table
from whileai.errors import WaiError
from whileai.simulation._dynamic import _unjudged_warning
from whileai.simulation._endpoint import Endpoint
from whileai.simulation._frames import _by_count
from whileai.simulation._job import _Landed
from whileai.simulation._plan import _Run
from whileai.simulation._report import (
    Egress,
    Generation,
    LostRollout,
    PairwiseCoverage,
    SimulationReport,
    TierMix,
)
from whileai.simulation._rollout import _Stats
from whileai.simulation._seeded import SeededAgent
from whileai.simulation._user_checks import stamp_user_flags, user_error_summary
from whileai.simulation._writer import HARD_TIERS, TIERS, Plan, Situation

if TYPE_CHECKING:
    from whileai.simulation import _ray


def _after_run(landed: _Landed, *, stopped: str, total: int, k: int, writer: str, n_tasks: int,
               warnings: list[str]) -> tuple[str, int]:
    """Why the run stopped, and how many rollouts it ran (the oversampled ones counted).

    The warnings its losses, unknown tools and template writer call for are appended to ``warnings``.
    """
    attempted, lost_by, lost = landed.attempted, landed.lost_by, landed.lost
    if attempted < total:
        stopped = "agent_failed"
        warnings.append(f"the agent failed on each of the first {attempted} rollouts (first: {lost[0]['error'] if lost else '?'}), "
                        "so the run stopped. Fix the agent, then run again.")
    elif lost and sum(lost_by.values()) == attempted:
        stopped = "agent_failed"
    total += landed.dynamic["rollouts_oversampled"]
    n_lost = sum(lost_by.values())
    if n_lost and stopped != "agent_failed":
        first = lost[0]
        warnings.append(f"{n_lost} of {total} rollouts never became rows ({', '.join(f'{v} {r}' for r, v in lost_by.items() if v)}; "
                        f"first: {first['error']}); their tasks have fewer than k={k} rows. See report['lost'].")
    if landed.stats.unknown_tool_calls:
        names = ", ".join(sorted(landed.stats.unknown_tools)[:5])
        warnings.append(f"the agent called {landed.stats.unknown_tool_calls} times a tool that does not exist ({names}); "
                        "the world answered with an unknown_tool error and the rows stay for the judge to see.")
    if writer == "template":
        warnings.append(f"simulator=False wrote these {n_tasks} situations from templates that know only your tool "
                        "names and system prompt, not your domain; read the scores as a check of the loop, or pass "
                        "simulator=wai.Endpoint(...) for a model-written set.")
    return stopped, total


def _report(rows_seen: dict[str, Any], *, plan: Plan | None, task_list: list[Situation], k: int, runs: int, asked: int,
            mode: str, repeat_policy: str, seed: int, run_id: str, stopped: str, writer: str, agent: str, total: int,
            lost_by: dict[str, int], lost: list[dict[str, Any]], hard_share: float, fault_rate: float, stats: _Stats,
            writer_errors: int, concurrency: int, max_turns: int, warnings: list[str], started: float) -> SimulationReport:
    tiers = Counter(t.tier for t in task_list)
    counts = {tier: tiers.get(tier, 0) for tier in TIERS if tiers.get(tier)}
    for tier, n in tiers.items():
        if tier not in counts and tier is not None:
            counts[str(tier)] = n
    n_tasks = len(task_list)
    hard = sum(n for tier, n in tiers.items() if tier in HARD_TIERS)
    pairwise = PairwiseCoverage()
    if plan is not None:
        pairwise = PairwiseCoverage(
            pairs_planned=plan.pairs_planned, pairs_covered=plan.pairs_covered,
            fraction=round(plan.pairs_covered / plan.pairs_planned, 4) if plan.pairs_planned else None)
    fault_kinds, seeded_by = _by_count(rows_seen["fault_kinds"]), _by_count(rows_seen["seeded_by"])
    injection_goals = _by_count(rows_seen.get("injection_goals") or {})
    faults_met, seeded_rows, truncated = rows_seen["faults_met"], rows_seen["seeded_rows"], rows_seen["truncated"]
    rows = rows_seen["rows"]
    n_lost = sum(lost_by.values())
    return SimulationReport(
        rows=rows, tasks=n_tasks, k=k, runs=runs, budget=asked, budget_per_run=n_tasks * k, mode=mode,
        repeat_policy=repeat_policy, seed=seed, run_id=run_id, stopped_because=stopped, writer=writer, agent=agent,
        rollouts_requested=total, rollouts_completed=rows, rollouts_lost=n_lost, rollouts_lost_by=dict(lost_by),
        lost=[LostRollout.model_validate(x) for x in lost], clauses=plan.clauses if plan is not None else [], clause_tasks=plan.clause_tasks if plan else 0,
        pairwise=pairwise, hard_share=hard_share,
        tier_mix=TierMix(requested=hard_share, realized=round(hard / n_tasks, 4) if n_tasks else None, counts=counts),
        fault_rate=fault_rate, faults_met=faults_met, fault_kinds=fault_kinds, injection_goals=injection_goals,
        seeded_rows=seeded_rows,
        seeded_by_kind=seeded_by, truncated=truncated, unknown_tool_calls=stats.unknown_tool_calls,
        writer_errors=writer_errors, concurrency=concurrency, max_turns=max_turns,
        elapsed_s=round(time.perf_counter() - started, 3), warnings=warnings,
    )


def _add_user_summary(report: SimulationReport, df: pl.DataFrame) -> None:
    """The simulated user's errors on the report: flags raised, rows that erred, their failure share."""
    summary = user_error_summary(df)
    if summary is not None:
        report.user_flags = {k: v for k, v in summary.by_flag.items() if v}
        report.user_erred_rows = summary.erred
        report.user_failure_share = summary.failure_share_erred if summary.failures else None
        report.user_line = summary.line()


def _add_dynamic_sampling(report: SimulationReport, dynamic: dict[str, Any], *, n_asks: int) -> None:
    """Dynamic sampling's counts on the report, and the warning when asks went unjudged."""
    for key in ("asks_oversampled", "asks_never_mixed", "rollouts_oversampled", "asks_unjudged"):
        setattr(report, key, dynamic[key])
    if dynamic["asks_unjudged"]:
        report.warnings.append(_unjudged_warning(dynamic, n_asks))


def _seeded_shortfall(agent: SeededAgent, report: SimulationReport, task_list: list[Situation], k: int,
                      eval_runs: list[int | None]) -> None:
    """Warn when the seeded agent's share fell short of its rate because its kinds could not happen on some tasks."""
    missed = agent.unplanted(task_list, k, eval_runs)
    if not missed:
        return
    share = report.seeded_rows / report.rows if report.rows else 0.0
    why = [text for kind, text in (("ignored_failure", "ignored_failure needs a tool call that meets a fault"),
                                   ("wrong_tool", "wrong_tool needs two tools or more")) if kind in agent.kinds]
    report.warnings.append(
        f"seeded_agent planted a misbehaviour on {report.seeded_rows} of {report.rows} rows ({share:.1%}), short of "
        f"rate {agent.rate:g}: {missed} rollouts drawn for one were on tasks where none of kinds={list(agent.kinds)!r} "
        f"can happen ({'; '.join(why)}), so they ran honest. Add a kind that always can (skipped_tool, "
        "unsupported_claim, filler, invented_argument) to keep the share at rate.")


#: Which row fields each role's requests carry (docs/simulate.md, "What stays on your machine").
_FIELDS_SENT = {
    "agent": ["system_prompt", "prompt", "messages", "tools"],
    "writer": ["system_prompt", "tools", "scenario_dimensions"],
    "user": ["prompt", "messages", "scenario_dimensions.arguments", "stance"],
}


def _egress(endpoints: list[tuple[str, Endpoint]], before: dict[int, dict[str, Any]], *, writer: str,
            workers: dict[str, dict[str, int]] | None = None) -> list[Egress]:
    """Per endpoint: its role, host, requests, tokens in and out during this run, and the fields sent.

    With the Ray engine, ``workers`` holds what the workers' copies of the agent and user
    endpoints sent (per role, added up over the parts); the driver's copies sent nothing.
    """
    out = []
    for role, ep in endpoints:
        now, then = ep.sent(), before.get(id(ep), {})
        entry = {"role": role, "host": now["host"], "base_url": now["base_url"], "model": now["model"],
                 "provider": now["provider"]}
        far = (workers or {}).get(role, {})
        for key in ("requests", "input_tokens", "output_tokens"):
            entry[key] = int(now[key]) - int(then.get(key, 0)) + int(far.get(key, 0))
        entry["fields_sent"] = list(_FIELDS_SENT[role]) if entry["requests"] else []
        if role == "writer" and writer == "pinned":
            continue
        out.append(Egress.model_validate(entry))
    return out


def _report_run(run: _Run, landed: _Landed, done: _ray.RayRun | None, egress: dict[str, dict[str, int]] | None, *,
                user_audit: Callable[[pl.DataFrame], list[list[dict[str, str]]]] | None,
                started: float) -> tuple[SimulationReport, pl.DataFrame]:
    """The report of a finished run, and its rows (audited by ``user_audit`` when a simulated user played)."""
    chosen, user = run.chosen, run.user
    stopped, total = _after_run(landed, stopped=chosen.stopped, total=run.total, k=chosen.k, writer=chosen.writer,
                                n_tasks=len(chosen.task_list), warnings=run.warnings)
    df, stats, dynamic = landed.df, landed.stats, landed.dynamic
    if user_audit is not None and user is not None and df.height:
        df = stamp_user_flags(df, user_audit(df))
    report = _report(landed.counts, plan=chosen.plan, task_list=chosen.task_list, k=chosen.k, runs=run.runs,
                     asked=chosen.asked, mode=run.mode, repeat_policy=run.repeat_policy, seed=run.seed,
                     run_id=run.run_id, stopped=stopped, writer=chosen.writer, agent=run.agent_name, total=total,
                     lost_by=landed.lost_by, lost=landed.lost, hard_share=run.hard_share, fault_rate=run.fault_rate,
                     stats=stats, writer_errors=chosen.writer_errors, concurrency=run.concurrency,
                     max_turns=run.max_turns, warnings=run.warnings, started=started)
    report.generation = Generation(**run.generation)
    report.user_simulator = user.name if user is not None else None
    report.user_turns = stats.user_turns
    if done is None:  # over Ray the rows are in the workers' folder
        _add_user_summary(report, df)
    report.offline = run.offline
    report.egress = _egress(run.endpoints, run.sent_before, writer=chosen.writer, workers=egress)
    report.engine = run.engine
    report.num_workers = done.num_workers if done is not None else None
    _add_dynamic_sampling(report, dynamic, n_asks=len(chosen.task_list) * run.runs)
    if isinstance(run.agent, SeededAgent):
        _seeded_shortfall(run.agent, report, chosen.task_list, chosen.k, run.eval_runs)
    if dynamic["asks_never_mixed"]:
        report.warnings.append(f"dynamic sampling: {dynamic['asks_never_mixed']} asks stayed all-pass or all-fail at "
                               "the cap; select(mode='rl') drops them as unanimous.")
    return report, df


def _deliver(run: _Run, report: SimulationReport, df: pl.DataFrame, lost_df: pl.DataFrame, done: _ray.RayRun | None,
             *, output: str | os.PathLike[str] | None, started: float) -> Any:
    """What ``simulate`` returns: the Ray workers' folder, or the rows (also written to ``output`` when given).

    Called by ``simulate`` itself, so the warning of a failed write points at simulate's caller.
    """
    chosen = run.chosen
    meta = {"system_prompt": run.job.policy, "tools": run.schemas, "mode": run.mode, "repeats": chosen.k,
            "repeat_policy": run.repeat_policy, "run_id": run.run_id, "seed": run.seed, "runs": run.runs,
            "budget": chosen.asked, "writer": chosen.writer}
    if done is not None:  # engine="ray": the rows stay in the folder the workers wrote
        from whileai.table.raydata import FolderResult

        report.elapsed_s = round(time.perf_counter() - started, 3)
        return FolderResult(done.path, report, {**meta, "engine": "ray", "lost_path": done.lost_path})
    if output is not None:
        try:
            table.write(df, Path(output))
        except WaiError as exc:  # the run is not lost: the rows are returned, the failure is said
            note = f"the rows were not written to {str(output)!r} ({exc}); they are in the returned data: call .write(path)."
            report.warnings.append(note)
            _warnings.warn(note, RuntimeWarning, stacklevel=3)
    return table.StepResult(df, report, meta, lost_df)
