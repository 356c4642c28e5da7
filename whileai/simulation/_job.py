"""A run of rollouts as one picklable job, run here or over Ray, and what it gives back.

:class:`_Job` holds everything the rollouts need and nothing they build; the local engine runs it
on every item, the Ray engine pickles it and each worker runs it on its share of the tasks, so
both engines run the same code. :class:`_Landed` is what a run gives back (rows, lost rows, the
account), and :func:`_merge_parts` adds up the Ray workers' part records into one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from whileai import table
from whileai.simulation._agents import resolve_agent
from whileai.simulation._dynamic import _no_dynamic, _oversample
from whileai.simulation._endpoint import Endpoint
from whileai.simulation._endpoint import offline as offline_mode
from whileai.simulation._frames import _empty_frame, _finish_frame, _row_counts, merge_counts
from whileai.simulation._options import Engine
from whileai.simulation._progress import Progress
from whileai.simulation._report import LOST_REASONS
from whileai.simulation._rollout import (
    _LOST_EXAMPLES,
    Item,
    _Engine,
    _Stats,
    _timed_agent,
    _timed_execute,
)
from whileai.simulation._rows import RowBuffer
from whileai.simulation._tools import ToolSpec
from whileai.simulation._user import ModelUser, TemplateUser
from whileai.simulation._writer import Situation

if TYPE_CHECKING:
    from whileai.simulation import _ray


@dataclasses.dataclass
class _Landed:
    """What running a set of items gives back: the finished rows, the lost rows, and the account."""

    df: pl.DataFrame
    lost_df: pl.DataFrame
    attempted: int
    lost_by: dict[str, int]
    lost: list[dict[str, Any]]
    stats: _Stats
    dynamic: dict[str, Any]
    counts: dict[str, Any]


@dataclasses.dataclass
class _Job:
    """Everything a run of rollouts needs, and nothing it builds: what the Ray engine ships to each worker.

    The local engine calls :meth:`run` once on every item; the Ray engine pickles the job
    (cloudpickle) and each worker calls :meth:`run` on its share of the tasks, so both engines
    run the same code.
    """

    agent: Any
    specs: tuple[ToolSpec, ...]
    policy: str
    seed: int
    max_turns: int
    execute: Callable[[str, dict[str, Any]], Any] | None
    timeout: float | None
    tool_timeout: float | None
    concurrency: int
    run_id: str
    user: TemplateUser | ModelUser | None
    max_user_turns: int
    offline: bool
    k: int
    cap: int
    score_rows: Callable[[pl.DataFrame], pl.DataFrame] | None
    tools_json: str
    model_version: str
    writer: str
    replayed: bool
    parent_run: str | None
    generation: dict[str, Any]
    user_model: str | None

    def finish(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Landed rollouts as rows of the rollout table (also what dynamic sampling grades)."""
        return table.frame(_finish_frame(frame, policy=self.policy, tools_json=self.tools_json,
                                         model_version=self.model_version, run_id=self.run_id, seed=self.seed,
                                         writer=self.writer, replayed=self.replayed, parent_run=self.parent_run,
                                         generation=self.generation, user_model=self.user_model),
                           allow_empty=True)

    def engine(self) -> _Engine:
        call = resolve_agent(self.agent)
        timed_execute = _timed_execute(self.execute, self.tool_timeout)
        return _Engine(_timed_agent(call, self.timeout), list(self.specs), self.policy, self.seed, self.max_turns,
                       timed_execute, self.concurrency, self.run_id, self.user, self.max_user_turns)

    def run(self, items: Iterator[Item], total: int, progress: Progress,
            by_id: dict[str, tuple[int, Situation]] | None) -> _Landed:
        """Run ``items`` (``total`` of them), then dynamic sampling on their asks when it is on (``by_id``)."""
        engine = self.engine()
        buffer, lost_buffer = RowBuffer(check_users=self.user is not None), RowBuffer()
        lost_by = dict.fromkeys(LOST_REASONS, 0)
        lost: list[dict[str, Any]] = []
        stats = _Stats()
        graded: pl.DataFrame | None = None
        dynamic = _no_dynamic()
        with offline_mode() if self.offline else _no_context():
            attempted = engine.run(items, total, buffer, lost_buffer, lost_by, lost, stats, progress)
            if self.score_rows is not None and by_id is not None and attempted == total:
                graded, dynamic = _oversample(engine, buffer, lost_buffer, lost_by, lost, stats, progress, by_id=by_id,
                                              k=self.k, cap=self.cap, score_rows=self.score_rows, prepare=self.finish)
        landed, failed = buffer.frame(), lost_buffer.frame()
        df = graded if graded is not None else self.finish(landed if landed is not None else _empty_frame())
        lost_df = self.finish(failed if failed is not None else _empty_frame(lost=True))
        return _Landed(df, lost_df, attempted, lost_by, lost, stats, dynamic, _row_counts(df))


def _run_rollouts(job: _Job, task_list: list[Situation], eval_runs: list[int | None], *, total: int, engine: Engine,
                  output: str | os.PathLike[str] | None, num_workers: int | None, progress: Progress,
                  endpoints: list[tuple[str, Endpoint]],
                  dynamic: bool) -> tuple[_Landed, _ray.RayRun | None, dict[str, dict[str, int]] | None]:
    """Every rollout of the plan, here or over Ray: what landed, and the Ray run and its workers' egress (None here)."""
    try:
        if engine == "ray":
            from whileai.simulation import _ray

            assert output is not None  # _check_engine made it a folder
            done = _ray.run_parts(job, task_list, eval_runs, out=os.fspath(output), num_workers=num_workers,
                                  progress=progress, endpoints=endpoints)
            landed, egress = _merge_parts(done.parts)
            return landed, done, egress

        def items() -> Iterator[Item]:
            for eval_run in eval_runs:
                for ordinal, task in enumerate(task_list):
                    for index in range(job.k):
                        yield task, index, eval_run, ordinal

        by_id = {t.scenario_id: (ordinal, t) for ordinal, t in enumerate(task_list)} if dynamic else None
        return job.run(items(), total, progress, by_id), None, None
    finally:
        progress.close()


def _merge_parts(parts: Sequence[dict[str, Any]]) -> tuple[_Landed, dict[str, dict[str, int]]]:
    """The Ray workers' part records (in part order) as one run's account, and what their endpoints sent by role."""
    lost_by = dict.fromkeys(LOST_REASONS, 0)
    lost: list[dict[str, Any]] = []
    stats = _Stats()
    dynamic = _no_dynamic()
    unjudged_by: Counter[str] = Counter()
    sent: dict[str, dict[str, int]] = {}
    for part in parts:
        for reason, n in part["lost_by"].items():
            lost_by[reason] = lost_by.get(reason, 0) + int(n)
        lost.extend(part["lost"][:max(0, _LOST_EXAMPLES - len(lost))])
        stats.unknown_tool_calls += part["unknown_tool_calls"]
        stats.unknown_tools.update(part["unknown_tools"])
        stats.user_turns += part["user_turns"]
        for key in ("asks_oversampled", "asks_never_mixed", "rollouts_oversampled", "asks_unjudged", "rows_unjudged"):
            dynamic[key] += int(part["dynamic"].get(key, 0))
        unjudged_by.update(part["dynamic"].get("unjudged_by") or {})
        dynamic["unjudged_first"] = dynamic["unjudged_first"] or part["dynamic"].get("unjudged_first")
        for role, counts in part["sent"].items():
            mine = sent.setdefault(role, {"requests": 0, "input_tokens": 0, "output_tokens": 0})
            for key, value in counts.items():
                mine[key] += int(value)
    dynamic["unjudged_by"] = dict(unjudged_by)
    attempted = sum(int(p["attempted"]) for p in parts)
    merged = merge_counts([p["counts"] for p in parts])
    return _Landed(pl.DataFrame(), pl.DataFrame(), attempted, lost_by, lost, stats, dynamic, merged), sent


@contextlib.contextmanager
def _no_context() -> Iterator[None]:
    yield
