"""Read vf-eval output (verifiers' ``results.jsonl``) as rollout rows.

A vf-eval row (``verifiers.utils.save_utils.state_to_output``) carries ``example_id`` (the
dataset row), ``prompt`` and ``completion`` (message lists; each tool call written as its JSON
text, which is decoded), ``answer``, ``info``, ``reward``, ``metrics`` (one number per rubric
function, also flattened onto the row), ``error``, ``is_truncated``, ``tool_defs`` and, in older
releases, ``task``. The rollouts of one example share its ``example_id``. The task is the
``task_key`` a whileai export wrote into ``info`` (a dict or its JSON text), else
``<task>/<example_id>``. ``metrics`` become markers, ``tool_defs`` the ``tools`` (OpenAI
shape), ``error`` an agent error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.table import _documents
from whileai.table.normalize import loads_or_raw

__all__ = ["read_results", "task_of"]


def task_of(row: Mapping[str, Any]) -> str | None:
    """The task of a vf-eval row: ``info.task_key`` (a whileai export), else ``<task>/<example_id>``.

    Examples:
        >>> task_of({"example_id": 3, "task": "refunds", "info": '{"task_key": "s-17"}'})
        's-17'
        >>> task_of({"example_id": 3, "task": "refunds", "info": {}})
        'refunds/3'
    """
    info = loads_or_raw(row.get("info"))
    if isinstance(info, Mapping) and info.get("task_key") is not None:
        return str(info["task_key"])
    example = row.get("example_id")
    if example is None:
        return None
    task = row.get("task")
    return f"{task}/{example}" if task else str(example)


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Read vf-eval ``results.jsonl`` rows as row dicts (the prompt and completion make one conversation)."""
    path = Path(path)
    rows = _documents.iter_json_lines(path)
    keys = [task_of(r) or "" for r in rows]
    out: list[dict[str, Any]] = []
    for row, key, index in zip(rows, keys, _documents.rollout_indices(keys)):
        row = dict(row)
        info = loads_or_raw(row.get("info"))
        if isinstance(info, Mapping):
            row["info"] = dict(info)
        if "scenario_id" not in row and key:
            row["scenario_id"] = key
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
