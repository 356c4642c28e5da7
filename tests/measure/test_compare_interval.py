"""The interval on a paired gain (compare_runs, delta_report): the MOVER score interval.

Checked against a hand computation of Zou and Donner's (2008) formula on each side's
``score_interval`` and scipy's Pearson r, against the truth by a seeded coverage simulation over
tasks x rollouts x pass rates at the floor, the middle and the ceiling (the t interval it replaces
beside it), for width when every task moved alike, and across the rows, Parquet and Ray paths.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy import integrate, stats
from scipy.special import expit, logit

import whileai as wai
from whileai.defaults import COMPARE_CI_METHOD
from whileai.errors import ArgumentError
from whileai.measure._stream import stream_side
from whileai.stats.intervals import t_interval
from whileai.stats.score import paired_score_interval, score_interval

Z = stats.norm.ppf(0.975)


def _rows(values, rollouts, marker=None) -> list[dict[str, Any]]:
    """Rows whose task t has rollouts[t] graded rollouts, values[t] of them passing."""
    out = []
    for t, (v, n) in enumerate(zip(values, rollouts, strict=True)):
        passes = round(v * n)
        assert abs(passes - v * n) < 1e-9
        for i in range(n):
            row: dict[str, Any] = {"task_id": f"t{t}", "rollout_index": i, "reward": float(i < passes)}
            if marker is not None:
                row["markers"] = {"honest": float(marker[t])}
            out.append(row)
    return out


def _by_hand(va, vb, na, nb, level=0.95):
    """Zou and Donner 2008, eqs. 8-9, written out: each side's score_interval, Pearson's r held by the rollout noise."""
    va, vb, na, nb = (np.asarray(x, dtype=float) for x in (va, vb, na, nb))
    sides = []
    for v, n in ((va, na), (vb, nb)):
        floor = 1.0 / n.mean()
        lo, hi = score_interval(v, floor=floor, level=level)
        m = v.mean()
        deff = min(1.0, max(floor, v.var(ddof=1) / (m * (1 - m)))) if 0 < m < 1 else 1.0
        jeffreys = (v * n + 0.5) / (n + 1)
        within = float(np.mean(jeffreys * (1 - jeffreys) / n))
        sides.append((float(lo), float(hi), m, deff * m * (1 - m), within))
    (la, ua, ma, var_a, wa), (lb, ub, mb, var_b, wb) = sides
    pearson = 0.0 if np.ptp(va) == 0 or np.ptp(vb) == 0 else float(stats.pearsonr(va, vb).statistic)
    hold = max(0.0, (var_a + var_b - wa - wb) / (2 * math.sqrt(var_a * var_b))) if var_a > 0 and var_b > 0 else 0.0
    r = min(pearson, hold)
    d = mb - ma
    lo = d - math.sqrt((mb - lb) ** 2 + (ua - ma) ** 2 - 2 * r * (mb - lb) * (ua - ma))
    hi = d + math.sqrt((ub - mb) ** 2 + (ma - la) ** 2 - 2 * r * (ub - mb) * (ma - la))
    return (max(-1.0, lo), min(1.0, hi)), pearson, hold


# (1) the formula ------------------------------------------------------------------------------

CASES = {
    # Pearson's r applies (below the hold)
    "pearson": ([0, 0.125, 1, 0.875, 0.5, 0, 1, 0.25], [0.25, 0, 1, 0.5, 1, 0.25, 0.75, 0.5], [4, 8, 4, 8, 4, 4, 2, 4],
                [4, 8, 8, 8, 2, 4, 4, 4]),
    # every task gained 0.25 (Pearson 1): the hold sets r
    "hold": ([0, 0.25, 0.5, 0.75, 0.5], [0.25, 0.5, 0.75, 1.0, 0.75], [4] * 5, [4] * 5),
    # the before side does not vary: r = 0
    "flat": ([0.5] * 6, [1.0, 1.0, 0.5, 1.0, 1.0, 1.0], [2] * 6, [2] * 6),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_interval_is_the_mover_formula_on_each_sides_score_interval(name):
    va, vb, na, nb = CASES[name]
    (lo, hi), pearson, hold = _by_hand(va, vb, na, nb)
    if name == "pearson":
        assert 0 < pearson < hold
    elif name == "hold":
        assert pearson == pytest.approx(1.0) and 0 < hold < 1
    else:
        assert pearson == 0.0
    got = paired_score_interval(va, vb, rollouts_before=na, rollouts_after=nb)
    assert (float(got[0]), float(got[1])) == pytest.approx((lo, hi), abs=1e-12)
    r = wai.compare_runs(_rows(va, na), _rows(vb, nb), ci_method="score")
    assert r.ci_method == "score" != COMPARE_CI_METHOD
    assert r.ci95 == pytest.approx((lo, hi), abs=1e-12)
    assert r.delta == pytest.approx(np.mean(vb) - np.mean(va))


def test_the_interval_is_vectorised_over_sets_and_takes_any_level():
    rng = np.random.default_rng(3)
    va, vb = rng.binomial(4, 0.4, (5, 8)) / 4, rng.binomial(4, 0.6, (5, 8)) / 4
    lo, hi = paired_score_interval(va, vb, rollouts_before=4, rollouts_after=4, level=0.9)
    for i in range(5):
        (elo, ehi), _, _ = _by_hand(va[i], vb[i], [4] * 8, [4] * 8, level=0.9)
        assert (lo[i], hi[i]) == pytest.approx((elo, ehi), abs=1e-12)
    lo_t, hi_t = paired_score_interval(va.T, vb.T, rollouts_before=4, rollouts_after=4, level=0.9, axis=0)
    np.testing.assert_allclose(lo_t, lo, atol=1e-15)
    np.testing.assert_allclose(hi_t, hi, atol=1e-15)
    nan = paired_score_interval([0.5], [1.0], rollouts_before=2, rollouts_after=2)
    assert all(math.isnan(float(x)) for x in nan)


def test_t_percentile_and_bca_stay_selectable_and_values_off_the_unit_scale_take_t():
    va, vb, na, nb = CASES["pearson"]
    a, b = _rows(va, na), _rows(vb, nb)
    d = np.asarray(vb) - np.asarray(va)
    t = wai.compare_runs(a, b, ci_method="t")
    assert t.ci_method == "t"
    assert t.ci95 == pytest.approx(stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d)), abs=1e-12)
    for method in ("percentile", "bca"):
        assert wai.compare_runs(a, b, ci_method=method, n_boot=500).ci_method == method
    assert wai.delta_report(a, b, ci_method="t").target_ci95 == pytest.approx(t.ci95, abs=1e-12)
    with pytest.raises(ArgumentError, match="ci_method must be one of 'sign_flip', 'score', 't', 'percentile', 'bca'"):
        wai.delta_report(a, b, ci_method="wilson")
    # a marker on a 1-to-5 scale: no score interval, the t interval and a note
    scale = [{"task_id": f"t{t}", "reward": 1.0, "markers": {"stars": float(s)}}
             for t, s in enumerate([1, 3, 5, 2, 4, 3])]
    after = [{**row, "markers": {"stars": row["markers"]["stars"] - 0.5 * (i % 2)}} for i, row in enumerate(scale)]
    m = wai.compare_runs(scale, after, metric="stars", ci_method="score")
    assert m.ci_method == "t" and "outside [0, 1]" in m.note


# (2) coverage -----------------------------------------------------------------------------------

TASKS = (6, 12, 30)
ROLLOUTS = (2, 4, 8)
REPS = 400
#: name -> (task difficulty: a point or a Beta, before rate for a point, logit shift of each task's rate)
SCENARIOS = {
    "floor 0.02->0.10": ("point", 0.02, logit(0.10) - logit(0.02)),
    "floor to ceiling 0.02->0.95": ("point", 0.02, logit(0.95) - logit(0.02)),
    "middle 0.45->0.60": ("point", 0.45, logit(0.60) - logit(0.45)),
    "ceiling 0.90->0.98": ("point", 0.90, logit(0.98) - logit(0.90)),
    "spread Beta(2,2), +0.7 logit": ((2.0, 2.0), None, 0.7),
    "spread Beta(0.5,0.5), +0.5 logit": ((0.5, 0.5), None, 0.5),
}


def _truth(kind, rate, shift) -> float:
    """E[p_after - p_before] over tasks (numerical integration against the Beta density)."""
    if kind == "point":
        return float(expit(logit(rate) + shift) - rate)
    a, b = kind
    value, _ = integrate.quad(lambda p: (expit(logit(p) + shift) - p) * stats.beta.pdf(p, a, b), 0, 1, limit=200)
    return value


def _grid(seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    out = []
    for name, (kind, rate, shift) in SCENARIOS.items():
        truth = _truth(kind, rate, shift)
        for tasks in TASKS:
            for k in ROLLOUTS:
                pa = np.full((REPS, tasks), rate) if kind == "point" else rng.beta(*kind, size=(REPS, tasks))
                pb = expit(logit(np.clip(pa, 1e-12, 1 - 1e-12)) + shift)
                va, vb = rng.binomial(k, pa) / k, rng.binomial(k, pb) / k
                lo, hi = paired_score_interval(va, vb, rollouts_before=k, rollouts_after=k)
                tlo, thi = t_interval(vb - va, bounds=(-1.0, 1.0))
                out.append({"scenario": name, "tasks": tasks, "k": k, "truth": truth,
                            "score": float(np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))),
                            "t": float(np.mean((tlo <= truth + 1e-12) & (truth - 1e-12 <= thi))),
                            "t_zero_width": float(np.mean(thi - tlo < 1e-12)),
                            "score_zero_width": float(np.mean(hi - lo < 1e-12)),
                            "first": (va[0], vb[0], float(lo[0]), float(hi[0]))})
    return out


@pytest.fixture(scope="module")
def grid() -> list[dict[str, Any]]:
    return _grid()


def test_the_score_interval_covers_the_true_gain_in_every_cell(grid):
    lines = [f"{'scenario':<34} {'tasks':>5} {'k':>2} {'truth':>7} {'score':>6} {'t':>6} {'t zero-width':>12}"]
    lines += [f"{c['scenario']:<34} {c['tasks']:>5} {c['k']:>2} {c['truth']:>+7.3f} {c['score']:>6.3f} {c['t']:>6.3f} "
              f"{c['t_zero_width']:>12.3f}" for c in grid]
    print("\n".join(lines))  # the table in docs/measure.md (pytest -s)
    low = [(c["scenario"], c["tasks"], c["k"], c["score"]) for c in grid if c["score"] < 0.93]
    assert not low, low
    assert all(c["score_zero_width"] == 0.0 for c in grid)
    # the t interval it replaces misses where the paired differences tie (the floor and ceiling cells)
    worst = min(grid, key=lambda c: c["t"])
    assert worst["t"] < 0.7 and worst["t_zero_width"] > 0.3 and worst["scenario"].startswith("floor to ceiling")


def test_a_simulated_run_gives_compare_runs_interval(grid):
    for c in grid[:: len(ROLLOUTS) * 2]:
        va, vb, lo, hi = c["first"]
        k = c["k"]
        r = wai.compare_runs(_rows(va, [k] * va.size), _rows(vb, [k] * vb.size), ci_method="score")
        assert r.ci95 == pytest.approx((lo, hi), abs=1e-12)


# (3) every task moved alike -----------------------------------------------------------------------

ALIKE = {
    "every task 0.5 -> 1.0": ([0.5] * 6, [1.0] * 6, [2] * 6),
    "every task +0.25": ([0, 0.25, 0.5, 0.75, 0.25, 0.5], [0.25, 0.5, 0.75, 1.0, 0.5, 0.75], [4] * 6),
    "the same 0/1 tasks both runs": ([0, 1, 1, 0, 1, 0, 1, 1], [0, 1, 1, 0, 1, 0, 1, 1], [2] * 8),
    "every task 0.02 -> 0.95 at the ends": ([0.0] * 6, [1.0] * 6, [2] * 6),
}


@pytest.mark.parametrize("name", list(ALIKE))
def test_no_zero_width_interval_when_every_task_moved_alike(name):
    va, vb, n = ALIKE[name]
    a, b = _rows(va, n), _rows(vb, n)
    t = wai.compare_runs(a, b, ci_method="t")
    assert t.ci95[1] - t.ci95[0] < 1e-12  # the old default: no width
    r = wai.compare_runs(a, b)
    lo, hi = r.ci95
    assert hi - lo > 0.1 and lo <= r.delta <= hi and -1.0 <= lo and hi <= 1.0
    assert wai.delta_report(a, b).target_ci95 == pytest.approx(r.ci95, abs=1e-12)


# (4) the same interval on every path -----------------------------------------------------------------


def _arms() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Unequal rollouts a task (so the floor reads n_graded), a marker, an ungraded row."""
    rng = np.random.default_rng(11)
    n = rng.integers(2, 7, 14)
    va = [rng.integers(0, k + 1) / k for k in n]
    vb = [min(1.0, v + rng.integers(0, 2) / k) for v, k in zip(va, n, strict=True)]
    a = _rows(va, n, marker=rng.integers(0, 2, 14))
    b = _rows(vb, n, marker=rng.integers(0, 2, 14))
    b.append({"task_id": "t0", "rollout_index": 99, "reward": None, "markers": {"honest": 1.0}})
    return a, b


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return wai.table.frame(rows)


def test_rows_parquet_and_frames_give_the_same_interval(tmp_path: Path):
    a, b = _arms()
    paths = []
    for name, rows in (("a", a), ("b", b)):
        path = tmp_path / f"{name}.parquet"
        _frame(rows).write_parquet(path)
        paths.append(str(path))
    assert stream_side(paths[0]) is not None  # the streamed path is the one taken
    ref = wai.compare_runs(a, b)
    assert ref.ci_method == "sign_flip"
    for pair in ((paths[0], paths[1]), (_frame(a), _frame(b)), (paths[0], b)):
        got = wai.compare_runs(*pair)
        assert got.ci95 == pytest.approx(ref.ci95, abs=1e-12)
        marker = wai.compare_runs(*pair, metric="honest")
        assert marker.ci95 == pytest.approx(wai.compare_runs(a, b, metric="honest").ci95, abs=1e-12)
        d = wai.delta_report(*pair)
        assert d.target_ci95 == pytest.approx(ref.ci95, abs=1e-12)
        assert d.metrics["honest"]["ci95"] == pytest.approx(marker.ci95, abs=1e-12)
    # unequal rollouts: the floor is 1 / mean(n_graded) of each side, read per path alike
    va = np.array([np.mean([r["reward"] for r in a if r["task_id"] == f"t{t}"]) for t in range(14)])
    vb = np.array([np.mean([r["reward"] for r in b if r["task_id"] == f"t{t}" and r["reward"] is not None])
                   for t in range(14)])
    na = np.array([sum(r["task_id"] == f"t{t}" for r in a) for t in range(14)])
    nb = np.array([sum(r["task_id"] == f"t{t}" and r["reward"] is not None for r in b) for t in range(14)])
    (lo, hi), _, _ = _by_hand(va, vb, na, nb)
    assert ref.ci95 == pytest.approx((lo, hi), abs=1e-12)


class Dataset:
    """Stands in for a ``ray.data.Dataset`` (``is_ray_dataset`` reads the type's name and module)."""

    __module__ = "ray.data.dataset"

    def __init__(self, rows: list[dict[str, Any]]):
        self.table = _frame(rows).to_arrow()


def _cells_without_ray(ds: Dataset, *, run_by: str | None = None, runs: bool = False):
    """``_ray.cells`` with Ray's map_batches and group-by done here: two batches' partial sums, merged."""
    from whileai.measure import _ray
    from whileai.table.raydata import NO_RUN

    typ = ds.table.schema.field("markers").type
    markers = sorted(f.name for f in typ)
    half = ds.table.num_rows // 2
    parts = [pl.from_arrow(_ray._partials(t, markers=markers, run_by=run_by, runs=runs))
             for t in (ds.table.slice(0, half), ds.table.slice(half))]
    sep = _ray.SEP
    aggs = [pl.col(c).sum() for c in _ray._SUMS] + [pl.col("r_min").min(), pl.col("r_max").max()]
    for m in markers:
        aggs += [pl.col(f"{m}{sep}sum").sum(), pl.col(f"{m}{sep}n").sum(), pl.col(f"{m}{sep}lo").min(),
                 pl.col(f"{m}{sep}hi").max()]
    merged = pl.concat(parts).group_by("_run", "task_key").agg(aggs)  # type: ignore[arg-type]
    merged = merged.with_columns(pl.when(pl.col("_run") == NO_RUN).then(None).otherwise(pl.col("_run")).alias("_run"))
    return merged, markers


def test_the_ray_side_gives_the_same_interval(monkeypatch):
    """The Ray kernel (per-task sums merged across batches, ``values_of``) without Ray itself.

    Ray's own map_batches and group-by are exercised in tests/engines/test_ray.py under
    ``make test-ray``; here the partial sums of two batches are merged by Polars instead.
    """
    from whileai.measure import _ray

    monkeypatch.setattr(_ray, "cells", _cells_without_ray)
    a, b = _arms()
    assert wai.table.is_ray_dataset(Dataset(a))
    ref = wai.compare_runs(a, b)
    got = wai.compare_runs(Dataset(a), Dataset(b))
    assert got.ci95 == pytest.approx(ref.ci95, abs=1e-12) and got.ci_method == "sign_flip"
    assert wai.compare_runs(Dataset(a), b, metric="honest").ci95 == pytest.approx(
        wai.compare_runs(a, b, metric="honest").ci95, abs=1e-12)
    d = wai.delta_report(Dataset(a), Dataset(b))
    assert d.target_ci95 == pytest.approx(ref.ci95, abs=1e-12)
    assert d.metrics["honest"]["ci95"] == pytest.approx(wai.delta_report(a, b).metrics["honest"]["ci95"], abs=1e-12)
