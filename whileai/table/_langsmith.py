"""Read a LangSmith run export (runs as JSON or JSONL) as rollout rows.

A run is LangSmith's ``Run`` (``langsmith.schemas.Run``: ``id``, ``run_type``, ``inputs``,
``outputs``, ``error``, ``reference_example_id``, ``parent_run_id``, ``trace_id``,
``session_id``, ``feedback_stats``), as ``client.list_runs(...)`` returns and the SDK serialises
it. A root run (no ``parent_run_id``) is one rollout; child runs are skipped. The task is the
dataset example the run answered (``reference_example_id``), else the prompt, so the repetitions
of an experiment are the rollouts. Feedback is the grading: each ``feedback_stats`` key's mean
(``avg``) lands on ``markers``, and the reward is the only key, or the first the export lists
(``frame(..., scorer=KEY)`` picks another). Chat-shaped inputs and outputs (``messages``,
``choices``, LangChain ``generations``) become the conversation. Messages serialised the
LangChain way (``{"type": "human" | "ai" | "tool" | "system", "content", "tool_calls":
[{"name", "args", "id"}], "tool_call_id"}``, or the ``{"lc": 1, "type": "constructor", "id":
[..., "HumanMessage"], "kwargs": {...}}`` form) are read as role messages; outputs that repeat the
input conversation (a LangGraph state) add only the turns after it.
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


#: LangChain message types (``BaseMessage.type``, or the class a constructor form names) as chat roles.
_LC_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system", "function": "tool",
             "developer": "system", "HumanMessage": "user", "AIMessage": "assistant", "ToolMessage": "tool",
             "SystemMessage": "system", "FunctionMessage": "tool"}


def _lc_body(message: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]] | None:
    """A LangChain message's type (or class name) and fields, or None for anything else."""
    if "role" in message:
        return None
    if message.get("lc") == 1 and message.get("type") == "constructor" and isinstance(message.get("kwargs"), Mapping):
        ids = message.get("id")
        cls = str(ids[-1]).removesuffix("Chunk") if isinstance(ids, list) and ids else None
        kwargs = message["kwargs"]
        return (cls if cls in _LC_ROLES or cls == "ChatMessage" else kwargs.get("type")), kwargs
    kind = message.get("type")
    if isinstance(kind, str) and (kind.removesuffix("Chunk") in _LC_ROLES or kind == "chat") and (
            "content" in message or "data" in message):  # an OpenAI tool definition has a type but no content
        data = message.get("data")  # langchain_core.messages.messages_to_dict: {"type", "data": {...}}
        body = data if isinstance(data, Mapping) and "content" not in message else message
        return kind.removesuffix("Chunk"), body
    return None


def _lc_message(kind: str | None, body: Mapping[str, Any]) -> dict[str, Any]:
    """One LangChain message in the table's chat shape (OpenAI-style tool calls, ``arguments`` from ``args``)."""
    role = body.get("role") if kind in ("chat", "ChatMessage") else _LC_ROLES.get(kind or "")
    content = body.get("content")
    if isinstance(content, list) and all(isinstance(b, str) or (isinstance(b, Mapping) and b.get("type") == "text")
                                         for b in content):
        content = "".join(b if isinstance(b, str) else str(b.get("text") or "") for b in content)
    out: dict[str, Any] = {"role": role or "user", "content": content}
    calls = body.get("tool_calls")
    if not calls:
        calls = _documents.as_map(body.get("additional_kwargs")).get("tool_calls")  # the provider's own shape
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [
            {"id": c.get("id"), "type": "function", "function": {"name": c.get("name"), "arguments": c.get("args")}}
            if isinstance(c, Mapping) and "function" not in c else c
            for c in calls
        ]
    if body.get("tool_call_id") is not None:
        out["tool_call_id"] = body["tool_call_id"]
    if out["role"] == "tool" and body.get("name") is not None:
        out["name"] = body["name"]
    return out


def _lc_messages(value: Any) -> list[dict[str, Any]] | None:
    """A list of LangChain messages (or a batch of one such list) as chat messages, else None."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]  # chat model inputs: a batch of one conversation
    if not isinstance(value, list) or not value or not all(isinstance(m, Mapping) for m in value):
        return None
    bodies = [_lc_body(m) for m in value]
    if all(b is None for b in bodies):
        return None
    return [_lc_message(*b) if b is not None else dict(m) for m, b in zip(value, bodies)]


def _with_role_messages(value: Any) -> Any:
    """``value`` with its LangChain ``messages`` (a LangGraph state, chat model inputs) as role messages."""
    if isinstance(value, Mapping):
        for key in ("messages", "input", "prompt"):
            found = _lc_messages(value.get(key))
            if found is not None:
                return {**value, key: found}
        return value
    found = _lc_messages(value)
    return {"messages": found} if found is not None else value


def _after(turns: list[Any], reply: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``reply`` without the input ``turns`` it repeats at its start (a LangGraph run's outputs hold the whole state)."""
    def same(a: Any, b: Any) -> bool:
        return isinstance(a, Mapping) and isinstance(b, Mapping) and (a.get("role"), a.get("content")) == (
            b.get("role"), b.get("content"))

    if len(reply) >= len(turns) and all(same(a, b) for a, b in zip(turns, reply)):
        return reply[len(turns):]
    return reply


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
            body = _lc_body(message) if isinstance(message, Mapping) else None
            if body is not None:
                return [{**_lc_message(*body), "role": "assistant"}]  # a generation is the model's reply
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
        turns = _documents.messages_of(_with_role_messages(inputs))
        reply = _reply(_with_role_messages(outputs))
        if turns:
            reply = _after(turns, reply)
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
