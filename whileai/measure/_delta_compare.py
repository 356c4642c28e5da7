"""Every metric compared, and read against the eval's own re-run noise band.

Each metric (pass_at_1 and every shared marker) runs the ``compare_runs`` comparison on one
alignment of the two arms' per-task values (paired by task_key, the exact sign-flip test deciding;
Miller 2024, arXiv:2411.00640, section 4). Its gain verdict reads the test against the band
``q x run_std x sqrt(1/n_before + 1/n_after)``, run_std given or pooled from the eval runs the rows
carry, q the t quantile at its degrees of freedom: moved, moved_unreplicated (no band),
within_eval_noise or no_change_detected (docs/measure.md, "Run the eval three times"). The
target's numbers go on the report's top level; a ``by=`` grouping compares the target within
each group.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from whileai import table
from whileai.errors import ArgumentError
from whileai.measure._compare import Comparison, _counts, aligned, compare_arrays
from whileai.measure._delta import DeltaReport, GainVerdict, GroupDelta, MetricDelta
from whileai.measure._delta_args import DeltaOptions
from whileai.measure._delta_sides import DeltaSide, DeltaSides
from whileai.measure._delta_text import _tuple
from whileai.measure._metrics import (
    MARKER_PREFIX,
    PASS_AT_1,
    marker_names,
    metric_label,
    task_values,
)
from whileai.measure._variance import run_means
from whileai.stats.intervals import t_quantile
from whileai.stats.power import noise_band_width

_MAX_GROUPS = 50


def compared_report(sides: DeltaSides, opts: DeltaOptions, warnings: list[str]) -> DeltaReport:
    """The report with every metric compared against its band, the target's numbers on top, no verdict yet."""
    a, b, metrics, target_name = sides.a, sides.b, sides.metrics, sides.target_name
    band, band_fields = band_of(a, b, metrics=metrics, target_name=target_name, given_std=opts.given_std,
                                given_runs=opts.given_runs, level=opts.level, warnings=warnings)
    compared, moved = compare_metrics(a.values, b.values, band, metrics=metrics, level=opts.level,
                                      ci_method=opts.ci_method, n_boot=opts.n_boot, n_perm=opts.n_perm,
                                      min_paired=opts.min_paired, rng=opts.rng)
    report = DeltaReport(target=target_name, level=opts.level, ci_method=opts.ci_method, must_not_regress=opts.guards,
                         n_metrics=len(metrics), config={"before": a.config, "after": b.config},
                         balanced=sides.balanced or None,
                         repeats={"before": rollouts_per_task(a.values), "after": rollouts_per_task(b.values)},
                         **band_fields, metrics=compared, improved=moved.improved, regressions=moved.regressions,
                         within_noise=moved.within_noise)
    target_fields(report, band, target_name=target_name, given_runs=opts.given_runs, level=opts.level)
    return report


def by_groups(report: DeltaReport, sides: DeltaSides, opts: DeltaOptions, warnings: list[str]) -> None:
    """With ``by=`` on comparable arms read whole: the target within each group, and a warning for groups it dropped in."""
    by, frames, target_name = opts.by, sides.frames, sides.target_name
    if by is None or frames is None or report.not_comparable:
        return
    report.by = by if isinstance(by, str) else getattr(by, "__name__", "callable")
    report.groups, report.groups_down = compare_groups(frames[0], frames[1], by, report.by, target_name,
                                                       level=opts.level, ci_method=opts.ci_method, n_boot=opts.n_boot,
                                                       n_perm=opts.n_perm, min_paired=opts.min_paired, rng=opts.rng,
                                                       warnings=warnings)
    if report.groups_down:
        moved_up = report.headline_verdict in ("moved", "moved_unreplicated")
        warnings.append(f"{target_name} dropped significantly in group(s) {', '.join(report.groups_down)}"
                        + (" while the headline moved up" if moved_up else "")
                        + f"; read the by={report.by!r} table before calling this a win.")


class _Band(NamedTuple):
    """The re-run noise band's inputs: run_std per metric, its degrees of freedom, eval runs per arm."""

    std: dict[str, float]
    df: int | None
    runs_a: int
    runs_b: int


class _Moved(NamedTuple):
    """The metrics that moved up, moved down, and moved inside the re-run band (the report's lists)."""

    improved: list[str]
    regressions: list[str]
    within_noise: list[str]


def band_of(a: DeltaSide, b: DeltaSide, *, metrics: list[str], target_name: str,
                given_std: dict[str | None, float] | None, given_runs: int | None, level: float,
                warnings: list[str]) -> tuple[_Band, dict[str, Any]]:
    """run_std per metric: given, or derived from the eval runs the rows carry (Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640).

    Returns the band's inputs and the report fields they fill (eval_runs, run_std_source,
    run_std_runs, replicated, run_std_by_metric, run_std_df).
    """
    runs_a, runs_b, derived, derived_df = _derived_run_std([a.run_values, b.run_values], metrics)
    fields: dict[str, Any] = {"eval_runs": {"before": runs_a, "after": runs_b}}
    std_by_metric: dict[str, float] = {}
    band_df: int | None = None
    if given_std is not None:
        std_by_metric = {(target_name if k is None else metric_label(k)): v for k, v in given_std.items()}
        fields["run_std_source"] = "given"
        fields["run_std_runs"] = given_runs
        band_df = None if given_runs is None else given_runs - 1
        if given_runs is None:
            warnings.append("run_std was given without run_std_runs, so the band reads it as exact and uses "
                            f"{float(t_quantile(level, np.inf)):.2f}; a floor from three re-runs is an estimate and that band "
                            "lets about one pure-noise delta in five through. Pass run_std_runs= (the re-runs it came from).")
        if derived:
            warnings.append("run_std was given and the rows also carry eval runs; the given run_std is used.")
    elif derived:
        std_by_metric = derived
        fields["run_std_source"] = "rows"
        band_df = derived_df
        fields["replicated"] = True
    unknown = [m for m in std_by_metric if m not in metrics]
    if unknown:
        raise ArgumentError(f"run_std must be keyed by metrics both arms measure, got {unknown!r}. "
                            f"Measured on both: {', '.join(metrics)}.")
    fields["run_std_by_metric"] = {m: float(v) for m, v in std_by_metric.items()}
    fields["run_std_df"] = band_df
    return _Band(std_by_metric, band_df, runs_a, runs_b), fields


def compare_metrics(a_vals: pl.DataFrame, b_vals: pl.DataFrame, band_in: _Band, *, metrics: list[str], level: float,
                     ci_method: str, n_boot: int, n_perm: int, min_paired: int,
                     rng: np.random.Generator) -> tuple[dict[str, MetricDelta], _Moved]:
    """Every metric compared on one alignment of the two sides' task values, each with its gain verdict.

    Returns the entries by metric and the report's ``improved``, ``regressions`` and
    ``within_noise`` lists.
    """
    both = aligned(a_vals, b_vals, [*metrics, "n_graded"])
    n_a, n_b = _counts(both["n_graded"]), _counts(both["n_graded_b"])
    entries: dict[str, MetricDelta] = {}
    moved = _Moved([], [], [])
    for name in metrics:
        comp = compare_arrays(both[name].to_numpy().astype(np.float64), both[f"{name}_b"].to_numpy().astype(np.float64),
                              metric=name if name == PASS_AT_1 else MARKER_PREFIX + name, level=level,
                              ci_method=ci_method, n_boot=n_boot, n_perm=n_perm, min_paired=min_paired, rng=rng,
                              n_a=n_a, n_b=n_b)
        std = band_in.std.get(name)
        band = None if std is None else noise_band_width(std, band_in.runs_a, band_in.runs_b, band_in.df, level=level)
        verdict = _gain_verdict(comp, band)
        entries[name] = MetricDelta.of(comp, gain_verdict=verdict, run_std=std, noise_band=band,
                                       within_noise=verdict == "within_eval_noise")
        if verdict in ("moved", "moved_unreplicated"):
            (moved.improved if comp.direction == "up" else moved.regressions).append(name)
        elif verdict == "within_eval_noise":
            moved.within_noise.append(name)
    return entries, moved


def target_fields(report: DeltaReport, band: _Band, *, target_name: str, given_runs: int | None,
                   level: float) -> None:
    """The target metric's verdict, delta and band on the report's top level, and the pairing counts."""
    band_df, runs_a, runs_b = band.df, band.runs_a, band.runs_b
    t = report.metrics[target_name]
    p1 = report.metrics[PASS_AT_1]
    report.target_verdict = t["gain_verdict"]
    report.target_direction = t["direction"]
    report.target_delta = t["delta"] if t["delta"] is not None else math.nan
    report.target_ci95 = _tuple(t["ci95"])
    report.run_std = band.std.get(target_name)
    report.noise_band = t["noise_band"]
    if report.noise_band is not None:
        q = float(t_quantile(level, np.inf if band_df is None else band_df))
        quant = f"t(df={band_df})={q:.2f}" if band_df is not None else f"{q:.2f}"
        src = (f"run_std given from {given_runs} re-runs" if report.run_std_source == "given" and given_runs
               else "run_std given" if report.run_std_source == "given"
               else f"{runs_a} eval runs before, {runs_b} after")
        report.noise_rule = f"{quant} x run_std x sqrt(1/{runs_a} + 1/{runs_b}); {src}"
    report.n_paired_tasks = p1["n_paired"]
    report.n_unpaired_tasks = p1["n_only_a"] + p1["n_only_b"]
    report.paired_share = p1["paired_share"] if p1["paired_share"] is not None else math.nan


def rollouts_per_task(vals: pl.DataFrame) -> int:
    return int(vals["n_graded"].max() or 0) if vals.height else 0  # type: ignore[arg-type]


def _gain_verdict(comp: Comparison, band: float | None) -> GainVerdict:
    if comp.verdict == "insufficient_data":
        return "insufficient_data"
    if comp.verdict == "no_difference_detected":
        return "no_change_detected"
    if band is None:
        return "moved_unreplicated"
    return "within_eval_noise" if abs(comp.delta) <= band else "moved"


def _derived_run_std(run_values: list[pl.DataFrame | None], metrics: list[str]) -> tuple[int, int, dict[str, float], int | None]:
    """Eval runs per side and, when any side has two or more, run_std per metric pooled over sides."""
    sides: list[tuple[int, pl.DataFrame | None]] = []
    for vals in run_values:
        if vals is None:
            sides.append((1, None))
            continue
        vals = vals.filter(pl.col("_run").is_not_null())
        n = vals["_run"].n_unique()
        sides.append((max(1, n), vals if n >= 2 else None))
    (runs_a, va), (runs_b, vb) = sides
    if va is None and vb is None:
        return runs_a, runs_b, {}, None
    out: dict[str, float] = {}
    df_total = sum(n - 1 for n, v in sides if v is not None)
    for m in metrics:
        ss = 0.0
        dof = 0
        for _, v in sides:
            if v is None:
                continue
            means = [x for x in run_means(v, [m])[0][m].values() if x is not None]
            if len(means) >= 2:
                ss += float(np.var(means, ddof=1)) * (len(means) - 1)
                dof += len(means) - 1
        if dof:
            out[m] = math.sqrt(ss / dof)
    return runs_a, runs_b, out, df_total or None


def compare_groups(a: pl.DataFrame, b: pl.DataFrame, by: Any, by_name: str, target: str, *, level: float,
            ci_method: str, n_boot: int, n_perm: int, min_paired: int, rng: np.random.Generator,
            warnings: list[str]) -> tuple[dict[str, GroupDelta], list[str]]:
    """The target compared within each ``by=`` group (the largest ``_MAX_GROUPS``), and the groups it dropped in."""
    exprs = []
    for df in (a, b):
        exprs.append(_group_column(df, by))
    a_g = task_values(a.with_columns(exprs[0]), [target], keys=("_group", "task_key"), maintain_order=False)
    b_g = task_values(b.with_columns(exprs[1]), [target], keys=("_group", "task_key"), maintain_order=False)
    names = (pl.concat([a_g.select("_group"), b_g.select("_group")]).drop_nulls()
             .group_by("_group").len().sort(["len", "_group"], descending=[True, False])["_group"].to_list())
    if len(names) > _MAX_GROUPS:
        warnings.append(f"by={by_name!r} makes {len(names)} groups; the {_MAX_GROUPS} largest are compared.")
        names = names[:_MAX_GROUPS]
    both = aligned(a_g, b_g, [target, "n_graded"], keys=["_group", "task_key"])
    group_col = both["_group"].to_numpy()
    va_all = both[target].to_numpy().astype(np.float64)
    vb_all = both[f"{target}_b"].to_numpy().astype(np.float64)
    na_all, nb_all = _counts(both["n_graded"]), _counts(both["n_graded_b"])
    groups: dict[str, GroupDelta] = {}
    down: list[str] = []
    for g in sorted(names, key=str):
        mask = group_col == g
        comp = compare_arrays(va_all[mask], vb_all[mask], metric=target if target == PASS_AT_1 else MARKER_PREFIX + target,
                              level=level, ci_method=ci_method, n_boot=n_boot, n_perm=n_perm, min_paired=min_paired, rng=rng,
                              n_a=na_all[mask], n_b=nb_all[mask])
        groups[str(g)] = GroupDelta.of(comp)
        if comp.direction == "down":
            down.append(str(g))
    return groups, down


def _group_column(df: pl.DataFrame, by: Any) -> pl.Expr | pl.Series:
    if callable(by):
        values = [by(row) for row in table.iter_rows(df)]
        return pl.Series("_group", [None if v is None else str(v) for v in values], dtype=pl.String)
    if by in df.columns:
        return pl.col(by).cast(pl.String).alias("_group")
    if by in marker_names(df):
        return pl.col("markers").struct.field(by).cast(pl.String).alias("_group")
    raise ArgumentError(f"by must name a row key or a marker both arms carry, got {by!r}. "
                        f"Columns: {', '.join(c for c in df.columns[:15])}; markers: {', '.join(marker_names(df)) or 'none'}.")


