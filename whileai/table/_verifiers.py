"""Read vf-eval output (verifiers' ``results.jsonl``) as rollout rows.

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

__all__ = ["read_results", "task_of"]

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
