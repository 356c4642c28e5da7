"""Every step on the rows users have, each a fresh process from the file, against the DuckDB floor and 0.131.

    python benchmarks/bench_real.py [--sizes 100k,1m] [--inputs gen,genpq,own,parquet] [--steps pass_at,...]
        [--data DIR] [--generator PATH] [--whileai CHECKOUT] [--switch on|off] [--columns whileai,floor,wai131]
        [--memory-gb 4] [--timeout 600] [--results FILE.jsonl]
    python benchmarks/bench_real.py --table FILE.jsonl [FILE.jsonl ...]   # the markdown table

Inputs (``benchmarks/_real.py``): the generator's rows in whileai 0.131's shape
(``../shared/bench/make_rollouts.py``; ``gen``, and its Parquet of the same rows, ``genpq``), and
the same rows written by whileai's own writer as OpenAI-chat JSONL (``own``) and Parquet (``parquet``). A before run (shift 0) and an after run
(shift 0.4) of the same 12,500 tasks x 8 at 100k, 125,000 x 8 at 1M, and the generator's eval set.

Each cell is a fresh process: ``wai pass-at`` and ``wai compare`` as the command runs them, the
other steps as one call (``wai.select(path, mode=...)``, ``wai.hack_scan``, ``wai.decontaminate``,
``wai.export``). CPU seconds are the child's own (``wait4``: imports and every thread included),
peak MiB its ``VmHWM``; a child above ``--memory-gb`` is killed and the cell says so. Beside it:
the DuckDB query of the same statistic on the same file (``_real.floor_sql``; the floor a user
would write), and whileai 0.131's equivalent call on the 0.131-shaped JSONL at 100k (from
``.venv-wai131``, ``make bench-wai131``). ``--whileai`` times another checkout (on PYTHONPATH);
``--switch off`` times whileai with the read path's speed path turned off
(``whileai.defaults.FAST_READ = False``, a column of its own in the table).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _real  # noqa: E402
from _harness import WAI131, wai131_status  # noqa: E402

STEPS = ["pass_at", "compare", "select_rl", "select_sft", "hack_scan", "decontaminate", "export"]
KINDS = {"gen": "JSONL, 0.131 rows", "genpq": "Parquet, 0.131 rows", "own": "JSONL, whileai's writer",
         "parquet": "Parquet, whileai's writer"}
#: 0.131 reads JSONL of its own shape only, and is timed at 100k (pure Python: minutes at 1M).
WAI131_SIZES = ("100k",)


def checkout_label(python: str, env: dict[str, str]) -> str:
    """Which whileai a child imports, as ``<path> @ <commit>``: the last commit of its checkout that changed ``whileai/``,
    and whether ``whileai/`` has uncommitted changes on top."""
    out = subprocess.run([python, "-c", "import whileai, os; print(os.path.dirname(os.path.dirname(whileai.__file__)))"],
                         capture_output=True, text=True, env=env, cwd="/tmp")
    where = out.stdout.strip() or f"import failed: {out.stderr.strip()[-200:]}"
    rev = subprocess.run(["git", "-C", where, "log", "-1", "--format=%h %cI", "--", "whileai"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--untracked-files=no", "whileai"],
                           capture_output=True, text=True).stdout.strip()
    commit = rev.stdout.strip() or "no git"
    return f"{where} @ {commit}{' (+ uncommitted changes)' if dirty else ''}"


def _record(step: str, kind: str, tag: str, rows: int, who: str, label: str, m: _real.Measured, query: list[str] | None = None) -> dict[str, Any]:
    result = next((line.removeprefix("RESULT").strip() for line in m.out.splitlines() if line.startswith("RESULT")), "")
    return {"step": step, "input": kind, "size": tag, "rows": rows, "who": who, "label": label, "cpu": m.cpu,
            "wall": m.wall, "peak_mib": m.peak_mib, "status": m.status, "result": result[:200],
            **({"query": query} if query else {})}


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Measure every (size, input, step) cell for the chosen columns; one record per cell, appended to ``--results``."""
    env = dict(os.environ)
    if args.whileai:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(args.whileai).resolve()), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    columns = set(args.columns.split(","))
    label = checkout_label(sys.executable, env) if "whileai" in columns else ""
    switch = ""
    if args.switch == "off":  # the read path's one switch, set before the step runs
        switch = "import whileai.defaults\nwhileai.defaults.FAST_READ = False\n"
        label += " [FAST_READ=False]"
    wai131_label = wai131_status() if "wai131" in columns else ""
    wai131_ok = "missing" not in wai131_label
    print(f"whileai under test: {label or '-'}", file=sys.stderr)
    records: list[dict[str, Any]] = []
    memory = int(args.memory_gb * 1024)
    results = Path(args.results) if args.results else None
    for tag in args.sizes.split(","):
        kinds = tuple(k for k in args.inputs.split(",") if k)
        ins = _real.inputs(tag, data=Path(args.data), generator=args.generator, kinds=kinds, env=env)
        out = str(_real.OWN_DATA / f"export-{tag}.jsonl")
        for kind in kinds:
            before, after = (str(p) for p in ins.files[kind])
            for step in args.steps.split(","):
                b = after if step == "compare" else None
                cells: list[tuple[str, str, str, list[str] | None]] = []
                if "whileai" in columns:
                    cells.append(("whileai", sys.executable,
                                  switch + _real.whileai_code(step, before, b, eval_path=str(ins.eval), out=out), None))
                if "floor" in columns:
                    q = _real.floor_sql(step, before, b, eval_path=ins.eval, out=out)
                    cells.append(("floor", sys.executable, _real.floor_code(q), q))
                if "wai131" in columns and kind == "gen" and tag in WAI131_SIZES:
                    if wai131_ok:
                        cells.append(("wai131", str(WAI131), _real.wai131_code(step, before, b, eval_path=str(ins.eval), out=out), None))
                    else:
                        print(wai131_label, file=sys.stderr)
                for who, python, code, query in cells:
                    print(f"  {tag} {kind:<8} {step:<14} {who:<8} ...", end="", file=sys.stderr, flush=True)
                    child_env = env if who == "whileai" else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
                    m = _real.run_python(code, python=python, env=child_env, memory_mib=memory, timeout=args.timeout)
                    print(f" cpu {m.cpu:7.2f} s  wall {m.wall:7.2f} s  peak {m.peak_mib:6.0f} MiB  {m.status}", file=sys.stderr, flush=True)
                    rec = _record(step, kind, tag, ins.rows, who, label if who == "whileai" else (wai131_label if who == "wai131" else "duckdb"),
                                  m, query)
                    records.append(rec)
                    if results is not None:
                        with results.open("a", encoding="utf-8") as fh:
                            fh.write(json.dumps(rec) + "\n")
                Path(out).unlink(missing_ok=True)
    return records


# ---- the table -------------------------------------------------------------------------------------


def _cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return "-"
    if r["status"] != "ok":
        s = r["status"]
        if s.startswith(("killed", "timed out")):  # what it had spent when stopped
            return f"{s.replace('timed out after', 'stopped at')} wall, over {r['cpu']:.1f} s, {r['peak_mib']:,.0f} MiB"
        return "failed"
    return f"{r['cpu']:.2f} s, {r['peak_mib']:,.0f} MiB"


def table(records: list[dict[str, Any]], names: list[str] | None = None) -> str:
    """The markdown table: one line per (step, input, size); one whileai column per checkout measured (named by ``names``)."""
    labels = list(dict.fromkeys(r["label"] for r in records if r["who"] == "whileai"))
    by: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for r in records:  # the last measurement of a cell wins
        by[(r["step"], r["input"], r["size"], r["label"] if r["who"] == "whileai" else r["who"])] = r
    keys = list(dict.fromkeys((r["step"], r["input"], r["size"]) for r in records))
    keys.sort(key=lambda k: (list(_real.SIZES).index(k[2]), STEPS.index(k[0]), list(KINDS).index(k[1])))
    names = [f"whileai {names[i]}" if names and i < len(names) else f"whileai ({chr(ord('A') + i)})" for i in range(len(labels))]
    head = ["step", "input", "rows", *[f"{n}: CPU s, peak" for n in names], "DuckDB floor: CPU s, peak",
            *[f"{n} / floor" for n in names], "0.131: CPU s, peak"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for step, kind, size in keys:
        floor = by.get((step, kind, size, "floor"))
        ours = [by.get((step, kind, size, lab)) for lab in labels]
        ratios = []
        for r in ours:
            ok = r is not None and floor is not None and r["status"] == "ok" and floor["status"] == "ok" and floor["cpu"] > 0
            ratios.append(f"{r['cpu'] / floor['cpu']:.1f}x" if ok and r and floor else "-")
        rows = by.get((step, kind, size, "floor")) or next((r for r in ours if r), None)
        n = f"{rows['rows']:,}" if rows else size
        lines.append("| " + " | ".join([step, KINDS.get(kind, kind), n, *[_cell(r) for r in ours], _cell(floor), *ratios,
                                         _cell(by.get((step, kind, size, "wai131")))]) + " |")
    legend = [f"- {n}: {lab}" for n, lab in zip(names, labels, strict=True)]
    return "\n".join(lines + [""] + legend)


def queries(records: list[dict[str, Any]]) -> str:
    """Each floor query once per step, with the file name as ``FILE`` (``FILE_B`` the after run)."""
    seen: dict[str, str] = {}
    for r in records:
        if r["who"] == "floor" and r.get("query") and r["step"] not in seen and r["input"] == "parquet":
            seen[r["step"]] = "; ".join(r["query"])
    return "\n".join(f"- {step}: `{q}`" for step, q in seen.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100k", help="comma-separated: 100k, 1m")
    parser.add_argument("--inputs", default="gen,own,parquet", help="comma-separated: gen, genpq, own, parquet")
    parser.add_argument("--steps", default=",".join(STEPS))
    parser.add_argument("--data", default=str(_real.DATA), help="folder of the generator's rows (reused; generated when missing)")
    parser.add_argument("--generator", default=None, help=f"make_rollouts.py (default {_real.GENERATOR})")
    parser.add_argument("--whileai", default=None, help="time the whileai of this checkout (put on PYTHONPATH)")
    parser.add_argument("--switch", default="on", choices=("on", "off"),
                        help="the read path's speed path (whileai.defaults.FAST_READ) in whileai's cells")
    parser.add_argument("--columns", default="whileai,floor,wai131", help="comma-separated: whileai, floor, wai131")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="kill a cell above this resident memory")
    parser.add_argument("--timeout", type=float, default=600.0, help="kill a cell after this many wall seconds")
    parser.add_argument("--results", default=None, help="append each cell's record to this JSON-lines file")
    parser.add_argument("--table", nargs="+", default=None, metavar="RESULTS", help="print the markdown table of result files")
    parser.add_argument("--names", default="", help="with --table: comma-separated names of the whileai columns, in order")
    args = parser.parse_args(argv)
    if args.table:
        records = [json.loads(line) for p in args.table for line in Path(p).read_text().splitlines() if line.strip()]
        print(table(records, [n for n in args.names.split(",") if n]))
        print()
        print(queries(records))
        return 0
    bad = sorted(set(args.steps.split(",")) - set(STEPS)) + sorted(set(args.inputs.split(",")) - set(KINDS))
    if bad:
        parser.error(f"steps must be among {STEPS} and inputs among {list(KINDS)}, got {bad}")
    try:
        records = run(args)
    except _real.BenchSetupError as exc:
        print(f"bench_real: {exc}", file=sys.stderr)
        return 2
    print(table(records))
    return 0 if all(not math.isnan(r["cpu"]) for r in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
