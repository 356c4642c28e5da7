"""Select: select(mode="rl") and select(mode="sft") against whileai 0.131, plus pairs, curriculum, gate.

Targets (issue 6): select(mode="rl") on 1M rollouts under 2 s, select(mode="sft") under 1 s.
whileai 0.131 runs in its own venv (.venv-wai131, from `make bench`) as a subprocess on the rows written as
JSONL; only its select call is timed (inside the subprocess), not its import or the read.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import DATA, WAI131, cached_table, row  # noqa: E402

K = 16  # rollouts per task: the count the 20-80 band wants (BAND_MIN_ROLLOUTS)
REFERENCE_MAX_ROWS = 10_000  # 0.131 is pure Python over dicts; larger runs take minutes

_WAI131_SCRIPT = """
import json, sys, time
import whileai as wai
rows = [json.loads(line) for line in open(sys.argv[1])]
out = {}
for mode in ("rl", "sft"):
    t0 = time.perf_counter()
    sel = wai.select(rows, mode=mode)
    out[mode] = [time.perf_counter() - t0, len(sel)]
print(json.dumps(out))
"""


def _wai131_seconds(df: Any) -> dict[str, list[float]] | None:
    """Time whileai 0.131's select on the same rows in its own interpreter (None if unavailable)."""
    if not WAI131.exists():
        return None
    from whileai import table

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.jsonl"
        table.write(df, path)
        try:
            done = subprocess.run([str(WAI131), "-c", _WAI131_SCRIPT, str(path)], capture_output=True, text=True,
                                  timeout=600, cwd=tmp, check=True)
        except (subprocess.SubprocessError, OSError):
            return None
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def _cpu_seconds(fn: Any) -> float:
    """CPU time (user + system, all threads) of one call: on a shared machine wall time also counts
    the waits for other processes, CPU time does not."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    fn()
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(sizes: list[int]) -> list[dict[str, Any]]:
    from whileai import table
    from whileai.selection import build_preference_pairs, curriculum, publish_gate, select

    out: list[dict[str, Any]] = []
    for n in sizes:
        df = table.frame(cached_table(max(1, n // K), K))
        select(df.head(2_000), mode="rl")  # one-time costs (regex compilation, thread pool) out of the timing
        select(df.head(2_000), mode="sft")
        ref = _wai131_seconds(df) if n <= REFERENCE_MAX_ROWS else None
        for mode, budget in (("rl", 2.0), ("sft", 1.0)):
            kept = select(df, mode=mode).report.n_selected
            cpu = _cpu_seconds(lambda m=mode, d=df: select(d, mode=m))
            r = row(f'select(mode="{mode}")', df.height, lambda m=mode, d=df: select(d, mode=m),
                    reference="whileai 0.131 select" if ref else None,
                    note=f"k={K}, kept {kept}, cpu {cpu:.2f} s" + (f"; target < {budget:g} s at 1M" if n >= 1_000_000 else ""))
            if ref:
                r["reference_seconds"] = ref[mode][0]
                r["note"] += f"; 0.131 kept {ref[mode][1]}"
            out.append(r)
        out.append(row("build_preference_pairs", df.height, lambda d=df: build_preference_pairs(d), note=f"k={K}"))
        out.append(row("curriculum", df.height, lambda d=df: curriculum(d), note=f"k={K}"))
        if n <= 100_000:
            out.append(row("publish_gate", df.height, lambda d=df: publish_gate(d),
                           note="incl. near-duplicate asks and length spread"))
    return out


if __name__ == "__main__":
    DATA.mkdir(exist_ok=True)
    sizes = [int(s) for s in sys.argv[1].split(",")] if len(sys.argv) > 1 else [10_000, 100_000, 1_000_000]
    for r in run(sizes):
        print(r)
