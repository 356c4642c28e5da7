"""Past one machine: the local path and the Ray engine side by side on one Parquet folder.

Generates ``rows`` rollouts (no conversations: ``rollout_table(messages=False)``) as a folder of
Parquet files of ``ROWS_PER_FILE`` rows each, over a fixed ``TASKS`` tasks (each file is another
draw of the same tasks), then runs ``pass_at`` on it twice, each in a fresh process so each
peak is its own: the local path (``wai.pass_at(folder)``: Polars reads the measure's columns) and
the Ray engine on a local Ray (``wai.pass_at(ray.data.read_parquet(folder))``, ``ray.init(num_cpus=
CPUS)``). The table gives wall time and the driver's peak resident memory (``VmHWM``; Ray's
workers are other processes and are not counted: on a cluster they are other machines). The
two pass@1 values are printed to show they agree.

Run: ``python benchmarks/bench_scale.py [rows...] [--folder /tmp/wai-scale]`` (default 1000000
10000000). Check ``df -h`` first: 10M rows take about 0.4 GB on disk.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROWS_PER_FILE = 1_000_000
TASKS = 10_000
CPUS = 2

_CHILD = r"""
import json, sys, time
folder, engine, cpus = sys.argv[1], sys.argv[2], int(sys.argv[3])
import whileai as wai
t0 = time.perf_counter()
if engine == "ray":
    import ray
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    rows = ray.data.read_parquet(folder)
else:
    rows = folder
report = wai.pass_at(rows)
seconds = time.perf_counter() - t0
sys.path.insert(0, sys.argv[4])
from _harness import own_peak_mib
peak = own_peak_mib()
print(json.dumps({"seconds": seconds, "peak_mib": peak, "pass_at_1": report.pass_at_1, "n_rows": report.n_rows,
                  "n_tasks": report.n_tasks}))
"""


def generate(rows: int, folder: Path) -> Path:
    """The Parquet folder of ``rows`` rollouts over ``TASKS`` tasks (kept between runs)."""
    from whileai.testing import rollout_table

    out = folder / f"rows-{rows}"
    if (out / "_done").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    files = max(1, rows // ROWS_PER_FILE)
    per_file = rows // files
    k = max(1, per_file // TASKS)
    for i in range(files):
        if (out / f"part-{i:05d}.parquet").exists():
            continue
        df = rollout_table(TASKS, k, seed=0, replica=i, messages=False, markers=("honest_claims",))
        df.write_parquet(out / f"part-{i:05d}.parquet")
    (out / "_done").write_text("ok")
    return out


def run_child(folder: Path, engine: str) -> dict[str, float]:
    """One measured call in a fresh process."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(folder), engine, str(CPUS), str(Path(__file__).resolve().parent)],
                          capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", type=int, default=[1_000_000, 10_000_000])
    parser.add_argument("--folder", default="/tmp/wai-scale")
    args = parser.parse_args()
    print("| rows | tasks | engine | wall s | driver peak MiB | pass@1 |")
    print("|---:|---:|---|---:|---:|---:|")
    for n in args.rows:
        t0 = time.perf_counter()
        folder = generate(n, Path(args.folder))
        gen = time.perf_counter() - t0
        for engine in ("local", "ray"):
            r = run_child(folder, engine)
            print(f"| {int(r['n_rows']):,} | {int(r['n_tasks']):,} | {engine} | {r['seconds']:.1f} | {r['peak_mib']:.0f} | "
                  f"{r['pass_at_1']:.6f} |", flush=True)
        print(f"<!-- {n:,} rows generated in {gen:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
