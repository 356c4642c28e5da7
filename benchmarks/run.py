"""Run every benchmark and print one table: call, rows, seconds, peak MiB, reference.

Usage: ``python benchmarks/run.py [--sizes 10000,100000,1000000] [--only measure,table] [--10m]``.
Each ``benchmarks/bench_<step>.py`` defines ``run(sizes) -> list[dict]``.
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
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES))
    parser.add_argument("--only", default="", help="comma-separated step names (table, measure, ...)")
    parser.add_argument("--10m", dest="ten_m", action="store_true", help="add 10,000,000 rows")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.ten_m:
        sizes.append(10_000_000)
    wanted = {s.strip() for s in args.only.split(",") if s.strip()}
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    rows: list[dict] = []
    for name in modules:
        step = name.removeprefix("bench_")
        if wanted and step not in wanted:
            continue
        print(f"running {name} ...", file=sys.stderr, flush=True)
        module = importlib.import_module(name)
        rows.extend(module.run(sizes))
    header = f"{'call':<44} {'rows':>10} {'seconds':>9} {'peak MiB':>9} {'reference':<28} {'ref s':>8}  note"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['call']:<44} {r['rows']:>10,} {_fmt(r['seconds']):>9} {_fmt(r['peak_mib'], 0):>9} "
              f"{_fmt(r.get('reference')):<28} {_fmt(r.get('reference_seconds')):>8}  {r.get('note', '')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
