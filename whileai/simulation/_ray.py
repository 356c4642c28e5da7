"""``simulate(..., engine="ray")``: the rollouts fanned out over Ray tasks, the rows written by the workers.

The driver plans the run exactly as the local engine does (the covering grid, the task ids, the
run id: nothing of it depends on the engine), then cuts the rollouts into parts of whole tasks,
in task order, and hands each part to a Ray task. Each task unpickles the run (the agent, the
tools, the world's settings: cloudpickle), runs the local engine on its part with its own
``concurrency`` limit, and writes its rows as one Parquet file into the output folder (lost
rollouts into ``_lost/``, which Ray Data and pyarrow skip as they skip every ``_`` name). What
comes back to the driver is the report's account only: counts, the lost-rows account, token
usage per endpoint. At most ``num_workers`` parts run at once; the driver's bar moves as parts
finish (docs/scale.md, "Simulate on Ray").

A ``wai.Endpoint`` is rebuilt in each worker from its settings, and reads its key there from the
same environment variable the driver read it from; a key given as ``api_key=`` never crosses to
the workers, so it is refused here with the fix.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from whileai.defaults import RAY_SIM_PART_ROLLOUTS, RAY_SIM_PARTS_PER_WORKER, RAY_SIM_TASK_CPUS
from whileai.errors import ArgumentError
from whileai.simulation._endpoint import Endpoint, _Secret
from whileai.table import atomic_path
from whileai.table.raydata import require_ray, translated

__all__ = ["RayRun", "check_folder", "plan_parts", "run_parts"]

#: Where each worker writes its lost rollouts, inside the output folder (a ``_`` name: readers skip it).
LOST_FOLDER = "_lost"
_USAGE = pl.Struct({"input_tokens": pl.Int64, "output_tokens": pl.Int64})


class RayRun(NamedTuple):
    """What the workers gave back (no rows): one small record a part, in part order, and where the rows are."""

    parts: list[dict[str, Any]]
    """Each part's account: size, attempted, lost_by, lost, stats, dynamic, counts, sent (requests and tokens by role)."""
    path: str
    """The output folder."""
    lost_path: str
    """The folder of lost rollouts (inside ``path``; may not exist when none was lost)."""
    num_workers: int
    """Parts in flight at once."""


def check_folder(output: Any) -> str:
    """The folder the Ray workers write the rows to: a new name, an empty folder, or a URI.

    Raises:
        ArgumentError: None, something that is not a path, a file, or a folder that holds files.
    """
    if output is None:
        raise ArgumentError("output must be a folder path for the rows the Ray workers write, got None. Pass "
                            "output='rows/' (with engine='ray' the rows go from the workers into the folder, never "
                            "through this process).", argument="output")
    if isinstance(output, bool) or not isinstance(output, (str, os.PathLike)) or not os.fspath(output):
        raise ArgumentError(f"output must be a folder path, got {output!r}. Pass output='rows/'.", argument="output")
    text = os.fspath(output)
    if "://" not in text and os.path.exists(text):
        if not os.path.isdir(text):
            raise ArgumentError(f"output must be a folder for engine='ray', got {text!r}, which is a file. Pass a new "
                                "folder name: each worker writes its own part file into it.", argument="output")
        if any(os.scandir(text)):
            raise ArgumentError(f"output must be a new or empty folder, got {text!r}, which holds files. Pass a new "
                                "folder name (the run's parts would mix with what is there).", argument="output")
    parent = os.path.dirname(os.path.abspath(text))
    if "://" not in text and not os.path.isdir(parent):
        raise ArgumentError(f"output must be in a folder that exists, got {text!r} (no folder {parent!r}). Create it "
                            "first, or pass another path.", argument="output")
    return text


def plan_parts(task_list: Sequence[Any], eval_runs: Sequence[int | None], k: int, workers: int) -> list[list[Any]]:
    """The run's items cut into parts of whole tasks, in the local engine's order.

    At least ``RAY_SIM_PARTS_PER_WORKER`` parts per worker and about ``RAY_SIM_PART_ROLLOUTS``
    rollouts at most per part, never more parts than (eval run, task) pairs. A task's k
    rollouts always sit in one part, so dynamic sampling decides each ask where its rows are.

    Examples:
        >>> [len(p) for p in plan_parts(["a", "b", "c"], [None], 2, 1)]
        [2, 2, 2]
    """
    units = [(eval_run, ordinal, task) for eval_run in eval_runs for ordinal, task in enumerate(task_list)]
    if not units:
        return []
    n = min(len(units), max(workers * RAY_SIM_PARTS_PER_WORKER, -(-len(units) * k // RAY_SIM_PART_ROLLOUTS)))
    bounds = [i * len(units) // n for i in range(n + 1)]
    return [[(task, index, eval_run, ordinal) for eval_run, ordinal, task in units[a:b] for index in range(k)]
            for a, b in zip(bounds, bounds[1:]) if b > a]


def _check_keys(endpoints: Sequence[tuple[str, Endpoint]]) -> None:
    """Refuse a worker-side endpoint whose key (or a credential header) was given in code: it would not arrive."""
    for role, ep in endpoints:
        if role == "writer":  # the situation writer runs on the driver, before the fan-out
            continue
        secret = [name for name, value in (*ep.headers.items(), *ep.params.items())
                  if isinstance(value, _Secret) and value.get()]
        if ep.key_source == "api_key=" or secret:
            given = "api_key=" if ep.key_source == "api_key=" else f"a credential header {secret[0]!r}"
            raise ArgumentError(
                f"the {role} endpoint's key must come from an environment variable with engine='ray', got {given} for "
                f"{ep.model!r}. Keys never cross to the workers: export it (e.g. OPENAI_API_KEY), build the Endpoint "
                "without api_key= (or with api_key_env='MY_KEY'), and on a cluster start Ray with "
                "ray.init(runtime_env={'env_vars': {'MY_KEY': ...}}).", argument="agent")


def _pickled(job: Any) -> bytes:
    """The job as bytes for the workers, or an ``ArgumentError`` naming the part that cannot be pickled."""
    from ray import cloudpickle

    try:
        return bytes(cloudpickle.dumps(job))
    except Exception as exc:  # boundary: pickling user code raises anything; find the part
        culprit, what = "agent", job.agent
        for name in ("agent", "execute", "user", "score_rows"):
            try:
                cloudpickle.dumps(getattr(job, name))
            except Exception:  # the same boundary, one part at a time
                culprit, what = name, getattr(job, name)
                break
        label = {"score_rows": "grader", "user": "user_simulator"}.get(culprit, culprit)
        raise ArgumentError(
            f"{label} must be picklable to run on Ray workers (cloudpickle), got {what!r}, which is not "
            f"({type(exc).__name__}: {str(exc)[:160]}). Create what cannot be pickled (a client, a lock, an open file or "
            "socket) inside it on its first call, pass a wai.Endpoint (rebuilt in each worker from its settings), or run "
            "with engine='local'.", argument=label) from exc


@contextmanager
def _folder(out: str) -> Iterator[str]:
    """The folder the workers fill: a local path through a temporary folder and one rename; a URI in place."""
    if "://" in out:
        yield out.rstrip("/")
        return
    with atomic_path(out, folder=True) as tmp:
        yield str(Path(tmp).resolve())


def _uniform(df: pl.DataFrame) -> pl.DataFrame:
    """Every part with the same columns: ``usage`` always present (null where the agent reported none), last."""
    if "usage" not in df.columns:
        return df.with_columns(pl.lit(None, _USAGE).alias("usage"))
    return df.select([c for c in df.columns if c != "usage"] + ["usage"])


def _write(df: pl.DataFrame, path: str) -> None:
    if "://" not in path:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    df.write_parquet(path)


def _run_part(blob: bytes, items: list[Any], index: int, folder: str) -> dict[str, Any]:
    """One Ray task: the local engine on one part, its rows written to ``folder``; returns the account only."""
    from ray import cloudpickle

    from whileai.simulation._progress import Progress
    from whileai.simulation._user import ModelUser

    job = cloudpickle.loads(blob)
    by_id = {task.scenario_id: (ordinal, task) for task, _, _, ordinal in items} if job.score_rows is not None else None
    landed = job.run(iter(items), len(items), Progress(0, progress=False), by_id)
    name = f"part-{index:05d}.parquet"
    if landed.df.height:
        _write(_uniform(landed.df), f"{folder}/{name}")
    if landed.lost_df.height:
        _write(_uniform(landed.lost_df), f"{folder}/{LOST_FOLDER}/{name}")
    sent: dict[str, dict[str, int]] = {}
    if isinstance(job.agent, Endpoint):
        sent["agent"] = job.agent.sent()
    if isinstance(job.user, ModelUser) and isinstance(job.user.endpoint, Endpoint):
        sent["user"] = job.user.endpoint.sent()
    stats = landed.stats
    return {"index": index, "size": len(items), "attempted": landed.attempted, "lost_by": landed.lost_by,
            "lost": landed.lost, "unknown_tool_calls": stats.unknown_tool_calls, "unknown_tools": sorted(stats.unknown_tools),
            "user_turns": stats.user_turns, "dynamic": landed.dynamic, "counts": landed.counts,
            "situations": max((item[3] for item in items), default=-1) + 1,
            "sent": {role: {k: int(v[k]) for k in ("requests", "input_tokens", "output_tokens")} for role, v in sent.items()}}


def run_parts(job: Any, task_list: Sequence[Any], eval_runs: Sequence[int | None], *, out: str,
              num_workers: int | None, progress: Any, endpoints: Sequence[tuple[str, Endpoint]]) -> RayRun:
    """Run ``job`` over the tasks on Ray, ``num_workers`` parts at a time, rows into the folder ``out``.

    Starts Ray when it is not running (``ray.init()``: the cluster ``RAY_ADDRESS`` names, else a
    local one). A part whose first rollouts are all lost (a dead agent) stops the run: no new
    part starts and those in flight are cancelled. A fatal endpoint answer (401, 403, 404)
    raised in a worker is raised here as the same ``EndpointError``, and a local ``out`` is
    left as it was.
    """
    ray = require_ray("simulate(engine='ray')")
    _check_keys(endpoints)
    blob = _pickled(job)
    if not ray.is_initialized():
        ray.init(include_dashboard=False)
    workers = num_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    parts = plan_parts(task_list, eval_runs, job.k, workers)
    remote = ray.remote(num_cpus=RAY_SIM_TASK_CPUS)(_run_part)
    results: list[dict[str, Any]] = []
    with _folder(out) as folder:
        ref = ray.put(blob)
        queue = iter(enumerate(parts))
        pending: dict[Any, int] = {}
        dead = False

        def submit() -> None:
            while len(pending) < workers:
                nxt = next(queue, None)
                if nxt is None:
                    return
                pending[remote.remote(ref, nxt[1], nxt[0], folder)] = nxt[0]

        try:
            with translated():
                submit()
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1)
                    for done in ready:
                        pending.pop(done)
                        part = ray.get(done)
                        results.append(part)
                        progress.add(part["size"], situations=part["situations"], lost_by=part["lost_by"])
                        dead = dead or part["attempted"] < part["size"]
                    if not dead:
                        submit()
                    elif pending:
                        for left in pending:
                            ray.cancel(left, force=True)
                        ray.wait(list(pending), num_returns=len(pending), timeout=30)
                        pending.clear()
        except BaseException:
            for left in pending:
                ray.cancel(left, force=True)
            raise
    results.sort(key=lambda r: r["index"])
    path = out if "://" in out else str(Path(out))
    return RayRun(results, path, f"{path.rstrip('/')}/{LOST_FOLDER}", workers)
