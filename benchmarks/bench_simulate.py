"""simulate() with the seeded agent: the engine's own overhead per rollout, against whileai 0.131.

The agent is pure Python, so what is timed is the engine: the covering grid, the world, the
multi-turn loop and the batched Arrow build. The 0.131 reference runs the same quickstart-shaped
call in its own venv (``.venv-wai131``, which ``make bench`` creates) as a child process, at the smaller sizes only (it lands a
few hundred rows in several seconds).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import WAI131, row  # noqa: E402

MAX_ROLLOUTS = 200_000  # larger sizes are capped: a rollout is a Python agent call, not a kernel
REFERENCE_MAX = 2_000

_REFERENCE = """
import sys, time, warnings
warnings.filterwarnings("ignore")
import whileai as wai
@wai.tool
def get_order(order_id: str) -> dict:
    '''Look up an order by id.'''
n = int(sys.argv[1])
t = time.perf_counter()
data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, mode="rl", repeats=4, repeat_policy="fixed", budget=n)
print(time.perf_counter() - t, len(data.rows()))
"""


def _tools() -> list[Any]:
    from whileai.simulation import tool

    @tool
    def get_order(order_id: str) -> dict:  # type: ignore[empty-body]
        """Look up an order by id."""

    @tool
    def refund_order(order_id: str, amount: float, reason: str) -> dict:  # type: ignore[empty-body]
        """Refund an order."""

    return [get_order, refund_order]


def _reference(n: int, note: list[str]) -> float | None:
    """Run whileai 0.131 in its own venv; return its seconds (or None where it is not installed)."""
    if not WAI131.exists() or n > REFERENCE_MAX:
        return None
    out = subprocess.run([str(WAI131), "-c", _REFERENCE, str(n)], capture_output=True, text=True, timeout=600,
                         cwd="/tmp", env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    try:
        seconds, rows = out.stdout.strip().splitlines()[-1].split()
    except (ValueError, IndexError):
        note.append(f"0.131 failed: {out.stderr.strip()[-120:]}")
        return None
    note.append(f"0.131 landed {rows} of {n} rows")
    return float(seconds)


def run(sizes: list[int]) -> list[dict[str, Any]]:
    from whileai.simulation import seeded_agent, simulate

    tools = _tools()
    simulate(seeded_agent(tools), tools=tools, repeats=4, budget=64)  # warm imports
    out = []
    for size in sizes:
        n = min(size, MAX_ROLLOUTS)
        note: list[str] = [] if n == size else [f"capped at {MAX_ROLLOUTS:,} rollouts"]
        ref = _reference(n, note)

        def call(n: int = n) -> Any:
            return simulate(seeded_agent(tools), tools=tools, system_prompt="Help customers with orders. "
                            "Never refund more than $100 without a manager.", mode="rl", repeats=4, budget=n)

        r = row("simulate(seeded_agent, repeats=4)", n, call, reference="whileai 0.131 simulate" if ref else None,
                note="; ".join(note))
        r["reference_seconds"] = ref
        out.append(r)
        if n <= 20_000:
            from whileai.simulation._tools import normalize_tools
            from whileai.simulation._writer import plan_tasks

            specs = normalize_tools(tools)
            out.append(row("plan_tasks (covering grid, template writer)", n // 4,
                           lambda n=n, specs=specs: plan_tasks(specs, "Never refund more than $100.", n_tasks=n // 4,
                                                               seed=0, hard_share=0.4, fault_rate=0.25,
                                                               clause_share=0.1)))
    return out


if __name__ == "__main__":
    started = time.perf_counter()
    for r in run([1_000, 10_000, 100_000]):
        print(r)
    print(f"total {time.perf_counter() - started:.1f}s")
