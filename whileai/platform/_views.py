"""What the rules return: the verdict line, the eval checks, the brief and the dashboard as data.

Plain pydantic reports (print themselves, index like a dict, dump to JSON), so the client, the
server's routes and the Runs page all show the same objects without computing anything.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from whileai.platform._models import (
    AgentInfo,
    Behavior,
    EvalCheckName,
    Experiment,
    RunRecord,
    ScoreRecord,
)
from whileai.report import Report

__all__ = [
    "AgentState", "Brief", "BriefItem", "Dashboard", "EvalCheck", "EvalHealth", "FigureRecord", "LiveRecord",
    "ConfigRow", "MetricSeries", "RunComparison", "RunMissing", "Verdict",
]

VerdictWord = Literal["beats", "trails", "no_difference", "within_noise", "no_interval", "no_comparison"]


class FigureRecord(BaseModel):
    """A stored figure."""

    name: str
    caption: str | None = None
    figure: dict[str, Any]


class LiveRecord(BaseModel):
    """A stored day of traffic."""

    day: str
    version: str
    replies: int
    flagged: int


class AgentState(BaseModel):
    """Everything the rules read about one agent: the rows behind the Runs page.

    Scores are in posting order (``seq``); runs in creation order.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: AgentInfo
    behaviors: dict[str, Behavior] = Field(default_factory=dict)
    runs: list[RunRecord] = Field(default_factory=list)
    scores: list[ScoreRecord] = Field(default_factory=list)
    experiment: Experiment | None = None
    figures: list[FigureRecord] = Field(default_factory=list)
    live: list[LiveRecord] = Field(default_factory=list)
    train: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """Per run id, its logged points (step, loss, lr and the rest), oldest first."""
    _index: Any = PrivateAttr(default=None)


class Verdict(Report):
    """Does the candidate beat the served version on one behavior, and is it real."""

    behavior: str
    word: VerdictWord = "no_comparison"
    """beats / trails (interval excludes zero and clears the noise floor), no_difference (interval
    includes zero), within_noise (inside the re-run band), no_interval, no_comparison."""
    unproven: bool = False
    """True when n < 50, the judge is unmeasured or under 0.8, or the training reward is the judge."""
    unproven_because: list[str] = Field(default_factory=list)
    """Why it is unproven, one phrase each."""
    candidate: str | None = None
    served: str | None = None
    candidate_score: float | None = None
    served_score: float | None = None
    delta: float | None = None
    """candidate - served, in points."""
    ci95: tuple[float, float] | None = None
    """delta ± sqrt(ci_candidate² + ci_served²)."""
    noise_floor: float | None = None
    replicated_on: list[str] = Field(default_factory=list)
    """Other behaviors where a different run of the candidate version also beats the served one."""
    lower_elsewhere: list[str] = Field(default_factory=list)
    """Other behaviors where the candidate's point estimate is lower (significant or not)."""
    trails_elsewhere: list[str] = Field(default_factory=list)
    """Of those, the ones where the difference interval lies below zero and clears the floor."""
    served_because: str = ""
    """``"promoted"``, or why the served version is the default it is (the first scored, frontier skipped)."""
    n: int | None = None
    """The smaller n of the two scores."""
    rests_on: str = ""
    """What the number rests on: judge agreement or graded by a program, and n."""
    line: str = ""
    """The one line a person reads."""

    def render(self) -> str:
        """The verdict line."""
        return self.line


class EvalCheck(BaseModel):
    """One of the eight checks the Evals table runs on a behavior."""

    name: EvalCheckName
    ok: bool
    value: Any = None
    """What was measured (None when nothing was)."""
    failure: str | None = None
    """What is wrong, in words (None when ok)."""
    fix: str | None = None
    """What to do about it."""
    call: str | None = None
    """The call that does it."""
    rule: str
    """The rule checked."""
    source: str
    """Where the rule comes from."""


class EvalHealth(Report):
    """One behavior's eval, checked: can its scores be believed."""

    behavior: str
    ok: bool = False
    checks: list[EvalCheck] = Field(default_factory=list)

    def failed(self) -> list[EvalCheck]:
        """The checks that failed, in table order."""
        return [c for c in self.checks if not c.ok]

    def render(self) -> str:
        """One line per check."""
        lines = [f"{self.behavior}: {'ok' if self.ok else f'{len(self.failed())} check(s) failed'}"]
        for c in self.checks:
            lines.append(f"  {'ok  ' if c.ok else 'FAIL'} {c.name:<16} {c.value!s:<12} "
                         + (f"{c.failure} Fix: {c.call}" if not c.ok else ""))
        return "\n".join(line.rstrip() for line in lines)


class BriefItem(BaseModel):
    """One thing to do (or one thing a reader cannot tell yet), with the call that does it."""

    text: str
    call: str | None = None


class Brief(Report):
    """The card at the top of the agent's page: what happened, what it means, what to do next."""

    agent: str
    happened: list[str] = Field(default_factory=list)
    """Scored runs, each behavior's newest score per version, in points."""
    means: str = ""
    """The verdict when two versions are scored; else the one fact that decides what the page can say."""
    next: list[BriefItem] = Field(default_factory=list)
    """The failed eval checks worth doing, three at most, each with the call."""
    cannot_read: list[BriefItem] = Field(default_factory=list)
    """What a person cannot read yet: unexplained iterations, tests with no rubric, scores with no rows,
    version names that carry settings."""

    def markdown(self) -> str:
        """The text a coding agent reads: the same one the page's copy-for-agent button copies."""
        out = [f"# {self.agent}", "", "## What happened"]
        out += [f"- {h}" for h in self.happened] or ["- nothing scored yet"]
        out += ["", "## What it means", self.means or "-", "", "## What to do next"]
        out += [f"{i}. {item.text}" + (f" `{item.call}`" if item.call else "") for i, item in enumerate(self.next, 1)] \
            or ["- nothing: every eval check passes"]
        if self.cannot_read:
            out += ["", "## What a person cannot read yet"]
            out += [f"- {item.text}" + (f" `{item.call}`" if item.call else "") for item in self.cannot_read]
        return "\n".join(out) + "\n"

    def render(self) -> str:
        """The markdown, as printed by ``run.finish()``."""
        return self.markdown().rstrip()


class RunMissing(BaseModel):
    """What one run is missing and the ``PATCH /runs/{id}`` body that fills it."""

    run_id: str
    version: str | None = None
    missing: list[str] = Field(default_factory=list)
    """Of record, score, hours + cost."""
    patch: dict[str, Any] = Field(default_factory=dict)
    """A PATCH body with placeholders to replace (a score is posted, not patched: see ``call``)."""
    call: str | None = None


class Dashboard(Report):
    """The agent's Runs page as data: versions, train curve, deltas, live traffic, verdicts, gaps."""

    agent: AgentInfo
    experiment: Experiment | None = None
    behaviors: list[Behavior] = Field(default_factory=list)
    runs: list[RunRecord] = Field(default_factory=list)
    versions: list[ScoreRecord] = Field(default_factory=list)
    """Every version's newest score per behavior, in posting order."""
    train: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """Per run id, its training curve."""
    deltas: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per run id, the headline of its delta report and its holdout block."""
    live: list[LiveRecord] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    """One per scored behavior."""
    evals: list[EvalHealth] = Field(default_factory=list)
    missing: list[RunMissing] = Field(default_factory=list)
    figures: list[FigureRecord] = Field(default_factory=list)
    brief: Brief | None = None
    served_because: str = ""
    """``"promoted"``, or why the served version is the default it is (the first scored, frontier skipped)."""

    def render(self) -> str:
        """A text summary: the verdict lines and the gaps."""
        lines = [f"{self.agent.name}: {len(self.runs)} run(s), {len(self.behaviors)} behavior(s)"]
        lines += [f"  {v.line}" for v in self.verdicts]
        lines += [f"  run {m.run_id} is missing {', '.join(m.missing)}" for m in self.missing if m.missing]
        return "\n".join(lines)


class TaskChange(BaseModel):
    """One task of a version-against-version diff: each side's pass rate over its rows, and a row each."""

    task: str
    """The task key the rows paired on (the row's ``task``, else its prompt)."""
    a_rate: float
    b_rate: float
    a_n: int
    b_n: int
    prompt: str = ""
    a_reply: str = ""
    b_reply: str = ""
    a_why: str | None = None
    b_why: str | None = None


class VersionDiff(Report):
    """Two versions scored on one behavior, task by task: improved, regressed, same, and the paired delta."""

    behavior: str
    a: str
    """The version compared from (the served one, say)."""
    b: str
    """The version compared to."""
    n_paired: int = 0
    """Tasks both versions' rows hold."""
    only_a: int = 0
    only_b: int = 0
    delta: float | None = None
    """b - a over the paired tasks, in points (``compare_runs`` on pass@1 x 100)."""
    ci95: tuple[float, float] | None = None
    """Its 95% interval, in points (``compare_runs``'s interval)."""
    p_value: float | None = None
    verdict: str | None = None
    """``compare_runs``' verdict word."""
    note: str = ""
    improved: list[TaskChange] = Field(default_factory=list)
    regressed: list[TaskChange] = Field(default_factory=list)
    same: list[TaskChange] = Field(default_factory=list)
    line: str = ""

    def __str__(self) -> str:
        return self.line


class MetricSeries(BaseModel):
    """One run's logged values of one metric, in logging order, thinned to at most the cap."""

    run_id: str
    label: str
    """What the legend says: the run's version (else its name, else its id)."""
    metric: str
    steps: list[int | None] = Field(default_factory=list)
    values: list[float | None] = Field(default_factory=list)
    n: int = 0
    """Points the run logged with this metric, before thinning."""


class ConfigRow(BaseModel):
    """One line of the config table: a field (``record.optimizer.learning_rate``), each run's value."""

    key: str
    values: list[str | None] = Field(default_factory=list)
    """One per compared run, in the runs' order, as short JSON text; None where the run has none."""
    differs: bool = False
    """True when the runs do not all hold the same value."""


class RunComparison(Report):
    """Runs side by side: every metric they logged (one series per run) and their configs, field by field."""

    runs: list[RunRecord] = Field(default_factory=list)
    """The compared runs, in the order asked."""
    metrics: list[str] = Field(default_factory=list)
    """Every numeric metric any of them logged: loss, lr and the rewards first, then by name."""
    series: list[MetricSeries] = Field(default_factory=list)
    """Per metric (in ``metrics`` order), one series per run that logged it."""
    config: list[ConfigRow] = Field(default_factory=list)
    """The run fields, then ``record.*`` and ``summary.*`` flattened, fields that differ marked."""

    def render(self) -> str:
        """One line per run and the fields that differ."""
        lines = [f"{len(self.runs)} run(s): {', '.join(r.version or r.id for r in self.runs)}; "
                 f"metrics: {', '.join(self.metrics) or 'none logged'}"]
        lines += [f"  {c.key}: {' | '.join(v if v is not None else '-' for v in c.values)}"
                  for c in self.config if c.differs]
        return "\n".join(lines)
