"""The fluent layer: data objects over one rollout table, and the loop calls that return them.

``SimulationData`` (what ``wai.simulate`` returns), ``ScoredData`` (what ``wai.run_judge`` and
``data.grade`` return) and ``Selection`` (what ``wai.select`` returns) each hold one
``polars.DataFrame`` in ``.df`` plus the run's context (system prompt, tools) in ``.meta`` and the
report of the step that made them. They hold no logic: every method delegates to a step.

The steps below this layer (``whileai.simulation``, ``whileai.grade``, ``whileai.selection``)
return a :class:`whileai.table.StepResult` (rows, report, run context) and never import this
module; the functions at the end of this module are those steps with the result wrapped, so
``wai.simulate`` is a plain function with the step's own signature (docs/architecture.md).
"""

from __future__ import annotations

import functools
import html
import inspect
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypeVar, cast, overload

import polars as pl

from whileai import table
from whileai.defaults import (
    AGENT_TIMEOUT_S,
    DEFAULT_SEED,
    DISPLAY_CELL_CHARS,
    DISPLAY_ROWS,
    FAULT_RATE,
    HARD_SHARE,
    MAX_TURNS,
    MAX_USER_TURNS,
    PAIR_MIN_MARGIN,
    PASS_THRESHOLD,
    SIM_CONCURRENCY,
    TOOL_TIMEOUT_S,
)
from whileai.errors import ArgumentError, translate
from whileai.report import Report, html_table, markdown_table, md_escape
from whileai.selection import PreferencePairs as _PreferencePairs
from whileai.selection import (
    RLSelectionReport,
    SFTSelectionReport,
)
from whileai.selection import build_preference_pairs as _build_preference_pairs
from whileai.selection import calibrate as _calibrate
from whileai.selection import optimize as _optimize
from whileai.selection import select_for_rl as _select_for_rl
from whileai.selection import select_for_sft as _select_for_sft

if TYPE_CHECKING:  # types of the signatures only: simulate's step loads on its first call
    import numpy as np
    import pyarrow as pa  # to_arrow's return type; pyarrow loads with the first Arrow read or write

    from whileai._progress import ProgressArg
    from whileai.simulation import Endpoint, Mode, RepeatPolicy
    from whileai.table.raydata import FolderResult

__all__ = [
    "RolloutData",
    "ScoredData",
    "Selection",
    "SimulationData",
    "PreferencePairs",
    "build_preference_pairs",
    "calibrate",
    "optimize",
    "run_judge",
    "select",
    "select_for_rl",
    "select_for_sft",
    "simulate",
]


#: The report a :class:`Selection` carries: the RL or the SFT selection report.
R = TypeVar("R", bound=Report)

#: Columns a display of ``.df`` shows first, when present.
_PREVIEW_COLUMNS = ("task_key", "rollout_index", "prompt", "final_text", "reward", "judge_status", "fault_kind")


def _cell(value: Any) -> str:
    text = "" if value is None else (f"{value:.3g}" if isinstance(value, float) else str(value))
    text = text.replace("\r", " ").replace("\n", " ")
    return text if len(text) <= DISPLAY_CELL_CHARS else text[: DISPLAY_CELL_CHARS - 3] + "..."


@overload
def select(
    rows: table.IntoRows,
    /,
    *,
    mode: Literal["rl"] = ...,
    target: int | None = ...,
    band: tuple[float, float] = ...,
    enforce_band: bool = ...,
    truncated: Literal["drop", "keep", "penalize"] = ...,
    order: Literal["spread", "middle"] = ...,
    endorsed: Sequence[str] | None = ...,
) -> Selection[RLSelectionReport]: ...


@overload
def select(
    rows: table.IntoRows,
    /,
    *,
    mode: Literal["sft"],
    select: Literal["top_per_prompt", "top_k_overall", "random_per_prompt", "random_k_overall"] = ...,
    min_reward: float = ...,
    target: int = ...,
    k: int | None = ...,
    seed: int | np.random.Generator = ...,
) -> Selection[SFTSelectionReport]: ...


@overload
def select(rows: table.IntoRows, /, *, mode: Literal["rl", "sft"] = ..., out: str | os.PathLike[str],
           **options: Any) -> FolderResult: ...


def select(rows: table.IntoRows, /, *, mode: Literal["rl", "sft"] = "rl", **options: Any) -> Selection[Any] | FolderResult:
    """Keep the rows that carry training signal: the RL difficulty band or SFT rejection sampling.

    The select step's ``optimize`` (:func:`whileai.selection.optimize`) wrapped as a
    :class:`Selection`: ``mode="rl"`` takes the options of :func:`select_for_rl`, ``mode="sft"``
    those of :func:`select_for_sft`, each with its defaults. A ``ray.data.Dataset`` takes the Ray
    path, which writes the kept rows to the Parquet folder ``out=`` and returns a
    ``FolderResult`` (docs/scale.md).

    Raises:
        ArgumentError: A bad ``mode``, or an option the chosen mode does not take.
        TrainingSelectionError: Ungraded rows, nothing left after the filters, or ``min_reward``
            that no row meets.

    Examples:
        >>> import whileai as wai
        >>> from whileai.testing import rollout_table
        >>> sel = wai.select(rollout_table(40, 8, pass_rates=[0.5] * 40, seed=3), mode="rl", target=64)
        >>> sel.report.n_selected, sel.report.groups_selected
        (64, 8)
    """
    return optimize(rows, mode=mode, **options)


class RolloutData:
    """A rollout table with fluent methods.

    Attributes:
        df: The rollout table.
        meta: Run context carried from step to step (``system_prompt``, ``tools``, ``mode``...).
        report: The report of the step that produced this object, if any.
        warnings: Run-level warnings, one sentence each.
    """

    def __init__(self, df: pl.DataFrame | Any, *, meta: dict[str, Any] | None = None,
                 report: Any = None, warnings: list[str] | None = None) -> None:
        self.df = df if isinstance(df, pl.DataFrame) else table.frame(df, allow_empty=True)
        self.meta: dict[str, Any] = dict(meta or {})
        self.report = report
        self.warnings: list[str] = list(warnings or [])

    # --- reading -----------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """The rows as a list of dicts (the wire shape: None dropped, JSON columns decoded)."""
        return table.rows(self.df)

    def __len__(self) -> int:
        return self.df.height

    def __iter__(self):  # noqa: ANN204 - iterator of row dicts
        return table.iter_rows(self.df)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        """One row as a dict (``data[0]``, ``data[-1]``), or a slice of rows as a list of dicts (``data[:3]``)."""
        if isinstance(index, slice):
            start, stop, step = index.indices(self.df.height)
            return table.rows(self.df[start:stop:step] if step != 1 else self.df.slice(start, max(0, stop - start)))
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"rows are indexed by position (an int or a slice), got {type(index).__name__}. "
                            "Read a column with .df[name].")
        row = self.df.slice(index if index >= 0 else self.df.height + index, 1)
        if row.height == 0 or index < -self.df.height:
            raise IndexError(index)
        return table.rows(row)[0]

    def to_arrow(self) -> pa.Table:
        """The table as a pyarrow Table."""
        return table.to_arrow(self.df)

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the rows to JSONL or Parquet (by suffix), atomically."""
        return table.write(self.df, path)

    save = write

    @property
    def n_tasks(self) -> int:
        """Distinct tasks (by task_key)."""
        return self.df["task_key"].n_unique() if "task_key" in self.df.columns and self.df.height else 0

    @property
    def k(self) -> int:
        """The most rollouts any task has."""
        if not self.df.height or "task_key" not in self.df.columns:
            return 0
        return int(self.df.group_by("task_key").len()["len"].max())  # type: ignore[arg-type]

    @property
    def graded_share(self) -> float:
        """Share of rows with a non-null reward."""
        if not self.df.height or "reward" not in self.df.columns:
            return 0.0
        return 1.0 - self.df["reward"].null_count() / self.df.height

    def __repr__(self) -> str:
        n_tasks, k = 0, 0
        if self.df.height and "task_key" in self.df.columns:  # tasks and k from one group-by
            sizes = self.df.group_by("task_key").len()["len"]
            n_tasks, k = sizes.len(), int(sizes.max())  # type: ignore[arg-type]
        return f"{type(self).__name__}(rows={len(self)}, tasks={n_tasks}, k={k}, graded={self.graded_share:.0%})"

    def _preview(self) -> tuple[list[str], list[list[str]]]:
        """The first ``DISPLAY_ROWS`` rows of the columns a person reads first, cells cut short."""
        cols = [c for c in _PREVIEW_COLUMNS if c in self.df.columns] or self.df.columns[:6]
        head = self.df.head(DISPLAY_ROWS).select(cols)
        return cols, [[_cell(v) for v in row] for row in head.iter_rows()]

    def _display_lines(self) -> tuple[str, str | None]:
        report = self.report.display_line() if isinstance(self.report, Report) else None
        return repr(self), report

    def _repr_html_(self) -> str:
        """Rows, tasks, k and graded share, the step's report line, the first rows of ``.df``, warnings."""
        line, report = self._display_lines()
        parts = [f"<div class=\"wai-data\"><p><b>{html.escape(line)}</b></p>"]
        if report:
            parts.append(f"<p>{html.escape(report)}</p>")
        cols, rows = self._preview()
        if rows:
            parts.append(html_table(cols, rows))
            if len(self) > DISPLAY_ROWS:
                parts.append(f"<p>... {len(self) - DISPLAY_ROWS:,} more rows in .df</p>")
        if self.warnings:
            parts.append("<ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in self.warnings) + "</ul>")
        return "".join(parts) + "</div>"

    def _repr_markdown_(self) -> str:
        """The same display as Markdown."""
        line, report = self._display_lines()
        parts = [f"**{md_escape(line)}**"]
        if report:
            parts.append(md_escape(report))
        cols, rows = self._preview()
        if rows:
            parts.append(markdown_table(cols, rows))
        if self.warnings:
            parts.append("\n".join(f"- {md_escape(w)}" for w in self.warnings))
        return "\n\n".join(parts)

    def _derive(self, cls: type[RolloutData], df: pl.DataFrame, report: Any = None) -> Any:
        return cls(df, meta=self.meta, report=report, warnings=self.warnings)

    # --- the loop ----------------------------------------------------------------------------

    @property
    def pass_at(self) -> Any:
        """pass@1, pass^k and pass@k with intervals over tasks (see ``whileai.measure.pass_at``)."""
        from whileai.measure import pass_at

        return pass_at(self.df)

    def grade(self, judge: Any = None, *, grader: Any = None, **options: Any) -> ScoredData:
        """Grade every row with a judge or verifier (see :func:`run_judge`)."""
        return _loop_call("run_judge")(self, judge if judge is not None else grader, **options)

    select = select  # ``data.select(mode=...)`` is ``wai.select(data, mode=...)``

    def export(self, path: str | os.PathLike[str] | None = None, **options: Any) -> Any:
        """Write training rows for a trainer (see ``whileai.exporters.export_dataset``)."""
        from whileai.exporters import export_dataset

        return export_dataset(self, path, **options)

    def push_to_hub(self, repo_id: str, **options: Any) -> Any:
        """Push training rows to a Hugging Face Hub dataset repo (see ``whileai.exporters.push_to_hub``)."""
        from whileai.exporters import push_to_hub

        return push_to_hub(self, repo_id, **options)


class SimulationData(RolloutData):
    """What ``simulate`` returns: the rollouts, ungraded unless a grader ran in the loop.

    Attributes:
        lost: Rollouts that did not land (the agent raised, returned garbage, or the endpoint
            kept failing), with ``lost_reason`` and ``error``; kept out of ``df`` so pass-rate
            denominators stay honest, and counted in ``report.rollouts_lost_by``.
    """

    lost: pl.DataFrame | None = None


class ScoredData(RolloutData):
    """What ``grade`` returns: the rollouts with ``reward``, ``judge_status`` and lineage."""

    def passes(self) -> ScoredData:
        """Rows that pass (reward >= ``PASS_THRESHOLD``)."""
        return self._derive(ScoredData, self.df.filter(pl.col("reward") >= PASS_THRESHOLD), self.report)

    def failures(self) -> ScoredData:
        """Rows that fail (reward < ``PASS_THRESHOLD``)."""
        return self._derive(ScoredData, self.df.filter(pl.col("reward") < PASS_THRESHOLD), self.report)

    def unjudged(self) -> ScoredData:
        """Rows the judge left without a reward."""
        return self._derive(ScoredData, self.df.filter(pl.col("reward").is_null()), self.report)


class Selection(RolloutData, Generic[R]):
    """What ``select`` returns: the kept rows, with the selection report in ``.report``.

    ``Selection[RLSelectionReport]`` from ``select(mode="rl")`` and ``select_for_rl``,
    ``Selection[SFTSelectionReport]`` from ``select(mode="sft")`` and ``select_for_sft``.
    """

    report: R

    def __str__(self) -> str:
        return str(self.report) if self.report is not None else repr(self)


# ------------------------------------------------------------------------------------------
# the loop calls, wrapped: each is its step with the StepResult made a fluent object
# ------------------------------------------------------------------------------------------

P = ParamSpec("P")
D = TypeVar("D", bound=RolloutData)


def _wrap(source: Any, result: table.StepResult, cls: type[D]) -> D:
    """The fluent object for ``result``: meta and warnings carried from a fluent ``source``."""
    meta = {**table.meta_of(source), **(result.meta or {})}
    carried = list(getattr(source, "warnings", []) or []) if table.is_fluent(source) else []
    own = list(getattr(result.report, "warnings", []) or [])
    out = cls(result.df, meta=meta, report=result.report, warnings=[*carried, *(w for w in own if w not in carried)])
    if result.lost is not None:
        out.lost = result.lost  # type: ignore[attr-defined]
    return out


def _fluent(step: Callable[P, table.StepResult], cls: type[D], *, keep_class: bool = False,
            rows_in: bool = True) -> Callable[P, D]:
    """``step`` with its result wrapped as ``cls`` (or the input's own fluent class, ``keep_class``)."""

    @functools.wraps(step)
    def call(*args: P.args, **kwargs: P.kwargs) -> D:
        source = args[0] if rows_in and args else None
        out_cls = cast("type[D]", type(source)) if keep_class and isinstance(source, RolloutData) else cls
        with translate(step.__name__):  # the steps' boundary: a foreign error becomes ours, from exc
            result = step(*args, **kwargs)
        if not isinstance(result, table.StepResult):  # a Ray engine's rows stay in the folder it wrote
            return cast("D", result)
        return _wrap(source, result, out_cls)

    call.__module__ = __name__
    call.__qualname__ = step.__name__
    call.__signature__ = inspect.signature(step).replace(return_annotation=cls.__name__)  # type: ignore[attr-defined]
    return call


def _user_audit(judge: Any) -> Callable[[pl.DataFrame], list[list[dict[str, str]]]]:
    """``simulate(user_judge=...)`` as the step's ``user_audit``: the judge's verdicts on each row's user turns as flags.

    A model name or an ``Endpoint`` becomes a :func:`rubric_judge` over the five user errors
    (each criterion named after its flag); a callable is used as it is, under the judge contract.
    The judge reads the row with a note first in ``messages`` naming what the person knew and the
    grader's reference the person must never reveal. A marker named after a flag at 0 raises that
    flag; a reward under ``PASS_THRESHOLD`` with none raises ``user.judged``; the fragment is the
    judge's reason. A judge that fails on a row raises no flag there.
    """
    from whileai.grade import Criterion, rubric_judge
    from whileai.grade import run_judge as judge_rows
    from whileai.simulation import USER_FLAGS, USER_JUDGE_CRITERIA, context_of_row

    if isinstance(judge, str) or (callable(getattr(judge, "chat", None)) and not callable(judge)):
        judge = rubric_judge([Criterion(text, kind="hard", name=name) for name, text in USER_JUDGE_CRITERIA],
                             judge, name="user_judge")

    def audit(df: pl.DataFrame) -> list[list[dict[str, str]]]:
        notes = []
        for row in df.select("prompt", "messages", "scenario_dimensions", "privileged").iter_rows(named=True):
            ctx = context_of_row(row)
            note = {"role": "system", "content": (
                f"Audit the simulated user (the 'user' turns after the first). The person knew: "
                f"{', '.join(ctx.known) or 'nothing beyond the opening message'}. The grader's reference, which the "
                f"person never saw and must never reveal: {ctx.reference or 'none'}. Hidden labels of the world: "
                f"{', '.join(ctx.hidden) or 'none'}.")}
            notes.append([note, *(row["messages"] or [])])
        view = df.select("scenario_id", "rollout_index", "prompt").with_columns(
            pl.Series("messages", notes, dtype=df.schema["messages"]))
        out = judge_rows(view, judge, trust="off", judge_name="user_judge").df
        flags: list[list[dict[str, str]]] = []
        has_markers = "markers" in out.columns
        for row in out.select("reward", "reason", *(["markers"] if has_markers else [])).iter_rows(named=True):
            reason = str(row.get("reason") or "the user judge flagged it")
            markers = row.get("markers") or {}
            found = [{"flag": f, "fragment": reason} for f in USER_FLAGS
                     if markers.get(f) is not None and markers[f] < PASS_THRESHOLD]
            if not found and row["reward"] is not None and row["reward"] < PASS_THRESHOLD:
                found = [{"flag": "user.judged", "fragment": reason}]
            flags.append(found)
        return flags

    return audit


@overload
def simulate(agent: Any = ..., *, engine: Literal["ray"], output: str | os.PathLike[str], num_workers: int | None = ...,
             **options: Any) -> FolderResult: ...


@overload
def simulate(
    agent: Any = ...,
    *,
    model: str | Endpoint | None = ...,
    tools: Sequence[Any] | None = ...,
    system_prompt: str | None = ...,
    simulator: Literal[False] | str | Endpoint | None = ...,
    user_simulator: bool | str | Endpoint | None = ...,
    max_user_turns: int = ...,
    mode: Mode = ...,
    repeats: int | None = ...,
    repeat_policy: RepeatPolicy = ...,
    budget: int | None = ...,
    tasks: table.IntoRows | None = ...,
    runs: int = ...,
    concurrency: int = ...,
    seed: int | np.random.Generator | None = ...,
    hard_share: float = ...,
    fault_rate: float = ...,
    faults: Sequence[str] | None = ...,
    max_turns: int = ...,
    temperature: float | None = ...,
    top_p: float | None = ...,
    max_tokens: int | None = ...,
    execute: Callable[[str, dict[str, Any]], Any] | None = ...,
    offline: bool = ...,
    grader: Callable[[Any], Any] | None = ...,
    user_judge: str | Endpoint | Callable[[Any], Any] | None = ...,
    max_rollouts: int | None = ...,
    output: str | os.PathLike[str] | None = ...,
    progress: ProgressArg = ...,
    timeout: float | None = ...,
    tool_timeout: float | None = ...,
    engine: Literal["local"] = ...,
) -> SimulationData: ...


def simulate(
    agent: Any = None,
    *,
    model: str | Endpoint | None = None,
    tools: Sequence[Any] | None = None,
    system_prompt: str | None = None,
    simulator: Literal[False] | str | Endpoint | None = False,
    user_simulator: bool | str | Endpoint | None = None,
    max_user_turns: int = MAX_USER_TURNS,
    mode: Mode = "rl",
    repeats: int | None = None,
    repeat_policy: RepeatPolicy = "fixed",
    budget: int | None = None,
    tasks: table.IntoRows | None = None,
    runs: int = 1,
    concurrency: int = SIM_CONCURRENCY,
    seed: int | np.random.Generator | None = DEFAULT_SEED,
    hard_share: float = HARD_SHARE,
    fault_rate: float = FAULT_RATE,
    faults: Sequence[str] | None = None,
    max_turns: int = MAX_TURNS,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    execute: Callable[[str, dict[str, Any]], Any] | None = None,
    offline: bool = False,
    grader: Callable[[Any], Any] | None = None,
    user_judge: str | Endpoint | Callable[[Any], Any] | None = None,
    max_rollouts: int | None = None,
    output: str | os.PathLike[str] | None = None,
    progress: ProgressArg = None,
    timeout: float | None = AGENT_TIMEOUT_S,
    tool_timeout: float | None = TOOL_TIMEOUT_S,
    engine: Literal["local", "ray"] = "local",
    num_workers: int | None = None,
    **unknown: Any,
) -> SimulationData | FolderResult:
    """Run an agent through a covering grid of situations and return every rollout (``SimulationData``).

    The simulate step, :func:`whileai.simulation.simulate`, whose Args describe each argument
    here, with its result wrapped. Two arguments differ: ``grader=`` is the judge dynamic
    sampling grades groups with (``repeat_policy="dynamic"``, DAPO, Yu et al. 2025): it becomes
    the step's ``score_rows`` through :func:`run_judge`, and the rows come back graded;
    ``user_judge=`` (a model name, an ``Endpoint`` or a judge callable) audits the simulated
    user's turns and becomes the step's ``user_audit``. With ``engine="ray"`` the rows stay in
    the Parquet folder the workers wrote, and a ``FolderResult`` (``.path``, ``.report``,
    ``.meta``) comes back instead (docs/scale.md, "Simulate on Ray").

    Returns:
        A :class:`SimulationData`, or a ``FolderResult`` with ``engine="ray"``.

    Raises:
        ArgumentError: ``grader`` without ``repeat_policy="dynamic"``, and every error of the step.

    Examples:
        >>> import whileai as wai
        >>> @wai.tool
        ... def get_order(order_id: str) -> dict:
        ...     '''Look up an order by id.'''
        >>> data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order],
        ...                     system_prompt="Help customers with orders.", repeats=4, budget=64)
        >>> len(data), data.n_tasks, data.k
        (64, 16, 4)
    """
    options = dict(locals())  # every argument by name: the step takes the same ones, two under other names
    options.update(options.pop("unknown"))
    options.pop("grader"), options.pop("user_judge")
    if grader is not None:
        if repeat_policy != "dynamic":
            raise ArgumentError(f"grader must come with repeat_policy='dynamic', got repeat_policy={repeat_policy!r}. "
                                "Grade afterwards with data.grade(judge=...), "
                                "or pass repeat_policy='dynamic' for DAPO dynamic sampling.", argument="grader")
        from whileai.grade import run_judge as judge_rows

        options["score_rows"] = lambda df: judge_rows(df, grader, trust="off").df
    if user_judge is not None:
        options["user_audit"] = _user_audit(user_judge)
    # the step loads on the first call, not on import
    from whileai.simulation import simulate as simulate_step

    result = simulate_step(**options)
    if not isinstance(result, table.StepResult):  # engine="ray": the rows are in a folder the workers wrote
        return result
    return _wrap(None, result, SimulationData)


def _run_judge_door() -> Callable[..., ScoredData]:
    """``run_judge`` wrapped as ``ScoredData`` (the grade step loads on first use)."""
    from whileai.grade import run_judge as judge_step

    return _fluent(judge_step, ScoredData)


#: Loop calls whose step (the grade step) loads only when first asked for, so ``wai.select`` or
#: ``wai.pass_at`` never pays for it (docs/performance.md, "Cold start"); ``simulate`` imports its
#: step inside the call.
_DOORS: dict[str, Callable[[], Any]] = {"run_judge": _run_judge_door}


def __getattr__(name: str) -> Any:
    door = _DOORS.get(name)
    if door is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = door()
    return value


def _loop_call(name: str) -> Any:
    """The loop call ``name`` of this module, built on first use (see ``_DOORS``)."""
    return globals().get(name) or __getattr__(name)


if TYPE_CHECKING:  # pragma: no cover - what type checkers see: the same call, typed
    from whileai.grade import run_judge as _judge_step

    run_judge = _fluent(_judge_step, ScoredData)

optimize = _fluent(_optimize, Selection)
select_for_rl = _fluent(_select_for_rl, Selection[RLSelectionReport])
select_for_sft = _fluent(_select_for_sft, Selection[SFTSelectionReport])
calibrate = _fluent(_calibrate, ScoredData, keep_class=True)


class PreferencePairs(_PreferencePairs):
    """What ``build_preference_pairs`` returns: the pairs (``.df``, ``.report``) and ``.export``."""

    def export(self, path: str | os.PathLike[str], **options: Any) -> Any:
        """Write the pairs for a preference trainer (see ``whileai.exporters.export_preference``)."""
        from whileai.exporters import export_preference

        return export_preference(self, path, **options)


def build_preference_pairs(rows: table.IntoRows, /, *, max_pairs_per_prompt: int = 1,
                           min_margin: float = PAIR_MIN_MARGIN, length_match: bool = True) -> PreferencePairs:
    """The select step's ``build_preference_pairs``, its pairs made a fluent :class:`PreferencePairs`."""
    pairs = _build_preference_pairs(rows, max_pairs_per_prompt=max_pairs_per_prompt, min_margin=min_margin,
                                          length_match=length_match)
    return PreferencePairs(pairs.df, report=pairs.report, meta=pairs.meta)


build_preference_pairs.__doc__ = _build_preference_pairs.__doc__
