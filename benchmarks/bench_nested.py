"""``table.frame`` of whileai 0.131-shaped Parquet rows, with the columnar nested normaliser on and off.

    python benchmarks/bench_nested.py [--parquet FILE] [--size 100k]

The rows are the generator's (``../shared/bench/make_rollouts.py --parquet``: pyarrow's JSON
reader and Parquet writer), whose ``messages``, ``steps`` and json columns are nested in shapes
that are not the table's, so every cell is converted. ``on`` is ``whileai.defaults.FAST_READ``
(``table/_columnar.py``), ``off`` the row path for every cell. Each cell is a fresh process
(``_real.run_python``: CPU seconds user + system with imports, peak MiB), interleaved on and off.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _real  # noqa: E402

CASES = {
    "table.frame(path)": "wai.table.frame(path)",
    "table.frame(DataFrame)": "wai.table.frame(pl.read_parquet(path))",
    'select(path, mode="sft")': 'wai.select(path, mode="sft")',
}

_CODE = """
import sys
from whileai import defaults
defaults.FAST_READ = sys.argv[1] == "on"
import polars as pl
import whileai as wai
path = sys.argv[2]
{call}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="100k", choices=list(_real.SIZES))
    parser.add_argument("--parquet", default=None, help="the generator's Parquet (default: made under --data)")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    path = Path(args.parquet) if args.parquet else _real.inputs(args.size, kinds=("genpq",)).files["genpq"][0]
    print(f"{path} ({args.size})\n\n| call | on: CPU s | on: peak MiB | off: CPU s | off: peak MiB |\n|---|---|---|---|---|")
    for name, call in CASES.items():
        cells = []
        for switch in ("on", "off"):
            m = _real.run_python(_CODE.format(call=call), args=[switch, str(path)], timeout=args.timeout, memory_mib=8192)
            cells += [f"{m.cpu:.2f}", f"{m.peak_mib:.0f}"] if m.ok else [m.status, ""]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
