"""Timing and peak-memory measurement for the benchmark scripts.

``measure(fn)`` times ``fn`` and samples resident memory while it runs, so ``peak_mib`` counts
what Polars, Arrow and numpy allocate natively (tracemalloc would not).
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class _PeakSampler(threading.Thread):
    """Samples this process's resident memory every few milliseconds until stopped."""

    def __init__(self, interval: float = 0.005) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.peak = _rss_mib()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak = max(self.peak, _rss_mib())
            time.sleep(self.interval)

    def stop(self) -> float:
        self._stop_event.set()
        self.join()
        self.peak = max(self.peak, _rss_mib())
        return self.peak


def measure(fn: Callable[[], Any]) -> tuple[float, float, str | None]:
    """Run ``fn``; return (seconds, peak resident MiB above the start, error or None).

    Memory is sampled from /proc every 5 ms in a thread, so native allocations by Polars, Arrow
    and numpy count (tracemalloc sees only Python's). The result of ``fn`` is dropped before
    returning, so one measurement does not inflate the next.
    """
    gc.collect()
    start = _rss_mib()
    sampler = _PeakSampler()
    sampler.start()
    t0 = time.perf_counter()
    error = None
    try:
        result = fn()
        del result
    except Exception as exc:  # reported, not raised: a benchmark row says it failed
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - t0
    peak = sampler.stop()
    gc.collect()
    return seconds, max(0.0, peak - start), error


def row(call: str, rows: int, fn: Callable[[], Any], *, reference: str | None = None,
        reference_fn: Callable[[], Any] | None = None, note: str = "") -> dict[str, Any]:
    """Measure ``fn`` (and ``reference_fn`` when given) and return one benchmark table row."""
    seconds, peak, error = measure(fn)
    ref_seconds = None
    if reference_fn is not None:
        ref_seconds, _, ref_error = measure(reference_fn)
        if ref_error:
            note = (note + f"; reference failed: {ref_error}").strip("; ")
    if error:
        note = (note + f"; failed: {error}").strip("; ")
    return {"call": call, "rows": rows, "seconds": seconds, "peak_mib": peak, "reference": reference,
            "reference_seconds": ref_seconds, "note": note}


def cached_table(n_tasks: int, k: int, *, messages: bool = True, seed: int = 0, shift: float = 0.0,
                 **kwargs: Any) -> Path:
    """A generated rollout table as Parquet under benchmarks/data, built once and reused."""
    from whileai.testing import rollout_table

    DATA.mkdir(exist_ok=True)
    tag = f"t{n_tasks}_k{k}_m{int(messages)}_s{seed}_sh{shift}" + "".join(f"_{a}{b}" for a, b in sorted(kwargs.items()))
    path = DATA / f"{tag}.parquet"
    if not path.exists():
        df = rollout_table(n_tasks, k, seed=seed, messages=messages, shift=shift, **kwargs)
        tmp = path.with_suffix(".tmp")
        df.write_parquet(tmp)
        tmp.rename(path)
    return path
