"""Reading rollouts into the frame: JSONL and Parquet, against plain json and pyarrow."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import DATA, cached_table, row  # noqa: E402


def _jsonl_copy(parquet: Path) -> Path:
    path = parquet.with_suffix(".jsonl")
    if not path.exists():
        from whileai import table

        table.write(table.frame(parquet), path)
    return path


def run(sizes: list[int]) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    from whileai import table

    out = []
    for n in sizes:
        parquet = cached_table(n // 8, 8)
        arrow_mib = pq.ParquetFile(parquet).metadata.num_rows and pq.read_table(parquet).nbytes / 2**20
        out.append(row("frame(parquet)", n, lambda p=parquet: table.frame(p), reference="pyarrow read_table",
                       reference_fn=lambda p=parquet: pq.read_table(p), note=f"arrow size {arrow_mib:.0f} MiB"))
        out.append(row("frame(parquet, columns=[reward])", n,
                       lambda p=parquet: table.frame(p, columns=["reward"]), reference="pyarrow read_table(columns)",
                       reference_fn=lambda p=parquet: pq.read_table(p, columns=["scenario_id", "reward"])))
        if n <= 1_000_000:
            jsonl = _jsonl_copy(parquet)

            def plain(p: Path = jsonl) -> None:
                with open(p) as handle:
                    [json.loads(line) for line in handle]

            out.append(row("frame(jsonl)", n, lambda p=jsonl: table.frame(p), reference="json.loads per line",
                           reference_fn=plain))
    return out


if __name__ == "__main__":
    DATA.mkdir(exist_ok=True)
    for r in run([10_000, 100_000]):
        print(r)
