"""Rubrics: criteria a model judge checks one by one, with partial credit as their mean.

A :class:`Rubric` is a list of :class:`Criterion`. A ``hard`` criterion must hold: when one fails
the reward is 0. ``soft`` criteria give partial credit: the reward is the mean of all criteria
met (hard ones count as met once they all hold). A rubric of hard criteria only therefore gives
exact 0/1 rewards, the ones :func:`judge_trust` can count (docs/grade.md, "Rubrics": partially
met rows are skipped, and the fix is ``Criterion(kind="hard")``).

:func:`rubric_judge` turns a rubric and a chat endpoint into a judge. It hands the model
``tools_called`` and ``tools_not_called`` as facts (calls that returned a result, and declared
tools that did not), and its instructions say a reply that announces a call it never made has
not made it. A criterion that must be exact still belongs in a program (``grader=``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from whileai.defaults import PASS_THRESHOLD, RUBRIC_TRANSCRIPT_CHARS
from whileai.errors import JudgeError

__all__ = ["Criterion", "Rubric", "RubricJudge", "rubric_judge", "tool_facts"]

_KINDS = ("hard", "soft")
_SLUG_STOP = frozenset({"the", "a", "an", "of", "to", "and", "or", "it", "its", "is", "be", "that", "this", "must",
                        "should", "does", "do", "not"})

RUBRIC_JUDGE_SYSTEM = """You grade one conversation between a user and an AI agent against a rubric.
Judge only what the transcript shows, criterion by criterion.
Facts about tool use come with the transcript: tools_called lists the tools whose calls returned a
result; tools_not_called lists the tools the agent had and never got a result from. A reply that
says it called a tool, looked something up or completed an action, when that tool is not in
tools_called, has not done it: treat the claim as false.
Reply with JSON only, in this shape:
{"criteria": [{"id": 1, "met": true, "why": "one short sentence"}, ...]}
with one entry per criterion, in order."""


def _slug(text: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _SLUG_STOP]
    return "_".join(words[:4])[:40] or "criterion"


@dataclass(frozen=True)
class Criterion:
    """One thing a reply must do (``hard``: required, else reward 0) or should do (``soft``: partial credit).

    Attributes:
        text: What is checked, in the words the judge model reads.
        kind: ``hard`` or ``soft`` (default).
        name: The marker name the criterion's 0/1 result is stamped under (default: a slug of
            the text).

    Examples:
        >>> Criterion("The reply states the refund amount", kind="hard").name
        'reply_states_refund_amount'
    """

    text: str
    kind: Literal["hard", "soft"] = "soft"
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise JudgeError(f"Criterion text must be a non-empty string, got {self.text!r}. "
                             "Write what the reply must do, e.g. Criterion('States the refund amount', kind='hard').",
                             value=self.text)
        if self.kind not in _KINDS:
            raise JudgeError(f"Criterion kind must be 'hard' or 'soft', got {self.kind!r}. Use kind='hard' for what "
                             "must hold (a failure scores 0) and kind='soft' for partial credit.", value=self.kind)
        if not self.name:
            object.__setattr__(self, "name", _slug(self.text))
        elif not re.fullmatch(r"[a-z0-9_.:-]+", self.name):
            raise JudgeError(f"Criterion name must be lowercase letters, digits and _ (a marker name), got {self.name!r}. "
                             "Pass name='states_amount' for example.", value=self.name)


@dataclass(frozen=True, init=False)
class Rubric:
    """Criteria a judge checks one by one; the reward is their mean, 0 when a hard one fails.

    Args:
        criteria: ``Criterion`` objects, or strings (soft criteria), or ``{"text", "kind"}`` dicts.
        name: A name for the rubric (recorded in ``judge_meta``).
        instructions: Anything the judge should know beyond the criteria (the policy, edge cases).

    Raises:
        JudgeError: No criteria, or a criterion that cannot be read.

    Examples:
        >>> r = Rubric([Criterion("Looks up the order", kind="hard"), "Apologises for the delay"])
        >>> r.score({"looks_up_order": True, "apologises_for_delay": False})
        0.5
        >>> r.exact
        False
    """

    criteria: tuple[Criterion, ...]
    name: str = "rubric"
    instructions: str = ""

    def __init__(self, criteria: Iterable[Criterion | str | Mapping[str, Any]], *, name: str = "rubric",
                 instructions: str = "") -> None:
        if isinstance(criteria, (str, Criterion)):
            criteria = [criteria]
        try:
            items = list(criteria)
        except TypeError as exc:
            raise JudgeError(f"Rubric criteria must be a list of Criterion, got {type(criteria).__name__}. "
                             "Pass Rubric([Criterion('...', kind='hard'), ...]).", value=criteria) from exc
        if not items:
            raise JudgeError("Rubric criteria must hold at least one criterion, got []. Add one, e.g. "
                             "Rubric([Criterion('The reply states the refund amount', kind='hard')]).", value=items)
        out: list[Criterion] = []
        seen: dict[str, int] = {}
        for item in items:
            if isinstance(item, Criterion):
                crit = item
            elif isinstance(item, str):
                crit = Criterion(item)
            elif isinstance(item, Mapping) and "text" in item:
                crit = Criterion(str(item["text"]), kind=item.get("kind", "soft"), name=item.get("name") or "")
            else:
                raise JudgeError(f"each Rubric criterion must be a Criterion, a string or a {{'text', 'kind'}} dict, "
                                 f"got {item!r:.60}. Wrap it: Criterion('...').", value=item)
            count = seen.get(crit.name, 0)
            seen[crit.name] = count + 1
            if count:
                crit = Criterion(crit.text, kind=crit.kind, name=f"{crit.name}_{count + 1}")
            out.append(crit)
        object.__setattr__(self, "criteria", tuple(out))
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "instructions", str(instructions or ""))

    @property
    def exact(self) -> bool:
        """Every criterion is hard, so rewards are exactly 0 or 1."""
        return all(c.kind == "hard" for c in self.criteria)

    def score(self, met: Mapping[str, bool]) -> float:
        """The reward for criteria met (by name): 0 when a hard one fails, else the mean met."""
        values = [bool(met.get(c.name, False)) for c in self.criteria]
        if any(c.kind == "hard" and not v for c, v in zip(self.criteria, values)):
            return 0.0
        return sum(values) / len(values)

    def text(self) -> str:
        """The criteria as the numbered list the judge model reads."""
        return "\n".join(f"{i}. [{c.kind}] {c.text}" for i, c in enumerate(self.criteria, start=1))


def _tool_name(tool: Any) -> str | None:
    if isinstance(tool, str):
        return tool
    if isinstance(tool, Mapping):
        fn = tool.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
        return str(name) if name else None
    name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
    return str(name) if name else None


def tool_facts(row: Mapping[str, Any], tools: Sequence[Any] | None = None) -> dict[str, list[str]]:
    """What the agent's tool use shows, as the rubric judge is told it.

    ``tools_called``: tools whose calls returned a result; ``tools_not_called``: declared tools
    that did not; ``calls_without_result``: calls no result answered.

    Examples:
        >>> row = {"tools": [{"type": "function", "function": {"name": "get_order"}}, "refund"],
        ...        "messages": [{"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "get_order"}}]},
        ...                     {"role": "tool", "tool_call_id": "c1", "content": "{}"}]}
        >>> tool_facts(row)
        {'tools_called': ['get_order'], 'tools_not_called': ['refund'], 'calls_without_result': []}
    """
    declared: list[str] = []
    source = tools if tools is not None else row.get("tools")
    if isinstance(source, str):
        try:
            source = json.loads(source)
        except ValueError:
            source = None
    for tool in source or []:
        name = _tool_name(tool)
        if name and name not in declared:
            declared.append(name)
    calls: dict[str, str] = {}
    answered: set[str] = set()
    answered_names: list[str] = []
    for message in row.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        for call in message.get("tool_calls") or []:
            name = _tool_name(call)
            if name:
                calls[str(call.get("id") or f"_{len(calls)}")] = name
        if message.get("role") == "tool":
            if message.get("tool_call_id") is not None:
                answered.add(str(message["tool_call_id"]))
            elif message.get("name"):
                answered_names.append(str(message["name"]))
    called: list[str] = []
    missing: list[str] = []
    for call_id, name in calls.items():
        target = called if (call_id in answered or name in answered_names) else missing
        if name not in target:
            target.append(name)
    missing = [m for m in missing if m not in called]
    return {"tools_called": called, "tools_not_called": [t for t in declared if t not in called],
            "calls_without_result": missing}


def _transcript(row: Mapping[str, Any], limit: int) -> str:
    lines: list[str] = []
    for message in row.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role", "?")
        content = message.get("content")
        text = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
        if role == "tool":
            lines.append(f"tool ({message.get('name') or message.get('tool_call_id') or 'result'}): {text}")
            continue
        parts = [text] if text else []
        for call in message.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, Mapping) else None
            name = _tool_name(call) or "?"
            args = fn.get("arguments") if isinstance(fn, Mapping) else call.get("arguments") if isinstance(call, Mapping) else None
            parts.append(f"[calls {name}({args if isinstance(args, str) else json.dumps(args)})]")
        lines.append(f"{role}: {' '.join(parts)}")
    if not lines:
        prompt, reply = row.get("prompt"), row.get("final_text")
        lines = [f"user: {prompt or ''}", f"assistant: {reply or ''}"]
    text = "\n".join(lines)
    if len(text) > limit:
        head = limit // 2
        tail = limit - head
        text = f"{text[:head]}\n[... {len(text) - limit} chars cut ...]\n{text[-tail:]}"
    return text


def _met(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value >= PASS_THRESHOLD)
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("yes", "true", "met", "pass", "1"):
            return True
        if v in ("no", "false", "not met", "fail", "0"):
            return False
    return None


def _parse(content: str, rubric: Rubric) -> tuple[dict[str, bool], dict[str, str]]:
    start, stop = content.find("{"), content.rfind("}")
    if start < 0 or stop <= start:
        raise JudgeError(f"the rubric judge's reply must be a JSON object, got {content[:120]!r}. "
                         "Use a model that follows JSON instructions, or lower its temperature.")
    try:
        data = json.loads(content[start: stop + 1])
    except ValueError as exc:
        raise JudgeError(f"the rubric judge's reply must be valid JSON, got {content[start:start + 120]!r} ({exc}).") from exc
    entries = data.get("criteria") if isinstance(data, Mapping) else None
    met: dict[str, bool] = {}
    why: dict[str, str] = {}
    names = [c.name for c in rubric.criteria]
    if isinstance(entries, list):
        for pos, entry in enumerate(entries):
            if isinstance(entry, Mapping):
                ident = entry.get("id", pos + 1)
                value = _met(entry.get("met"))
                reason = entry.get("why") or entry.get("reason")
            else:
                ident, value, reason = pos + 1, _met(entry), None
            name = names[int(ident) - 1] if isinstance(ident, int) and 1 <= ident <= len(names) else (
                ident if ident in names else None)
            if name is not None and value is not None:
                met[name] = value
                if reason:
                    why[name] = str(reason)
    elif isinstance(data, Mapping):
        for key, value in data.items():
            name = names[int(key) - 1] if str(key).isdigit() and 1 <= int(key) <= len(names) else key
            v = _met(value)
            if name in names and v is not None:
                met[name] = v
    missing = [n for n in names if n not in met]
    if missing:
        raise JudgeError(f"the rubric judge's reply must rate every criterion, got none for {', '.join(missing)} "
                         f"(reply: {content[:120]!r}).")
    return met, why


class RubricJudge:
    """A judge under the contract: asks a chat model to check each criterion of a rubric.

    Built by :func:`rubric_judge`; call it on a row dict. Returns ``{"reward", "markers",
    "reason", "judge_meta"}`` with one 0/1 marker per criterion.
    """

    def __init__(self, rubric: Rubric, endpoint: Any, *, name: str | None = None, tools: Sequence[Any] | None = None,
                 max_chars: int = RUBRIC_TRANSCRIPT_CHARS, params: Mapping[str, Any] | None = None) -> None:
        self.rubric = rubric
        self.endpoint = endpoint
        self.name = name or f"rubric_judge:{rubric.name}"
        self.tools = list(tools) if tools is not None else None
        self.max_chars = int(max_chars)
        self.params = dict(params or {})

    def __repr__(self) -> str:
        return f"RubricJudge({self.rubric.name!r}, {len(self.rubric.criteria)} criteria, endpoint={self.endpoint!r})"

    def messages(self, row: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat messages sent for one row (system instructions, then rubric, facts and transcript)."""
        facts = tool_facts(row, self.tools)
        body = []
        if self.rubric.instructions:
            body.append(f"Context for grading:\n{self.rubric.instructions}")
        body.append(f"Rubric:\n{self.rubric.text()}")
        body.append("Facts:\n" + "\n".join(f"{k}: {json.dumps(v)}" for k, v in facts.items()))
        body.append(f"Transcript:\n{_transcript(row, self.max_chars)}")
        return [{"role": "system", "content": RUBRIC_JUDGE_SYSTEM}, {"role": "user", "content": "\n\n".join(body)}]

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """Grade one row against the rubric."""
        messages = self.messages(row)
        chat = getattr(self.endpoint, "chat", None)
        reply = chat(messages, **self.params) if callable(chat) else self.endpoint(messages)
        content = reply.get("content") if isinstance(reply, Mapping) else reply
        if not isinstance(content, str):
            raise JudgeError(f"the rubric judge's model must answer with text, got {type(content).__name__}.")
        met, why = _parse(content, self.rubric)
        reward = self.rubric.score(met)
        failed = [c for c in self.rubric.criteria if not met[c.name]]
        hard_failed = [c.name for c in failed if c.kind == "hard"]
        reason = "; ".join(f"{c.name}: {why.get(c.name, 'not met')}" for c in failed) or "all criteria met"
        return {
            "reward": reward,
            "markers": {c.name: 1.0 if met[c.name] else 0.0 for c in self.rubric.criteria},
            "reason": reason,
            "judge_meta": {"rubric": self.rubric.name, "criteria_met": len(self.rubric.criteria) - len(failed),
                           "criteria": len(self.rubric.criteria), "hard_failed": hard_failed},
        }


def rubric_judge(
    rubric: Rubric | Sequence[Criterion | str],
    /,
    endpoint: Any,
    *,
    name: str | None = None,
    tools: Sequence[Any] | None = None,
    max_chars: int = RUBRIC_TRANSCRIPT_CHARS,
    **params: Any,
) -> RubricJudge:
    """A judge that asks a chat model to check each criterion of ``rubric`` (docs/grade.md, "Rubrics").

    The model is told which tools returned a result (``tools_called``) and which declared tools
    did not (``tools_not_called``), and that a reply announcing a call it never made has not
    made it. The reward is 0 when a hard criterion fails, else the mean of the criteria met;
    each criterion's 0/1 lands as a marker under its name.

    Args:
        rubric: A :class:`Rubric` (or a list of criteria).
        endpoint: The model: an object with ``chat(messages, *, tools=None, **params) -> dict``
            (``wai.Endpoint``), a model name (an ``Endpoint`` on ``$OPENAI_BASE_URL``), or a
            callable from messages to an assistant message.
        name: The judge's name (default ``rubric_judge:<rubric name>``).
        tools: The agent's declared tools, when rows do not carry ``tools``.
        max_chars: Transcript characters sent (head and tail kept).
        **params: Sent with every chat call (``temperature=0`` by default).

    Returns:
        A :class:`RubricJudge`: pass it as ``judge=`` to ``grade``/``run_judge``.

    Raises:
        JudgeError: A rubric with no criteria, or an endpoint that cannot chat.
    """
    if not isinstance(rubric, Rubric):
        rubric = Rubric(rubric)
    if isinstance(endpoint, str):
        from whileai.simulation import Endpoint

        endpoint = Endpoint(endpoint)
    if not (callable(getattr(endpoint, "chat", None)) or callable(endpoint)):
        raise JudgeError(f"endpoint must have a chat(messages) method (wai.Endpoint) or be a callable, got "
                         f"{type(endpoint).__name__}. Pass wai.Endpoint('model', base_url='http://localhost:8000/v1').",
                         value=endpoint)
    params.setdefault("temperature", 0)
    return RubricJudge(rubric, endpoint, name=name, tools=tools, max_chars=max_chars, params=params)
