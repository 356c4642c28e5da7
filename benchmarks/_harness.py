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


def rss_mib() -> float:
    """This process's resident memory now, in MiB (``/proc/self/statm``)."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def status_mib(field: str, pid: int | str = "self") -> float | None:
    """A memory field of a process's ``/proc/<pid>/status`` in MiB (``VmHWM``: its own peak so far; ``VmRSS``: now).

    None where ``/proc`` cannot say (not Linux, or the process has exited).
    """
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


class _PeakSampler(threading.Thread):
    """Samples this process's resident memory every few milliseconds until stopped."""

    def __init__(self, interval: float = 0.005) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.peak = rss_mib()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak = max(self.peak, rss_mib())
            time.sleep(self.interval)

    def stop(self) -> float:
        self._stop_event.set()
        self.join()
        self.peak = max(self.peak, rss_mib())
        return self.peak


def measure(fn: Callable[[], Any]) -> tuple[float, float, str | None]:
    """Run ``fn``; return (seconds, peak resident MiB above the start, error or None).

    Memory is sampled from /proc every 5 ms in a thread, so native allocations by Polars, Arrow
    and numpy count (tracemalloc sees only Python's). The result of ``fn`` is dropped before
    returning, so one measurement does not inflate the next.
    """
    gc.collect()
    start = rss_mib()
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


# ---- whileai 0.131, the reference column ------------------------------------------------------

#: The interpreter of a separate venv holding whileai 0.131 (``make bench`` creates it with
#: ``pip install whileai==0.131``); ``WAI131_PYTHON`` overrides it.
WAI131 = Path(os.environ.get("WAI131_PYTHON") or Path(__file__).resolve().parents[1] / ".venv-wai131" / "bin" / "python")
WAI131_MISSING = "whileai 0.131 missing (`make bench` installs it into .venv-wai131 with pip install whileai==0.131)"


def wai131_status() -> str:
    """One line for the table: which whileai 0.131 the reference column ran, or that it is missing."""
    import subprocess

    if not WAI131.exists():
        return WAI131_MISSING
    try:
        out = subprocess.run([str(WAI131), "-c", "import importlib.metadata as m; print(m.version('whileai'))"],
                             capture_output=True, text=True, timeout=120, cwd="/tmp")
    except Exception as exc:  # reported, not raised
        return f"{WAI131_MISSING}; {WAI131} failed: {exc}"
    version = out.stdout.strip()
    return f"whileai {version} at {WAI131}" if out.returncode == 0 and version else f"{WAI131_MISSING}; {out.stderr[-200:]}"


# ---- the numpy floor ----------------------------------------------------------------------------


def boot_floor(values: Any, draws: int, seed: int, *, block: int = 256) -> tuple[float, float]:
    """Percentile bootstrap of a mean, vectorised: ``block`` resamples of every task index at once.

    The floor a plain numpy implementation reaches (no Python loop over draws); the same
    statistic the library computes, so the column is a fair lower bound, not a strawman.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    v = np.asarray(values, dtype=np.float64)
    n = v.size
    means = np.empty(draws)
    for lo in range(0, draws, block):
        m = min(block, draws - lo)
        means[lo:lo + m] = v[rng.integers(0, n, (m, n))].mean(axis=1)
    lo_q, hi_q = np.quantile(means, [0.025, 0.975])
    return float(lo_q), float(hi_q)


# ---- one cell in a fresh process ----------------------------------------------------------------

def own_peak_mib() -> float:
    """This process's peak resident memory in MiB: ``VmHWM``, else ``ru_maxrss``.

    ``ru_maxrss`` is not it for a child: Linux keeps the larger of its own peak and the resident
    size it had before ``exec`` (the parent's, copied by ``fork``), so a benchmark parent holding
    1 GiB of data made every child report at least 1 GiB. ``ru_maxrss`` only where ``/proc`` is
    missing.
    """
    import resource
    import sys

    peak = status_mib("VmHWM")
    if peak is not None:
        return peak
    raw = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return raw / 1024.0 if sys.platform != "darwin" else raw / 2**20


def reset_peak_mib() -> float:
    """Reset this process's peak-RSS mark (Linux ``clear_refs`` 5) after a collection; the resident MiB it starts from.

    Then ``own_peak_mib() - reset_peak_mib()`` is what a call allocated at its peak. Where the
    mark cannot be reset, the peak so far is the baseline (the difference then undercounts).
    """
    import gc

    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        return own_peak_mib()
    current = status_mib("VmRSS")
    return current if current is not None else own_peak_mib()


_CELL = """
import json, sys, time
sys.path.insert(0, {here!r})
import importlib
mod = importlib.import_module({module!r})
c0 = time.process_time(); t0 = time.perf_counter()
error = None
try:
    note = getattr(mod, {func!r})(*json.loads(sys.argv[1]))
except Exception as exc:
    note, error = "", f"{{type(exc).__name__}}: {{exc}}"
wall = time.perf_counter() - t0
cpu = time.process_time() - c0
from _harness import own_peak_mib
peak = own_peak_mib()
print("CELL" + json.dumps({{"seconds": wall, "cpu": cpu, "peak_mib": peak, "note": note or "", "error": error}}))
"""


def fresh_cell(module: str, func: str, *args: Any, timeout: float = 1800.0, memory_mib: int | None = None) -> dict[str, Any]:
    """Run ``module.func(*args)`` in a fresh interpreter; seconds, CPU seconds and peak RSS.

    ``peak_mib`` is the child's whole peak resident memory (``own_peak_mib``: ``VmHWM`` of its
    own address space): the interpreter, the imports and the input table it read, not only what
    the call allocated above it. With ``memory_mib`` the child runs under that address-space
    limit, so a cell that would swap the machine fails and says so. ``func`` returns a short note
    (or None). The child may write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped from its
    environment), so a cell measures a warm install, as a user's second run is, not a compile of
    every module.
    """
    import json
    import os
    import subprocess
    import sys

    code = _CELL.format(here=str(Path(__file__).resolve().parent), module=module, func=func)

    def limit() -> None:
        if memory_mib:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_mib * 2**20, memory_mib * 2**20))

    try:
        out = subprocess.run([sys.executable, "-c", code, json.dumps(list(args))], capture_output=True, text=True,
                             timeout=timeout, preexec_fn=limit if memory_mib else None,
                             env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    except subprocess.TimeoutExpired:
        return {"seconds": float("nan"), "cpu": float("nan"), "peak_mib": float("nan"), "note": "",
                "error": f"timed out after {timeout:.0f} s"}
    line = next((x for x in out.stdout.splitlines()[::-1] if x.startswith("CELL")), None)
    if line is None:
        return {"seconds": float("nan"), "cpu": float("nan"), "peak_mib": float("nan"), "note": "",
                "error": f"exit {out.returncode}: {out.stderr.strip().splitlines()[-1:] or ['killed']}"}
    return json.loads(line[4:])


def growth(rows: list[int], seconds: list[float]) -> float | None:
    """The growth exponent: the slope of log(seconds) against log(rows), least squares."""
    import numpy as np

    pts = [(r, s) for r, s in zip(rows, seconds, strict=True) if s and s > 0 and np.isfinite(s)]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])
