"""Run every benchmark and print one table: call, rows, seconds, peak MiB, reference.

Usage: ``python benchmarks/run.py [--sizes 10000,100000,1000000] [--only measure,table] [--10m]
[--files]``, or ``python benchmarks/run.py --real [bench_real options]``. The headline table
(docs/performance.md) is ``--real``: every step from the rows users have (``bench_real.py``: the
0.131-shaped rows of ``make_rollouts.py`` and whileai's own writer's JSONL and Parquet) against the
DuckDB floor and whileai 0.131. Each ``benchmarks/bench_<step>.py`` defines ``run(sizes) ->
list[dict]`` and times one step on ``whileai.testing`` tables in memory; ``--files`` runs
``bench_files.py`` alone (every step from files of ``whileai.testing`` rows, a fresh process per
cell; lean rows without ``privileged`` or ``lineage``, so not the headline). The table ends with each call's growth exponent (the slope of
log-seconds against log-rows; 1.0 is linear) and says which whileai 0.131 the reference column ran,
or that it is missing.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DEFAULT_SIZES = [10_000, 100_000, 1_000_000]


def _fmt(value: object, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--real" in argv:
        import bench_real

        return bench_real.main([a for a in argv if a != "--real"])
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES))
    parser.add_argument("--only", default="", help="comma-separated step names (table, measure, ...)")
    parser.add_argument("--10m", dest="ten_m", action="store_true", help="add 10,000,000 rows")
    parser.add_argument("--files", action="store_true", help="every step from files of whileai.testing rows")
    parser.add_argument("--real", action="store_true", help="the headline: bench_real.py (its options follow)")
    args = parser.parse_args(argv)
    from _harness import growth, wai131_status
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.ten_m:
        sizes.append(10_000_000)
    wanted = {s.strip() for s in args.only.split(",") if s.strip()}
    modules = ["bench_files"] if args.files else sorted(p.stem for p in HERE.glob("bench_*.py")
                                                              if p.stem not in ("bench_files", "bench_real", "bench_real_logs"))
    rows: list[dict] = []
    for name in modules:
        step = name.removeprefix("bench_")
        if wanted and step not in wanted and not args.files:
            continue
        print(f"running {name} ...", file=sys.stderr, flush=True)
        module = importlib.import_module(name)
        rows.extend(module.run(sizes, only=args.only) if args.files else module.run(sizes))
    status = wai131_status()
    missing = "missing" in status
    print(f"reference: {status}")
    header = (f"{'call':<44} {'rows':>10} {'seconds':>9} {'cpu s':>8} {'peak MiB':>9} {'reference':<28} {'ref s':>8}"
              "  note")
    print(header)
    print("-" * len(header))
    for r in rows:
        ref = r.get("reference") or ("0.131 missing" if missing else None)
        print(f"{r['call']:<44} {r['rows']:>10,} {_fmt(r['seconds']):>9} {_fmt(r.get('cpu')):>8} "
              f"{_fmt(r['peak_mib'], 0):>9} {_fmt(ref):<28} {_fmt(r.get('reference_seconds')):>8}  {r.get('note', '')}")
    by_call: dict[str, list[tuple[int, float]]] = {}
    for r in rows:
        t = r.get("cpu") if r.get("cpu") is not None else r.get("seconds")
        by_call.setdefault(r["call"], []).append((r["rows"], t))
    exps = {c: growth([p[0] for p in pts], [p[1] for p in pts]) for c, pts in by_call.items() if len(pts) > 1}
    if exps:
        print("\ngrowth exponents (slope of log-time against log-rows; CPU seconds where measured; 1.0 is linear)")
        for c, e in exps.items():
            print(f"  {c:<44} {_fmt(e)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
