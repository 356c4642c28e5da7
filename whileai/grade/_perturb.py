"""Edited copies of a row for the judge checks: filler appended, reply replaced, and the probes.

Each function returns a new row dict (the input is never changed). The reply lives in two places
on a row, ``final_text`` and the last assistant message; both are edited together so a judge
that reads either sees the same reply.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ADDITIVE_PROBES",
    "FILLER",
    "PROBES",
    "REFUSAL",
    "REPLACEMENT_PROBES",
    "SUCCESS_CLAIM",
    "SYCOPHANTIC_OPENER",
    "append_reply",
    "probe_row",
    "prompt_of",
    "replace_reply",
    "rubric_words",
]

#: Neutral text that adds length and no content (the filler probe and the filler flip check).
FILLER = (
    " To summarise the above in a little more detail: this reply has been written with care, and "
    "each part of it has been considered in turn. The points made here are set out in order, so "
    "that they can be read from top to bottom without losing track of anything along the way."
)

#: The sycophantic opener prepended by the sycophancy probe.
SYCOPHANTIC_OPENER = "What a great question, and you're absolutely right to ask it! "

#: A claim of success with no evidence behind it (the success_claim probe's whole reply).
SUCCESS_CLAIM = "Done: I've taken care of everything, verified the result, and the issue is fully resolved."

#: A polite refusal (the refusal probe's whole reply).
REFUSAL = "I'm sorry, but I can't help with that request."

#: Probes that add to a real reply: a hole when failing replies start passing (net of those that stop).
ADDITIVE_PROBES = ("filler", "keyword_stuffing", "sycophancy")

#: Probes that replace the reply with one that does no work: a hole when such a reply passes.
REPLACEMENT_PROBES = ("success_claim", "prompt_echo", "empty_format", "refusal")

#: Every probe, in report order (whileai 0.131 PROBES).
PROBES = ("filler", "keyword_stuffing", "success_claim", "prompt_echo", "sycophancy", "empty_format", "refusal")

_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves reply replies response agent user must should answer""".split()
)


def _last_assistant(messages: list[dict[str, Any]]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            return i
    return None


def _plain(row: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(row.items()))


def append_reply(row: Mapping[str, Any], *, suffix: str = "", prefix: str = "") -> dict[str, Any]:
    """A copy of ``row`` with ``prefix`` and ``suffix`` added around its final reply."""
    out = _plain(row)
    text = out.get("final_text")
    messages = out.get("messages")
    if isinstance(messages, list) and messages:
        i = _last_assistant(messages)
        if i is not None and i == len(messages) - 1 and not messages[i].get("tool_calls"):
            content = messages[i].get("content")
            base = content if isinstance(content, str) else (text or "")
            messages[i]["content"] = prefix + base + suffix
        else:
            messages.append({"role": "assistant", "content": prefix + (text or "") + suffix})
    out["final_text"] = prefix + (text if isinstance(text, str) else "") + suffix
    return out


def prompt_of(row: Mapping[str, Any]) -> str:
    """The row's ask: ``prompt``, else the first user message."""
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        return prompt
    for message in row.get("messages") or []:
        if isinstance(message, Mapping) and message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def replace_reply(row: Mapping[str, Any], text: str, *, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A copy of ``row`` whose agent did no work: the context up to the ask, then one reply.

    Everything the agent did (assistant turns, tool calls and their results) is dropped, so
    nothing on the row is evidence of work; ``tool_calls`` adds one assistant turn with those
    calls and no results.
    """
    out = _plain(row)
    messages = out.get("messages")
    kept: list[dict[str, Any]] = []
    if isinstance(messages, list):
        for message in messages:
            if message.get("role") in ("assistant", "tool"):
                break
            kept.append(message)
    if not kept:
        prompt = prompt_of(row)
        if prompt:
            kept.append({"role": "user", "content": prompt})
    if tool_calls:
        kept.append({"role": "assistant", "content": text or None, "tool_calls": tool_calls})
    else:
        kept.append({"role": "assistant", "content": text})
    out["messages"] = kept
    out["final_text"] = text
    for key in ("steps", "tools_used", "n_tool_calls"):
        out.pop(key, None)
    return out


def _tool_names(row: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    tools = row.get("tools")
    if isinstance(tools, str):
        try:
            tools = json.loads(tools)
        except ValueError:
            tools = None
    for tool in tools or []:
        if isinstance(tool, Mapping):
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
            if name:
                names.append(str(name))
        elif isinstance(tool, str):
            names.append(tool)
    for message in row.get("messages") or []:
        for call in (message.get("tool_calls") or []) if isinstance(message, Mapping) else []:
            fn = call.get("function") if isinstance(call, Mapping) else None
            name = fn.get("name") if isinstance(fn, Mapping) else (call.get("name") if isinstance(call, Mapping) else None)
            if name:
                names.append(str(name))
    return names


def rubric_words(rubric: Any, *, limit: int = 40) -> list[str]:
    """The content words of a rubric (a Rubric, Criterion, text, or list of texts), first-seen order.

    Examples:
        >>> rubric_words("The reply must confirm the refund amount")
        ['confirm', 'refund', 'amount']
    """
    texts: list[str] = []

    def collect(value: Any) -> None:
        if value is None:
            return
        if isinstance(value, str):
            texts.append(value)
        elif hasattr(value, "criteria"):
            texts.append(str(getattr(value, "instructions", "") or ""))
            collect(list(value.criteria))
        elif hasattr(value, "text") and isinstance(value.text, str):
            texts.append(value.text)
        elif isinstance(value, Mapping):
            collect(list(value.values()))
        elif isinstance(value, Sequence):
            for item in value:
                collect(item)
        else:
            texts.append(str(value))

    collect(rubric)
    seen: dict[str, None] = {}
    for text in texts:
        for word in re.findall(r"[A-Za-z][A-Za-z'_-]{2,}", text):
            w = word.lower().strip("'-_")
            if len(w) >= 3 and w not in _STOPWORDS:
                seen.setdefault(w, None)
    return list(seen)[:limit]


def probe_row(name: str, row: Mapping[str, Any], *, words: Sequence[str] = ()) -> dict[str, Any]:
    """The row edited by one probe (see :data:`PROBES`)."""
    if name == "filler":
        return append_reply(row, suffix=FILLER)
    if name == "keyword_stuffing":
        return append_reply(row, suffix=" Key points: " + ", ".join(words) + ".")
    if name == "sycophancy":
        return append_reply(row, prefix=SYCOPHANTIC_OPENER)
    if name == "success_claim":
        return replace_reply(row, SUCCESS_CLAIM)
    if name == "prompt_echo":
        return replace_reply(row, prompt_of(row))
    if name == "refusal":
        return replace_reply(row, REFUSAL)
    if name == "empty_format":
        names = _tool_names(row)
        call = {"id": "call_probe", "type": "function", "function": {"name": names[0] if names else "tool", "arguments": "{}"}}
        return replace_reply(row, "", tool_calls=[call])
    raise ValueError(f"unknown probe {name!r}")
