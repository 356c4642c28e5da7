"""Sweep the harness: every ``prompt@model`` variant on the same frozen asks, one run per fingerprint.

For an agent on a frontier model the harness (prompt, tools, model) is the experiment. Each variant
re-runs the frozen asks (``simulate(tasks=...)``), is graded by the same judge, and is posted as
one run whose version is its label and whose record pins its fingerprint; the noise floor comes
from scoring the first variant several times (docs/platform.md, "Sweep the harness").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl
from pydantic import BaseModel, Field

from whileai.defaults import PASS_THRESHOLD, SIM_CONCURRENCY, SWEEP_LABEL_MAX, VERDICT_MIN_N
from whileai.errors import ArgumentError
from whileai.platform._models import Behavior, Example, Harness, check_behavior_name
from whileai.report import Report

__all__ = ["HarnessSweep", "SweepArm", "SweepReport"]

_LABEL = re.compile(r"^[^@\s]+@[^@\s]+$")


class SweepArm(BaseModel):
    """One variant's result."""

    label: str
    version: str
    """The harness fingerprint."""
    run_id: str | None = None
    """The posted run (None when the arm was refused)."""
    asks: int = 0
    graded_rows: int = 0
    value: float | None = None
    """pass@1 in points."""
    ci: float | None = None
    refused: str | None = None
    """Why the arm was not posted."""


class SweepReport(Report):
    """Every arm's asks, graded rows and score, the noise floor, and what qualifies them."""

    behavior: str
    arms: list[SweepArm] = Field(default_factory=list)
    noise_floor: float | None = None
    """Points, from the first variant's re-scorings."""
    noise_runs: int = 0
    notes: list[str] = Field(default_factory=list)

    def render(self) -> str:
        """One line per arm, then the floor and the notes."""
        lines = [f"harness sweep on {self.behavior}: {len(self.arms)} variant(s)"]
        for a in self.arms:
            score = "refused: " + a.refused if a.refused else f"{a.value:.1f} (±{a.ci:.1f}) points"
            lines.append(f"  {a.label:<32} {a.version}  {a.asks} asks, {a.graded_rows} graded rows  {score}")
        if self.noise_floor is not None:
            lines.append(f"noise floor {self.noise_floor:.1f} points from {self.noise_runs} scorings of the first variant")
        lines += [f"note: {n}" for n in self.notes] + [f"! {w}" for w in self.warnings]
        return "\n".join(lines)


def _per_ask(df: pl.DataFrame) -> dict[str, int]:
    graded = df.filter(pl.col("reward").is_not_null()) if "reward" in df.columns else df.clear()
    counts = graded.group_by("task_key").len()
    return dict(zip(counts["task_key"].to_list(), counts["len"].to_list()))


class HarnessSweep:
    """Score every harness variant on the same frozen asks and post one run per fingerprint.

    Args:
        variants: Harnesses labeled ``prompt@model``; labels and fingerprints must be unique.
        tasks: The frozen asks: a run, its rows, or its JSONL path (``simulate(tasks=...)``).
        behavior: The behavior the score is posted on.
        judge: The grader: a callable row -> ``{"reward": ..., "markers": {...}}`` (``run_judge``).
        agent: ``agent(harness)`` returns what ``simulate`` runs for that variant; default the
            harness's ``model`` named as a string.
        tools: The tool functions the agent may call (the same for every variant).
        noise_runs: Scorings of the first variant in all, for the floor (two give df=1, t 12.7).
        concurrency: Parallel rollouts per variant.
    """

    def __init__(self, variants: Sequence[Harness], *, tasks: Any, behavior: str | Behavior,
                 judge: Callable[[Any], Any], agent: Callable[[Harness], Any] | None = None,
                 tools: Sequence[Any] | None = None, noise_runs: int = 2, concurrency: int = SIM_CONCURRENCY) -> None:
        self.variants = list(variants)
        self.tasks = tasks
        self.behavior = behavior
        self.judge = judge
        self.agent = agent
        self.tools = list(tools or [])
        self.noise_runs = noise_runs
        self.concurrency = concurrency

    def _check(self) -> str:
        name = self.behavior.name if isinstance(self.behavior, Behavior) else check_behavior_name(self.behavior)
        if not self.variants or not all(isinstance(v, Harness) for v in self.variants):
            raise ArgumentError("variants must be one or more Harness(label='prompt@model', ...), got "
                                f"{[type(v).__name__ for v in self.variants]!r}. Pass [Harness(...), ...].")
        labels = [str(v.label) for v in self.variants]
        for v, label in zip(self.variants, labels):
            if v.label is None or len(label) > SWEEP_LABEL_MAX or not _LABEL.match(label):
                raise ArgumentError(f"variant label must be prompt@model in at most {SWEEP_LABEL_MAX} chars, got "
                                    f"{v.label!r}. Name it like 'short-prompt@gpt-4.1'.", argument="variants")
        repeated = sorted({x for x in labels if labels.count(x) > 1})
        if repeated:
            raise ArgumentError(f"variant labels must be unique, got {repeated[0]!r} more than once. Rename one.",
                                argument="variants")
        versions = [v.version for v in self.variants]
        same = sorted({x for x in versions if versions.count(x) > 1})
        if same:
            twins = [v.label for v in self.variants if v.version == same[0]]
            raise ArgumentError(f"variants must differ in instructions, tools or model, got {twins!r} with one "
                                f"fingerprint {same[0]}. Drop one: they are the same harness.", argument="variants")
        if isinstance(self.noise_runs, bool) or not isinstance(self.noise_runs, int) or self.noise_runs < 2:
            raise ArgumentError(f"noise_runs must be an integer >= 2, got {self.noise_runs!r}. Pass noise_runs=3.")
        return name

    def _rollouts(self, harness: Harness, runs: int) -> pl.DataFrame:
        from whileai.grade import run_judge
        from whileai.simulation import simulate

        agent = self.agent(harness) if self.agent is not None else harness.model
        sim = simulate(agent, tools=self.tools or None, system_prompt=harness.instructions, tasks=self.tasks,
                       runs=runs, concurrency=self.concurrency, progress=False)
        return run_judge(sim.df, self.judge, trust="off").df

    def run(self, tracked: Any) -> SweepReport:
        """Roll, grade and post every variant on ``tracked``; return the sweep's report.

        Refused before the first rollout: a long or repeated label, two variants with one
        fingerprint, a bad behavior name. Refused after grading, by name with both counts: an arm
        whose graded rows per ask differ from the first arm's (a judge error or a dropped rollout
        would put the two means on different denominators). Markers the judge sets must follow
        the behavior-name rule.
        """
        from whileai import table
        from whileai.measure import pass_at

        name = self._check()
        report = SweepReport(behavior=name, noise_runs=self.noise_runs)
        first_counts: dict[str, int] | None = None
        reruns: list[pl.DataFrame] = []
        for i, harness in enumerate(self.variants):
            df = self._rollouts(harness, self.noise_runs if i == 0 else 1)
            for marker in table.markers_of(df) if "markers" in df.columns else []:
                check_behavior_name(marker)
            if i == 0:
                runs_col = pl.col("lineage").struct.field("eval_run")
                labels = sorted(df.select(runs_col).to_series().drop_nulls().unique().to_list())
                reruns = [df.filter(runs_col == r) for r in labels]
                df = reruns[0] if reruns else df
            counts = _per_ask(df)
            arm = SweepArm(label=str(harness.label), version=harness.version, asks=len(counts),
                           graded_rows=sum(counts.values()))
            if first_counts is None:
                first_counts = counts
            elif counts != first_counts:
                arm.refused = (f"graded rows per ask differ from the first arm: {arm.graded_rows} rows over {arm.asks} "
                               f"asks against {sum(first_counts.values())} over {len(first_counts)}; re-grade the "
                               "failed rows or re-run the dropped rollouts")
                report.warnings.append(f"{arm.label}: {arm.refused}.")
                report.arms.append(arm)
                continue
            pa = pass_at(df)
            ci = None if pa.ci95 is None else (pa.ci95[1] - pa.ci95[0]) / 2.0
            rows = [Example(prompt=str(r["prompt"] or ""), reply=str(r["final_text"] or ""), ok=float(r["reward"]) >= PASS_THRESHOLD)
                    for r in df.filter(pl.col("reward").is_not_null()).select("prompt", "final_text", "reward")
                    .iter_rows(named=True)]
            run = tracked.run(arm.label, harness=harness)
            behavior = self.behavior if isinstance(self.behavior, Behavior) else name
            run.score(behavior, pa.pass_at_1, ci=ci, n=pa.n_tasks, fraction=True, rows=rows)
            run.finish(say=False)
            arm.run_id, arm.value, arm.ci = run.id, pa.pass_at_1 * 100.0, None if ci is None else ci * 100.0
            report.arms.append(arm)
        if len(reruns) >= 2:
            report.noise_floor = tracked.noise_floor(name, *reruns)
        if self.noise_runs == 2:
            report.notes.append("2 scorings make df=1 and a t of 12.7, so the band is wide; noise_runs=3 or more "
                                "narrows it")
        asks = report.arms[0].asks if report.arms else 0
        if asks < VERDICT_MIN_N:
            report.notes.append(f"the test has {asks} asks: the verdict reads unproven under {VERDICT_MIN_N}, "
                                "whatever the gap")
        if report.noise_floor is not None and not math.isfinite(report.noise_floor):
            report.noise_floor = None
        return report
