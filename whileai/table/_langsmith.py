"""Read a LangSmith run export (runs as JSON or JSONL) as rollout rows.

A run is LangSmith's ``Run`` (``langsmith.schemas.Run``: ``id``, ``run_type``, ``inputs``,
``outputs``, ``error``, ``reference_example_id``, ``parent_run_id``, ``trace_id``,
``session_id``, ``feedback_stats``), as ``client.list_runs(...)`` returns and the SDK serialises
it. A root run (no ``parent_run_id``) is one rollout; child runs are skipped. The task is the
dataset example the run answered (``reference_example_id``), else the prompt, so the repetitions
of an experiment are the rollouts. Feedback is the grading: each ``feedback_stats`` key's mean
(``avg``) lands on ``markers``, and the reward is the only key, or the first the export lists
(``frame(..., scorer=KEY)`` picks another). Chat-shaped inputs and outputs (``messages``,
``choices``, LangChain ``generations``) become the conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import SchemaError
from whileai.table import _documents
from whileai.table.normalize import dumps

__all__ = ["read_runs"]


def _runs(path: Path) -> list[dict[str, Any]]:
    _, whole = _documents.first_record(path)
    if whole:
        data = _documents.load_document(path)
        if isinstance(data, Mapping):
            data = data.get("runs") or [data]
        if not isinstance(data, list):
            raise SchemaError(f"file {str(path)!r} must hold a list of LangSmith runs, got {type(data).__name__}. "
                              "Pass the exported runs.", path=str(path))
        return [r for r in data if isinstance(r, dict)]
    return _documents.iter_json_lines(path)


def _reply(outputs: Any) -> list[dict[str, Any]]:
    """The assistant turns a run's outputs hold (OpenAI ``choices``, LangChain ``generations``, ``messages``)."""
    if not isinstance(outputs, Mapping):
        return []
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping) and isinstance(choices[0].get("message"), Mapping):
        return [dict(choices[0]["message"])]
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0][0] if isinstance(generations[0], list) and generations[0] else generations[0]
        if isinstance(first, Mapping):
            message = first.get("message")
            kwargs = message.get("kwargs") if isinstance(message, Mapping) else None
            if isinstance(kwargs, Mapping):
                return [{"role": "assistant", "content": kwargs.get("content"), "tool_calls": kwargs.get("tool_calls")}]
            if isinstance(first.get("text"), str):
                return [{"role": "assistant", "content": first["text"]}]
    messages = _documents.messages_of(outputs)
    return messages or []


def read_runs(path: str | Path) -> list[dict[str, Any]]:
    """LangSmith root runs as row dicts.

    Returns:
        Rows with scenario_id (the dataset example, when the run has one), rollout_index,
        rollout_id, prompt or messages, final_text, reward, judge_name, judge_status, markers,
        finish_reason, model_version, metadata, lineage.
    """
    path = Path(path)
    runs = [r for r in _runs(path) if not r.get("parent_run_id")]
    order: list[str] = []
    for run in runs:
        stats = run.get("feedback_stats")
        if isinstance(stats, Mapping):
            order.extend(str(k) for k in stats if str(k) not in order)
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for run in sorted(runs, key=lambda r: str(r.get("start_time") or "")):
        example = run.get("reference_example_id")
        inputs, outputs = run.get("inputs"), run.get("outputs")
        keys.append(str(example) if example is not None else dumps(inputs))
        markers: dict[str, float] = {}
        for key, stat in (run.get("feedback_stats") or {}).items():
            value = stat.get("avg") if isinstance(stat, Mapping) else stat
            number = _documents.number(value)
            if number is not None:
                markers[str(key)] = number
        judge = next((k for k in order if k in markers), None)
        reward = markers.get(judge) if judge is not None else None
        error = run.get("error")
        extra = _documents.as_map(run.get("extra"))
        metadata = dict(_documents.as_map(extra.get("metadata"))) or None
        turns = _documents.messages_of(inputs)
        reply = _reply(outputs)
        final = _documents.text_of(outputs) if not reply else None
        row: dict[str, Any] = {
            "scenario_id": None if example is None else str(example),
            "rollout_id": None if run.get("id") is None else str(run["id"]),
            "reward": reward,
            "judge_name": judge,
            "judge_status": ("agent_error" if error and reward is None else
                             "ok" if reward is not None else "missing_reward"),
            "markers": markers or None,
            "finish_reason": "error" if error else None,
            "model_version": (metadata or {}).get("ls_model_name"),
            "metadata": metadata,
            "lineage": {k: str(v) for k, v in {"source": "langsmith", "log": str(path), "run_name": run.get("name"),
                                               "session_id": run.get("session_id"),
                                               "trace_id": run.get("trace_id")}.items() if v is not None},
        }
        if error:
            row["judge_meta"] = {"error": str(error)}
        if turns:
            row["messages"] = turns + reply + ([{"role": "assistant", "content": final}] if final else [])
        else:
            row["prompt"] = _documents.text_of(inputs)
            if reply:
                row["messages"] = [{"role": "user", "content": row["prompt"]}, *reply]
            else:
                row["final_text"] = final
        rows.append(row)
    for row, index in zip(rows, _documents.rollout_indices(keys)):
        row["rollout_index"] = index
    return rows
