"""``track`` an agent, open runs, log, score, finish, and read the verdict and the brief.

The same calls work against the local store (``store=PATH``, no process running) and against a
``wai server`` (``base_url=``, or the saved login); see docs/platform.md.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from whileai.defaults import (
    CI_LEVEL,
    EXAMPLES_MAX,
    LOG_BUFFER_MAX,
    LOG_FLUSH_EVERY,
    LOG_FLUSH_SECONDS,
    LOG_POINTS_PER_CALL,
    NOTE_MAX,
    ROWS_PER_CALL,
    ROWS_PER_SCORE,
)
from whileai.errors import ArgumentError, PlatformError
from whileai.platform import _rules
from whileai.platform._backend import Backend, backend_for
from whileai.platform._models import (
    AgentInfo,
    AgentSpec,
    Behavior,
    CutWarning,
    Example,
    Experiment,
    Figure,
    FinishBody,
    Harness,
    LiveDay,
    LogBody,
    Promote,
    RowsBody,
    RunPatch,
    RunRecord,
    RunSpec,
    ScoreBody,
    ScoreRecord,
    TrainPoint,
    check_behavior_name,
    non_finite,
)
from whileai.platform._routes import build
from whileai.platform._views import (
    Brief,
    Dashboard,
    EvalHealth,
    FigureRecord,
    LiveRecord,
    RunComparison,
    Verdict,
    VersionDiff,
)
from whileai.table import IntoRows

__all__ = ["Run", "Tracked", "attach_delta", "attach_holdout", "describe", "track"]

log = logging.getLogger("whileai.platform")


class FractionWarning(UserWarning):
    """A score strictly between 0 and 1 was posted as points (did you mean fraction=True?)."""


def _tool_name(tool: Any) -> str:
    if isinstance(tool, str):
        return tool
    if isinstance(tool, Mapping):
        fn = tool.get("function")
        return str((fn or {}).get("name") if isinstance(fn, Mapping) else tool.get("name"))
    for attr in ("name", "__name__"):
        value = getattr(tool, attr, None)
        if isinstance(value, str):
            return value
    fn = getattr(tool, "function", None)
    return str(getattr(fn, "__name__", type(tool).__name__))


def _model_name(model: Any) -> str | None:
    if model is None or isinstance(model, str):
        return model
    for attr in ("model_name", "name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str):
            return value
    return type(model).__name__


def describe(agent: Any, name: str | None = None) -> AgentSpec:
    """Read the name, model, instructions and tools off an agent object, a dict or a description.

    Duck-typed, with no import of any agent framework: an OpenAI Agents SDK ``Agent`` (``name``,
    ``model``, ``instructions``, ``tools``), a Pydantic AI ``Agent`` (``model``,
    ``_instructions`` / ``_system_prompts``, ``_function_toolset.tools``), a LangGraph graph built
    with ``create_react_agent`` (tools on its ``tools`` node), a dict ``{name, model, instructions,
    tools}``, or a string (the instructions, written by hand).

    Examples:
        >>> describe({"name": "refunds", "model": "gpt-4.1", "tools": [{"name": "lookup"}]}).tools
        ['lookup']
    """
    if isinstance(agent, str):
        return build(AgentSpec, name=name or "agent", instructions=agent)
    if isinstance(agent, Mapping):
        fields = {k: agent.get(k) for k in ("name", "model", "instructions") if agent.get(k) is not None}
        names = [_tool_name(t) for t in agent.get("tools") or []]
        return build(AgentSpec, **{**fields, "name": name or fields.get("name") or "agent", "tools": names})
    instructions = getattr(agent, "instructions", None)
    if not isinstance(instructions, str):
        instructions = getattr(agent, "_instructions", None)
        if isinstance(instructions, (list, tuple)):
            instructions = "\n".join(i for i in instructions if isinstance(i, str)) or None
    if not isinstance(instructions, str):
        prompts = getattr(agent, "_system_prompts", None) or getattr(agent, "system_prompt", None)
        instructions = "\n".join(prompts) if isinstance(prompts, (list, tuple)) else prompts if isinstance(prompts, str) else None
    tools: Any = getattr(agent, "tools", None)
    if tools is None:
        toolset = getattr(agent, "_function_toolset", None)
        tools = list(getattr(toolset, "tools", {}) or {}) if toolset is not None else None
    if tools is None:
        nodes = getattr(agent, "nodes", None)
        node = nodes.get("tools") if isinstance(nodes, Mapping) else None
        bound = getattr(getattr(node, "bound", None), "tools_by_name", None)
        tools = list(bound) if isinstance(bound, Mapping) else []
    if isinstance(tools, Mapping):
        tools = list(tools)
    agent_name = name or getattr(agent, "name", None)
    return build(AgentSpec, name=agent_name if isinstance(agent_name, str) and agent_name else "agent",
                 model=_model_name(getattr(agent, "model", None)),
                 instructions=instructions if isinstance(instructions, str) else None,
                 tools=[_tool_name(t) for t in tools or []])


def track(agent: Any, name: str | None = None, *, base_url: str | None = None, api_key: str | None = None,
          store: str | os.PathLike[str] | None = None, served: str | None = None, transport: Any = None) -> Tracked:
    """Track an agent: record its model, instructions and tools, and return the handle runs hang off.

    Args:
        agent: An agent object (OpenAI Agents SDK, Pydantic AI, LangGraph), a dict
            ``{name, model, instructions, tools}``, or a description written by hand.
        name: The agent's name on the platform (default: the object's ``name``).
        base_url: ``wai server``'s URL (default: the saved login, then ``WHILEAI_BASE_URL``).
        api_key: The key (default: ``WHILEAI_API_KEY``, then the saved one).
        store: Write straight into this DuckDB store instead of a server (no process running).
        served: The version in production, the one a candidate must beat (default: the first
            version scored).
        transport: An httpx transport (``httpx.ASGITransport(app=...)`` runs a server in-process).

    Returns:
        A :class:`Tracked`.

    Examples:
        >>> import tempfile, os
        >>> tracked = track({"name": "refunds", "model": "m"}, store=os.path.join(tempfile.mkdtemp(), "s.duckdb"))
        >>> run = tracked.run("v0")
        >>> run.score("refunds", 62, ci=4, n=60).value
        62.0
    """
    spec = describe(agent, name)
    if served is not None:
        spec = spec.model_copy(update={"served": served})
    backend = backend_for(base_url=base_url, api_key=api_key, store=store, transport=transport)
    return Tracked(backend, backend.call("put_agent", spec=spec))


class Tracked:
    """A tracked agent: its runs, behaviors, verdicts, brief, evals and dashboard.

    Attributes:
        name: The agent's name.
        info: What the store holds about it.
        backend: Where the records go (the store or a server).
    """

    def __init__(self, backend: Backend, info: AgentInfo) -> None:
        self.backend = backend
        self.info = info
        self.name = info.name
        self._warned_fraction = False

    def __repr__(self) -> str:
        return f"Tracked({self.name!r}, {self.backend.describe()})"

    # --- runs ---------------------------------------------------------------------------------

    def run(self, version: str, harness: Harness | None = None, *, name: str | None = None,
            dataset_id: str | None = None, base_model: str | None = None, total_steps: int | None = None,
            record: Mapping[str, Any] | None = None, id: str | None = None) -> Run:  # noqa: A002
        """Open a new run of ``version`` (what changed, as a colleague would say it).

        A harness puts its fingerprint in ``record.provenance.pins["harness"]``. To add to a run that
        exists, use :meth:`open`: a POST with an existing id is refused, never reset.
        """
        if not isinstance(version, str) or not version:
            raise ArgumentError(f"version must be a non-empty string, got {version!r}. Pass what changed, like 'sft-v1'.")
        spec = build(RunSpec, id=id, agent=self.name, version=version, name=name, dataset_id=dataset_id,
                     base_model=base_model, total_steps=total_steps, harness=harness,
                     record=dict(record) if record else None)
        return Run(self.backend, self.backend.call("create_run", spec=spec), tracked=self)

    def open(self, run_id: str) -> Run:
        """Bind to a run that exists, from any later session, with one GET (404 when unknown)."""
        return Run(self.backend, self.backend.call("run", run_id=run_id), tracked=self)

    def runs(self, *, archived: bool = False) -> list[str]:
        """The ids of the agent's runs, oldest first; archived runs only with ``archived=True``."""
        return [r.id for r in self.backend.call("runs", agent=self.name, archived=archived or None)]

    def delete_run(self, run_id: str) -> None:
        """Remove one run with its points, scores and rows."""
        self.backend.call("delete_run", run_id=run_id)

    def delete(self) -> None:
        """Remove the agent and everything under it. There is no undo."""
        self.backend.call("delete_agent", name=self.name)

    def promote(self, version: str) -> AgentInfo:
        """Make ``version`` the served one: the version every candidate is compared against.

        Recorded on that version's newest run (``summary["promoted"]``: when, by whom, from which);
        the Runs page's Promote button makes the same call.
        """
        self.info = self.backend.call("promote", agent=self.name, body=build(Promote, version=version))
        return self.info

    # --- behaviors ----------------------------------------------------------------------------

    def define(self, behavior: Behavior) -> Behavior:
        """Create or update a behavior's definition (rubric, grader, test version, floor, judge).

        Fields this ``Behavior`` does not set keep their stored values, so a noise floor measured
        by :meth:`noise_floor` survives a later ``define(Behavior(name, rubric=...))``; pass a
        field explicitly (``noise_floor=None``) to clear it.
        """
        if not isinstance(behavior, Behavior):
            raise ArgumentError(f"behavior must be a Behavior(...), got {type(behavior).__name__}. "
                                "Pass Behavior('refunds', rubric=...).")
        stored = self.behaviors().get(behavior.name)
        if stored is not None:  # what this Behavior does not set (a floor measured earlier) is kept
            behavior = stored.model_copy(update={k: getattr(behavior, k) for k in behavior.model_fields_set})
        return self.backend.call("put_behavior", agent=self.name, behavior=behavior)

    def behaviors(self) -> dict[str, Behavior]:
        """The agent's behaviors by name."""
        return self.backend.call("behaviors", agent=self.name)

    def noise_floor(self, behavior: str, *reruns: Any, level: float = CI_LEVEL) -> float:
        """Measure a behavior's re-run band from two or more re-runs of the same eval, and post it.

        ``eval_variance(*reruns).run_std``, then t(df = runs - 1) x run_std x sqrt(2), in points
        (Lambert 2025, chapter Evaluation): how far two single runs of the same model land apart.

        Returns:
            The floor in points, now on the behavior.
        """
        from whileai.measure import eval_variance

        check_behavior_name(behavior)
        if len(reruns) < 2:
            raise ArgumentError(f"noise_floor needs the rows of two or more re-runs, got {len(reruns)}. "
                                f"Pass tracked.noise_floor({behavior!r}, run_a, run_b, run_c).")
        report = eval_variance(*reruns, level=level)
        floor = _rules.noise_floor_points(report.run_std, report.n_runs, level=level)
        spec = self.behaviors().get(behavior) or Behavior(name=behavior)
        self.define(spec.model_copy(update={"noise_floor": floor}))
        return floor

    # --- the page -----------------------------------------------------------------------------

    def verdict(self, behavior: str, version: str | None = None) -> Verdict:
        """Does the candidate beat the served version on ``behavior``, and is it real (one line)."""
        check_behavior_name(behavior)
        return self.backend.call("verdict", agent=self.name, behavior=behavior, version=version)

    def brief(self) -> Brief:
        """What happened, what it means, what to do next; ``brief.markdown()`` is the agent's text."""
        return self.backend.call("brief", agent=self.name)

    def evals(self) -> list[EvalHealth]:
        """One EvalHealth per behavior with the eight checks."""
        return self.backend.call("evals", agent=self.name)

    def dashboard(self) -> Dashboard:
        """The Runs page as data."""
        return self.backend.call("dashboard", agent=self.name)

    def diff(self, behavior: str, a: str, b: str) -> VersionDiff:
        """Version ``b`` against version ``a`` on one behavior, task by task (paired by task, not row position).

        The tasks that improved, regressed and stayed, with the paired delta over the shared tasks
        and its 95% interval in points (``compare_runs`` on the graded rows behind each version's
        newest score; ``_rules.diff_of``). Rows pair on ``Example(task=...)``, else on the prompt.
        """
        return self.backend.call("diff", agent=self.name, behavior=check_behavior_name(behavior), a=a, b=b)

    def compare(self, runs: Sequence[str | Run], *, metric: str | None = None) -> RunComparison:
        """Runs side by side: every metric they logged (one series per run) and their configs, field by field.

        The same object ``GET /compare`` answers and the run explorer page draws
        (``_compare.compare_of``): each series thinned to ``PAGE_CURVE_POINTS``, the fields that
        differ marked. Up to ``COMPARE_RUNS_MAX`` runs, archived ones included when named.

        Args:
            runs: Run ids or :class:`Run` handles (of any of the account's agents).
            metric: Keep only this metric's series.
        """
        ids = [r.id if isinstance(r, Run) else str(r) for r in runs]
        return self.backend.call("compare", runs=",".join(ids), **({"metric": metric} if metric else {}))

    def experiment(self, question: str, *, hypothesis: str | None = None, method: str | None = None,
                   measure: str | None = None, decide: str | None = None, notes: str | None = None) -> Experiment:
        """Say what the runs are for (one block per agent; a second call replaces it)."""
        body = build(Experiment, question=question, hypothesis=hypothesis, method=method, measure=measure,
                     decide=decide, notes=notes)
        return self.backend.call("set_experiment", agent=self.name, experiment=body)

    def figure(self, name: str, fig: Any, *, caption: str | None = None) -> FigureRecord:
        """Post a Plotly figure as JSON: ``fig.to_plotly_json()`` or a dict with data and layout."""
        data = fig.to_plotly_json() if hasattr(fig, "to_plotly_json") else fig
        if not isinstance(data, Mapping):
            raise ArgumentError(f"fig must be a Plotly figure or a dict with data and layout, got {type(fig).__name__}. "
                                "Pass fig or fig.to_plotly_json().")
        body = build(Figure, name=name, caption=caption, figure=dict(data))
        return self.backend.call("put_figure", agent=self.name, figure=body)

    def live(self, day: str, *, version: str | None = None, replies: int, flagged: int = 0) -> LiveRecord:
        """Report a day of traffic on a version you serve yourself."""
        return self.backend.call("post_live", agent=self.name,
                                 day=build(LiveDay, day=day, version=version, replies=replies, flagged=flagged))


class Run:
    """One tracked run: log points, score behaviors, note, finish; ``id`` is its row.

    Attributes:
        id: The run id.
        version: What changed.
        record: The run as last read or written.
        notes: The markdown note, when one was posted.
    """

    def __init__(self, backend: Backend, record: RunRecord, *, tracked: Tracked | None = None) -> None:
        self.backend = backend
        self.record = record
        self.id = record.id
        self.version = record.version
        self.notes = record.notes
        self.holdout_summary: dict[str, Any] | None = record.summary.get("holdout")
        self._tracked = tracked
        self._buffer: list[TrainPoint] = []
        self._pending: list[tuple[str, list[TrainPoint]]] = []
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()
        self._next_step = (record.last_step + 1) if record.last_step is not None else 0
        self._scored = False
        self._warned_send = False
        self._warned_non_finite = False

    def __repr__(self) -> str:
        return f"Run({self.id!r}, version={self.version!r}, status={self.record.status!r})"

    # --- training -----------------------------------------------------------------------------

    def log(self, step: int | None = None, loss: float | None = None, lr: float | None = None, **metrics: Any) -> None:
        """Buffer one training point; sent in batches (at most 500 a call). Never raises into the loop.

        A send that fails keeps its points (and its batch id, so the server stores them once) and
        is retried on the next flush.
        """
        try:
            point = TrainPoint(step=self._next_step if step is None else step, loss=loss, lr=lr, **metrics)
        except Exception as exc:  # never into the training loop
            warnings.warn(f"run.log dropped a point it cannot send ({exc}).", RuntimeWarning, stacklevel=2)
            return
        nulled = non_finite({"loss": loss, "lr": lr, **metrics})
        if nulled and not self._warned_non_finite:
            warnings.warn(f"run.log stores {', '.join(nulled)} = NaN or inf at step {point.step} as null (JSON has "
                          "no such numbers); the point and the ones after it are kept.", RuntimeWarning, stacklevel=2)
            self._warned_non_finite = True
        self._next_step = point.step + 1
        with self._lock:
            self._buffer.append(point)
            overflow = len(self._buffer) + sum(len(p) for _, p in self._pending) - LOG_BUFFER_MAX
            if overflow > 0:
                del self._buffer[:overflow]
            due = len(self._buffer) >= LOG_FLUSH_EVERY or time.monotonic() - self._last_flush >= LOG_FLUSH_SECONDS
        if due:
            self.flush()

    def flush(self) -> bool:
        """Send every buffered point now; False (and the points kept) when a send failed."""
        with self._lock:
            while self._buffer:
                chunk, self._buffer = self._buffer[:LOG_POINTS_PER_CALL], self._buffer[LOG_POINTS_PER_CALL:]
                self._pending.append((uuid.uuid4().hex, chunk))
            self._last_flush = time.monotonic()
            while self._pending:
                batch_id, points = self._pending[0]
                try:
                    self.backend.call("log", run_id=self.id, body=LogBody(points=points, batch_id=batch_id))
                except Exception as exc:  # kept for the next flush; the loop goes on
                    if not self._warned_send:
                        warnings.warn(f"run.log could not send {sum(len(p) for _, p in self._pending)} point(s) "
                                      f"({exc}); they are kept and sent on the next flush.", RuntimeWarning, stacklevel=3)
                        self._warned_send = True
                    return False
                self._pending.pop(0)
        return True

    def points(self) -> list[dict[str, Any]]:
        """The points stored for this run (after a flush), in logging order."""
        self.flush()
        return self.backend.call("points", run_id=self.id)

    def finish(self, status: str = "done", *, record: Mapping[str, Any] | None = None, hours: float | None = None,
               cost_usd: float | None = None, summary: Mapping[str, Any] | None = None, adapter: str | None = None,
               gpu: str | None = None, seconds: float | None = None, say: bool = True) -> RunRecord:
        """Close the run; print the brief when the run has posted a score (``say=False`` keeps quiet).

        ``gpu`` and ``seconds`` price the run from ``GPU_USD_PER_HOUR`` when ``cost_usd`` is not
        given: seconds / 3600 x rate, to the cent, with a ``cost_basis`` sentence.
        """
        body = build(FinishBody, status=status, record=dict(record) if record else None, hours=hours,
                     cost_usd=cost_usd, summary=dict(summary) if summary else None, adapter=adapter, gpu=gpu,
                     seconds=seconds)
        if not self.flush():
            warnings.warn(f"run {self.id} finished with {sum(len(p) for _, p in self._pending)} point(s) unsent; "
                          "call run.flush() once the server is back.", RuntimeWarning, stacklevel=2)
        self.record = self.backend.call("finish", run_id=self.id, body=body)
        if say and self.record.agent and (self._scored or self.backend.call("scores", run_id=self.id)):
            print(self.backend.call("brief", agent=self.record.agent))
        return self.record

    # --- scores -------------------------------------------------------------------------------

    def score(self, behavior: str | Behavior, value: float, *, ci: float | None = None, n: int | None = None,
              fraction: bool = False, examples: Sequence[Example | Mapping[str, Any]] | None = None,
              rows: Sequence[Example | Mapping[str, Any]] | None = None) -> ScoreRecord:
        """Post a behavior's score, in points out of 100, with its graded rows.

        Args:
            behavior: Its name, or a :class:`Behavior` (defined on the agent first; fields it does not
                set keep their stored values, so a floor from ``tracked.noise_floor`` stays).
            value: Points out of 100 (``fraction=True`` turns 0.71 into 71).
            ci: Half-width of the 95% interval, on the same scale as ``value``.
            n: Asks behind the score (a verdict reads unproven under 50).
            fraction: ``value`` and ``ci`` are rates out of 1.
            examples: The card's sample (up to 20). Default: the first 14 failures and 6 passes of rows.
            rows: The whole graded set, posted 500 a call (at most 20,000).
        """
        if isinstance(behavior, Behavior):
            if self._tracked is None:
                raise ArgumentError("behavior must be a name on a run opened without its agent, got a Behavior. "
                                    "Open the run with tracked.open(id), or pass the name.")
            behavior = self._tracked.define(behavior)  # keeps what this Behavior does not set
            name = behavior.name
        else:
            name = check_behavior_name(behavior)
        if fraction:
            value, ci = value * 100.0, None if ci is None else ci * 100.0
        elif isinstance(value, (int, float)) and 0.0 < value < 1.0:
            owner = self._tracked
            if owner is None or not owner._warned_fraction:
                warnings.warn(f"score {value!r} on {name!r} is strictly between 0 and 1 and is posted as {value!r} "
                              "points out of 100; pass fraction=True if it is a rate.", FractionWarning, stacklevel=2)
                if owner is not None:
                    owner._warned_fraction = True
        graded = [r if isinstance(r, Example) else build(Example, **dict(r)) for r in rows or []]
        if len(graded) > ROWS_PER_SCORE:
            raise ArgumentError(f"rows must be at most {ROWS_PER_SCORE:,} behind one score, got {len(graded):,}. "
                                "Post a sample of the graded set.")
        if examples is None:
            sample = _rules.sample_of(graded)
        else:
            sample = [(e if isinstance(e, Example) else build(Example, **dict(e))).sample() for e in examples]
            if len(sample) > EXAMPLES_MAX:
                warnings.warn(f"examples has {len(sample)} rows, over the cap of {EXAMPLES_MAX}; the first "
                              f"{EXAMPLES_MAX} are kept.", CutWarning, stacklevel=2)
                sample = sample[:EXAMPLES_MAX]
        body = build(ScoreBody, behavior=name, value=value, ci=ci, n=n, examples=sample)
        record = self.backend.call("score", run_id=self.id, body=body)
        for start in range(0, len(graded), ROWS_PER_CALL):
            chunk = RowsBody(rows=graded[start:start + ROWS_PER_CALL], batch_id=uuid.uuid4().hex)
            self._send_rows(record.id, chunk)
        self._scored = True
        return record

    def _send_rows(self, score_id: str, chunk: RowsBody) -> None:
        # one retry on a transport failure: the batch id makes a send that did land count once
        try:
            self.backend.call("add_rows", run_id=self.id, score_id=score_id, body=chunk)
        except PlatformError as exc:
            if exc.code != "unreachable":
                raise
            self.backend.call("add_rows", run_id=self.id, score_id=score_id, body=chunk)

    def rows(self, behavior: str) -> list[Example]:
        """The graded rows behind this run's newest score on ``behavior``."""
        return self.backend.call("rows", run_id=self.id, behavior=check_behavior_name(behavior))

    def scores(self) -> list[ScoreRecord]:
        """The run's scores, in posting order."""
        return self.backend.call("scores", run_id=self.id)

    # --- the record ---------------------------------------------------------------------------

    def _patch(self, **fields: Any) -> RunRecord:
        self.record = self.backend.call("patch_run", run_id=self.id, patch=build(RunPatch, **fields))
        return self.record

    def note(self, markdown: str, *, append: bool = False) -> RunRecord:
        """Put markdown (at most 8192 chars) under the run record; kept on ``run.notes``.

        ``append=True`` adds it under the notes already there (a blank line between), so a
        monitor that raises several alarms keeps every one.
        """
        if not isinstance(markdown, str) or len(markdown) > NOTE_MAX:
            size = len(markdown) if isinstance(markdown, str) else type(markdown).__name__
            raise ArgumentError(f"note must be markdown of at most {NOTE_MAX} chars, got {size}. Shorten it.")
        if append and self.notes:
            markdown = f"{self.notes}\n\n{markdown}"
            if len(markdown) > NOTE_MAX:
                raise ArgumentError(f"note must be markdown of at most {NOTE_MAX} chars, got {len(markdown)} with the "
                                    "notes already on the run. Shorten it, or replace them with append=False.")
        record = self._patch(notes=markdown)
        self.notes = record.notes
        return record

    def archive(self) -> RunRecord:
        """Hide the run everywhere unless asked.

        ``tracked.runs()``, the run table, its count, the missing list, the verdicts and the brief
        leave it out; it stays in the store and ``tracked.runs(archived=True)`` lists it.
        """
        return self._patch(archived=True)

    def delta(self, before: IntoRows, after: IntoRows, **delta_report_kwargs: Any) -> Any:
        """Keep the whole ``delta_report(before, after, ...)`` on the run, and its holdout block in the summary."""
        from whileai.measure import delta_report, holdout_block

        report = delta_report(before, after, **delta_report_kwargs)
        block = holdout_block(before, after, report)
        self._patch(delta=report.to_dict(), summary={"holdout": block})
        self.holdout_summary = block
        return report

    def holdout(self, before: IntoRows, after: IntoRows, **delta_report_kwargs: Any) -> dict[str, Any]:
        """Add ``summary["holdout"]``: each side's pass rate with n_tasks, k and ci95, and the verdict word."""
        from whileai.measure import delta_report, holdout_block

        block = holdout_block(before, after, delta_report(before, after, **delta_report_kwargs))
        self._patch(summary={"holdout": block})
        self.holdout_summary = block
        return block


#: The keys of ``summary["holdout"]``, whichever path wrote it (run.delta, run.holdout, a trainer).
def _bound(run_id: str, base_url: str | None, api_key: str | None, store: Any, transport: Any) -> Run:
    backend = backend_for(base_url=base_url, api_key=api_key, store=store, transport=transport)
    return Run(backend, backend.call("run", run_id=run_id))


def attach_delta(run_id: str, before: IntoRows, after: IntoRows, *, base_url: str | None = None, api_key: str | None = None,
                 store: str | os.PathLike[str] | None = None, transport: Any = None, **delta_report_kwargs: Any) -> Any:
    """``run.delta(before, after)`` for a run that already finished: the delta report kept on the run."""
    return _bound(run_id, base_url, api_key, store, transport).delta(before, after, **delta_report_kwargs)


def attach_holdout(run_id: str, before: IntoRows, after: IntoRows, *, base_url: str | None = None, api_key: str | None = None,
                   store: str | os.PathLike[str] | None = None, transport: Any = None,
                   **delta_report_kwargs: Any) -> dict[str, Any]:
    """``run.holdout(before, after)`` for a run that already finished: ``summary["holdout"]``."""
    return _bound(run_id, base_url, api_key, store, transport).holdout(before, after, **delta_report_kwargs)
