"""Row-level normalisation: one source row dict to the canonical cell values.

Used at the edge only (rows given as dicts, JSONL lines, columns whose nested shape is not ours).
Inside the library everything is columnar.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from whileai.defaults import SHORT_HASH_CHARS
from whileai.table.schema import ROLE_ALIASES

__all__ = [
    "json_cell",
    "json_cells",
    "json_objects",
    "canonical_arguments",
    "dumps",
    "loads_or_raw",
    "messages_from_steps",
    "normalize_message",
    "normalize_messages",
    "prompt_hash",
    "BadMessageError",
]


class BadMessageError(ValueError):
    """A message the table cannot hold as given; the reader re-raises it naming the row."""

_MESSAGE_KEYS = ("role", "content", "name", "tool_call_id", "tool_calls")


#: The tag of the canonical JSON form (sorted keys, ``,``/``:`` separators, UTF-8 kept, anything
#: else through ``str``). A hash over it names this tag, so a change of form is a change of tag.
CANONICAL_JSON = "json-sorted-compact-v1"

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode


def dumps(value: Any) -> str:
    """Canonical JSON text (:data:`CANONICAL_JSON`): the form every json column holds.

    The one implementation: json columns, tool-call arguments, content hashes (a spec's version,
    a harness fingerprint) and the simulator's cached JSON all call it (``table.canonical_json``).

    Examples:
        >>> dumps({"b": 1, "a": [1, "é"]})
        '{"a":[1,"é"],"b":1}'
    """
    return _CANONICAL(value)


def loads_or_raw(text: Any) -> Any:
    """Decode canonical JSON text; a value that is not JSON text comes back as it was."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def prompt_hash(prompt: str) -> str:
    """A stable task key for a row with no scenario_id or task_id: ``p-`` + sha256 of the prompt."""
    return "p-" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:SHORT_HASH_CHARS]


def canonical_arguments(arguments: Any) -> str:
    """Tool-call arguments as canonical JSON text, whether given as a JSON string or a dict.

    A string that is not valid JSON is kept verbatim (it is what the model emitted, and an
    exporter's round-trip check should see it fail), so nothing is lost.

    Examples:
        >>> canonical_arguments('{"b": 1, "a": "x"}')
        '{"a":"x","b":1}'
        >>> canonical_arguments({"b": 1, "a": "x"})
        '{"a":"x","b":1}'
    """
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        stripped = arguments.strip()
        if not stripped:
            return "{}"
        try:
            return dumps(json.loads(stripped))
        except ValueError:
            return arguments
    return dumps(arguments)


def _content_text(content: Any) -> tuple[str | None, Any]:
    """Message content as text, plus the original parts when they were not all text."""
    if content is None or isinstance(content, str):
        return content, None
    if isinstance(content, list):
        texts: list[str] = []
        only_text = True
        for part in content:
            if isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
                texts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                texts.append(part)
            else:
                only_text = False
        return "".join(texts), (None if only_text else content)
    if isinstance(content, (dict, int, float, bool)):
        return dumps(content), None
    return str(content), None


def _tool_call(call: Any, index: int) -> dict[str, Any]:
    if isinstance(call, str) and call.lstrip().startswith("{"):
        # verifiers' vf-eval writes each tool call as its JSON text
        decoded = loads_or_raw(call)
        call = decoded if isinstance(decoded, Mapping) else call
    if not isinstance(call, Mapping):
        return {"id": None, "name": str(call), "arguments": "{}"}
    fn = call.get("function")
    if isinstance(fn, Mapping):
        name, arguments = fn.get("name"), fn.get("arguments")
    else:
        name, arguments = call.get("name", call.get("tool")), call.get("arguments", call.get("args"))
    call_id = call.get("id")
    return {
        "id": None if call_id is None else str(call_id),
        "name": None if name is None else str(name),
        "arguments": canonical_arguments(arguments),
    }


#: ShareGPT-style speaker names (``{"from": "human", "value": ...}``) and their chat roles.
_SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                   "model": "assistant", "system": "system", "tool": "tool", "observation": "tool",
                   "function_response": "tool", "ipython": "tool"}


#: Anthropic Messages API content blocks that are a conversation's structure, not its text: a
#: list of blocks holding any of them is converted (:func:`_anthropic_turns`); any other list of
#: parts (OpenAI's ``text``/``image_url``...) is read as multi-part content.
_ANTHROPIC_STRUCTURE = frozenset({"tool_use", "tool_result", "thinking"})


def _block_type(block: Any) -> Any:
    return block.get("type") if isinstance(block, Mapping) else None


def _anthropic_turns(message: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """An Anthropic Messages API message as OpenAI-shaped source messages; None when it is not one.

    Anthropic (https://docs.anthropic.com/en/api/messages, the tool use and extended thinking
    guides) writes ``content`` as a list of blocks. ``tool_use`` blocks ``{id, name, input}``
    become tool calls; ``thinking`` blocks become ``reasoning_content`` (their ``signature``, a
    token only the API reads back, is not kept); each ``tool_result`` block ``{tool_use_id,
    content, is_error}`` becomes a ``tool`` message, in order, with ``is_error`` and any other key
    of the block kept, and the message's other blocks follow as a message of its own role. Text
    blocks are the content; any other block (``image``, ``redacted_thinking``...) stays in the
    content, which the reader then keeps as parts. None-valued keys count as absent (a Parquet
    struct column gives every block every key).
    """
    content = message.get("content")
    if not isinstance(content, list) or not any(_block_type(b) in _ANTHROPIC_STRUCTURE for b in content):
        return None
    rest: dict[str, Any] = {k: v for k, v in message.items() if k != "content"}
    results: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    thoughts: list[str] = []
    kept: list[Any] = []
    for block in content:
        kind = _block_type(block)
        if kind == "tool_use":
            calls.append({"id": block.get("id"), "name": block.get("name"), "arguments": block.get("input")})
        elif kind == "tool_result":
            result = {k: v for k, v in block.items() if k not in ("type", "tool_use_id", "content") and v is not None}
            results.append({"role": "tool", "tool_call_id": block.get("tool_use_id"),
                            "content": block.get("content"), **result})
        elif kind == "thinking":  # Mistral's thinking chunk holds a list of text chunks
            thought = block.get("thinking")
            thoughts.append(thought if isinstance(thought, str) else _content_text(thought)[0] or "")
        else:
            kept.append(block)
    if thoughts:
        given = rest.get("reasoning_content")
        rest["reasoning_content"] = "\n".join([given, *thoughts] if isinstance(given, str) and given else thoughts)
    if calls:  # after any the message also lists in OpenAI's shape
        given_calls = loads_or_raw(rest.get("tool_calls"))
        rest["tool_calls"] = [*(given_calls if isinstance(given_calls, list) else [given_calls] if given_calls else []),
                              *calls]
    if results and not kept and not calls and not thoughts:
        # only tool results: the message's own keys (other than its role) go on the last one
        results[-1] = {**{k: v for k, v in rest.items() if k != "role"}, **results[-1]}
        return results
    return [*results, {**rest, "content": kept or None}]


def _source_turns(message: Any) -> list[Any]:
    """One source message as the source messages it stands for (ShareGPT renamed, Anthropic split)."""
    if isinstance(message, Mapping) and "role" not in message and "from" in message and "value" in message:
        speaker = str(message["from"])
        rest = {k: v for k, v in message.items() if k not in ("from", "value")}
        message = {"role": _SHAREGPT_ROLES.get(speaker.lower(), speaker), "content": message["value"], **rest}
    if isinstance(message, Mapping):
        turns = _anthropic_turns(message)
        if turns is not None:
            return turns
    return [message]


def normalize_message(message: Any) -> dict[str, Any]:
    """One source message (OpenAI, whileai 0.131, ShareGPT, inspect-like or Anthropic shape) as a MESSAGE dict.

    An Anthropic user message with ``tool_result`` blocks stands for several messages (one
    ``tool`` message per result): :func:`normalize_messages` reads it, this raises
    :class:`BadMessageError`.
    """
    turns = _source_turns(message)
    if len(turns) != 1:
        raise BadMessageError(
            f"content must be one message, got {sum(_block_type(b) == 'tool_result' for b in message['content'])} "
            "Anthropic tool_result blocks, each a tool message. Read the conversation with normalize_messages")
    return _normalize_one(turns[0])


def _normalize_one(message: Any) -> dict[str, Any]:
    if not isinstance(message, Mapping):
        return {"role": "user", "content": None if message is None else str(message), "name": None,
                "tool_call_id": None, "tool_calls": [], "extra": None}
    content, parts = _content_text(message.get("content"))
    calls = message.get("tool_calls") or []
    if isinstance(calls, str):  # JSON text of a list is accepted; any other text is not a tool call
        decoded = loads_or_raw(calls)
        if not isinstance(decoded, list):
            raise BadMessageError(f"tool_calls must be a list of tool calls, got the text {calls[:80]!r}")
        calls = decoded
    if not isinstance(calls, list):
        calls = [calls]
    extra = {k: v for k, v in message.items() if k not in _MESSAGE_KEYS and v is not None}
    if parts is not None:
        extra["content_parts"] = parts
    role = message.get("role")
    role = ROLE_ALIASES.get(role, role) if isinstance(role, str) else role
    tool_call_id = message.get("tool_call_id")
    name = message.get("name")
    return {
        "role": None if role is None else str(role),  # a missing role is refused by the reader, never guessed
        "content": content,
        "name": None if name is None else str(name),
        "tool_call_id": None if tool_call_id is None else str(tool_call_id),
        "tool_calls": [_tool_call(c, i) for i, c in enumerate(calls)],
        "extra": dumps(extra) if extra else None,
    }


def normalize_messages(messages: Any) -> list[dict[str, Any]] | None:
    """A conversation as a list of MESSAGE dicts; a JSON string of a list is decoded first.

    An Anthropic message may stand for several (a user message of ``tool_result`` blocks is one
    ``tool`` message per result, then its text as a user message).
    """
    if messages is None:
        return None
    if isinstance(messages, str):
        decoded = loads_or_raw(messages)
        messages = decoded if isinstance(decoded, list) else [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        messages = [messages]
    out = [_normalize_one(turn) for m in messages for turn in _source_turns(m)]
    _link_tool_calls(out)
    return out


def _link_tool_calls(messages: list[dict[str, Any]]) -> None:
    """Give id-less tool calls ``call_0000``-style ids and point id-less tool results at them.

    whileai 0.131 rows carry tool calls without ids and tool messages without ``tool_call_id``;
    chat templates and trainers need the link, so results are matched to calls in order.
    """
    pending: list[str] = []
    used = {c["id"] for m in messages for c in m["tool_calls"] if c["id"] is not None}
    counter = 0
    for message in messages:
        for call in message["tool_calls"]:
            if call["id"] is None:
                while f"call_{counter:04d}" in used:
                    counter += 1
                call["id"] = f"call_{counter:04d}"
                used.add(call["id"])
            pending.append(call["id"])
        if message["role"] == "tool" and message["tool_call_id"] is None and pending:
            message["tool_call_id"] = pending.pop(0)
        elif message["role"] == "tool" and message["tool_call_id"] in pending:
            pending.remove(message["tool_call_id"])


def messages_from_steps(prompt: Any, steps: Any, final_text: Any, system_prompt: Any = None) -> list[dict[str, Any]]:
    """Rebuild the conversation of a whileai 0.131 engine row from its ``steps``.

    A tool step ``{tool, arguments, result[, text]}`` becomes an assistant turn with one tool call
    (its ``text`` as the content) and a tool message with the JSON result; ``{user: ...}`` a user
    turn; ``{text: ...}`` an assistant text turn; ``final_text`` the last assistant turn.
    """
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append(normalize_message({"role": "system", "content": system_prompt}))
    if prompt is not None:
        out.append(normalize_message({"role": "user", "content": prompt}))
    n_call = 0
    for step in steps or []:
        if not isinstance(step, Mapping):
            continue
        if "tool" in step:
            call_id = f"call_{n_call:04d}"
            n_call += 1
            out.append(normalize_message({
                "role": "assistant",
                "content": step.get("text"),
                "tool_calls": [{"id": call_id, "name": step["tool"], "arguments": step.get("arguments")}],
            }))
            result = step.get("result")
            out.append(normalize_message({
                "role": "tool",
                "name": step["tool"],
                "tool_call_id": call_id,
                "content": result if isinstance(result, str) else dumps(result),
            }))
        elif "user" in step:
            out.append(normalize_message({"role": "user", "content": step["user"]}))
        elif "text" in step:
            out.append(normalize_message({"role": "assistant", "content": step["text"]}))
    if final_text is not None:
        out.append(normalize_message({"role": "assistant", "content": final_text}))
    return out


def to_float(value: Any) -> float | None:
    """A numeric cell (bool, int, float, numeric string) as float; None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return float(value.strip())
    raise TypeError(type(value).__name__)


def is_nan(value: Any) -> bool:
    """True for a float NaN."""
    return isinstance(value, float) and math.isnan(value)


def json_cell(name: str, value: Any) -> str | None:
    """A free-form JSON column's cell (``tools``, ``judge_meta``...) as canonical JSON text.

    A string that already holds a JSON object or list stays as given (``tools`` excepted: a tool
    list is always written canonically); anything else is ``dumps``'d; None stays None.

    Examples:
        >>> json_cell("judge_meta", {"b": 1.0, "a": "x"}), json_cell("judge_meta", "12")
        ('{"a":"x","b":1.0}', '"12"')
    """
    if value is None:
        return None
    if isinstance(value, str) and name != "tools" and value.lstrip()[:1] in ("{", "["):
        return value
    return dumps(value)


def json_cells(data: bytes, names: list[str], height: int) -> dict[str, list[str | None]] | None:
    """The JSON columns ``names`` of a batch of JSONL lines, decoded line by line (``json_cell``).

    Columnar readers take these cells from the lines: Polars' text of a nested value read as
    String is not the file's (1.0 becomes 1, a quote or backslash inside a key or string stays
    unescaped, a string loses its quotes). None when a line is not a JSON object or the batch
    does not hold ``height`` rows: the per-row reader then reads it and names the line.
    """
    values: dict[str, list[str | None]] = {name: [] for name in names}
    if not names:
        return values
    rows = json_objects(data.splitlines())
    if rows is None or len(rows) != height:
        return None
    for row in rows:
        for name in names:
            values[name].append(json_cell(name, row.get(name)))
    return values


def json_objects(lines: Iterable[bytes]) -> list[dict[str, Any]] | None:
    """Each non-blank line parsed as a JSON object; None when any line is not one.

    Examples:
        >>> json_objects([b'{"a": 1}', b"  ", b'{"b": 2}'])
        [{'a': 1}, {'b': 2}]
        >>> json_objects([b'{"a": 1}', b"[1]"]) is None
        True
    """
    rows: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            return None
        if not isinstance(row, dict):
            return None
        rows.append(row)
    return rows
