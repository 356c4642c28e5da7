"""Measure: pass_at, compare_runs and delta_report against a plain numpy reference and whileai 0.131.

Tables come from ``whileai.testing.rollout_table(..., messages=False)`` (8 rollouts a task, three
markers, four tiers), narrowed to the columns a measure reads and held in memory, so ``peak_mib``
is what the call allocates above the table. The numpy floor is a vectorised implementation of the same
statistics: a Polars group-by for task means, then a bootstrap that resamples every task index
for a block of draws at once (and, for comparisons, a block of sign flips as one matrix product). whileai 0.131 runs in its own interpreter
(``.venv-wai131``, which ``make bench`` creates) on a JSONL export of the same rows, timed inside that process around
the call alone, at sizes where it finishes in reasonable time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import WAI131, WAI131_MISSING, boot_floor, measure  # noqa: E402

K = 8
LEAN = ["scenario_id", "rollout_index", "reward", "tier", "policy_version", "markers"]
PASS_AT_0131_MAX = 100_000
DELTA_0131_MAX = 10_000
CHUNK_ROWS = 1_000_000


def _table(n_rows: int, *, seed: int = 0, shift: float = 0.0, policy: str = "v1") -> Any:
    """A lean rollout table of ``n_rows`` rows (10M is built from 1M-row chunks of distinct tasks)."""
    import polars as pl

    from whileai import table
    from whileai.testing import rollout_table, true_pass_rates

    parts = []
    for i, start in enumerate(range(0, n_rows, CHUNK_ROWS)):
        n_tasks = min(CHUNK_ROWS, n_rows - start) // K
        rates = true_pass_rates(n_tasks, seed=1000 + i)
        df = rollout_table(n_tasks, K, seed=seed * 97 + i, pass_rates=rates, shift=shift, messages=False,
                           task_prefix=f"c{i}-", policy_version=policy)
        parts.append(df.select(LEAN))
    return table.frame(pl.concat(parts) if len(parts) > 1 else parts[0])


# ---- numpy references ----------------------------------------------------------------------


def _task_means(df: Any, value: Any) -> Any:
    return df.group_by("task_key").agg(value.mean().alias("v")).drop_nulls("v")


def _numpy_pass_at(df: Any) -> dict[str, float]:
    import numpy as np
    import polars as pl
    from scipy.special import comb

    g = df.group_by("task_key").agg(pl.col("reward").count().alias("n"), (pl.col("reward") >= 0.5).sum().alias("c"),
                                    pl.col("reward").mean().alias("m"))
    n, c, m = g["n"].to_numpy(), g["c"].to_numpy(), g["m"].to_numpy()
    pow_k = comb(c, K) / comb(n, K)
    at_k = 1.0 - comb(n - c, K) / comb(n, K)
    return {"pass_at_1": float(m.mean()), "ci": boot_floor(m, 2000, 0), "pow": boot_floor(pow_k, 2000, 1),
            "at": boot_floor(at_k, 2000, 2), "pass_pow_k": float(np.mean(pow_k)), "pass_at_k": float(np.mean(at_k))}


def _numpy_compare(a: Any, b: Any, value: Any) -> dict[str, float]:
    import numpy as np

    joined = _task_means(a, value).join(_task_means(b, value), on="task_key", suffix="_b")
    d = (joined["v_b"] - joined["v"]).to_numpy()
    rng = np.random.default_rng(3)
    obs = abs(d.sum())
    hits = 0
    for lo in range(0, 2000, 256):  # sign flips, a block of draws at once (no loop over draws)
        signs = rng.choice([-1.0, 1.0], (min(256, 2000 - lo), d.size))
        hits += int((np.abs(signs @ d) >= obs).sum())
    return {"delta": float(d.mean()), "ci": boot_floor(d, 2000, 4), "p": (1 + hits) / 2001}


def _numpy_delta(a: Any, b: Any) -> None:
    import polars as pl

    for value in [pl.col("reward"), *(pl.col("markers").struct.field(m) for m in ("no_hedging", "honest_claims",
                                                                                   "argument_grounding"))]:
        _numpy_compare(a, b, value)
    for tier in a["tier"].unique().to_list():
        _numpy_compare(a.filter(pl.col("tier") == tier), b.filter(pl.col("tier") == tier), pl.col("reward"))


# ---- whileai 0.131 ---------------------------------------------------------------------------


_SCRIPT_0131 = r"""
import json, sys, time
import whileai as wai
def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f]
call, a = sys.argv[1], load(sys.argv[2])
b = load(sys.argv[3]) if len(sys.argv) > 3 else None
t = time.perf_counter()
if call == "pass_at":
    wai.pass_at(a)
elif call == "compare_runs":
    wai.simulations.compare_runs(a, b)
else:
    wai.compare(a, b, by="tier")
print(json.dumps({"seconds": time.perf_counter() - t}))
"""


def _export(df: Any, path: Path) -> None:
    from whileai import table

    table.write(df, path)


def _run_0131(call: str, *frames: Any, timeout: float = 600.0) -> tuple[float | None, str]:
    """Seconds whileai 0.131 takes for ``call`` on the same rows (None and a reason when it cannot run)."""
    if not WAI131.exists():
        return None, WAI131_MISSING
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, df in enumerate(frames):
            path = Path(tmp) / f"arm{i}.jsonl"
            _export(df, path)
            paths.append(str(path))
        try:
            out = subprocess.run([str(WAI131), "-c", _SCRIPT_0131, call, *paths], capture_output=True, text=True,
                                 timeout=timeout, cwd=tmp, env={**os.environ, "PYTHONPATH": ""})
        except subprocess.TimeoutExpired:
            return None, f"whileai 0.131 did not finish in {timeout:.0f} s"
    if out.returncode != 0:
        return None, "whileai 0.131 failed: " + (out.stderr.strip().splitlines() or ["?"])[-1][:120]
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"]), ""


# ---- the benchmark -------------------------------------------------------------------------------


def _row(call: str, rows: int, fn: Any, reference: str | None, reference_fn: Any, note: str,
         wai131: tuple[float | None, str] | None) -> dict[str, Any]:
    seconds, peak, error = measure(fn)
    ref_seconds = None
    if reference_fn is not None:
        ref_seconds, _, ref_error = measure(reference_fn)
        if ref_error:
            note += f"; reference failed: {ref_error}"
    if error:
        note += f"; failed: {error}"
    old = None
    if wai131 is not None:
        old, why = wai131
        note += f"; whileai 0.131 {old:.2f} s" if old is not None else f"; {why}"
    return {"call": call, "rows": rows, "seconds": seconds, "peak_mib": peak, "reference": reference,
            "reference_seconds": ref_seconds, "note": note.strip("; "), "whileai_0131_seconds": old}


def run(sizes: list[int]) -> list[dict[str, Any]]:
    """Benchmark rows for pass_at, compare_runs and delta_report at each size (rows per arm)."""
    from whileai.measure import compare_runs, delta_report, pass_at

    warm = _table(800)  # imports and first-call costs paid here, not inside the first timed row
    pass_at(warm), compare_runs(warm, warm), delta_report(warm, warm, by="tier")
    out: list[dict[str, Any]] = []
    for n in sizes:
        before = _table(n, seed=0)
        after = _table(n, seed=1, shift=0.05, policy="v2")
        tasks = n // K
        old = _run_0131("pass_at", before) if n <= PASS_AT_0131_MAX else None
        big_ref = n <= 1_000_000
        out.append(_row("pass_at", n, lambda b=before: pass_at(b),
                        "numpy: group-by + loop bootstrap" if big_ref else None,
                        (lambda b=before: _numpy_pass_at(b)) if big_ref else None,
                        f"{tasks:,} tasks x {K}; k-way intervals Wilson over tasks (n == k)", old))
        out.append(_row("pass_at (bootstrap k-way, 2000 draws)", n,
                        lambda b=before: pass_at(b, binary_ci=None),
                        "numpy: group-by + loop bootstrap" if big_ref else None,
                        (lambda b=before: _numpy_pass_at(b)) if big_ref else None,
                        f"{tasks:,} tasks x {K}; binary_ci=None: multinomial bootstrap on pass^k, pass@k", None))
        old = _run_0131("compare_runs", before, after) if n <= DELTA_0131_MAX else None
        out.append(_row("compare_runs (two runs)", n, lambda a=before, b=after: compare_runs(a, b),
                        "numpy: paired loop bootstrap + flips" if big_ref else None,
                        (lambda a=before, b=after: _numpy_compare(a, b, _reward())) if big_ref else None,
                        f"{tasks:,} paired tasks, rows per arm", old))
        old = _run_0131("delta_report", before, after) if n <= DELTA_0131_MAX else None
        out.append(_row("delta_report (3 markers, by=tier)", n,
                        lambda a=before, b=after: delta_report(a, b, by="tier", must_not_regress=["honest_claims"]),
                        "numpy: 4 metrics + 4 groups" if big_ref else None,
                        (lambda a=before, b=after: _numpy_delta(a, b)) if big_ref else None,
                        "rows per arm", old))
        del before, after
    return out


def _reward() -> Any:
    import polars as pl

    return pl.col("reward")


if __name__ == "__main__":
    wanted = [int(s) for s in sys.argv[1:]] or [10_000, 100_000, 1_000_000]
    start = time.perf_counter()
    for r in run(wanted):
        print(r)
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
