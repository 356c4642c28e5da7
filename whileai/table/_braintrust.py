"""Read a Braintrust experiment export (the experiment's events, as JSON or JSONL) as rollout rows.

An experiment event carries ``input``, ``output``, ``expected``, ``scores`` (name to a number in
[0, 1] or null), ``metadata``, ``error`` and span ids (the Braintrust SDK's ``ExperimentEvent``;
``experiment.fetch()`` and the UI's JSON download give them). One root span is one rollout; child
spans (LLM calls, tools) are skipped. The task is the dataset record the row came from
(``origin.id``, else ``dataset_record_id``), else the input itself, so trials of one input are its
rollouts. Every score lands on ``markers``; the reward is the only score, or the first one the
export lists (``frame(..., scorer=NAME)`` picks another).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import SchemaError
from whileai.table import _documents
from whileai.table.normalize import dumps

__all__ = ["read_experiment"]


def _events(path: Path) -> list[dict[str, Any]]:
    kind, whole = _documents.first_record(path)
    if whole:
        data = _documents.load_document(path)
        if isinstance(data, Mapping):
            data = data.get("events") or data.get("rows") or [data]
        if not isinstance(data, list):
            raise SchemaError(f"file {str(path)!r} must hold a list of Braintrust events, got {type(data).__name__}. "
                              "Pass the experiment's exported events.", path=str(path))
        return [e for e in data if isinstance(e, dict)]
    return _documents.iter_json_lines(path)


def _is_root(event: Mapping[str, Any]) -> bool:
    if "is_root" in event and event["is_root"] is not None:
        return bool(event["is_root"])
    parents = event.get("span_parents")
    return not parents


def read_experiment(path: str | Path) -> list[dict[str, Any]]:
    """Braintrust experiment events as row dicts, one per root span.

    Returns:
        Rows with scenario_id (the dataset record, when the export names it), rollout_index,
        rollout_id, prompt or messages, final_text, reward, judge_name, judge_status, markers
        (every score), target (``expected``), metadata, finish_reason, lineage.
    """
    path = Path(path)
    events = [e for e in _events(path) if _is_root(e)]
    order: list[str] = []
    for event in events:
        scores = event.get("scores")
        if isinstance(scores, Mapping):
            order.extend(str(k) for k in scores if str(k) not in order)
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for event in events:
        origin = _documents.as_map(event.get("origin"))
        record = origin.get("id") or event.get("dataset_record_id")
        raw_input = event.get("input")
        keys.append(str(record) if record is not None else dumps(raw_input))
        scores = {str(k): _documents.number(v) for k, v in (event.get("scores") or {}).items()}
        markers = {k: v for k, v in scores.items() if v is not None}
        judge = next((k for k in order if k in scores), None)
        reward = scores.get(judge) if judge is not None else None
        error = event.get("error")
        messages = _documents.messages_of(raw_input)
        output = event.get("output")
        out_messages = _documents.messages_of(output) if not isinstance(output, str) else None
        row: dict[str, Any] = {
            "scenario_id": None if record is None else str(record),
            "rollout_id": event.get("id") or event.get("span_id"),
            "final_text": _documents.text_of(output) if out_messages is None else None,
            "reward": reward,
            "judge_name": judge,
            "judge_status": ("agent_error" if error and reward is None else
                             "ok" if reward is not None else "missing_reward"),
            "markers": markers or None,
            "target": None if event.get("expected") is None else event["expected"],
            "metadata": event.get("metadata") or None,
            "finish_reason": "error" if error else None,
            "lineage": {k: v for k, v in {"source": "braintrust", "log": str(path),
                                          "experiment_id": event.get("experiment_id"),
                                          "root_span_id": event.get("root_span_id")}.items() if v is not None},
        }
        if error:
            row["judge_meta"] = {"error": error if isinstance(error, str) else dumps(error)}
        if messages:
            row["messages"] = messages + (out_messages or ([{"role": "assistant", "content": row["final_text"]}]
                                                           if row["final_text"] is not None else []))
        else:
            row["prompt"] = _documents.text_of(raw_input)
        rows.append(row)
    for row, index in zip(rows, _documents.rollout_indices(keys)):
        row["rollout_index"] = index
    return rows
