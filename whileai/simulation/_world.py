"""The world a rollout runs against: tool calls answered from generated state, faults on purpose.

A task fixes the world (docs/simulate.md, "The world": "a world that fails on purpose"): which record exists
(``found``), none (``not_found``), two that match (``ambiguous``) or an incomplete one
(``partial``), and its fault plan: none, or one of timeout, server error, rate limit, malformed
output, empty result, partial result, on the first tool call (transient) or on every call. The
same task always gets the same world, so ``tasks=base`` replays it exactly. Every fault a rollout
meets is recorded (call number, tool, kind) for the row's ``faults`` and ``fault_kind``.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from whileai.simulation._injection import plan_injection, plant, private_values
from whileai.simulation._tools import ToolSpec
from whileai.simulation._util import canonical, describe_error, hint
from whileai.simulation._writer import Situation, _words

__all__ = ["WRITE_VERBS", "PendingResult", "World", "fault_result"]

WRITE_VERBS = frozenset({
    "refund", "cancel", "update", "change", "set", "edit", "modify", "create", "add", "delete", "remove", "send",
    "book", "reserve", "schedule", "transfer", "pay", "return", "reset", "open", "close", "submit", "approve", "issue",
    "reschedule", "renew",
})
_STATUSES = ("open", "shipped", "delivered", "pending", "on hold", "processing")
INJECTION = "injection"  # the fault kind whose tool results carry a planted instruction (whileai/simulation/_injection.py)


def fault_result(kind: str, record: Mapping[str, Any] | None) -> str:
    """What a tool call returns when the planned fault fires (JSON text, except malformed output)."""
    if kind == "timeout":
        return canonical({"error": "timeout", "message": "the request timed out after 30 s"})
    if kind == "server_error":
        return canonical({"error": "server_error", "status": 500, "message": "internal server error"})
    if kind == "rate_limit":
        return canonical({"error": "rate_limit", "status": 429, "message": "too many requests", "retry_after_s": 2})
    if kind == "empty_result":
        return "{}"
    if kind == "partial_result":
        items = list((record or {}).items())[:2]
        return canonical({"status": "ok", "partial": True, "data": dict(items)})
    # malformed_output: a payload cut off mid-stream, not valid JSON
    first = next(iter((record or {"id": "?"}).items()))
    return '{"status": "ok", "data": {"' + str(first[0]) + '": "' + str(first[1])[:3] + "\x1b[0m<<garbled resp0nse"


class PendingResult:
    """A tool result still to come: the awaitable an async ``execute`` returned for one call."""

    __slots__ = ("awaitable",)

    def __init__(self, awaitable: Awaitable[Any]) -> None:
        self.awaitable = awaitable

    async def text(self) -> str:
        """The tool message's content once the call is done; a failure (or ``tool_timeout``) is a tool error."""
        try:
            return _as_text(await self.awaitable)
        except Exception as exc:  # the user's world failed: the agent sees a tool error, as for a sync execute
            return _tool_error(exc)


def _tool_error(exc: Exception) -> str:
    return canonical({"error": "tool_error", "message": describe_error(exc)})


class World:
    """Answers one rollout's tool calls; one instance per rollout (it counts calls).

    Attributes:
        met: The faults met, in order: ``{"call", "tool", "kind"}``.
        unknown_calls: Names of tools called that do not exist, one per call.
    """

    __slots__ = ("_cache", "_fault_first_only", "calls", "execute", "met", "situation", "tools", "unknown_calls")

    def __init__(self, situation: Situation, tools: Mapping[str, ToolSpec],
                 execute: Callable[[str, dict[str, Any]], Any] | None = None,
                 cache: dict[tuple[str, str, str], str] | None = None) -> None:
        self.situation = situation
        self.tools = tools
        self.execute = execute
        self._cache = cache if execute is None else None
        self.calls = 0
        self.met: list[dict[str, Any]] = []
        self.unknown_calls: list[str] = []
        self._fault_first_only = situation.fault_calls == "first"

    def call(self, name: str, arguments: str | Mapping[str, Any] | None) -> str | PendingResult:
        """Answer one tool call with the tool message's content (JSON text).

        An ``execute`` that returns an awaitable (an ``async def``) gives a :class:`PendingResult`
        instead: the rollout's driver awaits it (or runs it to completion) for the content.
        """
        index = self.calls
        self.calls += 1
        spec = self.tools.get(name)
        if spec is None:
            self.unknown_calls.append(str(name))
            return canonical({"error": "unknown_tool", "tool": name, "available": sorted(self.tools)})
        s = self.situation
        if s.fault == INJECTION:  # the tool answers as usual, with the owner's private fields and a planted note
            answer = self._answer_call(name, spec, arguments)
            injection = plan_injection(s.scenario_id, s.tool, s.entity, list(self.tools))
            self.met.append({"call": index, "tool": name, "kind": INJECTION, "goal": injection.goal,
                             "text": injection.text, "target": injection.target, "payload": injection.payload})
            if isinstance(answer, PendingResult):
                return answer
            return plant(answer, injection, private_values(s.scenario_id))
        if s.fault is not None and (not self._fault_first_only or index == 0):
            self.met.append({"call": index, "tool": name, "kind": s.fault})
            if self._cache is None:
                return fault_result(s.fault, self._record(spec, {}))
            fault_key = (s.scenario_id, name, "\x00fault")
            text = self._cache.get(fault_key)
            if text is None:
                text = self._cache[fault_key] = fault_result(s.fault, self._record(spec, {}))
            return text
        return self._answer_call(name, spec, arguments)

    def _answer_call(self, name: str, spec: ToolSpec, arguments: str | Mapping[str, Any] | None) -> str | PendingResult:
        s = self.situation
        cache = self._cache
        if cache is not None and isinstance(arguments, str):
            cache_key = (s.scenario_id, name, arguments)
            hit = cache.get(cache_key)
            if hit is None:
                answer = self._respond(name, spec, arguments)
                assert isinstance(answer, str)  # the cache is on only for the generated world (no execute)
                hit = answer
                if len(cache) > 50_000:
                    cache.clear()
                cache[cache_key] = hit
            return hit
        return self._respond(name, spec, arguments)

    def _respond(self, name: str, spec: ToolSpec, arguments: str | Mapping[str, Any] | None) -> str | PendingResult:
        args = _parse_arguments(arguments)
        if args is None:
            return canonical({"error": "invalid_arguments", "message": "arguments are not a JSON object"})
        missing = [p for p in spec.required if p not in args]
        if missing:
            return canonical({"error": "invalid_arguments", "missing": missing})
        if self.execute is not None:
            try:
                out = self.execute(name, args)
                if inspect.isawaitable(out):  # an async execute: the engine's driver awaits it
                    return PendingResult(out)
                return _as_text(out)
            except Exception as exc:  # the user's world failed: the agent sees a tool error
                return _tool_error(exc)
        return self._answer(spec, args)

    # --- the generated world -------------------------------------------------------------

    def _answer(self, spec: ToolSpec, args: dict[str, Any]) -> str:
        s = self.situation
        if s.entity is None or s.world_state in ("unspecified", "unknown"):
            return canonical({"status": "ok", "data": self._record(spec, args)})
        named = {str(v).strip().lower() for v in args.values() if isinstance(v, (str, int, float))}
        if s.entity.lower() not in named:
            shown = next((str(args[p]) for p in spec.required if p in args), None)
            return canonical({"status": "not_found", "error": f"no {s.noun} matches {shown!r}" if shown else
                              f"no {s.noun} matches those arguments"})
        record = self._record(spec, args)
        if s.world_state == "not_found":
            return canonical({"status": "not_found", "error": f"no {s.noun} matches {s.entity!r}"})
        if s.world_state == "ambiguous":
            other = dict(record)
            other["status"] = _STATUSES[(_STATUSES.index(record["status"]) + 1) % len(_STATUSES)]
            other["owner"] = "a different account"
            return canonical({"status": "ok", "matches": 2, "data": [record, other]})
        if s.world_state == "partial":
            keep = {k: v for k, v in record.items() if k not in ("updated_at", "amount")}
            return canonical({"status": "ok", "incomplete": True, "missing": ["amount", "updated_at"], "data": keep})
        return canonical({"status": "ok", "data": record})

    def _record(self, spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
        s = self.situation
        n = hint(s.scenario_id, "record")
        record: dict[str, Any] = {}
        if s.entity is not None:
            record[s.id_param or "id"] = s.entity
        record["status"] = _STATUSES[n % len(_STATUSES)]
        record["updated_at"] = f"2025-{n % 12 + 1:02d}-{n % 28 + 1:02d}"
        record["amount"] = round((n % 40000 + 500) / 100.0, 2)
        for key, value in args.items():
            record.setdefault(key, value)
        words = _words(spec.name)
        if words and words[0] in WRITE_VERBS:
            record["action"] = words[0]
            record["result"] = "completed"
        return record


def _parse_arguments(arguments: str | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    text = arguments.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _as_text(value: Any) -> str:
    """What ``execute`` returned as the tool message's content: a string as it is, anything else as strict JSON.

    Strict as RFC 8259 section 6 asks ("Numeric values that cannot be represented ... (such as
    Infinity and NaN) are not permitted"): a non-finite float becomes ``null``, so the content
    stays JSON every parser reads (Python's ``json`` alone would write a bare ``NaN``).
    """
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    text = canonical(value)
    if "NaN" in text or "Infinity" in text:  # rare: re-encode with the non-finite numbers as null
        text = canonical(_finite(value))
    return text


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float inside dicts, lists and tuples replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
