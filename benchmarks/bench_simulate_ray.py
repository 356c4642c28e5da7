"""simulate on the local engine and on a local Ray side by side: wall, CPU and the driver's peak memory.

Runs ``wai.simulate(wai.seeded_agent(tools), repeats=4, budget=N)`` (a scripted agent: no model,
no network) twice per budget, each in a fresh process so each peak is its own: the local engine
(the rows held in the driver) and ``engine="ray", num_workers=WORKERS`` on ``ray.init(num_cpus=
WORKERS)`` (the rows written by the workers into a Parquet folder). Driver peak is the driver's
``VmHWM``; Ray's workers are other processes (other machines on a cluster) and are not counted.
CPU seconds are the driver's own. The row counts are printed to show the two runs agree.

Run: ``python benchmarks/bench_simulate_ray.py [budget...]`` (default 2000 20000).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

WORKERS = 2

_CHILD = r"""
import json, os, resource, sys, time
budget, engine, workers, out = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    '''Look up an order by id.'''

@wai.tool
def refund_order(order_id: str, amount: float) -> dict:
    '''Refund part of an order.'''

tools = [get_order, refund_order]
options = dict(tools=tools, system_prompt="Help customers with orders. Never refund more than $100.", repeats=4,
               budget=budget, seed=0, progress=False)
if engine == "ray":
    import ray
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
t0, c0 = time.perf_counter(), time.process_time()
if engine == "ray":
    result = wai.simulate(wai.seeded_agent(tools), engine="ray", num_workers=workers, output=out, **options)
else:
    result = wai.simulate(wai.seeded_agent(tools), **options)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
sys.path.insert(0, sys.argv[5])
from _harness import own_peak_mib
peak = own_peak_mib()
print(json.dumps({"seconds": seconds, "cpu_s": cpu, "peak_mib": peak, "rows": result.report.rows,
                  "run_id": result.report.run_id}))
"""


def cell(budget: int, engine: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(budget), engine, str(WORKERS), f"{tmp}/rows",
                               str(Path(__file__).resolve().parent)],
                              capture_output=True, text=True, timeout=3600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(budgets: list[int]) -> None:
    print(f"{'rollouts':>9} {'engine':<14} {'wall s':>8} {'driver cpu s':>13} {'driver peak MiB':>16} {'rows':>8}")
    for budget in budgets:
        for engine in ("local", "ray"):
            r = cell(budget, engine)
            name = engine if engine == "local" else f"ray ({WORKERS} workers)"
            print(f"{budget:>9,} {name:<14} {r['seconds']:>8.1f} {r['cpu_s']:>13.1f} {r['peak_mib']:>16.0f} {r['rows']:>8,}",
                  flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [2000, 20000])
