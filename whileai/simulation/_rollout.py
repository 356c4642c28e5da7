"""Running rollouts: one episode as a generator, driven inline, on threads, or on an event loop.

An episode (:func:`_episode`) yields the conversation and receives the agent's reply, so the
rules of a rollout (tool calls answered by the world, the simulated user's turns, truncation)
are written once. :meth:`_Engine._turns` wraps it with the agent and user calls and decides what
each reply or error means; the sync and async drivers differ only in how they wait for a reply.
:meth:`_Engine.run` lands finished rollouts in batches, the first one small so that a dead agent
is noticed after a few rollouts, and counts the lost ones by reason.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from whileai._timeouts import with_timeout
from whileai.errors import EndpointError
from whileai.simulation._agents import (
    _CURRENT,
    AgentCall,
    InvalidReply,
    RolloutContext,
    normalize_reply,
)
from whileai.simulation._progress import Progress
from whileai.simulation._rows import Outcome, RowBuffer
from whileai.simulation._tools import ToolSpec
from whileai.simulation._user import USER_DONE, ModelUser, TemplateUser
from whileai.simulation._user_checks import asked
from whileai.simulation._util import describe_error
from whileai.simulation._world import PendingResult, World
from whileai.simulation._writer import Situation

Item = tuple[Situation, int, "int | None", int]  # task, rollout index, eval run, task ordinal


_FAIL_FAST = (401, 403, 404)  # an endpoint that answers these to the first call will answer them to every call


_BATCH = 2048  # rollouts per Arrow batch (bounded memory: a batch's dicts are dropped once flattened)


_DEAD_AGENT = 16  # the first this-many rollouts all lost: the agent is dead, stop (whileai 0.131 DEAD_AGENT_MIN_ERRORS)
_LOST_EXAMPLES = 20


@dataclasses.dataclass
class _Stats:
    unknown_tool_calls: int = 0
    unknown_tools: set[str] = dataclasses.field(default_factory=set)
    user_turns: int = 0


class _AskUser(list):
    """What the episode yields when it wants the simulated user's next message (the conversation so far)."""


_Ask = list[dict[str, Any]] | PendingResult  # what an episode yields: the conversation, or a tool result to await


def _episode(world: World, base: list[dict[str, Any]], max_turns: int,
             max_user_turns: int = 0) -> Generator[_Ask, Any, Outcome]:
    """One rollout as a generator: yields the conversation, receives the agent's reply.

    With a simulated user (``max_user_turns`` > 0), an answer without a tool call yields an
    :class:`_AskUser` instead and receives the person's next message (None ends the rollout).
    A tool call an async ``execute`` answers yields its :class:`PendingResult` and receives the
    content once the driver has awaited it.
    """
    messages = list(base)
    kinds: list[str] = []
    usage: dict[str, float] | None = None
    user_turns = 0

    def end(final_text: str | None, truncated: bool, finish_reason: str, ended_on_ask: bool = False) -> Outcome:
        return Outcome(messages, final_text, truncated, finish_reason, world.met, kinds, world.unknown_calls, usage,
                       user_turns=user_turns, ended_on_ask=ended_on_ask)

    for turn in range(max_turns):
        reply = yield messages
        message, book = normalize_reply(reply, turn)
        if book:
            usage = _read_book(book, kinds, usage)
        messages.append(message)
        calls = message.get("tool_calls")
        content = message.get("content")
        text = content if isinstance(content, str) or content is None else _parts_text(content)
        if book.get("finish_reason") == "length":
            return end(None if calls else (text or ""), True, "length")
        if not calls:
            if user_turns < max_user_turns:
                said = yield _AskUser(messages)
                if said is USER_DONE and isinstance(text, str) and asked(text):
                    return end(text or "", False, "stop", ended_on_ask=True)
                if isinstance(said, str) and said.strip():
                    if turn == max_turns - 1:  # no agent turn left to answer it: cut on the agent's reply
                        return end(text or "", True, "length")
                    user_turns += 1
                    messages.append({"role": "user", "content": said})
                    continue
            return end(text or "", False, "stop")
        for call in calls:
            fn = call["function"]
            result = world.call(fn["name"], fn["arguments"])
            if isinstance(result, PendingResult):
                result = yield result
            messages.append({"role": "tool", "tool_call_id": call["id"], "name": fn["name"], "content": result})
    return end(None, True, "length")


def _read_book(book: dict[str, Any], kinds: list[str], usage: dict[str, float] | None) -> dict[str, float] | None:
    """A reply's book-keeping read into the rollout's: seeded kinds appended to ``kinds``, token usage added up."""
    seeded = book.get("seeded")
    if seeded:
        for kind in [seeded] if isinstance(seeded, str) else (seeded if isinstance(seeded, (list, tuple)) else ["seeded"]):
            if str(kind) not in kinds:
                kinds.append(str(kind))
    got = book.get("usage")
    if isinstance(got, dict):
        usage = usage or {}
        for key, value in got.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                usage[key] = usage.get(key, 0) + value
    return usage


def _parts_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _lost(reason: str, error: str, messages: list[dict[str, Any]], world: World) -> Outcome:
    """A rollout that never became a row: the conversation up to the failure, and why."""
    return Outcome(list(messages), None, False, "error", world.met, [], world.unknown_calls, None, reason, error)


def _fatal(exc: EndpointError) -> bool:
    """An endpoint answer no retry can change (a wrong key, no access, a wrong URL, a server not running), or offline."""
    return getattr(exc, "status", None) in _FAIL_FAST or getattr(exc, "reason", None) in ("offline", "refused")


class _Engine:
    """Runs rollouts (inline, on threads, or on an event loop) and lands them in batches."""

    def __init__(self, call: AgentCall, specs: list[ToolSpec], policy: str, seed: int, max_turns: int,
                 execute: Callable[[str, dict[str, Any]], Any] | None, concurrency: int, run_id: str,
                 user: TemplateUser | ModelUser | None = None, max_user_turns: int = 0) -> None:
        self.call = call
        self.specs = tuple(specs)
        self.tool_map = {s.name: s for s in specs}
        self.schemas = [s.schema for s in specs]
        self.system = [{"role": "system", "content": policy}] if policy else []
        self.seed = seed
        self.max_turns = max_turns
        self.execute = execute
        self.concurrency = concurrency
        self.run_id = run_id
        self.user = user
        self.max_user_turns = max_user_turns if user is not None else 0
        self.world_cache: dict[tuple[str, str, str], str] = {}

    # --- one rollout ------------------------------------------------------------------------

    def _start(self, item: Item) -> tuple[Generator[_Ask, Any, Outcome], _Ask, World, Any]:
        task, index, eval_run, _ = item
        token = _CURRENT.set(RolloutContext(task, index, eval_run, self.seed, self.specs))
        world = World(task, self.tool_map, self.execute, self.world_cache)
        gen = _episode(world, [*self.system, {"role": "user", "content": task.prompt}], self.max_turns,
                       self.max_user_turns)
        return gen, next(gen), world, token

    def _user_turn(self, item: Item, messages: list[dict[str, Any]]) -> Any:
        """The simulated user's next message: an awaitable from a model user, else the message itself."""
        user, turn = self.user, sum(1 for m in messages if m.get("role") == "user")
        if isinstance(user, ModelUser):
            return user.areply(item[0], messages, turn)
        return user.reply(item[0], messages, turn) if user is not None else None

    def _failed(self, exc: Exception, messages: list[dict[str, Any]], world: World) -> Outcome:
        """The agent (or the user model) raised: a lost rollout, or the whole run stopped on a fatal endpoint answer."""
        if isinstance(exc, EndpointError):
            if _fatal(exc):
                raise exc
            return _lost("endpoint_error", describe_error(exc), messages, world)
        return _lost("agent_error", describe_error(exc), messages, world)

    @staticmethod
    def _advance(gen: Generator[_Ask, Any, Outcome], reply: Any, messages: _Ask,
                 world: World) -> tuple[Outcome | None, _Ask]:
        """Hand one reply to the episode: the finished outcome, or None and the conversation to answer next."""
        try:
            return None, gen.send(reply)
        except StopIteration as stop:
            return stop.value, messages
        except InvalidReply as exc:
            assert not isinstance(messages, PendingResult)  # a tool result is never a reply to check
            return _lost("invalid_reply", str(exc), messages, world), messages

    def _turns(self, item: Item) -> Generator[Any, Any, Outcome]:
        """One rollout, written once: yields each reply to wait for and is sent it resolved.

        A reply (the agent's, the simulated user's, an async ``execute``'s result) is yielded as a
        value or an awaitable; an error raised while waiting for it is thrown in here.
        :meth:`rollout_sync` and :meth:`rollout_async` differ only in how they wait; what a reply
        or an error means is decided here, in ``_failed`` and ``_advance``.
        """
        gen, messages, world, token = self._start(item)
        try:
            while True:
                if isinstance(messages, PendingResult):  # an async execute's result: its errors are not the agent's
                    done, messages = self._advance(gen, (yield messages.text()), messages, world)
                else:
                    try:
                        if isinstance(messages, _AskUser):
                            reply = yield self._user_turn(item, list(messages))
                        else:
                            reply = yield self.call.call(list(messages), self.schemas)
                    except Exception as exc:  # boundary: the agent's failure is a lost rollout, counted
                        return self._failed(exc, messages, world)
                    done, messages = self._advance(gen, reply, messages, world)
                if done is not None:
                    return done
        finally:
            _CURRENT.reset(token)

    def rollout_sync(self, item: Item) -> Outcome:
        """One rollout on this thread: an awaitable reply runs to completion on an event loop of its own."""
        return _never_suspends(self._drive(item, _wait_here))

    async def rollout_async(self, item: Item) -> Outcome:
        """One rollout on the run's event loop: an awaitable reply is awaited there."""
        return await self._drive(item, _wait_on_loop)

    async def _drive(self, item: Item, wait: Callable[[Any], Awaitable[Any]]) -> Outcome:
        """Drive :meth:`_turns` to its outcome, getting each reply it wants with ``wait``.

        The one body of both drivers: :meth:`rollout_sync` waits with :func:`_wait_here`, which
        never suspends (so the coroutine finishes on its first step, without an event loop), and
        :meth:`rollout_async` with :func:`_wait_on_loop`.
        """
        turns = self._turns(item)
        try:
            wanted = next(turns)
            while True:
                try:
                    reply = await wait(wanted)
                except Exception as exc:  # handed to the rollout, which decides what it means
                    wanted = turns.throw(exc)
                else:
                    wanted = turns.send(reply)
        except StopIteration as stop:
            return stop.value
        finally:
            turns.close()

    # --- the run ------------------------------------------------------------------------------

    def run(self, items: Iterator[Item], total: int, buffer: RowBuffer, lost_buffer: RowBuffer,
            lost_by: dict[str, int], lost: list[dict[str, Any]], stats: _Stats, progress: Progress) -> int:
        """Run every item; return how many were attempted (fewer when the agent is dead)."""
        state = {"attempted": 0, "landed": 0}

        def land(batch: list[Item], outcomes: list[Outcome]) -> bool:
            for item, out in zip(batch, outcomes):
                task, index, eval_run, _ = item
                state["attempted"] += 1
                if out.lost_reason is not None:
                    lost_by[out.lost_reason] = lost_by.get(out.lost_reason, 0) + 1
                    if len(lost) < _LOST_EXAMPLES:
                        lost.append({"scenario_id": task.scenario_id, "rollout_index": index, "eval_run": eval_run,
                                     "reason": out.lost_reason, "error": out.error})
                    lost_buffer.add(task, index, eval_run, self._rollout_id(task, index, eval_run), out)
                    continue
                state["landed"] += 1
                stats.user_turns += out.user_turns
                if out.unknown_calls:
                    stats.unknown_tool_calls += len(out.unknown_calls)
                    stats.unknown_tools.update(out.unknown_calls)
                buffer.add(task, index, eval_run, self._rollout_id(task, index, eval_run), out)
            buffer.flush()
            lost_buffer.flush()
            return state["landed"] == 0 and state["attempted"] >= _DEAD_AGENT

        def one(item: Item) -> Outcome:
            out = self.rollout_sync(item)
            progress.tick(item[3], out.lost_reason)
            return out

        batches = _batches(items, _BATCH if total > _DEAD_AGENT else total or 1, first=_DEAD_AGENT)
        if self.call.is_async:
            _run_coro(self._run_async(batches, land, progress))
        elif self.call.inline or self.concurrency == 1:
            for batch in batches:
                if land(batch, [one(item) for item in batch]):
                    break
        else:
            with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="wai-rollout") as pool:
                for batch in batches:
                    if land(batch, list(pool.map(one, batch))):
                        break
        return state["attempted"]

    async def _run_async(self, batches: Iterator[list[Item]], land: Callable[[list[Item], list[Outcome]], bool],
                         progress: Progress) -> None:
        try:
            for batch in batches:
                outcomes: list[Outcome | None] = [None] * len(batch)
                position = iter(range(len(batch)))
                workers = min(self.concurrency, len(batch))
                # every worker is awaited (a fatal answer reaches each of them), then the first error is raised:
                # a worker left running would log its own copy at the loop's shutdown
                done = await asyncio.gather(*(self._worker(batch, position, outcomes, progress) for _ in range(workers)),
                                            return_exceptions=True)
                failed = next((d for d in done if isinstance(d, BaseException)), None)
                if failed is not None:
                    raise failed
                if land(batch, [o for o in outcomes if o is not None]):
                    break
        finally:
            if self.call.endpoint is not None:
                await self.call.endpoint.aclose()

    async def _worker(self, batch: list[Item], position: Iterator[int], outcomes: list[Outcome | None],
                      progress: Progress) -> None:
        for i in position:
            out = await self.rollout_async(batch[i])
            progress.tick(batch[i][3], out.lost_reason)
            outcomes[i] = out

    def _rollout_id(self, task: Situation, index: int, eval_run: int | None) -> str:
        run = f"/e{eval_run}" if eval_run is not None else ""
        return f"{self.run_id}{run}/{task.scenario_id}#{index}"


def _timed_agent(call: AgentCall, timeout: float | None) -> AgentCall:
    """The agent with each turn limited to ``timeout`` seconds (inline agents are ours and never hang)."""
    if timeout is None or call.inline:
        return call
    return dataclasses.replace(call, call=with_timeout(call.call, timeout, what=f"the agent {call.name!r}",
                                                       returns_awaitable=call.is_async))


def _timed_execute(execute: Callable[[str, dict[str, Any]], Any] | None,
                   limit: float | None) -> Callable[[str, dict[str, Any]], Any] | None:
    """``execute`` with each call limited to ``limit`` seconds, sync or async (docs/simulate.md, ``tool_timeout``).

    A sync call runs on a helper thread; an awaitable (an ``async def``, or a function that
    returns a coroutine) is bounded by ``asyncio.wait_for`` wherever the driver awaits it. Past
    the limit the agent sees a ``tool_error``.
    """
    if execute is None or limit is None:
        return execute
    what = "the tool (execute=)"
    if inspect.iscoroutinefunction(execute) or inspect.iscoroutinefunction(getattr(execute, "__call__", None)):  # noqa: B004
        return with_timeout(execute, limit, what=what, returns_awaitable=True)
    timed = with_timeout(execute, limit, what=what)
    bounded = with_timeout(lambda awaitable: awaitable, limit, what=what, returns_awaitable=True)

    def call(name: str, arguments: dict[str, Any]) -> Any:
        out = timed(name, arguments)
        return bounded(out) if inspect.isawaitable(out) else out

    return call


def _batches(items: Iterator[Item], size: int, *, first: int) -> Iterator[list[Item]]:
    """The first batch is small (so a dead agent is noticed early); the rest are ``size`` long."""
    batch: list[Item] = []
    limit = min(first, size)
    for item in items:
        batch.append(item)
        if len(batch) >= limit:
            yield batch
            batch = []
            limit = size
    if batch:
        yield batch


async def _wait_here(wanted: Any) -> Any:
    """A sync rollout's wait: an awaitable runs to completion on an event loop of its own; it never suspends."""
    return _run_coro(wanted) if _awaitable(wanted) else wanted


async def _wait_on_loop(wanted: Any) -> Any:
    """An async rollout's wait: an awaitable is awaited on the run's event loop."""
    return (await wanted) if _awaitable(wanted) else wanted


def _never_suspends(coro: Coroutine[Any, Any, Outcome]) -> Outcome:
    """The result of a coroutine that finishes without suspending, run on this thread with no event loop."""
    try:
        coro.send(None)
    except StopIteration as stop:
        outcome: Outcome = stop.value
        return outcome
    coro.close()
    raise RuntimeError("a sync rollout suspended: its wait must never suspend")


def _awaitable(value: Any) -> bool:
    """Whether a reply must be awaited (a dict, the common reply, is checked first and cheaply)."""
    return type(value) is not dict and inspect.isawaitable(value)


def _run_coro(coro: Any) -> Any:
    """Run a coroutine to completion, also from inside a running event loop (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="wai-simulate-loop")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")
