"""Guard benchmarks: hack_scan (auto tier) and decontaminate at growing sizes.

``decontaminate`` runs the default near rule (``near="template"``), ``decontaminate_eval_cover``
the earlier one (``near="eval_cover"``) on the same input, so the template rule's cost shows.

Each measurement runs in a fresh child process; ``peak_mib`` is the child's peak resident memory
during the call above what it held once the input was built (the kernel's peak mark is reset
before the call; input generation is not timed).
``python benchmarks/bench_guard.py [sizes...]`` prints the rows; ``run(sizes)`` returns them.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
import polars as pl
from _harness import WAI131, own_peak_mib, reset_peak_mib  # noqa: E402

REF_PYTHON = str(WAI131)  # whileai 0.131, for the reference column
REF_ROWS = 10_000  # 0.131 is measured at this size only (it takes seconds there already)
EVAL_PROMPTS = 50_000


def hack_input(n: int, seed: int = 0) -> pl.DataFrame:
    """Graded rollouts, 8 per ask, with a planted shortcut word; the outcome phrase the judge
    reads is replaced by a neutral one so the shortcut is the thing to find."""
    from whileai.testing import rollout_table

    df = rollout_table(max(1, n // 8), 8, seed=seed, shortcut="zzq")
    pattern = r"resolved it\.|could not finish\."
    return df.with_columns(
        pl.col("final_text").str.replace_all(pattern, "replied."),
        pl.col("messages").list.eval(pl.element().struct.with_fields(
            pl.field("content").str.replace_all(pattern, "replied."))),
    )


def decontam_input(n: int, n_eval: int, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """n training prompts (all distinct: the worst case) and n_eval eval prompts; 1% of the
    training rows copy an eval prompt verbatim and 1% extend one by two words (near copies)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(20_000)])

    def prompts(m: int) -> pl.Series:
        lens = rng.integers(12, 40, m)
        idx = rng.integers(0, vocab.size, int(lens.sum()))
        rows = np.repeat(np.arange(m), lens)
        return (pl.DataFrame({"r": rows, "w": vocab[idx]}).group_by("r", maintain_order=True)
                .agg(pl.col("w").str.join(" "))["w"])

    ev = prompts(n_eval)
    tr = prompts(n)
    k = max(1, n // 100)
    src = rng.integers(0, n_eval, 2 * k)
    exact = ev.gather(src[:k])
    near = ev.gather(src[k:]) + " extra words"
    tr = pl.concat([exact, near, tr.slice(2 * k)])
    train = pl.DataFrame({"task_id": [f"t{i}" for i in range(n)], "prompt": tr})
    evals = pl.DataFrame({"task_id": [f"e{i}" for i in range(n_eval)], "prompt": ev})
    return train, evals


def _child(call: str, paths: list[str], q: Any) -> None:
    """Read the prepared input (Parquet: little garbage left behind), reset the peak mark, run."""
    frames = [pl.read_parquet(p) for p in paths]
    base = reset_peak_mib()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    if call == "hack_scan":
        from whileai.guard import hack_scan

        t = time.perf_counter()
        r = hack_scan(frames[0])
        dt = time.perf_counter() - t
        note = f"top {r.top_feature}, regime {r.regime}, {r.n_features} features, tau {r.tau:.3f}"
    else:
        from whileai.guard import decontaminate

        t = time.perf_counter()
        near = "eval_cover" if call == "decontaminate_eval_cover" else "template"
        _, rep = decontaminate(frames[0], eval=frames[1], near=near)
        dt = time.perf_counter() - t
        note = (f"{frames[1].height} eval prompts; exact {rep.n_exact}, near {rep.n_near}, same task {rep.n_same_task}")
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    q.put({"seconds": dt, "peak_mib": max(0.0, own_peak_mib() - base), "note": f"cpu {cpu:.1f} s; {note}"})


def _measure(call: str, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        if call == "hack_scan":
            frames = [hack_input(n)]
        else:
            frames = list(decontam_input(n, min(EVAL_PROMPTS, max(250, n // 20))))
        paths = []
        for i, f in enumerate(frames):
            paths.append(os.path.join(tmp, f"in{i}.parquet"))
            f.write_parquet(paths[-1])
        del frames
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        p = ctx.Process(target=_child, args=(call, paths, q))
        p.start()
        out = q.get()
        p.join()
    return out


def _reference(call: str) -> float | None:
    """whileai 0.131 on REF_ROWS rows (decontaminate: against 250 eval prompts), in its own venv."""
    if not os.path.exists(REF_PYTHON):
        return None
    from whileai import table

    with tempfile.TemporaryDirectory() as tmp:
        if call == "hack_scan":
            rows = table.rows(table.frame(hack_input(REF_ROWS)))
            ev_rows: list[dict[str, Any]] = []
        else:
            train, ev = decontam_input(REF_ROWS, 250)
            rows, ev_rows = train.to_dicts(), ev.to_dicts()
        path = os.path.join(tmp, "rows.jsonl")
        evp = os.path.join(tmp, "eval.json")
        with open(path, "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
        with open(evp, "w") as fh:
            json.dump(ev_rows, fh)
        code = (
            "import json,sys,time\nimport whileai as wai\n"
            "rows=[json.loads(l) for l in open(sys.argv[1])]\nev=json.load(open(sys.argv[2]))\n"
            "t=time.perf_counter()\n"
            + ("wai.hack_scan(rows)\n" if call == "hack_scan" else "wai.decontaminate(rows, [ev])\n")
            + "print(time.perf_counter()-t)\n"
        )
        try:
            # cwd outside the checkout, so the reference venv imports its own whileai, not ours
            res = subprocess.run([REF_PYTHON, "-c", code, path, evp], capture_output=True, text=True, timeout=600,
                                 cwd=tmp)
            return float(res.stdout.strip().splitlines()[-1])
        except Exception:
            return None


def run(sizes: list[int]) -> list[dict[str, Any]]:
    """Time hack_scan and decontaminate at each size; whileai 0.131 at 10k rows as the reference."""
    out: list[dict[str, Any]] = []
    for call in ("hack_scan", "decontaminate", "decontaminate_eval_cover"):
        ref_s = _reference(call) if call != "decontaminate_eval_cover" and any(n <= REF_ROWS for n in sizes) else None
        for n in sizes:
            m = _measure(call, n)
            at_ref = n == REF_ROWS and ref_s is not None
            out.append({
                "call": call,
                "rows": n,
                "seconds": round(m["seconds"], 3),
                "peak_mib": round(m["peak_mib"], 1),
                "reference": ("whileai 0.131" + (" (250 eval prompts)" if call != "hack_scan" else "")) if at_ref else None,
                "reference_seconds": round(ref_s, 3) if at_ref and ref_s is not None else None,
                "note": m["note"],
            })
            if sys.stderr.isatty():
                print(f"{call} {n:,}: {m['seconds']:.2f} s", file=sys.stderr)
    return out


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000, 1_000_000]
    for row in run(sizes):
        print(json.dumps(row))
