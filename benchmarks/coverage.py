"""Coverage, false-alarm rate and power of every interval and test whileai reports, by simulation.

Usage: ``python benchmarks/coverage.py [--section intervals,wai131,hack,trust,compare,band,markers,sign_flip] [--reps 1000]
[--old-reps 200] [--wai131 /tmp/wai131/bin/python]``.

Sections (each prints a table; Monte Carlo error at 1000 reps is about 0.007 on a 95% coverage):

* ``intervals``: pass@1, pass^k and pass@k intervals over the grid n_tasks {8, 16, 30, 100, 300} x
  k {2, 4, 8} x rollouts {k, 2k} x difficulty {Beta(2,2), Beta(4,1), Beta(1,9), Beta(0.5,0.5),
  point 0.5}; ours (``score`` / clustered score) beside the old methods (t on pass@1, percentile
  bootstrap on pass^k and pass@k) and, on a subset, whileai 0.131 run in its own interpreter.
* ``wai131``: ten cells of that grid, 200 evaluations each, through ours, the old default and
  whileai 0.131 on the same data (0.131 is pure Python, about 0.1 s a call).
* ``hack``: hack_scan's false-alarm rate with no planted shortcut, and its power at three planted
  strengths.
* ``trust``: judge_trust's agreement interval with several labelled rollouts per task.
* ``compare``: compare_runs' false-alarm rate and verdict/p agreement under the null.
* ``band``: delta_report's noise band: how often a real gain reads moved, and the smallest moved
  delta the report states.
* ``markers``: marker intervals (the clustered score interval marker_summary gives) against the t
  interval they used, over rate {0.02, 0.1, 0.5, 0.9, 0.97} x task spread {point, Beta at
  concentration 10, 2} x (tasks, rollouts) {(8, 4), (16, 2), (30, 8), (100, 4)}.
* ``sign_flip``: compare_runs' default interval: coverage of the true gain and agreement with the
  sign-flip verdict, beside how often the score interval alone agreed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TASKS = (8, 16, 30, 100, 300)
KS = (2, 4, 8)
MULTS = (1, 2)


def _kway(c: np.ndarray, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    from whileai.stats.passk import pass_at_k, pass_pow_k

    return pass_pow_k(n, c, k), pass_at_k(n, c, k)


def _old_kway(values: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The old default on pass^k and pass@k: Wilson on 0/1 values, else a percentile bootstrap."""
    from whileai.stats.bootstrap import bootstrap_mean_ci
    from whileai.stats.wilson import wilson

    lo = np.empty(values.shape[0])
    hi = np.empty(values.shape[0])
    rng = np.random.default_rng(seed)
    for i, v in enumerate(values):
        if np.isin(v, (0.0, 1.0)).all():
            a, b = wilson(v.sum(), v.size)
        else:
            a, b = bootstrap_mean_ci(v, n_boot=1000, seed=rng)
        lo[i], hi[i] = float(a), float(b)
    return lo, hi


def _old_pass1(rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from whileai.stats.intervals import t_interval
    from whileai.stats.wilson import wilson

    lo, hi = t_interval(rates, axis=1, bounds=(0.0, 1.0))
    binary = np.isin(rates, (0.0, 1.0)).all(axis=1)
    wlo, whi = wilson(rates.sum(axis=1), rates.shape[1])
    return np.where(binary, wlo, lo), np.where(binary, whi, hi)


def intervals(reps: int, old_reps: int, wai131: str | None) -> list[dict[str, Any]]:
    """Coverage of pass@1, pass^k and pass@k over the full grid."""
    from whileai.stats.grid import DIFFICULTIES, coverage, draw_passes, truth
    from whileai.stats.score import clustered_rate_interval, score_interval

    out: list[dict[str, Any]] = []
    for cell, (tasks, k, mult, diff) in enumerate(
            (t, k, m, d) for t in TASKS for k in KS for m in MULTS for d in DIFFICULTIES):
        n = k * mult
        rng = np.random.default_rng(10_000 + cell)
        c = draw_passes(rng, diff, reps, tasks, n)
        pow_k, at_k = _kway(c, n, k)
        lo1, hi1 = clustered_rate_interval(c, n)
        lop, hip = score_interval(pow_k, floor=k / n)
        loa, hia = score_interval(at_k, floor=k / n)
        row = {"tasks": tasks, "k": k, "n": n, "difficulty": diff,
               "pass_at_1": coverage(lo1, hi1, truth(diff, "pass_at_1")),
               "pass_pow_k": coverage(lop, hip, truth(diff, "pass_pow_k", k)),
               "pass_at_k": coverage(loa, hia, truth(diff, "pass_at_k", k))}
        if old_reps:
            sub = slice(0, min(old_reps, reps))
            olo, ohi = _old_pass1(c[sub] / n)
            row["old_pass_at_1"] = coverage(olo, ohi, truth(diff, "pass_at_1"))
            olo, ohi = _old_kway(pow_k[sub], cell)
            row["old_pass_pow_k"] = coverage(olo, ohi, truth(diff, "pass_pow_k", k))
            olo, ohi = _old_kway(at_k[sub], cell + 1)
            row["old_pass_at_k"] = coverage(olo, ohi, truth(diff, "pass_at_k", k))
        out.append(row)
    if wai131:
        _wai131_cells(out, wai131, reps=min(old_reps or 200, 200))
    return out


#: Cells run through whileai 0.131 (it is pure Python, about 0.1 s a call): the issue's cells and
#: one of each difficulty at 16 and 30 tasks.
WAI131_CELLS = (
    (30, 8, 16, "Beta(4,1)"), (100, 8, 8, "Beta(1,9)"), (8, 8, 8, "point 0.5"), (100, 8, 16, "Beta(4,1)"),
    (16, 2, 2, "Beta(1,9)"), (16, 4, 8, "Beta(2,2)"), (30, 4, 4, "Beta(0.5,0.5)"), (16, 4, 4, "Beta(4,1)"),
    (30, 2, 4, "Beta(1,9)"), (8, 4, 8, "Beta(2,2)"),
)

_WAI131_SCRIPT = r"""
import json, sys
import whileai as wai
jobs = json.load(sys.stdin)
out = []
for job in jobs:
    k, sets = job["k"], job["sets"]
    res = []
    for counts in sets:
        rows = [{"task_id": "t%d" % t, "reward": float(r < c)} for t, c in enumerate(counts) for r in range(job["n"])]
        p = wai.pass_at(rows, k=k)
        res.append([p.ci95, p.pass_pow_k_ci95, p.pass_at_k_ci95])
    out.append(res)
json.dump(out, sys.stdout)
"""


def _wai131_cells(out: list[dict[str, Any]], python: str, *, reps: int) -> None:
    from whileai.stats.grid import coverage, draw_passes, truth

    jobs = []
    for tasks, k, n, diff in WAI131_CELLS:
        rng = np.random.default_rng(777)
        c = draw_passes(rng, diff, reps, tasks, n)
        jobs.append({"k": k, "n": n, "sets": c.tolist()})
    # run outside the repository, so the interpreter imports its own whileai, not this checkout
    proc = subprocess.run([python, "-c", _WAI131_SCRIPT], input=json.dumps(jobs), capture_output=True, text=True,
                          check=False, cwd=tempfile.gettempdir())
    if proc.returncode:
        print(f"whileai 0.131 did not run: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return
    results = json.loads(proc.stdout)
    for (tasks, k, n, diff), res in zip(WAI131_CELLS, results):
        for row in out:
            if (row["tasks"], row["k"], row["n"], row["difficulty"]) == (tasks, k, n, diff):
                for j, metric in enumerate(("pass_at_1", "pass_pow_k", "pass_at_k")):
                    ci = [r[j] for r in res]
                    lo = np.array([np.nan if v is None else v[0] for v in ci])
                    hi = np.array([np.nan if v is None else v[1] for v in ci])
                    row[f"wai131_{metric}"] = coverage(lo, hi, truth(diff, metric, k))  # type: ignore[arg-type]


def wai131_cells(reps: int, python: str) -> list[dict[str, Any]]:
    """Ours, the old default and whileai 0.131 on the same seeded data of the ``WAI131_CELLS``."""
    from whileai.stats.grid import coverage, draw_passes, truth
    from whileai.stats.score import clustered_rate_interval, score_interval

    out: list[dict[str, Any]] = []
    for tasks, k, n, diff in WAI131_CELLS:
        c = draw_passes(np.random.default_rng(777), diff, reps, tasks, n)
        pow_k, at_k = _kway(c, n, k)
        lo1, hi1 = clustered_rate_interval(c, n)
        lop, hip = score_interval(pow_k, floor=k / n)
        loa, hia = score_interval(at_k, floor=k / n)
        olo, ohi = _old_pass1(c / n)
        row = {"tasks": tasks, "k": k, "n": n, "difficulty": diff,
               "pass_at_1": coverage(lo1, hi1, truth(diff, "pass_at_1")),
               "pass_pow_k": coverage(lop, hip, truth(diff, "pass_pow_k", k)),
               "pass_at_k": coverage(loa, hia, truth(diff, "pass_at_k", k)),
               "old_pass_at_1": coverage(olo, ohi, truth(diff, "pass_at_1"))}
        olo, ohi = _old_kway(pow_k, tasks)
        row["old_pass_pow_k"] = coverage(olo, ohi, truth(diff, "pass_pow_k", k))
        olo, ohi = _old_kway(at_k, tasks + 1)
        row["old_pass_at_k"] = coverage(olo, ohi, truth(diff, "pass_at_k", k))
        out.append(row)
    _wai131_cells(out, python, reps=reps)
    return out


def _print_intervals(rows: list[dict[str, Any]]) -> None:
    metrics = ("pass_at_1", "pass_pow_k", "pass_at_k")
    print("| tasks | k | n | difficulty | " + " | ".join(
        f"{m} ours | {m} old | {m} 0.131" for m in metrics) + " |")
    print("|" + "---|" * (4 + 3 * len(metrics)))
    for r in rows:
        cells = []
        for m in metrics:
            cells += [_f(r.get(m)), _f(r.get(f"old_{m}")), _f(r.get(f"wai131_{m}"))]
        print(f"| {r['tasks']} | {r['k']} | {r['n']} | {r['difficulty']} | " + " | ".join(cells) + " |")
    print()
    print("| metric | method | cells | min | median | max | below 0.935 | above 0.965 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for m in metrics:
        for prefix, label in (("", "ours"), ("old_", "old"), ("wai131_", "whileai 0.131")):
            vals = np.array([r[prefix + m] for r in rows if r.get(prefix + m) is not None])
            if vals.size:
                print(f"| {m} | {label} | {vals.size} | {vals.min():.3f} | {np.median(vals):.3f} | {vals.max():.3f} | "
                      f"{int((vals < 0.935).sum())} | {int((vals > 0.965).sum())} |")


def _f(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def hack(reps: int) -> None:
    """hack_scan's false-alarm rate (no shortcut) and power at three planted strengths."""
    from whileai.guard import hack_scan
    from whileai.testing import word_table

    runs = max(100, reps // 2)
    print("| table | shortcut strength | runs | above floor (false alarm or detection) | top is the shortcut |")
    print("|---|---:|---:|---:|---:|")
    for tasks, k in ((20, 8), (60, 4)):
        for strength in (0.0, 0.2, 0.35, 0.5):
            above = top = 0
            n = runs if strength == 0.0 else runs // 2
            for s in range(n):
                r = hack_scan(word_table(tasks, k, seed=s, shortcut=strength), n_perm=100, seed=1_000_003 + s, trace=False)
                above += r.n_above_floor > 0
                top += bool(r.features) and r.features[0].name == "contains:w00" and r.features[0].above_floor
            print(f"| {tasks} tasks x {k}, 12 words | {strength:.2f} | {n} | {above / n:.3f} | {top / n:.3f} |")


def trust(reps: int) -> None:
    """Coverage of judge_trust's agreement interval: rows read as independent vs clustered by task."""
    from whileai.stats.score import cluster_wilson
    from whileai.stats.wilson import wilson

    rng = np.random.default_rng(5)
    print("| tasks | labelled rows a task | judge accuracy by task | Wilson over rows | clustered by task |")
    print("|---:|---:|---|---:|---:|")
    for tasks in (10, 20, 40):
        for m in (1, 2, 4, 8):
            for a, b in ((8.5, 1.5), (17.0, 3.0), (1.7, 0.3)):
                acc = rng.beta(a, b, size=(reps, tasks))
                x = rng.binomial(m, acc)
                truth = a / (a + b)
                lo, hi = wilson(x.sum(axis=1), tasks * m)
                plain = float(np.mean((lo <= truth) & (truth <= hi)))
                lo, hi = cluster_wilson(x, m)
                clus = float(np.mean((lo <= truth) & (truth <= hi)))
                print(f"| {tasks} | {m} | Beta({a:g},{b:g}) | {plain:.3f} | {clus:.3f} |")


def compare(reps: int) -> None:
    """compare_runs under the null: false-alarm rate of the verdict, and verdict/p disagreements."""
    from whileai.measure import compare_runs
    from whileai.stats.intervals import t_interval

    print("| tasks | k | runs | verdict false alarm | t interval alone | verdict vs p disagree | interval disagrees (noted) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for tasks, k in ((8, 4), (16, 4), (30, 4)):
        rng = np.random.default_rng(tasks)
        alarms = t_alarm = disagree = noted = 0
        runs = max(200, reps // 2)
        for _ in range(runs):
            p = rng.uniform(0.2, 0.7, tasks)
            ca, cb = rng.binomial(k, p), rng.binomial(k, p)
            a = [{"task_id": f"t{i}", "reward": float(r < ca[i])} for i in range(tasks) for r in range(k)]
            b = [{"task_id": f"t{i}", "reward": float(r < cb[i])} for i in range(tasks) for r in range(k)]
            c = compare_runs(a, b)
            sig = c.verdict in ("a_better", "b_better")
            alarms += sig
            disagree += sig != (c.p_value < 0.05)
            noted += not c.interval_agrees
            lo, hi = t_interval((cb - ca) / k)
            t_alarm += bool(lo > 0 or hi < 0)
        print(f"| {tasks} | {k} | {runs} | {alarms / runs:.3f} | {t_alarm / runs:.3f} | {disagree / runs:.3f} | "
              f"{noted / runs:.3f} |")


def band(reps: int) -> None:
    """The noise band's cost: P(moved) for a real gain, against moved_detectable_effect."""
    import polars as pl

    from whileai.measure import delta_report
    from whileai.testing import rollout_table

    print("| tasks | k | run_std | shift | mean delta | runs | reads moved | interval alone excludes 0 | "
          "moved_detectable_effect | detectable_effect |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs = max(100, reps // 5)
    for tasks, k, run_std, gain in ((50, 4, 0.03, 0.10), (50, 4, 0.03, 0.16), (50, 4, 0.03, 0.30), (100, 4, 0.02, 0.10),
                                    (100, 4, 0.02, 0.18)):
        moved = sig = 0
        mde, de, deltas = [], [], []
        for s in range(runs):
            before = rollout_table(tasks, k, seed=s, messages=False, markers=())
            after = rollout_table(tasks, k, seed=s, messages=False, markers=(), shift=gain, replica=1)
            after = after.with_columns(pl.lit("v2").alias("policy_version"))
            r = delta_report(before, after, run_std=run_std, run_std_runs=3)
            moved += r.target_verdict == "moved"
            deltas.append(r.target_delta)
            sig += r.target_verdict in ("moved", "within_eval_noise")
            if r.moved_detectable_effect is not None:
                mde.append(r.moved_detectable_effect)
            if r.detectable_effect is not None:
                de.append(r.detectable_effect)
        print(f"| {tasks} | {k} | {run_std:.2f} | +{gain:.2f} | {np.mean(deltas):+.3f} | {runs} | {moved / runs:.3f} | "
              f"{sig / runs:.3f} | "
              f"{np.median(mde):+.3f} | {np.median(de):+.3f} |")


def markers(reps: int) -> None:
    """Marker intervals: the clustered score interval (marker_summary's now) against the t interval it replaces."""
    from whileai.stats.intervals import t_quantile
    from whileai.stats.score import clustered_rate_interval

    print("| rate | task spread | tasks | rollouts | score | t (old) |")
    print("|---:|---|---:|---:|---:|---:|")
    cover: dict[str, list[float]] = {"score": [], "t": []}
    for rate in (0.02, 0.1, 0.5, 0.9, 0.97):
        for conc in (None, 10.0, 2.0):
            for tasks, n in ((8, 4), (16, 2), (30, 8), (100, 4)):
                rng = np.random.default_rng(int(rate * 1000) + tasks * 10 + n)
                p = (np.full((reps, tasks), rate) if conc is None
                     else rng.beta(rate * conc, (1.0 - rate) * conc, size=(reps, tasks)))
                c = rng.binomial(n, p)
                lo, hi = clustered_rate_interval(c, np.full(tasks, n))
                v = c / n
                half = float(t_quantile(0.95, tasks - 1)) * v.std(axis=1, ddof=1) / np.sqrt(tasks)
                ours = float(np.mean((lo <= rate) & (rate <= hi)))
                old = float(np.mean((v.mean(1) - half <= rate) & (rate <= v.mean(1) + half)))
                cover["score"].append(ours)
                cover["t"].append(old)
                spread = "point" if conc is None else f"Beta, concentration {conc:g}"
                print(f"| {rate:g} | {spread} | {tasks} | {n} | {ours:.3f} | {old:.3f} |")
    for name, vals in cover.items():
        arr = np.array(vals)
        print(f"{name}: {arr.size} cells, min {arr.min():.3f}, median {np.median(arr):.3f}, "
              f"below 0.935 {int((arr < 0.935).sum())}")


def sign_flip(reps: int) -> None:
    """compare_runs' default interval (the sign-flip test's own, joined with the score interval): coverage and agreement."""
    from whileai.measure._compare import join_intervals
    from whileai.stats.permutation import sign_flip_interval, sign_flip_test
    from whileai.stats.score import paired_score_interval

    print("| tasks | k | before | shift (logit) | evals | covers | agrees with verdict | score interval agrees |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    runs = max(200, reps // 2)
    for tasks, k, (a, b), shift in ((12, 2, (0.5, 0.5), 0.5), (30, 4, (2.0, 2.0), 0.0), (30, 4, (2.0, 2.0), 0.5),
                                    (30, 4, (1.0, 19.0), 1.0), (150, 4, (1.0, 19.0), 0.0), (150, 4, (1.0, 19.0), 0.6)):
        rng = np.random.default_rng(tasks * 7 + k)
        p = rng.beta(a, b, size=(runs, tasks))
        q = 1.0 / (1.0 + np.exp(-(np.log(p / (1.0 - p)) + shift)))
        va, vb = rng.binomial(k, p) / k, rng.binomial(k, q) / k
        truth = (q - p).mean(axis=1)
        slo, shi = paired_score_interval(va, vb, rollouts_before=k, rollouts_after=k)
        covers = agrees = score_agrees = 0
        for i in range(runs):
            d = vb[i] - va[i]
            t = sign_flip_test(d)
            p0 = 1.0 if t.method == "none" else t.p_value
            own = sign_flip_interval(d, p_at_zero=p0, bounds=(-1.0, 1.0))
            lo, hi = join_intervals((own.lo, own.hi), (float(slo[i]), float(shi[i])), rejects=p0 < 0.05)
            covers += lo - 1e-12 <= truth[i] <= hi + 1e-12
            agrees += (lo > 0 or hi < 0) == (p0 < 0.05)
            score_agrees += (slo[i] > 0 or shi[i] < 0) == (p0 < 0.05)
        print(f"| {tasks} | {k} | Beta({a:g},{b:g}) | {shift:+g} | {runs} | {covers / runs:.3f} | {agrees / runs:.3f} | "
              f"{score_agrees / runs:.3f} |")


SECTIONS = ("intervals", "wai131", "hack", "trust", "compare", "band", "markers", "sign_flip")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--section", default=",".join(SECTIONS))
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--old-reps", type=int, default=200)
    parser.add_argument("--wai131", default=None, help="python of a whileai 0.131 venv, e.g. /tmp/wai131/bin/python")
    args = parser.parse_args(argv)
    for section in args.section.split(","):
        t0 = time.perf_counter()
        print(f"## {section}")
        if section == "intervals":
            _print_intervals(intervals(args.reps, args.old_reps, args.wai131))
        elif section == "wai131":
            _print_intervals(wai131_cells(min(args.reps, 200), args.wai131 or "/tmp/wai131/bin/python"))
        else:
            {"hack": hack, "trust": trust, "compare": compare, "band": band, "markers": markers,
             "sign_flip": sign_flip}[section](args.reps)
        print(f"({section}: {time.perf_counter() - t0:.1f} s)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
