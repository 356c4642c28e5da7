"""From the file: every step started from JSONL or Parquet on disk, one fresh process per cell.

``python benchmarks/run.py --files [--sizes 100000,1000000] [--10m]`` (``run.py`` runs this module
only with ``--files``). Inputs come from ``whileai.testing.rollout_table`` (8 rollouts a task,
with tool calls and conversations) and are written once under ``benchmarks/data``:

- ``.parquet``: the table as whileai writes it;
- ``.openai.jsonl``: the same rows as JSON lines (conversations with tool calls that carry ids);
- ``.w131.jsonl``: the rows in whileai 0.131's shape (``prompt``, ``steps`` of
  ``{tool, arguments, result}``, ``final_text``; tool calls without ids).

Each cell runs in a fresh interpreter (``_harness.fresh_cell``): seconds (wall), CPU seconds and
the child's whole peak resident memory, the input it read included, under an address-space
limit (``CELL_MEMORY_MIB``) so a cell that would exhaust the machine fails and says so. The
10M rows (``--10m``) are lean Parquet tables (no conversations) for compare, delta_report and
holdout_size.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import DATA, fresh_cell  # noqa: E402

K = 8
CELL_MEMORY_MIB = 6144
CELL_TIMEOUT = 900.0
LEAN = ["scenario_id", "rollout_index", "reward", "tier", "policy_version", "markers"]
CHUNK = 1_000_000


# ---- inputs --------------------------------------------------------------------------------------


def _steps(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A conversation as whileai 0.131 steps: one {tool, arguments, result} per tool call."""
    out: list[dict[str, Any]] = []
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or []:
            args = call.get("arguments")
            try:
                args = json.loads(args) if isinstance(args, str) else args
            except ValueError:
                pass
            res = results.get(call.get("id"))
            try:
                res = json.loads(res) if isinstance(res, str) else res
            except ValueError:
                pass
            out.append({"tool": call.get("name"), "arguments": args, "result": res})
    return out


def inputs(n: int, *, seed: int = 0, shift: float = 0.0, policy: str = "v1") -> dict[str, Path]:
    """The three files of ``n`` rows (built once, reused)."""
    import polars as pl

    from whileai.testing import rollout_table, true_pass_rates

    DATA.mkdir(exist_ok=True)
    tag = f"files_n{n}_s{seed}_sh{shift}_{policy}"
    paths = {"parquet": DATA / f"{tag}.parquet", "openai": DATA / f"{tag}.openai.jsonl",
             "w131": DATA / f"{tag}.w131.jsonl"}
    if all(p.exists() for p in paths.values()):
        return paths
    rates = true_pass_rates(n // K, seed=1000)
    df = rollout_table(n // K, K, seed=seed, pass_rates=rates, shift=shift, policy_version=policy)
    tmp = paths["parquet"].with_suffix(".tmp")
    df.write_parquet(tmp)
    tmp.rename(paths["parquet"])
    tmp = paths["openai"].with_suffix(".tmp")
    df.write_ndjson(tmp)
    tmp.rename(paths["openai"])
    tmp = paths["w131"].with_suffix(".tmp")
    keep = ["scenario_id", "rollout_index", "prompt", "final_text", "reward", "tier", "policy_version", "markers"]
    with open(tmp, "w") as fh:
        for lo in range(0, df.height, 100_000):
            part = df.slice(lo, 100_000)
            steps = [_steps(m) for m in part["messages"].to_list()]
            for row, st in zip(part.select(keep).iter_rows(named=True), steps, strict=True):
                row["steps"] = st
                row["model_version"] = row.pop("policy_version")
                fh.write(json.dumps(row) + "\n")
    tmp.rename(paths["w131"])
    del pl
    return paths


def lean_parquet(n: int, *, seed: int = 0, shift: float = 0.0, policy: str = "v1") -> Path:
    """A lean table (no conversations) of ``n`` rows, 10M built from 1M-row chunks of distinct tasks."""
    import polars as pl
    import pyarrow.parquet as pq

    from whileai.testing import rollout_table, true_pass_rates

    DATA.mkdir(exist_ok=True)
    path = DATA / f"lean_n{n}_s{seed}_sh{shift}_{policy}.parquet"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    writer = None
    for i, lo in enumerate(range(0, n, CHUNK)):
        tasks = min(CHUNK, n - lo) // K
        part = rollout_table(tasks, K, seed=seed * 97 + i, pass_rates=true_pass_rates(tasks, seed=1000 + i), shift=shift,
                             messages=False, task_prefix=f"c{i}-", policy_version=policy).select(LEAN)
        arrow = part.to_arrow()
        writer = writer or pq.ParquetWriter(tmp, arrow.schema, compression="zstd")
        writer.write_table(arrow)
    if writer is not None:
        writer.close()
    tmp.rename(path)
    del pl
    return path


# ---- cells (run in the child) ----------------------------------------------------------------------


def cell_read_reward(path: str) -> str:
    from whileai import table

    df = table.frame(path, columns=["reward"])
    return f"{df.height} rows, columns {df.columns}"


def cell_pass_at(path: str) -> str:
    import whileai as wai

    r = wai.pass_at(path)
    return f"pass@1 {r['pass_at_1']:.4f}"


def cell_compare(a: str, b: str) -> str:
    import whileai as wai

    r = wai.compare(a, b)
    return f"{r['headline_verdict']}, {r['n_paired_tasks']} paired tasks"


def cell_delta_report(a: str, b: str) -> str:
    import whileai as wai

    r = wai.delta_report(a, b)
    return f"{r['headline_verdict']}, {r['n_paired_tasks']} paired tasks"


def cell_holdout_size(a: str, b: str) -> str:
    import whileai as wai

    r = wai.holdout_size(0.05, before=a, after=b)
    return f"n_tasks {r['n_tasks']}"


def cell_select(path: str, mode: str) -> str:
    import whileai as wai

    s = wai.select(path, mode=mode)
    return f"{len(s)} rows kept"


def cell_export(path: str, fmt: str, out: str) -> str:
    import whileai as wai

    r = wai.export(path, out, format=fmt, validate=False)
    Path(out).unlink(missing_ok=True)
    return f"{r['n_written']} written"


def cell_decontaminate(path: str) -> str:
    import polars as pl

    import whileai as wai

    df = pl.read_parquet(path, columns=["scenario_id", "prompt"])
    tasks = df["scenario_id"].unique().sort()
    ev = df.filter(pl.col("scenario_id").is_in(tasks.head(len(tasks) // 10).implode())).unique("scenario_id")
    _, r = wai.decontaminate(path, eval=ev)
    return f"{ev.height} eval prompts; same task {r.n_same_task}, exact {r.n_exact}, near {r.n_near}"


def cell_hack_scan(path: str) -> str:
    import whileai as wai

    r = wai.hack_scan(path)
    return f"top {r.top_feature}"


# ---- the table ---------------------------------------------------------------------------------------


def _cells(n: int, ten_m: bool) -> list[tuple[str, str, tuple[Any, ...]]]:
    out: list[tuple[str, str, tuple[Any, ...]]] = []
    if n >= 10_000_000:
        a, b = str(lean_parquet(n)), str(lean_parquet(n, seed=1, shift=0.03, policy="v2"))
        return [("compare parquet (lean)", "cell_compare", (a, b)),
                ("delta_report parquet (lean)", "cell_delta_report", (a, b)),
                ("holdout_size parquet (lean)", "cell_holdout_size", (a, b))]
    p = {k: str(v) for k, v in inputs(n).items()}
    q = {k: str(v) for k, v in inputs(n, seed=1, shift=0.03, policy="v2").items()}
    out_path = str(DATA / f"out_{n}.jsonl")
    for shape in ("parquet", "openai", "w131"):
        label = {"parquet": "parquet", "openai": "jsonl", "w131": "jsonl (0.131 rows)"}[shape]
        out += [(f"read columns=[reward] {label}", "cell_read_reward", (p[shape],)),
                (f"pass_at {label}", "cell_pass_at", (p[shape],)),
                (f"compare {label}", "cell_compare", (p[shape], q[shape])),
                (f"select rl {label}", "cell_select", (p[shape], "rl")),
                (f"select sft {label}", "cell_select", (p[shape], "sft")),
                (f"export openai {label}", "cell_export", (p[shape], "openai", out_path)),
                (f"export trl {label}", "cell_export", (p[shape], "trl", out_path))]
    out += [("delta_report parquet", "cell_delta_report", (p["parquet"], q["parquet"])),
            ("holdout_size parquet", "cell_holdout_size", (p["parquet"], q["parquet"])),
            ("decontaminate parquet (eval 10% of tasks)", "cell_decontaminate", (p["parquet"],)),
            ("hack_scan parquet", "cell_hack_scan", (p["parquet"],))]
    return out


def run(sizes: list[int], *, only: str = "") -> list[dict[str, Any]]:
    """One row per (call, size): seconds, CPU seconds and peak RSS of a fresh process."""
    rows: list[dict[str, Any]] = []
    for n in sizes:
        for call, func, args in _cells(n, n >= 10_000_000):
            if only and only not in call:
                continue
            print(f"  {call} {n:,} ...", file=sys.stderr, flush=True)
            m = fresh_cell("bench_files", func, *args, timeout=CELL_TIMEOUT, memory_mib=CELL_MEMORY_MIB)
            note = f"cpu {m['cpu']:.2f} s; {m['note']}" if m["error"] is None else f"failed: {m['error']}"
            rows.append({"call": call, "rows": n, "seconds": m["seconds"], "cpu": m["cpu"], "peak_mib": m["peak_mib"],
                         "reference": None, "reference_seconds": None, "note": note})
    return rows


if __name__ == "__main__":
    for r in run([int(a) for a in sys.argv[1:]] or [100_000]):
        print(json.dumps(r))
