"""Exporting training rows: JSONL and Parquet, OpenAI and TRL shapes, against plain Python and 0.131.

Targets (issue 6, Speed): 1M rows to JSONL under 15 s, to Parquet under 5 s, streaming with
bounded memory. ``peak_mib`` is resident memory above the start of the call (the source table is
loaded before timing starts), so it shows the export's own working set: a few chunks, not the
whole output.
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

SYS = "Help customers with orders. Never refund more than $100 without a manager."


def _plain_python(df: Any, path: Path) -> None:
    """The obvious implementation: one dict per row, json.dumps per line."""
    from whileai import table

    with open(path, "w", encoding="utf-8") as handle:
        for r in table.iter_rows(df):
            msgs = [{"role": "system", "content": SYS}, *r.get("messages", [])]
            out = {"messages": msgs, "loss_mask": [1 if m["role"] == "assistant" else 0 for m in msgs],
                   "reward": r.get("reward"), "prompt": r.get("prompt"), "scenario_id": r.get("scenario_id")}
            handle.write(json.dumps(out, ensure_ascii=False) + "\n")


def _wai131_seconds(jsonl: Path, out: Path) -> float | None:
    """whileai 0.131's export_dataset on the same rows, timed inside its own interpreter."""
    if not WAI131.exists():
        return None
    code = (
        "import time, sys\n"
        "from whileai.simulations import export as E\n"
        "t = time.perf_counter()\n"
        f"E.export_dataset({str(jsonl)!r}, {str(out)!r}, system_prompt={SYS!r}, validate=False)\n"
        "print(time.perf_counter() - t)\n"
    )
    try:
        run = subprocess.run([str(WAI131), "-c", code], capture_output=True, text=True, timeout=600, cwd="/tmp")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if run.returncode != 0:
        return None
    return float(run.stdout.strip().splitlines()[-1])


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(rows: list[dict[str, Any]], record: dict[str, Any], fn_cpu: list[float]) -> None:
    """Add the CPU seconds (all threads) to the row's note: on a shared machine wall time
    depends on the load, CPU time much less; the wall time on an idle machine is about the CPU
    time over the cores the export keeps busy (EXPORT_WORKERS builders plus the writer)."""
    note = f"cpu {fn_cpu[0]:.1f} s"
    record["note"] = f"{record['note']}; {note}" if record["note"] else note
    rows.append(record)


def _with_cpu(fn: Any, box: list[float]) -> Any:
    def wrapped() -> Any:
        start = _cpu()
        try:
            return fn()
        finally:
            box[0] = _cpu() - start
    return wrapped


def run(sizes: list[int]) -> list[dict[str, Any]]:
    from whileai import table
    from whileai.exporters import export_dataset

    out: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="bench_export_"))
    try:
        jsonl, parquet, trl = tmp / "t.jsonl", tmp / "t.parquet", tmp / "trl.jsonl"
        for n in sizes:
            df = table.frame(cached_table(n // 4, 4))  # loaded before timing: the export is what is measured
            ref = None
            if n <= 100_000:
                ref = ("plain Python dicts + json.dumps", lambda d=df: _plain_python(d, tmp / "plain.jsonl"))
            box = [0.0]
            _timed(out, row("export_dataset(openai, .jsonl)", n,
                            _with_cpu(lambda d=df: export_dataset(d, jsonl, system_prompt=SYS), box),
                            reference=ref[0] if ref else None, reference_fn=ref[1] if ref else None,
                            note="target < 15 s at 1M"), box)
            _timed(out, row("export_dataset(openai, .parquet)", n,
                            _with_cpu(lambda d=df: export_dataset(d, parquet, system_prompt=SYS), box),
                            note="target < 5 s at 1M"), box)
            _timed(out, row("export_dataset(trl, .jsonl)", n,
                            _with_cpu(lambda d=df: export_dataset(d, trl, format="trl", system_prompt=SYS), box),
                            note=""), box)
            if n <= 10_000:
                source = tmp / "source.jsonl"
                table.write(df, source)
                ref_s = _wai131_seconds(source, tmp / "wai131.jsonl")
                if ref_s is not None:
                    out[-3]["note"] += f"; whileai 0.131 export_dataset: {ref_s:.2f} s"
            del df
    finally:
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()
    return out


if __name__ == "__main__":
    DATA.mkdir(exist_ok=True)
    sizes = [int(s) for s in sys.argv[1].split(",")] if len(sys.argv) > 1 else [10_000, 100_000]
    for r in run(sizes):
        print(r)
