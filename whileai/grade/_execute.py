"""Calling a judge over many rows: inline when it is fast, on workers when it is slow or async.

Three ways to run, chosen per call:

- **inline**: a sync judge with no ``timeout`` is called on the main thread. A thread hop per
  row would cost more than a trivial rule. The first calls are timed; a judge that averages
  over ``JUDGE_SLOW_S`` a call is moved onto workers for the rest of the rows. With
  ``off_thread_timeout`` (``run_judge``'s default) those first calls run one at a time on a
  helper thread under it, and so do the workers and the async loop a judge moves to: a judge
  that hangs at once, or a slow (model) judge that hangs later, is cut off; a judge fast enough
  to stay inline is not timed.
- **threads**: ``concurrency`` worker threads. With ``timeout`` a call that runs past it is
  recorded as ``timeout`` and its worker is replaced, so a hung judge cannot stall the run (the
  stuck thread is a daemon and its late answer is dropped).
- **async**: an ``async def`` judge (or one that returns an awaitable) runs on an event loop with
  at most ``concurrency`` calls in flight, each under ``asyncio.wait_for(timeout)``. Inside a
  running loop (a notebook) the loop runs on a helper thread.

Every call's outcome comes back as the judge's raw return value, a :class:`Raised` wrapper or
:data:`TIMED_OUT`, in row order.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from whileai._progress import ProgressArg, Tracker
from whileai._timeouts import CallTimeout, run_with_timeout
from whileai.defaults import JUDGE_SLOW_S, PROGRESS_MIN_JUDGE_ROWS
from whileai.grade._contract import is_async_judge

__all__ = ["TIMED_OUT", "Raised", "run_calls"]

# Calls timed before deciding whether a sync judge is slow.
_PROBE_CALLS = 8


class Raised:
    """A judge call that raised."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        exc.__traceback__ = None  # keep the message, not the frames
        self.exc = exc


class _TimedOut:
    __slots__ = ()

    def __repr__(self) -> str:
        return "TIMED_OUT"


#: A judge call that ran past the timeout.
TIMED_OUT = _TimedOut()


class _Progress:
    """Rows judged so far on a tqdm.auto bar or a callback (``whileai._progress``)."""

    def __init__(self, total: int, label: str, progress: ProgressArg = None,
                 min_total: int = PROGRESS_MIN_JUDGE_ROWS) -> None:
        self.tracker = Tracker(total, desc=label, progress=progress, min_total=min_total)
        self.done = 0

    def update(self, done: int) -> None:
        if done > self.done:
            self.tracker.update(done - self.done)
            self.done = done

    def close(self) -> None:
        self.tracker.close()


def run_calls(
    judge: Callable[[Any], Any],
    chunks: Iterable[list[Any]],
    total: int,
    *,
    concurrency: int,
    timeout: float | None,
    label: str = "grading",
    off_thread_timeout: float | None = None,
    progress: ProgressArg = None,
    min_total: int = PROGRESS_MIN_JUDGE_ROWS,
) -> tuple[list[Any], str]:
    """Call ``judge`` on every row of ``chunks`` (lists of row dicts) and return the outcomes.

    ``timeout`` times every call (each on a worker); without it, ``off_thread_timeout`` times the
    calls that run off the main thread (the first calls, slow and async judges).

    Returns:
        The outcomes in row order, and the mode used (``inline``, ``threads`` or ``async``).
    """
    bar = _Progress(total, label, progress, min_total)
    try:
        if is_async_judge(judge):
            return _run_async(judge, _rows(chunks), total, concurrency, timeout or off_thread_timeout, bar), "async"
        if timeout is not None:
            return _run_threads(judge, enumerate(_rows(chunks)), [None] * total, concurrency, timeout, bar), "threads"
        return _run_inline(judge, chunks, total, concurrency, bar, off_thread_timeout)
    finally:
        bar.close()


def _rows(chunks: Iterable[list[Any]]) -> Iterator[Any]:
    for chunk in chunks:
        yield from chunk


def _run_inline(judge: Callable[[Any], Any], chunks: Iterable[list[Any]], total: int, concurrency: int,
                progress: _Progress, timeout: float | None) -> tuple[list[Any], str]:
    # A fast judge over a million rows allocates millions of small containers; the cyclic
    # collector would walk all of them again and again. It is paused during the loop, and the
    # young generations (where a judge's own cyclic garbage lives) are collected between chunks.
    was = gc.isenabled()
    gc.disable()
    try:
        return _inline_loop(judge, chunks, total, concurrency, progress, timeout)
    finally:
        if was:
            gc.enable()


def _inline_loop(judge: Callable[[Any], Any], chunks: Iterable[list[Any]], total: int, concurrency: int,
                 progress: _Progress, timeout: float | None) -> tuple[list[Any], str]:
    out: list[Any] = []
    append = out.append
    clock = time.perf_counter
    chunk_iter = iter(chunks)
    # Time the first calls one by one; a slow judge moves to workers, an async one to a loop.
    probe_spent = 0.0
    for chunk in chunk_iter:
        n = len(chunk)
        start = 0
        while len(out) < _PROBE_CALLS and start < n:
            row = chunk[start]
            if timeout is None:
                t0 = clock()
                raw = _call_raw(judge, row)
                probe_spent += clock() - t0
            else:  # the judge's own time, not the thread hop (which a loaded machine makes slow)
                raw, spent = _call_on_helper(judge, row, timeout)
                probe_spent += spent
            start += 1
            if inspect.isawaitable(raw):
                _close(raw)
                rest = _rows(_chain([chunk], chunk_iter))
                return _run_async(judge, rest, total, concurrency, timeout, progress), "async"
            append(raw)
            if probe_spent / len(out) > JUDGE_SLOW_S:
                remaining = enumerate(_rows(_chain([chunk[start:]], chunk_iter)), start=len(out))
                done = out + [None] * (total - len(out))
                return _run_threads(judge, remaining, done, concurrency, timeout, progress), "threads"
        first = len(out)
        for row in chunk[start:] if start else chunk:
            try:
                append(judge(row))
            except Exception as exc:  # boundary: the judge's failure is data on its row
                append(Raised(exc))
        _compact(out, first)
        gc.collect(1)
        progress.update(len(out))
    return out, "inline"


def _call_raw(judge: Callable[[Any], Any], row: Any) -> Any:
    try:
        return judge(row)
    except Exception as exc:  # the judge's failure is data, not ours to raise
        return Raised(exc)


def _call_on_helper(judge: Callable[[Any], Any], row: Any, timeout: float) -> tuple[Any, float]:
    """One call on a daemon thread, waited for at most ``timeout`` (a hung call is dropped).

    Returns the judge's answer and the seconds the judge itself took (``timeout`` when it hung).
    """
    spent = [timeout]

    def timed() -> Any:
        t0 = time.perf_counter()
        try:
            return _call_raw(judge, row)
        finally:
            spent[0] = time.perf_counter() - t0

    try:
        return run_with_timeout(timed, timeout, what="the judge"), spent[0]
    except CallTimeout:
        return TIMED_OUT, timeout


def _compact(out: list[Any], first: int) -> None:
    """Replace each ``{"reward": x}`` from ``first`` on by ``x`` (the same verdict, a tenth the memory)."""
    for i in range(first, len(out)):
        raw = out[i]
        if type(raw) is dict and len(raw) == 1:
            value: Any = raw.get("reward")
            kind = type(value)
            if (kind is float or kind is int or kind is bool) and 0 <= value <= 1:
                out[i] = float(value)


def _chain(first: list[list[Any]], rest: Iterator[list[Any]]) -> Iterator[list[Any]]:
    yield from first
    yield from rest


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


def _call_sync(judge: Callable[[Any], Any], row: Any) -> Any:
    try:
        raw = judge(row)
        if inspect.isawaitable(raw):
            raw = asyncio.run(_await(raw))
        return raw
    except Exception as exc:  # boundary: the judge's failure is data on its row
        return Raised(exc)


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _run_threads(judge: Callable[[Any], Any], items: Iterator[tuple[int, Any]], out: list[Any],
                 concurrency: int, timeout: float | None, progress: _Progress) -> list[Any]:
    tasks: queue.SimpleQueue[tuple[int, Any] | None] = queue.SimpleQueue()
    results: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
    lock = threading.Lock()
    started: dict[int, float] = {}
    finished: set[int] = set()
    abandoned: set[int] = set()

    def work() -> None:
        while True:
            item = tasks.get()
            if item is None:
                return
            index, row = item
            with lock:
                started[index] = time.monotonic()
            raw = _call_sync(judge, row)
            with lock:
                if index in abandoned:
                    return  # a replacement worker already took this one's place
                finished.add(index)
            results.put((index, raw))

    live = 0

    def spawn() -> None:
        nonlocal live
        threading.Thread(target=work, name="wai-judge", daemon=True).start()
        live += 1

    for _ in range(max(1, concurrency)):
        spawn()
    in_flight: set[int] = set()
    exhausted = False
    done = sum(1 for v in out if v is not None)
    try:
        while True:
            while not exhausted and len(in_flight) < max(1, concurrency) * 2:
                nxt = next(items, None)
                if nxt is None:
                    exhausted = True
                    break
                in_flight.add(nxt[0])
                tasks.put(nxt)
            if not in_flight:
                break
            wait = None
            if timeout is not None:
                with lock:
                    starts = [started[i] for i in in_flight if i in started]
                wait = max(0.0, min(starts) + timeout - time.monotonic()) if starts else timeout
            try:
                index, raw = results.get(timeout=wait)
            except queue.Empty:
                now = time.monotonic()
                with lock:
                    late = [i for i in in_flight if i in started and i not in finished
                            and now - started[i] >= timeout]  # type: ignore[operator]
                    abandoned.update(late)
                for i in late:
                    out[i] = TIMED_OUT
                    in_flight.discard(i)
                    done += 1
                    live -= 1
                    spawn()
                continue
            if index in in_flight:
                in_flight.discard(index)
                out[index] = raw
                done += 1
                progress.update(done)
    finally:
        for _ in range(live):
            tasks.put(None)
    return out


def _run_async(judge: Callable[[Any], Any], rows: Iterator[Any], total: int, concurrency: int,
               timeout: float | None, progress: _Progress) -> list[Any]:
    out: list[Any] = [None] * total

    async def one(row: Any) -> Any:
        try:
            raw = judge(row)
            if inspect.isawaitable(raw):
                raw = await (asyncio.wait_for(raw, timeout) if timeout is not None else raw)
            return raw
        except asyncio.TimeoutError:
            return TIMED_OUT
        except Exception as exc:  # boundary: the judge's failure is data on its row
            return Raised(exc)

    async def main() -> None:
        items = enumerate(rows)
        done = 0

        async def worker() -> None:
            nonlocal done
            for index, row in items:  # one shared iterator: each row is taken once
                out[index] = await one(row)
                done += 1
                progress.update(done)

        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
        return out
    # Called from inside a running loop (a notebook): run ours on a helper thread.
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # re-raised on the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=target, name="wai-judge-loop", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return out


def to_verdict(raw: Any, scale: tuple[float, float] | None, timeout: float | None) -> Any:
    """One outcome of :func:`run_calls` as a :class:`~whileai.grade._contract.Verdict`."""
    from whileai.grade._contract import error_verdict, normalize_judge_result, timeout_verdict

    if type(raw) is Raised:
        return error_verdict(raw.exc)
    if raw is TIMED_OUT:
        return timeout_verdict(timeout if timeout is not None else float("nan"))
    return normalize_judge_result(raw, scale=scale)


def judge_rows(judge: Callable[[Any], Any], rows: list[Any], *, concurrency: int, timeout: float | None,
               scale: tuple[float, float] | None = None, label: str = "judging",
               progress: ProgressArg = None) -> list[Any]:
    """Run ``judge`` on a list of row dicts and return one Verdict per row."""
    # re-judging and probes call a (usually slow) model judge: a bar from the first row
    raws, _ = run_calls(judge, [rows], len(rows), concurrency=concurrency, timeout=timeout, label=label,
                        progress=progress, min_total=1)
    return [to_verdict(raw, scale, timeout) for raw in raws]
