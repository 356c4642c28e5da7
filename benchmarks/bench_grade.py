"""Grade benchmarks: run_judge with a trivial judge, judge_trust and attach_labels at scale.

Each case runs in a fresh child process; ``peak_mib`` is the call's peak resident memory over what
the process held before it (Linux: the VmHWM mark reset through /proc/self/clear_refs; elsewhere
``resource`` ru_maxrss). Polars allocates outside ``tracemalloc``'s view, so RSS is the honest gauge.
Table generation is not timed. References:

- ``run_judge``: the plain way, ``table.rows(df)`` then a Python loop and one Series
  (``plain rows + loop``), and whileai 0.131's ``run_judge`` on a list of dicts (at most 100k rows).
- ``judge_trust``: whileai 0.131's ``judge_trust`` on a list of dicts (at most 100k rows).

Run alone: ``python benchmarks/bench_grade.py [sizes...]`` (default 100000 1000000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from _harness import WAI131, own_peak_mib, reset_peak_mib  # noqa: E402

REFERENCE_PYTHON = str(WAI131)
REFERENCE_MAX_ROWS = 100_000
JUDGE = "lambda row: {'reward': int(row['rollout_index'] % 2 == 0)}"


def _peak_since(base: float) -> float:
    return max(0.0, own_peak_mib() - base)


def _table(n: int, *, labeled: bool) -> Any:
    import polars as pl

    from whileai import table
    from whileai.testing import rollout_table

    df = table.frame(rollout_table(max(1, n // 4), 4, seed=0, messages=True))
    if labeled:
        flip = (pl.int_range(pl.len()) % 10 == 0)
        df = df.with_columns(
            pl.when(flip).then(1.0 - pl.col("reward")).otherwise(pl.col("reward")).alias("gold_reward"),
            pl.lit("human").alias("gold_kind"),
        )
    return df


def _child(case: str, n: int) -> dict[str, Any]:
    """Run one case in this process and return seconds and peak MiB."""
    judge = eval(JUDGE)  # noqa: S307 - a fixed benchmark lambda
    if case == "run_judge":
        from whileai.grade import run_judge

        df = _table(n, labeled=False)
        run_judge(df.head(1000), judge)  # warm imports
        base = reset_peak_mib()
        t0 = time.perf_counter()
        run_judge(df, judge)
    elif case == "plain_loop":
        import polars as pl

        from whileai import table

        df = _table(n, labeled=False)
        base = reset_peak_mib()
        t0 = time.perf_counter()
        rewards = [judge(r)["reward"] for r in table.iter_rows(df)]
        df.with_columns(pl.Series("reward", rewards, dtype=pl.Float64))
    elif case == "judge_trust":
        from whileai.grade import judge_trust

        df = _table(n, labeled=True)
        judge_trust(df.head(1000))  # warm imports (scipy)
        base = reset_peak_mib()
        t0 = time.perf_counter()
        judge_trust(df)
    elif case == "attach_labels":
        from whileai.grade import attach_labels

        df = _table(n, labeled=False)
        ids = df["rollout_id"].to_list()
        labels = dict(zip(ids, (int(r) for r in df["reward"].to_list())))
        attach_labels(df.head(10), {ids[0]: 1})
        base = reset_peak_mib()
        t0 = time.perf_counter()
        attach_labels(df, labels)
    else:
        raise SystemExit(f"unknown case {case!r}")
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "peak_mib": _peak_since(base)}


_REFERENCE_SCRIPT = r"""
import sys, time
from whileai.simulations import run_judge, judge_trust
n, case = int(sys.argv[1]), sys.argv[2]
rows = [{"scenario_id": f"sc-{i // 4:08d}", "rollout_index": i % 4, "rollout_id": f"sc-{i // 4:08d}-{i % 4}",
         "prompt": "Please look into order status", "final_text": "I checked the order and resolved it.",
         "messages": [{"role": "user", "content": "Please look into order status"},
                      {"role": "assistant", "content": "I checked the order and resolved it."}],
         "reward": float(i % 2), "gold_reward": float(i % 2 if i % 10 else 1 - i % 2), "gold_kind": "human"}
        for i in range(n)]
judge = lambda row: {"reward": int(row["rollout_index"] % 2 == 0)}
t0 = time.perf_counter()
if case == "run_judge":
    run_judge(rows, judge)
else:
    judge_trust(rows)
print(time.perf_counter() - t0)
"""


def _reference_131(case: str, n: int) -> float | None:
    if n > REFERENCE_MAX_ROWS or not os.path.exists(REFERENCE_PYTHON):
        return None
    try:
        out = subprocess.run([REFERENCE_PYTHON, "-c", _REFERENCE_SCRIPT, str(n), case], capture_output=True, text=True,
                             timeout=600, cwd="/tmp")
        return float(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError, OSError):
        return None


def _in_child(case: str, n: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", case, str(n)], capture_output=True, text=True,
                         timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"bench_grade child {case} {n} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(sizes: list[int]) -> list[dict[str, Any]]:
    """Time run_judge, judge_trust and attach_labels at each size, with their references."""
    results: list[dict[str, Any]] = []
    for n in sizes:
        ours = _in_child("run_judge", n)
        plain = _in_child("plain_loop", n)
        ref131 = _reference_131("run_judge", n)
        note = f"trivial lambda judge; plain rows + loop {plain['seconds']:.2f} s"
        if ref131 is not None:
            note += f"; whileai 0.131 run_judge {ref131:.2f} s"
        results.append({"call": "run_judge (trivial lambda)", "rows": n, "seconds": ours["seconds"],
                        "peak_mib": ours["peak_mib"], "reference": "plain rows + loop",
                        "reference_seconds": plain["seconds"], "note": note})
        trust = _in_child("judge_trust", n)
        ref131 = _reference_131("judge_trust", n)
        results.append({"call": "judge_trust (labels only)", "rows": n, "seconds": trust["seconds"],
                        "peak_mib": trust["peak_mib"], "reference": "whileai 0.131" if ref131 is not None else None,
                        "reference_seconds": ref131, "note": "every row labeled, 10% disagree"})
        labels = _in_child("attach_labels", n)
        results.append({"call": "attach_labels", "rows": n, "seconds": labels["seconds"], "peak_mib": labels["peak_mib"],
                        "reference": None, "reference_seconds": None, "note": "one label per row, keyed by rollout_id"})
    return results


def main(argv: list[str]) -> None:
    """Print the rows for the sizes given (default 100k and 1M)."""
    if argv[:1] == ["--child"]:
        print(json.dumps(_child(argv[1], int(argv[2]))))
        return
    sizes = [int(a) for a in argv] or [100_000, 1_000_000]
    for row in run(sizes):
        print(json.dumps(row))


if __name__ == "__main__":
    main(sys.argv[1:])
