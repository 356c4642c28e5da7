"""Read an openai/evals JSONL event log (``oaieval``'s ``--record_path``) as rollout rows.

The log is what ``evals.record.LocalRecorder`` writes: a ``{"spec": ...}`` line, then one event
per line (``run_id``, ``event_id``, ``sample_id``, ``type``, ``data``), then a
``{"final_report": ...}`` line. A sample is a task (``scenario_id`` = its ``sample_id``, e.g.
``arithmetic.dev.3``) with one rollout per log. ``sampling`` events give the conversation
(``data.prompt``, ``data.sampled``); a ``match`` event's ``correct`` is the reward; a ``metrics``
event's numbers are markers (its ``score`` the reward when no match event is there).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.table import _documents

__all__ = ["read_event_log"]


def _prompt_messages(prompt: Any) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if isinstance(prompt, list):
        return [dict(m) if isinstance(m, Mapping) else {"role": "user", "content": str(m)} for m in prompt]
    return []


def read_event_log(path: str | Path) -> list[dict[str, Any]]:
    """openai/evals events grouped by sample into row dicts.

    Returns:
        Rows with scenario_id, rollout_index, rollout_id, messages, reward, judge_name,
        judge_status, markers, target (the match event's ``expected``), model_version, lineage.
    """
    path = Path(path)
    spec: Mapping[str, Any] = {}
    samples: dict[str, list[Mapping[str, Any]]] = {}
    for record in _documents.iter_json_lines(path):
        if isinstance(record.get("spec"), Mapping):
            spec = record["spec"]
        elif record.get("sample_id") is not None and isinstance(record.get("data"), Mapping):
            samples.setdefault(str(record["sample_id"]), []).append(record)
    model = ",".join(str(f) for f in spec.get("completion_fns") or []) or None
    rows = []
    for sample_id, events in samples.items():
        events.sort(key=lambda e: (e.get("event_id") is None, e.get("event_id") or 0))
        messages: list[dict[str, Any]] = []
        markers: dict[str, float] = {}
        reward = None
        judge = None
        expected = None
        sampler = None
        for event in events:
            data = event["data"]
            kind = event.get("type")
            if kind == "sampling":
                turns = _prompt_messages(data.get("prompt"))
                # a later sampling event repeats the conversation so far: keep only what is new
                messages = turns if len(turns) >= len(messages) else messages + turns
                sampler = data.get("model") or sampler
                sampled = data.get("sampled")
                text = sampled[0] if isinstance(sampled, list) and sampled else sampled
                if text is not None:
                    messages.append({"role": "assistant", "content": str(text)})
            elif kind == "match":
                reward = _documents.number(data.get("correct"))
                judge = "match"
                expected = data.get("expected")
            elif kind == "metrics":
                for key, value in data.items():
                    number = _documents.number(value)
                    if number is not None:
                        markers[str(key)] = number
        if reward is None and "score" in markers:
            reward, judge = markers["score"], "score"
        if judge == "match":
            markers["match"] = reward if reward is not None else markers.get("match", 0.0)
        rows.append({
            "scenario_id": sample_id,
            "rollout_index": 0,
            "rollout_id": f"{spec.get('run_id', path.stem)}/{sample_id}",
            "messages": messages,
            "reward": reward,
            "judge_name": judge,
            "judge_status": "ok" if reward is not None else "missing_reward",
            "markers": markers or None,
            "target": expected,
            "model_version": None if sampler is None and model is None else str(sampler or model),
            "lineage": {k: str(v) for k, v in {"source": "openai_evals", "log": str(path),
                                               "eval_name": spec.get("eval_name"),
                                               "run_id": spec.get("run_id")}.items() if v is not None},
        })
    return rows
