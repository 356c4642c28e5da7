"""The Runs page's data: pure functions from a :class:`Dashboard` (and a score's rows) to what a page shows.

Nothing here reads the store or decides anything: the verdicts, checks and brief come from the
rules (``_rules``), and these functions only pick the numbers each block of the page draws and
build its figures with :mod:`whileai.charts`, so the server's pages and ``wai report`` render the
same objects (docs/pages.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

import whileai.charts as charts
from whileai.defaults import (
    CHART_HEIGHT,
    CHART_MARGIN,
    EXPLORE_NOTE_CHARS,
    EXPLORE_SMOOTH_MAX,
    PAGE_CURVE_POINTS,
    PAGE_CURVE_RUNS,
    PAGE_VERSIONS_SHOWN,
    ROWS_PAGE_SAMPLE,
)
from whileai.errors import ArgumentError
from whileai.platform._models import (
    AgentInfo,
    Behavior,
    Example,
    Experiment,
    RunRecord,
    ScoreRecord,
)
from whileai.platform._rules import frontier_versions
from whileai.platform._views import (
    Brief,
    Dashboard,
    EvalHealth,
    LiveRecord,
    RunComparison,
    RunMissing,
    Verdict,
)

__all__ = ["Chart", "ExploreRow", "ExploreView", "RowsView", "RunsPage", "TagRow", "explore_view", "readable", "rows_view",
           "run_shown", "runs_page"]

#: The experiment block's rows, in the order the page shows them.
EXPERIMENT_FIELDS = (("Question", "question"), ("Hypothesis", "hypothesis"), ("Method", "method"),
                     ("Measure", "measure"), ("Decide", "decide"), ("Notes", "notes"))

#: The training-curve metrics drawn, in panel order (the first four the monitor logs by name).
CURVE_METRICS = ("loss", "lr", "proxy_reward", "gold_reward", "reward", "holdout_length")


class Chart(BaseModel):
    """One figure a page draws: an element id, a caption, the Plotly figure dict and its trace count."""

    id: str
    caption: str
    figure: dict[str, Any]
    traces: int


class DeltaRow(BaseModel):
    """One behavior's line of the delta table: candidate against served, the word, the floor."""

    behavior: str
    target: bool
    candidate: str | None
    served: str | None
    candidate_score: float | None
    served_score: float | None
    delta: float | None
    ci95: tuple[float, float] | None
    noise_floor: float | None
    word: str
    unproven: bool
    line: str


class JudgeRow(BaseModel):
    """One behavior's judge checks: who grades, agreement over human labels, kappa, length bias, floor."""

    behavior: str
    graded_by: str
    agreement: float | None
    human_n: int | None
    kappa: float | None
    length_bias: float | None
    noise_floor: float | None


class CostRow(BaseModel):
    """One run's costs: USD per 1,000 tasks (with its basis) and the training bill (with its basis)."""

    run_id: str
    version: str | None
    cost_per_1k: float | None
    cost_per_1k_basis: str | None
    training_usd: float | None
    training_basis: str | None
    hours: float | None


class MissingRow(BaseModel):
    """What one run is missing, with the PATCH body as pretty JSON."""

    run_id: str
    version: str | None
    missing: list[str]
    patch_json: str
    call: str | None


class RunsPage(BaseModel):
    """Every block of an agent's Runs page, in page order (docs/pages.md, "The Runs page")."""

    agent: AgentInfo
    brief: Brief
    brief_markdown: str
    experiment: list[tuple[str, str]] = Field(default_factory=list)
    """(label, markdown) for each field set, Question first."""
    verdicts: list[Verdict] = Field(default_factory=list)
    score_charts: list[Chart] = Field(default_factory=list)
    train_chart: Chart | None = None
    deltas: list[DeltaRow] = Field(default_factory=list)
    run_deltas: list[dict[str, Any]] = Field(default_factory=list)
    """Per run with a delta report or holdout block: run id, version and the dashboard's headline."""
    judge: list[JudgeRow] = Field(default_factory=list)
    evals: list[EvalHealth] = Field(default_factory=list)
    cost_chart: Chart | None = None
    costs: list[CostRow] = Field(default_factory=list)
    runs: list[RunRecord] = Field(default_factory=list)
    figures: list[Chart] = Field(default_factory=list)
    missing: list[MissingRow] = Field(default_factory=list)
    live: list[LiveRecord] = Field(default_factory=list)
    versions: list[str] = Field(default_factory=list)
    """Versions scored, oldest first: what Promote can choose."""
    frontier: str | None = None
    promote_default: str | None = None
    """What the Promote selector starts on: a candidate a proven verdict says beats the served version,
    else the served version (promoting it changes nothing), never merely the newest scored."""

    def charts(self) -> list[Chart]:
        """Every chart on the page, in page order."""
        out = [*self.score_charts]
        if self.train_chart is not None:
            out.append(self.train_chart)
        if self.cost_chart is not None:
            out.append(self.cost_chart)
        return [*out, *self.figures]


def _score_charts(dash: Dashboard, frontier: set[str]) -> list[Chart]:
    served, candidate = dash.agent.served, dash.agent.candidate
    by_behavior: dict[str, list[ScoreRecord]] = {}
    for s in dash.versions:
        by_behavior.setdefault(s.behavior, []).append(s)
    out = []
    for i, (behavior, scores) in enumerate(sorted(by_behavior.items())):
        line = next(((s.version or s.run_id, s.value) for s in reversed(scores) if (s.version or s.run_id) in frontier),
                    None)
        bars = [s for s in scores if (s.version or s.run_id) not in frontier]
        if not bars:
            continue
        keep = {s.id for s in bars[-PAGE_VERSIONS_SHOWN:]} | {s.id for s in bars if s.version in (served, candidate)}
        shown = [s for s in bars if s.id in keep]
        more = len(bars) - len(shown)
        caption = f"{behavior}: held-out score by version (95% interval)" + (
            f"; {len(shown)} of {len(bars)} versions: the newest {PAGE_VERSIONS_SHOWN}, the served one and the candidate"
            if more else "")
        fig = charts.version_scores([s.version or s.run_id for s in shown], [s.value for s in shown],
                                    [s.ci for s in shown] if any(s.ci is not None for s in shown) else None,
                                    served=served, candidate=candidate, frontier=line, title=behavior)
        out.append(Chart(id=f"score-{i}", caption=caption, figure=fig, traces=len(fig["data"])))
    return out


def _thin(steps: list[Any], values: list[Any], cap: int) -> tuple[list[Any], list[Any]]:
    if len(steps) <= cap:
        return steps, values
    idx = np.unique(np.linspace(0, len(steps) - 1, cap).round().astype(np.int64))
    return [steps[i] for i in idx], [values[i] for i in idx]


def _train_chart(dash: Dashboard) -> Chart | None:
    labels = {r.id: r.version or r.id for r in dash.runs}
    with_points = [r.id for r in dash.runs if dash.train.get(r.id)][-PAGE_CURVE_RUNS:]
    series = []
    for run_id in with_points:
        points = dash.train[run_id]
        steps = [p.get("step") for p in points]
        for metric in CURVE_METRICS:
            values = [p.get(metric) for p in points]
            if any(v is not None for v in values):
                xs, ys = _thin(steps, values, PAGE_CURVE_POINTS)
                series.append((metric, labels.get(run_id, run_id), xs, ys))
    if not series:
        return None
    fig = charts.train_curves(series, title="training curve")
    caption = "training curve from run.log points" + (
        f" (the newest {len(with_points)} runs with points)" if len(with_points) > 1 else f" ({labels[with_points[0]]})")
    return Chart(id="train", caption=caption, figure=fig, traces=len(fig["data"]))


def _targets(run: RunRecord | None) -> set[str]:
    if run is None:
        return set()
    t = (run.record or {}).get("target") or (run.delta or {}).get("target")
    return {t} if isinstance(t, str) else set(t) if isinstance(t, list) else set()


def _costs(dash: Dashboard) -> tuple[list[CostRow], Chart | None]:
    rows = []
    for r in dash.runs:
        s = r.summary or {}
        per_1k = s.get("cost_per_1k")
        if per_1k is None and r.cost_usd is None and r.hours is None:
            continue
        rows.append(CostRow(run_id=r.id, version=r.version, cost_per_1k=per_1k,
                            cost_per_1k_basis=s.get("cost_per_1k_basis") or (
                                "reported by the agent, not priced by the book" if per_1k is not None else None),
                            training_usd=r.cost_usd, training_basis=r.cost_basis, hours=r.hours))
    newest: dict[str, float] = {}
    for score in dash.versions:  # the score drawn against a version's cost: its newest, any behavior
        newest[score.version or score.run_id] = score.value
    dots = {row.version or row.run_id: row.cost_per_1k for row in rows if row.cost_per_1k is not None}
    dots = {v: c for v, c in dots.items() if v in newest}
    chart = None
    if dots:
        fig = charts.cost_scatter(list(dots), list(dots.values()), [newest[v] for v in dots], served=dash.agent.served,
                                  title="held-out score against cost")
        chart = Chart(id="cost-chart", caption="held-out score against USD per 1,000 tasks "
                                         "(reported by the agent, not priced by the book)",
                      figure=fig, traces=len(fig["data"]))
    return rows, chart


def runs_page(dash: Dashboard) -> RunsPage:
    """Every block of the Runs page from one :class:`Dashboard`, with the charts built by whileai.charts.

    Picks, never decides: verdicts, checks, the brief and what is missing are the rules' own
    objects; the charts draw each behavior's newest ``PAGE_VERSIONS_SHOWN`` versions (and always
    the served one and the candidate), the newest ``PAGE_CURVE_RUNS`` runs' curves thinned to
    ``PAGE_CURVE_POINTS`` points each. A run with ``record={"frontier": True}`` is the frontier
    model: its score is the line to beat, not a bar.

    Args:
        dash: ``tracked.dashboard()`` (or ``Service.dashboard``).

    Returns:
        A :class:`RunsPage`.
    """
    brief = dash.brief or Brief(agent=dash.agent.name)
    frontier = frontier_versions(dash.runs)
    exp: Experiment | None = dash.experiment
    experiment = [(label, getattr(exp, field)) for label, field in EXPERIMENT_FIELDS
                  if exp is not None and getattr(exp, field)]
    specs = {b.name: b for b in dash.behaviors}
    newest_run: dict[str, RunRecord] = {}
    for r in dash.runs:
        newest_run[r.version or r.id] = r
    deltas = []
    for v in dash.verdicts:
        cand = newest_run.get(v.candidate) if v.candidate else None
        deltas.append(DeltaRow(behavior=v.behavior, target=v.behavior in _targets(cand), candidate=v.candidate,
                               served=v.served, candidate_score=v.candidate_score, served_score=v.served_score,
                               delta=v.delta, ci95=v.ci95, noise_floor=v.noise_floor, word=v.word,
                               unproven=v.unproven, line=v.line))
    versions = list(dict.fromkeys(s.version or s.run_id for s in dash.versions))
    costs, cost_chart = _costs(dash)
    return RunsPage(
        agent=dash.agent, brief=brief, brief_markdown=brief.markdown(), experiment=experiment,
        verdicts=dash.verdicts, score_charts=_score_charts(dash, frontier), train_chart=_train_chart(dash),
        deltas=deltas,
        run_deltas=[{"run_id": rid, "version": next((r.version for r in dash.runs if r.id == rid), None), **d}
                    for rid, d in dash.deltas.items()],
        judge=[JudgeRow(behavior=b.name, graded_by=b.graded_by, agreement=b.agreement, human_n=b.human_n,
                        kappa=b.kappa, length_bias=b.length_bias, noise_floor=b.noise_floor)
               for b in (specs[name] for name in sorted(specs))],
        evals=dash.evals, cost_chart=cost_chart, costs=costs, runs=dash.runs,
        figures=[Chart(id=f"fig-{i}", caption=f.caption or f.name, figure=readable(f.figure),
                       traces=len(f.figure.get("data", []))) for i, f in enumerate(dash.figures)],
        missing=[_missing_row(m) for m in dash.missing if m.missing],
        live=dash.live, versions=[v for v in versions if v not in frontier], frontier=min(frontier) if frontier else None,
        promote_default=_promote_default(dash, frontier),
    )


def readable(figure: dict[str, Any]) -> dict[str, Any]:
    """A posted figure at a readable size: ``CHART_HEIGHT`` and whileai's margins where it sets none.

    A figure posted without a height took its container's 200 px, and Plotly's default margins
    (100 px top, 80 px bottom) left a 20 px strip to draw in. Heights and margins the figure sets
    are kept; the width follows the page.

    Examples:
        >>> readable({"data": [], "layout": {}})["layout"]["height"]
        380
        >>> readable({"data": [], "layout": {"height": 500, "margin": {"t": 10}}})["layout"]["margin"]
        {'t': 10}
    """
    layout = dict(figure.get("layout") or {})
    layout.setdefault("height", CHART_HEIGHT)
    layout.setdefault("margin", dict(CHART_MARGIN))
    return {**figure, "layout": layout}


def _promote_default(dash: Dashboard, frontier: set[str]) -> str | None:
    """A candidate that a proven verdict says beats the served version (then any that beats), else the served one."""
    beats = [v for v in dash.verdicts if v.word == "beats" and v.candidate and v.candidate not in frontier]
    for verdict in sorted(beats, key=lambda v: v.unproven):
        return verdict.candidate
    return dash.agent.served


def _missing_row(m: RunMissing) -> MissingRow:
    return MissingRow(run_id=m.run_id, version=m.version, missing=m.missing,
                      patch_json=json.dumps(m.patch, indent=2) if m.patch else "", call=m.call)


# --- the rows page --------------------------------------------------------------------------------


class TagRow(BaseModel):
    """The score within one tag value: rows, passes, the pass rate and its 95% Wilson interval."""

    tag: str
    value: str
    n: int
    passed: int
    rate: float
    ci95: tuple[float, float]


class RowsView(BaseModel):
    """A score's graded rows as the rows page shows them: counts, the score by each tag, the rows shown."""

    run_id: str
    behavior: Behavior
    score: ScoreRecord
    show: Literal["all", "passed", "failed"]
    n: int
    passed: int
    failed: int
    by_tag: list[TagRow] = Field(default_factory=list)
    rows: list[Example] = Field(default_factory=list)
    """The rows the filter keeps."""
    sample: list[Example] = Field(default_factory=list)
    """The score card's sample: the posted examples, else the first 14 failures and 6 passes."""


def rows_view(run_id: str, behavior: Behavior, score: ScoreRecord, rows: Sequence[Example], *,
              show: str = "all") -> RowsView:
    """The rows page's data: passed and failed counts, the pass rate within each tag value, the filter.

    The pass rate within a tag value carries its 95% Wilson interval (Wilson 1927), so a tag with
    six rows reads as the guess it is.

    Args:
        run_id: The run.
        behavior: The behavior's definition (rubric, judge, test set).
        score: The score the rows are behind.
        rows: Its graded rows, in posting order.
        show: ``all``, ``passed`` or ``failed``.

    Raises:
        ArgumentError: ``show`` is none of those.
    """
    from whileai.platform._rules import sample_of
    from whileai.stats.wilson import wilson

    if show not in ("all", "passed", "failed"):
        raise ArgumentError(f"show must be one of 'all', 'passed', 'failed', got {show!r}. Use ?show=failed.",
                            argument="show", value=show)
    ok = np.fromiter((bool(r.ok) for r in rows), dtype=bool, count=len(rows))
    counts: dict[tuple[str, str], list[int]] = {}
    for r, good in zip(rows, ok):
        for key, value in (r.tags or {}).items():
            c = counts.setdefault((key, value), [0, 0])
            c[0] += 1
            c[1] += int(good)
    by_tag = []
    if counts:
        keys = sorted(counts)
        n_arr = np.array([counts[k][0] for k in keys])
        p_arr = np.array([counts[k][1] for k in keys])
        lo, hi = wilson(p_arr, n_arr)
        by_tag = [TagRow(tag=k[0], value=k[1], n=int(n), passed=int(p), rate=float(p / n), ci95=(float(a), float(b)))
                  for k, n, p, a, b in zip(keys, n_arr, p_arr, lo, hi)]
    kept = [r for r, good in zip(rows, ok) if show == "all" or good == (show == "passed")]
    return RowsView(run_id=run_id, behavior=behavior, score=score, show=show,  # type: ignore[arg-type]
                    n=len(rows), passed=int(ok.sum()), failed=int((~ok).sum()), by_tag=by_tag, rows=kept,
                    sample=list(score.examples) or sample_of(rows)[:ROWS_PAGE_SAMPLE])


# --- the run explorer ---------------------------------------------------------------------------------


class ExploreRow(BaseModel):
    """One run of the explorer's table: the record, what the search reads, and whether it shows."""

    run: RunRecord
    text: str
    """What the search box matches (lower case): id, agent, version, name, status, model, dataset, note."""
    picked: bool = False
    hidden: bool = False


class ExploreView(BaseModel):
    """The run explorer (``GET /runs`` in a browser): the filtered run table and the picked runs compared."""

    rows: list[ExploreRow] = Field(default_factory=list)
    agents: list[str] = Field(default_factory=list)
    versions: list[str] = Field(default_factory=list)
    states: list[str] = Field(default_factory=list)
    q: str = ""
    agent: str = ""
    version: str = ""
    state: str = ""
    archived: bool = False
    """Archived runs listed too (they are hidden unless asked)."""
    picked: list[str] = Field(default_factory=list)
    comparison: RunComparison | None = None
    metric: str | None = None
    """The metric the overlay draws first."""
    smooth: float = 0.0
    step_from: int | None = None
    step_to: int | None = None

    @property
    def shown(self) -> int:
        """Rows the filters keep."""
        return sum(not r.hidden for r in self.rows)

    @property
    def archived_n(self) -> int:
        """Archived runs in the table (shown or not)."""
        return sum(r.run.archived for r in self.rows)


def _search_text(run: RunRecord) -> str:
    parts = (run.id, run.agent, run.version, run.name, run.status, run.base_model, run.dataset_id,
             (run.notes or "")[:EXPLORE_NOTE_CHARS])
    return " ".join(p for p in parts if p).lower()


def run_shown(row: ExploreRow, *, q: str = "", agent: str = "", version: str = "", state: str = "",
              archived: bool = False) -> bool:
    """Whether the explorer shows a run: picked, or not archived (unless asked) and matching every filter.

    The page's script applies the same rule as the filters change (``page.js``, ``filterRuns``):
    ``q`` is a case-insensitive substring of the run's text; agent, version and state match exactly;
    an empty filter matches everything.
    """
    if row.picked:
        return True
    run = row.run
    return ((archived or not run.archived) and (not q or q.lower() in row.text) and (not agent or run.agent == agent)
            and (not version or run.version == version) and (not state or run.status == state))


def explore_view(runs: Sequence[RunRecord], *, q: str = "", agent: str = "", version: str = "", state: str = "",
                 archived: bool = False, picked: Sequence[str] = (), comparison: RunComparison | None = None,
                 metric: str | None = None, smooth: float = 0.0, step_from: int | None = None,
                 step_to: int | None = None) -> ExploreView:
    """The run explorer's data: every run with whether the filters show it, the filter choices, the comparison.

    Args:
        runs: The account's runs, archived ones included (``Service.runs(archived=True)``).
        q: Search text (case-insensitive substring of id, agent, version, name, status, model,
            dataset and the note's start).
        agent: Only this agent's runs.
        version: Only runs of this version.
        state: Only runs in this state (running, done, failed, stopped).
        archived: List archived runs too (hidden unless asked).
        picked: The runs compared, which always show.
        comparison: ``Service.compare(picked)``.
        metric: The metric the overlay starts on (default: the comparison's first).
        smooth: The overlay's smoothing weight, from 0 (none) to ``EXPLORE_SMOOTH_MAX``.
        step_from: The overlay's first step shown (zoom).
        step_to: The overlay's last step shown.

    Raises:
        ArgumentError: ``smooth`` outside 0 to ``EXPLORE_SMOOTH_MAX``, or a step range that ends
            before it starts.
    """
    if not 0.0 <= smooth <= EXPLORE_SMOOTH_MAX:
        raise ArgumentError(f"smooth must be from 0 to {EXPLORE_SMOOTH_MAX}, got {smooth!r}. Pass ?smooth=0.6, say.",
                            argument="smooth", value=smooth)
    if step_from is not None and step_to is not None and step_to < step_from:
        raise ArgumentError(f"to must be at or after from, got from={step_from} to={step_to}. Swap them.",
                            argument="to", value=step_to)
    pick = set(picked)
    rows = [ExploreRow(run=r, text=_search_text(r), picked=r.id in pick) for r in runs]
    for row in rows:
        row.hidden = not run_shown(row, q=q, agent=agent, version=version, state=state, archived=archived)
    metrics = comparison.metrics if comparison is not None else []
    return ExploreView(
        rows=rows, agents=sorted({r.agent for r in runs if r.agent}), versions=sorted({r.version for r in runs if r.version}),
        states=sorted({r.status for r in runs}), q=q, agent=agent, version=version, state=state, archived=archived,
        picked=list(dict.fromkeys(picked)), comparison=comparison,
        metric=metric if metric in metrics else (metrics[0] if metrics else None), smooth=smooth,
        step_from=step_from, step_to=step_to)
