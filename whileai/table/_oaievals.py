"""Read an openai/evals JSONL event log (``oaieval``'s ``--record_path``) as rollout rows.

The log is what ``evals.record.LocalRecorder`` writes: a ``{"spec": ...}`` line, then one event
per line (``run_id``, ``event_id``, ``sample_id``, ``type``, ``data``), then a
``{"final_report": ...}`` line. A sample is a task (``scenario_id`` = its ``sample_id``, e.g.
``arithmetic.dev.3``) with one rollout per log. ``sampling`` events give the conversation
(``data.prompt``, ``data.sampled``); a ``match`` event's ``correct`` is the reward; a ``metrics``
event's numbers are markers (its ``score`` the reward when no match event is there).

A model-graded eval (``evals.elsuite.modelgraded.classify:ModelBasedClassify``) records two
sampling events per sample: the agent's completion, then the grader's (whose prompt quotes the
completion), followed by a ``metrics`` event carrying the grader's ``choice``. The last sampling
event before such a ``metrics`` event is the grader's: it is left out of the conversation and
``model_version``, and its sampled text is the ``reason`` (its model in ``judge_meta``).
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


def _first_text(sampled: Any) -> Any:
    return sampled[0] if isinstance(sampled, list) and sampled else sampled


def _grader_samplings(events: list[Mapping[str, Any]]) -> set[int]:
    """The indices of grader sampling events: the last sampling before each ``metrics`` event with a ``choice``.

    That ``metrics`` event is what a model-graded eval records after asking its grader, so the
    sampling just before it is the grader's, never the agent's.
    """
    graders: set[int] = set()
    last: int | None = None
    for index, event in enumerate(events):
        if event.get("type") == "sampling":
            last = index
        elif event.get("type") == "metrics" and "choice" in event["data"] and last is not None:
            graders.add(last)
            last = None
    return graders


def read_event_log(path: str | Path) -> list[dict[str, Any]]:
    """openai/evals events grouped by sample into row dicts.

    Returns:
        Rows with scenario_id, rollout_index, rollout_id, messages, reward, judge_name,
        judge_status, reason and judge_meta (a model-graded eval's grader reply and model), markers,
        target (the match event's ``expected``), model_version, lineage.
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
        graders = _grader_samplings(events)
        messages: list[dict[str, Any]] = []
        markers: dict[str, float] = {}
        reward = None
        judge = None
        expected = None
        sampler = None
        grading: Mapping[str, Any] = {}
        for index, event in enumerate(events):
            data = event["data"]
            kind = event.get("type")
            if index in graders:
                grading = data
            elif kind == "sampling":
                turns = _prompt_messages(data.get("prompt"))
                # a later sampling event repeats the conversation so far: keep only what is new
                messages = turns if len(turns) >= len(messages) else messages + turns
                sampler = data.get("model") or sampler
                text = _first_text(data.get("sampled"))
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
        verdict = _first_text(grading.get("sampled"))
        rows.append({
            "scenario_id": sample_id,
            "rollout_index": 0,
            "rollout_id": f"{spec.get('run_id', Path(_documents.plain_name(path)).stem)}/{sample_id}",
            "messages": messages,
            "reward": reward,
            "judge_name": judge,
            "judge_status": "ok" if reward is not None else "missing_reward",
            "markers": markers or None,
            "target": expected,
            "reason": None if verdict is None else str(verdict),
            "judge_meta": {"grader_model": str(grading["model"])} if grading.get("model") else None,
            "model_version": None if sampler is None and model is None else str(sampler or model),
            "lineage": {k: str(v) for k, v in {"source": "openai_evals", "log": str(path),
                                               "eval_name": spec.get("eval_name"),
                                               "run_id": spec.get("run_id")}.items() if v is not None},
        })
    return rows
