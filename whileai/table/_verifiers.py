"""Read vf-eval output as rollout rows: verifiers 0.4's ``traces.jsonl`` and 0.3's ``results.jsonl``.

**verifiers 0.4** (``verifiers.v1``) writes ``traces.jsonl`` into the run folder
(``<output dir>/<env>--<model>--<taskset>--<id>/``, with ``configs/`` beside it): one
``Episode`` a line (``verifiers.v1.utils.trace_store.write_episode``), holding ``env.id``,
``task`` (``key``, ``data.idx`` and ``data.info``), ``ok``, ``errors`` and ``traces``, one per
agent. A trace stores its conversation as a graph of ``nodes`` (each a ``message`` and the index
of its ``parent``); the conversation is the final branch, from the last leaf back to the root
(``Trace.messages``). Its ``rewards`` are named ``{score, weight}`` pairs whose weighted sum is the
reward (``Trace.reward``); each score and each of ``metrics`` is a marker. The task is the
``task_key`` a whileai export wrote into ``data.info``, else ``<env>/<task key>`` (else
``<env>/<example idx>``); the model is the agent's ``config.model``, the tools ``trace.tools``.
An episode or trace with ``errors`` (a provider or agent failure) is an agent error without a
reward. An episode of several agents' traces reads as one rollout from its first trace.

**verifiers 0.3 and earlier** write ``results.jsonl``, below.

A vf-eval row (``verifiers.utils.save_utils.state_to_output``) carries ``example_id`` (the
dataset row), ``prompt`` and ``completion`` (message lists; each tool call written as its JSON
text, which is decoded), ``answer``, ``info``, ``reward``, ``metrics`` (one number per rubric
function, also flattened onto the row), ``error``, ``is_truncated``, ``tool_defs`` and, in older
releases, ``task``. The rollouts of one example share its ``example_id``.

``vf-eval -s`` saves each run as ``outputs/evals/<env>--<model>/<run id>/results.jsonl`` with a
``metadata.json`` beside it holding ``env_id`` (``env`` in older releases) and ``model``
(verifiers ``utils.eval_utils.save_results_to_disk``). Example ids restart at 0 in every
environment, so the task is the ``task_key`` a whileai export wrote into ``info`` (a dict or its
JSON text), else ``<env>/<example_id>``: the environment from ``metadata.json``, else from the
``<env>--<model>`` folder above the run folder, else the row's ``task``. A row whose ``task``
names something besides the environment (an ``EnvGroup`` member; verifiers' ``"default"``
excepted) keys as ``<env>/<task>/<example_id>``; with neither known the key is ``<example_id>``.
``metadata.json``'s ``model`` is the ``model_version`` of rows that carry none. ``metrics``
become markers, ``tool_defs`` the ``tools`` (OpenAI shape), ``error`` an agent error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from whileai.table import _documents
from whileai.table.normalize import loads_or_raw

__all__ = ["is_episode", "read", "read_results", "read_traces", "task_of"]

#: The ``task`` verifiers gives a row whose dataset names none (``Environment``'s ``task="default"``).
_DEFAULT_TASK = "default"


def task_of(row: Mapping[str, Any], env: str | None = None) -> str | None:
    """The task of a vf-eval row: ``info.task_key`` (a whileai export), else ``<env>/<example_id>``.

    ``env`` is the run's environment (``metadata.json``'s ``env_id``, or the ``<env>--<model>``
    folder name); without it the row's ``task`` stands in for it.

    Examples:
        >>> task_of({"example_id": 3, "task": "refunds", "info": '{"task_key": "s-17"}'})
        's-17'
        >>> task_of({"example_id": 3, "task": "refunds", "info": {}})
        'refunds/3'
        >>> task_of({"example_id": 3}, "wiki-search"), task_of({"example_id": 3})
        ('wiki-search/3', '3')
        >>> task_of({"example_id": 3, "task": "math"}, "mix"), task_of({"example_id": 3, "task": "default"}, "mix")
        ('mix/math/3', 'mix/3')
    """
    info = loads_or_raw(row.get("info"))
    if isinstance(info, Mapping) and info.get("task_key") is not None:
        return str(info["task_key"])
    example = row.get("example_id")
    if example is None:
        return None
    task = str(row["task"]) if row.get("task") else None
    if env is None:
        return f"{task}/{example}" if task else str(example)
    if task is not None and task not in (env, _DEFAULT_TASK):
        return f"{env}/{task}/{example}"
    return f"{env}/{example}"


class _Run(NamedTuple):
    """What the run around a ``results.jsonl`` says: its environment and model (None where unknown)."""

    env: str | None
    model: str | None


def _run_of(path: str | Path) -> _Run:
    """The environment and model of the vf-eval run that wrote ``path`` (a ``results.jsonl``).

    From the ``metadata.json`` beside it (``env_id``, or ``env`` in verifiers 0.1.x, and
    ``model``), else the environment from the ``<env>--<model>/<run id>/`` folders vf-eval saves
    into (verifiers ``utils.eval_utils.save_results_to_disk``). An unreadable ``metadata.json`` counts
    as absent: it holds no rollouts.

    Examples:
        >>> _run_of("outputs/evals/wiki-search--openai--gpt-4.1-mini/a1b2c3d4/results.jsonl").env
        'wiki-search'
        >>> _run_of("results.jsonl")
        _Run(env=None, model=None)
    """
    path = Path(path)
    meta: Any = None
    try:
        with open(path.parent / "metadata.json", encoding="utf-8-sig") as handle:
            meta = json.load(handle)
    except (OSError, ValueError):
        meta = None
    meta = meta if isinstance(meta, Mapping) else {}
    env = meta.get("env_id") or meta.get("env")
    model = meta.get("model")
    if not env:
        folder = path.parent.parent.name
        env = folder.partition("--")[0] if "--" in folder and not folder.startswith("--") else None
    return _Run(str(env) if env else None, str(model) if model else None)


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Read vf-eval ``results.jsonl`` rows as row dicts (the prompt and completion make one conversation)."""
    path = Path(path)
    rows = _documents.iter_json_lines(path)
    run = _run_of(path)
    keys = [task_of(r, run.env) or "" for r in rows]
    out: list[dict[str, Any]] = []
    for row, key, index in zip(rows, keys, _documents.rollout_indices(keys)):
        row = dict(row)
        info = loads_or_raw(row.get("info"))
        if isinstance(info, Mapping):
            row["info"] = dict(info)
        if "scenario_id" not in row and key:
            row["scenario_id"] = key
        if row.get("model_version") is None and run.model is not None:
            row["model_version"] = run.model
        row.setdefault("rollout_index", index)
        metrics = row.pop("metrics", None)
        if isinstance(metrics, Mapping):
            numbers = {str(k): v for k, v in ((k, _documents.number(v)) for k, v in metrics.items()) if v is not None}
            row.setdefault("markers", numbers or None)
            for key in metrics:  # the flattened copies vf-eval adds beside metrics
                row.pop(key, None)
        defs = row.pop("tool_defs", None)
        if isinstance(defs, list) and "tools" not in row:
            row["tools"] = [{"type": "function", "function": dict(d)} if isinstance(d, Mapping) and "function" not in d
                            else d for d in defs] or None
        if "is_truncated" in row and "truncated" not in row:
            row["truncated"] = bool(row.pop("is_truncated"))
        error = row.get("error")
        if error:
            row.setdefault("finish_reason", "error")
            if row.get("reward") in (None, 0, 0.0):
                row["reward"] = None  # vf-eval writes 0.0 for a rollout that raised: no grade, not a fail
                row.setdefault("judge_status", "agent_error")
            row["error"] = error if isinstance(error, str) else json.dumps(error, default=str)
        elif row.get("reward") is not None:
            row.setdefault("judge_status", "ok")
        lineage = _documents.as_map(row.get("lineage"))
        row["lineage"] = {"source": "verifiers", "log": str(path), **lineage}
        out.append(row)
    return out


def is_episode(row: Mapping[str, Any]) -> bool:
    """A verifiers 0.4 ``traces.jsonl`` line (an ``Episode``): ``env``, ``task`` and ``traces``."""
    return isinstance(row.get("traces"), list) and isinstance(row.get("task"), Mapping) and "env" in row


def read(path: str | Path) -> list[dict[str, Any]]:
    """Read vf-eval output of either release: 0.4 ``traces.jsonl`` episodes or 0.3 ``results.jsonl`` rows."""
    value, _ = _documents.first_record(Path(path))
    return read_traces(path) if isinstance(value, Mapping) and is_episode(value) else read_results(path)


def _branch(nodes: list[Any]) -> list[dict[str, Any]]:
    """The final branch of a trace's message graph, root first (verifiers ``Trace.messages``)."""
    nodes = [n for n in nodes if isinstance(n, Mapping)]
    has_child = {n.get("parent") for n in nodes if isinstance(n.get("parent"), int)}
    leaves = [i for i in range(len(nodes)) if i not in has_child]
    if not leaves:
        return []
    path: list[dict[str, Any]] = []
    current: Any = leaves[-1]
    seen: set[int] = set()
    while isinstance(current, int) and 0 <= current < len(nodes) and current not in seen:
        seen.add(current)
        message = nodes[current].get("message")
        if isinstance(message, Mapping):
            path.append(dict(message))
        current = nodes[current].get("parent")
    return path[::-1]


def _reward(rewards: Any) -> float | None:
    """The weighted sum of a trace's named rewards (verifiers ``Trace.reward``); None when none was scored."""
    parts: list[float] = []
    for entry in (rewards or {}).values():
        score = _documents.number(entry.get("score")) if isinstance(entry, Mapping) else None
        if score is not None:
            weight = _documents.number(entry.get("weight", 1.0))
            parts.append(score * (1.0 if weight is None else weight))
    return float(sum(parts)) if parts else None


def _error_text(errors: Any) -> str | None:
    """``type: message`` of the last error of a list of verifiers ``Error`` records."""
    errors = [e for e in errors or [] if isinstance(e, Mapping)]
    if not errors:
        return None
    last = errors[-1]
    return ": ".join(str(x) for x in (last.get("type"), last.get("message")) if x) or json.dumps(last, default=str)


def read_traces(path: str | Path) -> list[dict[str, Any]]:
    """Read a verifiers 0.4 ``traces.jsonl`` as row dicts, one per episode (the module docstring says how).

    Returns:
        Rows with scenario_id, rollout_index, rollout_id, messages, tools, reward, judge_name,
        judge_status, markers, finish_reason, error, model_version, metadata (the task's data
        beside its info), lineage.
    """
    path = Path(path)
    episodes = _documents.iter_json_lines(path)
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for episode in episodes:
        task = _documents.as_map(episode.get("task"))
        data = _documents.as_map(task.get("data"))
        info = loads_or_raw(data.get("info"))
        info = info if isinstance(info, Mapping) else {}
        env = _documents.as_map(episode.get("env"))
        env_id = env.get("id") or env.get("name") or None
        traces = [t for t in episode.get("traces") or [] if isinstance(t, Mapping)]
        trace = traces[0] if traces else {}
        example = task.get("key") if task.get("key") is not None else data.get("idx")
        if info.get("task_key") is not None:
            key = str(info["task_key"])
        elif example is not None:
            key = f"{env_id}/{example}" if env_id else str(example)
        else:
            key = ""
        keys.append(key)
        agent = _documents.as_map(trace.get("agent"))
        model = _documents.as_map(agent.get("config")).get("model") or next(
            (c.get("model") for c in trace.get("calls") or [] if isinstance(c, Mapping) and c.get("model")), None)
        error = _error_text([*(episode.get("errors") or []), *(trace.get("errors") or [])])
        reward = None if error else _reward(trace.get("rewards"))
        markers = {str(k): v for k, v in ((k, _documents.number(_documents.as_map(r).get("score")))
                                          for k, r in (trace.get("rewards") or {}).items()) if v is not None}
        markers.update({str(k): v for k, v in ((k, _documents.number(m)) for k, m in (trace.get("metrics") or {}).items())
                        if v is not None})
        tools = [{"type": "function", "function": {k: v for k, v in t.items() if k != "type"}}
                 if isinstance(t, Mapping) and "function" not in t else t for t in trace.get("tools") or []]
        version = _documents.as_map(trace.get("verifiers")).get("version")
        row: dict[str, Any] = {
            "scenario_id": key or None,
            "rollout_id": trace.get("id") or episode.get("id"),
            "messages": _branch(trace.get("nodes") or []),
            "tools": tools or None,
            "reward": reward,
            "judge_name": ("+".join(str(k) for k in trace.get("rewards") or {}) or None) if reward is not None else None,
            "judge_status": "agent_error" if error else ("ok" if reward is not None else "missing_reward"),
            "markers": (markers or None) if not error else None,
            "finish_reason": "error" if error else None,
            "truncated": bool(trace.get("is_timeout") or episode.get("is_timeout")) or None,
            "error": error,
            "model_version": None if model is None else str(model),
            "metadata": {"info": dict(info), **{k: v for k, v in data.items() if k in ("idx", "id", "answer")}} or None,
            "lineage": {k: str(v) for k, v in {"source": "verifiers", "log": str(path), "env": env_id,
                                               "verifiers_version": version, "episode_id": episode.get("id"),
                                               "stop_condition": trace.get("stop_condition")}.items()
                        if v is not None},
        }
        if error:
            row["judge_meta"] = {"error": error}
        rows.append(row)
    for row, index in zip(rows, _documents.rollout_indices(keys)):
        row["rollout_index"] = index
    return rows
