"""Notebook benchmarks: what a display, a figure and a progress bar cost at scale.

- ``run_judge`` with ``progress=False`` against ``progress=True`` (a tqdm bar drawn to a null
  stream) and ``progress=callable``: the bar's overhead on a fast judge, where it matters most.
- A ``ScoredData`` display (``_repr_html_``: rows, tasks, k, graded share, the first rows).
- ``pass_at(...).figure_spec()`` and ``delta_report(...).figure_spec()``: building the figure dict
  from the report (the report itself is not timed).

Run alone: ``python benchmarks/bench_notebook.py [sizes...]`` (default 100000 1000000).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import cached_table, row  # noqa: E402

K = 8


def run(sizes: list[int]) -> list[dict[str, Any]]:
    """Benchmark rows at each size."""
    import polars as pl

    import whileai as wai
    from whileai import table
    from whileai.measure import delta_report, pass_at

    def judge(r: dict[str, Any]) -> float:
        return float(r["rollout_index"] % 2 == 0)

    warm = table.frame(pl.read_parquet(cached_table(200, K, messages=False)))
    wai.run_judge(warm.drop("reward"), judge, progress=False, trust="off")  # first-call costs paid here
    out: list[dict[str, Any]] = []
    for n in sizes:
        df = table.frame(pl.read_parquet(cached_table(n // K, K, messages=False)))
        ungraded = df.drop("reward")
        calls = []

        def grade(progress: Any, d: pl.DataFrame = ungraded) -> Any:
            saved = sys.stderr
            sys.stderr = io.StringIO()  # a bar's text goes nowhere; its cost stays
            try:
                return wai.run_judge(d, judge, progress=progress, trust="off")
            finally:
                sys.stderr = saved

        out.append(row("run_judge progress=False", n, lambda: grade(False), note=f"{n // K:,} tasks x {K}"))
        out.append(row("run_judge progress=True (tqdm)", n, lambda: grade(True), note="bar drawn to a null stream"))
        out.append(row("run_judge progress=callable", n, lambda c=calls: grade(lambda d, t, i: c.append(d)),
                       note="callback per chunk of rows"))
        scored = wai.ScoredData(df)
        out.append(row("ScoredData._repr_html_", n, lambda s=scored: s._repr_html_(), note="tasks, k, first 5 rows"))
        report = pass_at(df)
        out.append(row("pass_at(...).figure_spec()", n, lambda r=report: r.figure_spec(), note="3 bars"))
        delta = delta_report(df, df)
        out.append(row("delta_report(...).figure_spec()", n, lambda r=delta: r.figure_spec(),
                       note=f"{len(delta.metrics)} metrics"))
    return out


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [100_000, 1_000_000]
    rows = run(sizes)
    print(f"{'call':<34} {'rows':>10} {'seconds':>9} {'peak MiB':>9}  note")
    for r in rows:
        print(f"{r['call']:<34} {r['rows']:>10,} {r['seconds']:>9.3f} {r['peak_mib']:>9.1f}  {r['note']}")
