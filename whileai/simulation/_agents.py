"""The agent protocol: what ``simulate`` accepts as an agent and what it must return.

An agent is a callable, or an object with a method, that takes the conversation so far (OpenAI
chat messages, the system prompt first) and the tool schemas (OpenAI tools shape) and returns the
next assistant message, which may carry ``tool_calls``. Sync or async. Accepted replies: an
OpenAI message dict (``{"role": "assistant", "content": ..., "tool_calls": [...]}``, arguments as
a JSON string or a dict), a plain string (the reply text), a chat-completions response
(``{"choices": [{"message": ...}]}``) or an object with ``model_dump()`` (the OpenAI SDK's
message types). A reply may also carry ``finish_reason`` (``"length"`` marks the row truncated)
and ``seeded`` (a list of misbehaviours planted on purpose); the engine takes those off the message.

While a rollout runs, :func:`current_rollout` returns its context (the task, the rollout index,
the eval run), so an agent written for tests can read the situation it is in.
"""

from __future__ import annotations

import contextvars
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from whileai.errors import ArgumentError
from whileai.simulation._tools import ToolSpec
from whileai.simulation._util import canonical, hint
from whileai.simulation._writer import Situation

__all__ = ["AgentCall", "InvalidReply", "RolloutContext", "current_rollout", "normalize_reply", "resolve_agent",
           "sampling_seed"]

_SYNC_METHODS = ("chat", "respond", "act", "step", "run")
_ASYNC_METHODS = ("achat", "arespond", "aact", "astep", "arun")
_BOOKKEEPING = ("seeded", "finish_reason", "usage")
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "name", "tool_call_id"})
_FAST_REPLY = frozenset({"role", "content", "tool_calls", "seeded"})


class RolloutContext(NamedTuple):
    """The rollout being run, for agents that want to read it (the seeded agent does).

    Attributes:
        situation: The task: its prompt, cell, world state and fault plan.
        rollout_index: 0..k-1 within the task.
        eval_run: The replay number under ``runs=N`` (None for a single run).
        seed: The run's seed.
        tools: The tools in play.
    """

    situation: Situation
    rollout_index: int
    eval_run: int | None
    seed: int
    tools: tuple[ToolSpec, ...]


_CURRENT: contextvars.ContextVar[RolloutContext | None] = contextvars.ContextVar("whileai_rollout", default=None)


def current_rollout() -> RolloutContext | None:
    """The rollout the calling agent is inside, or None outside ``simulate``."""
    return _CURRENT.get()


class InvalidReply(Exception):
    """The agent returned something that is not an assistant message."""


@dataclass(frozen=True)
class AgentCall:
    """How to call one agent: a function of (messages, tools), whether it is async, its name."""

    call: Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]
    is_async: bool
    name: str
    inline: bool
    endpoint: Any = None


def _arity_call(fn: Callable[..., Any]) -> Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]:
    """Call ``fn`` with (messages, tools), (messages, tools=...) or (messages), as it accepts."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return lambda messages, tools: fn(messages, tools)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params) or len(positional) >= 2:
        return lambda messages, tools: fn(messages, tools)
    if any(p.name == "tools" and p.kind is p.KEYWORD_ONLY for p in params) or any(p.kind is p.VAR_KEYWORD for p in params):
        return lambda messages, tools: fn(messages, tools=tools)
    if len(positional) == 1:
        return lambda messages, tools: fn(messages)
    return lambda messages, tools: fn(messages, tools)


def sampling_seed(ctx: RolloutContext) -> int:
    """The sampling seed a model endpoint gets for one rollout: the run's seed, the task, the rollout.

    Each of the k rollouts of a task draws its own sample (one seed for all would make the group
    k copies), and the same run seed gives the same seeds again.
    """
    return hint(ctx.seed, ctx.situation.scenario_id, ctx.rollout_index, ctx.eval_run) % 2**31


def _name_of(agent: Any) -> str:
    name = getattr(agent, "model_version", None) or getattr(agent, "__name__", None)
    if not isinstance(name, str) or not name:
        name = type(agent).__name__
    return name


def resolve_agent(agent: Any) -> AgentCall:
    """Decide how to call ``agent``; raise :class:`ArgumentError` for anything that is not one."""
    from whileai.simulation._endpoint import Endpoint

    if isinstance(agent, Endpoint):
        endpoint = agent

        async def call_endpoint(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            ctx = _CURRENT.get()
            params = {} if ctx is None else endpoint.seed_params(sampling_seed(ctx))
            return await endpoint._acomplete(messages, tools=tools or None, **params)

        return AgentCall(call_endpoint, True, endpoint.model, False, endpoint)
    if agent is None or isinstance(agent, (str, bytes, int, float, Mapping, Sequence)):
        raise ArgumentError(
            f"agent must be a callable (messages, tools) -> assistant message, an object with a chat() or achat() "
            f"method, or a wai.Endpoint, got {agent!r}. For a model server pass wai.Endpoint('model', base_url=...); "
            "for an offline stand-in pass wai.seeded_agent(tools).",
            value=agent,
        )
    inline = bool(getattr(agent, "__wai_inline__", False))
    if not inspect.isroutine(agent):
        for method in _ASYNC_METHODS:
            fn = getattr(agent, method, None)
            if fn is not None and inspect.iscoroutinefunction(fn):
                return AgentCall(_arity_call(fn), True, _name_of(agent), False)
        if not callable(agent):
            for method in _SYNC_METHODS:
                fn = getattr(agent, method, None)
                if callable(fn):
                    return AgentCall(_arity_call(fn), inspect.iscoroutinefunction(fn), _name_of(agent), inline)
    if callable(agent):
        is_async = inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(type(agent).__call__)
        return AgentCall(_arity_call(agent), is_async, _name_of(agent), inline)
    raise ArgumentError(
        f"agent must be callable or have one of the methods {', '.join(_ASYNC_METHODS + _SYNC_METHODS)}, got "
        f"{type(agent).__name__}. Wrap it: simulate(lambda messages, tools: my_agent.reply(messages, tools), ...).",
        value=type(agent).__name__,
    )


# ------------------------------------------------------------------------------------------
# replies
# ------------------------------------------------------------------------------------------


def normalize_reply(reply: Any, turn: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One agent reply as an OpenAI assistant message, plus its bookkeeping keys.

    Tool-call arguments become canonical JSON text (a dict is encoded; a string that is JSON is
    re-encoded canonically; a string that is not JSON is kept verbatim so the world can refuse it).

    Raises:
        InvalidReply: The reply is not a message (None, a number, a dict with neither ``content``
            nor ``tool_calls``, a message with another role).
    """
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}, {}
    if type(reply) is dict and reply.get("role", "assistant") == "assistant" and _FAST_REPLY.issuperset(reply):
        content = reply.get("content")
        calls = reply.get("tool_calls")
        if (content is None or type(content) is str) and ("content" in reply or calls):
            fast: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                if type(calls) is not list:
                    raise InvalidReply(f"agent returned tool_calls of type {type(calls).__name__}; it must be a list")
                fast["tool_calls"] = [_tool_call(c, turn, j) for j, c in enumerate(calls)]
            seeded = reply.get("seeded")
            return fast, ({"seeded": seeded} if seeded is not None else {})
    if reply is not None and not isinstance(reply, Mapping) and callable(getattr(reply, "model_dump", None)):
        reply = reply.model_dump(exclude_none=True)
    if not isinstance(reply, Mapping):
        raise InvalidReply(f"agent returned {type(reply).__name__} {_short(reply)}, not an assistant message")
    book: dict[str, Any] = {}
    if "choices" in reply and "content" not in reply and "tool_calls" not in reply:
        choices = reply.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise InvalidReply("agent returned a chat-completions response with no choices")
        choice = choices[0]
        if choice.get("finish_reason") is not None:
            book["finish_reason"] = choice.get("finish_reason")
        if isinstance(reply.get("usage"), Mapping):
            book["usage"] = dict(reply["usage"])
        reply = choice.get("message")
        if not isinstance(reply, Mapping):
            raise InvalidReply("agent returned a chat-completions choice with no message")
    if "content" not in reply and "tool_calls" not in reply:
        raise InvalidReply(f"agent returned a dict with keys {sorted(map(str, reply))}, not an assistant message "
                           "(it needs content and/or tool_calls)")
    role = reply.get("role", "assistant")
    if role != "assistant":
        raise InvalidReply(f"agent returned a message with role {role!r}; it must be 'assistant'")
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    content = message["content"]
    if content is not None and not isinstance(content, (str, list)):
        raise InvalidReply(f"agent returned content of type {type(content).__name__}; it must be text")
    for key, value in reply.items():
        if key in _BOOKKEEPING:
            if value is not None:
                book[key] = value
        elif key not in _MESSAGE_KEYS and value is not None:
            message[key] = value
    raw_calls = reply.get("tool_calls")
    if raw_calls:
        if not isinstance(raw_calls, list):
            raise InvalidReply(f"agent returned tool_calls of type {type(raw_calls).__name__}; it must be a list")
        message["tool_calls"] = [_tool_call(c, turn, j) for j, c in enumerate(raw_calls)]
    return message, book


def _tool_call(call: Any, turn: int, index: int) -> dict[str, Any]:
    if type(call) is dict:
        fn = call.get("function")
        if type(fn) is dict:
            name, arguments, call_id = fn.get("name"), fn.get("arguments"), call.get("id")
            if type(name) is str and name and type(arguments) is str and call_id:
                return {"id": str(call_id), "type": "function",
                        "function": {"name": name, "arguments": _arguments_text(arguments)}}
    if not isinstance(call, Mapping):
        if callable(getattr(call, "model_dump", None)):
            call = call.model_dump(exclude_none=True)
        else:
            raise InvalidReply(f"agent returned a tool call of type {type(call).__name__}; it must be a dict")
    fn = call.get("function")
    if isinstance(fn, Mapping):
        name, arguments = fn.get("name"), fn.get("arguments")
    else:
        name, arguments = call.get("name"), call.get("arguments", call.get("args"))
    if not isinstance(name, str) or not name:
        raise InvalidReply(f"agent returned a tool call with no function name: {_short(dict(call))}")
    call_id = call.get("id")
    return {
        "id": str(call_id) if call_id else f"call_{turn}_{index}",
        "type": "function",
        "function": {"name": name, "arguments": _arguments_text(arguments)},
    }


_ARGS_SEEN: dict[str, str] = {}  # raw argument text -> canonical text (agents repeat themselves a lot)
_ARGS_SEEN_MAX = 50_000


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        hit = _ARGS_SEEN.get(arguments)
        if hit is not None:
            return hit
        text = arguments.strip()
        if not text:
            out = "{}"
        else:
            try:
                out = canonical(json.loads(text))
            except ValueError:
                out = arguments
        if len(_ARGS_SEEN) > _ARGS_SEEN_MAX:
            _ARGS_SEEN.clear()
        _ARGS_SEEN[arguments] = out
        return out
    return canonical(arguments)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
