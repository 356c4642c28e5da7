"""The eval's own re-run noise: ``eval_variance`` over re-runs and the ``noise_band`` it implies."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from pydantic import Field

from whileai.defaults import CI_LEVEL, EVAL_RUNS, STABILITY_POINTS
from whileai.errors import ArgumentError
from whileai.measure._args import check_level
from whileai.measure._metrics import PASS_AT_1, marker_names, metric_label, task_values
from whileai.measure._rows import clean_rewards, read_rows
from whileai.measure._runs import run_labels
from whileai.report import ChartedReport
from whileai.stats.intervals import t_quantile
from whileai.stats.power import noise_band_width
from whileai.table import IntoRows, is_ray_dataset

__all__ = ["EvalVarianceReport", "eval_variance", "noise_band", "run_labels", "run_means"]

#: Fields of ``lineage`` that name the re-run a row came from, in the order they are tried.


class EvalVarianceReport(ChartedReport):
    """How far the same eval of the same model moves between re-runs (whileai 0.131 keys)."""

    metric: str = PASS_AT_1
    """The metric ``run_std`` is for (``pass_at_1`` or ``marker:<name>``)."""
    n_runs: int = 0
    """Re-runs found."""
    means: dict[str, float] = Field(default_factory=dict)
    """The metric of each run over the tasks every run has."""
    mean: float = math.nan
    """Mean of the run means."""
    run_std: float = math.nan
    """Standard deviation of the run means (ddof 1); NaN with fewer than two runs."""
    run_std_by_metric: dict[str, float] = Field(default_factory=dict)
    """run_std of every metric all runs measure (pass_at_1 and each marker)."""
    run_std_points: float = math.nan
    """run_std in points (x 100)."""
    noise_band: float = math.nan
    """t(df = runs - 1) x sqrt(2) x run_std: a delta between two single runs inside it is the eval re-running."""
    noise_band_df: int = 0
    """Degrees of freedom of the band's t quantile (runs - 1)."""
    level: float = CI_LEVEL
    """Level of the band's quantile."""
    stability: str = "unknown"
    """very_stable, stable, noisy or high_variance by run_std in points (``STABILITY_POINTS``)."""
    tasks_in_every_run: int = 0
    """Tasks every run has a value for: the run means are over these."""
    run_source: str = ""
    """Where the runs came from: separate tables, or a lineage field / column of one table."""
    notes: list[str] = Field(default_factory=list)
    """What qualifies run_std."""

    def figure_spec(self) -> dict[str, Any]:
        """The smallest gain detectable at ``POWER`` against n_tasks, from this eval's re-run noise.

        Two single runs differ by sqrt(2) x run_std over ``tasks_in_every_run`` tasks; read as
        independent task noise, a task's paired difference has sd sqrt(2 n) x run_std, and the
        detectable gain at n tasks is ``detectable_effect_sd(n, sd)`` (Miller 2024, eq. 9).
        """
        from whileai.charts import curve
        from whileai.defaults import CURVE_POINTS, MIN_HOLDOUT_TASKS, POWER
        from whileai.stats.power import detectable_effect_sd

        n_here = max(self.tasks_in_every_run, MIN_HOLDOUT_TASKS)
        sd = math.sqrt(2.0 * self.tasks_in_every_run) * self.run_std if math.isfinite(self.run_std) else math.nan
        xs = np.unique(np.linspace(MIN_HOLDOUT_TASKS, 4 * n_here, CURVE_POINTS).round().astype(int))
        ys = [detectable_effect_sd(int(n), sd) if math.isfinite(sd) and sd > 0 else None for n in xs]
        here = detectable_effect_sd(n_here, sd) if math.isfinite(sd) and sd > 0 else None
        return curve([float(x) for x in xs], ys, vline=float(self.tasks_in_every_run) or None,
                     points=([float(self.tasks_in_every_run)], [here]),
                     title=f"{self.metric}: run_std {self.run_std:.4f} over {self.n_runs} runs",
                     x_title="tasks", y_title=f"smallest gain detectable at {POWER:.0%} power", name="detectable gain")

    def render(self) -> str:
        """The 0.131-style block: run_std line, band line, per-run means, stability."""
        if self.n_runs < 2 or not math.isfinite(self.run_std):
            lines = [f"eval_variance {self.metric}: no run_std from {self.n_runs} run(s)"]
        else:
            lines = [
                f"eval_variance {self.metric}: run_std {self.run_std:.4f} over {self.n_runs} runs, mean {self.mean:.4f}",
                f"noise band {self.noise_band:.4f} (t at df {self.noise_band_df} times sqrt(2) times run_std): a delta "
                "inside it is the eval re-running, not a gain. Pass it to delta_report(run_std=, run_std_runs=)",
            ]
        if self.means:
            lines.append(" | ".join(f"{k} {v:.4f}" for k, v in self.means.items())
                         + f" ({self.tasks_in_every_run} tasks in every run)")
        if math.isfinite(self.run_std_points):
            lines.append(f"stability {self.stability} ({self.run_std_points:.2f} points)")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines + [f"! {w}" for w in self.warnings])


def noise_band(run_std: float, n_a: float = 1, n_b: float = 1, df: float | None = None, *,
               level: float = CI_LEVEL) -> float:
    """How far two eval means move apart from re-running alone: ``q x run_std x sqrt(1/n_a + 1/n_b)``.

    ``q`` is the two-sided normal quantile when ``df`` is None (a run_std read as exact) or the
    Student-t quantile at ``df`` degrees of freedom when run_std was estimated from ``df + 1``
    re-runs (docs/measure.md, "delta_report (and compare)": a floor from three re-runs is an estimate, and 1.96 lets
    about one pure-noise delta in five through). ``n_a`` and ``n_b`` are the eval runs averaged
    on each side.

    Args:
        run_std: The eval's re-run standard deviation (``eval_variance(...).run_std``), >= 0.
        n_a: Eval runs averaged on the first side.
        n_b: Eval runs averaged on the second side.
        df: Degrees of freedom of run_std (runs - 1), or None for the normal quantile.
        level: Level of the quantile (``CI_LEVEL``).

    Returns:
        The band half-width.

    Raises:
        ArgumentError: A negative or non-finite run_std, run counts under 1, df under 1.

    Examples:
        >>> round(noise_band(0.02), 5)
        0.05544
        >>> round(noise_band(0.02, 3, 3, df=4), 5)
        0.04534
    """
    if isinstance(run_std, bool) or not isinstance(run_std, (int, float)) or not math.isfinite(run_std) or run_std < 0:
        raise ArgumentError(f"run_std must be a finite number >= 0, got {run_std!r}. "
                            "Pass eval_variance(run_1, run_2, run_3).run_std.")
    for name, value in (("n_a", n_a), ("n_b", n_b)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1:
            raise ArgumentError(f"{name} must be the number of eval runs averaged on that side (>= 1), got {value!r}. "
                                f"Pass {name}=1 for a single run.")
    if df is not None and (isinstance(df, bool) or not isinstance(df, (int, float)) or not df >= 1):
        raise ArgumentError(f"df must be None or the re-runs behind run_std minus one (>= 1), got {df!r}. "
                            "Pass df=2 for a run_std from three re-runs.")
    level = check_level(level)
    return noise_band_width(float(run_std), n_a, n_b, df, level=level)


def run_means(values: pl.DataFrame, metrics: list[str]) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """Per-run means of each metric over the tasks every run has a value for.

    ``values`` has columns ``_run``, ``task_key`` and one per metric. Returns
    ``({metric: {run: mean}}, {metric: tasks in every run})``.
    """
    values = values.sort("_run", "task_key")  # one summation order, whatever order the group-by returned
    runs = values["_run"].unique(maintain_order=True).sort()
    n_runs = runs.len()
    out: dict[str, dict[str, float]] = {}
    common: dict[str, int] = {}
    for m in metrics:
        sub = values.select("_run", "task_key", m).filter(pl.col(m).is_not_null())
        keep = sub.group_by("task_key").agg(pl.col("_run").n_unique().alias("_n")).filter(pl.col("_n") == n_runs)
        common[m] = keep.height
        if keep.height:
            sub = sub.join(keep.select("task_key"), on="task_key", how="semi")
        means = sub.group_by("_run").agg(pl.col(m).mean()).sort("_run")
        out[m] = dict(zip(means["_run"].to_list(), means[m].to_list()))
    return out, common


def eval_variance(*runs: IntoRows, metric: str = PASS_AT_1, by: str | None = None, level: float = CI_LEVEL) -> EvalVarianceReport:
    """The eval's own re-run standard deviation over three or more evaluations of the same model.

    One evaluation is a draw, not a number: re-running the same eval on the same model moves it,
    and most post-training gains sit inside that spread (docs/measure.md, "eval_variance and noise_band";
    Lambert 2025, chapter Evaluation: 0.25 to 1.5 points between runs). Each run's metric is
    its mean over the tasks every run has (so the runs are compared on the same tasks);
    ``run_std`` is the standard deviation of those run means, and ``noise_band`` is
    t(df = runs - 1) x sqrt(2) x run_std, how far two single runs land apart by chance.

    Args:
        *runs: Several row sets, one per re-run; or one row set whose rows carry
            ``lineage.eval_run`` (what ``simulate(..., runs=3)`` stamps), else
            ``lineage.scoring_run_id``, else the column ``by``.
        metric: ``"pass_at_1"`` or a marker (``"marker:<name>"`` or the bare name).
        by: Column or lineage field that labels the re-runs in a single row set.
        level: Level of the band's quantile.

    Returns:
        An :class:`EvalVarianceReport`; pass ``run_std`` and ``n_runs`` to ``delta_report``
        (``run_std=report.run_std, run_std_runs=report.n_runs``) or the report itself as ``run_std=``.

    Raises:
        ArgumentError: No row sets, an unknown ``by``, or a metric no run measures.

    Examples:
        >>> runs = [[{"task_id": t, "reward": r} for t, r in zip("abcd", rs)]
        ...         for rs in ((1, 0, 1, 1), (1, 1, 1, 0), (0, 0, 1, 1))]
        >>> round(eval_variance(*runs).run_std, 4)
        0.1443
    """
    if not runs:
        raise ArgumentError("eval_variance needs at least one row set, got none. Pass the rows of three re-runs, "
                            "or one row set whose rows carry lineage.eval_run.")
    level = check_level(level)
    label = metric_label(metric)
    warnings: list[str] = []
    if any(is_ray_dataset(r) for r in runs):
        values, metrics, source = _variance_ray(runs, label=label, by=by, warnings=warnings)
        return eval_variance_from_values(values, metrics, label=label, level=level, source=source, warnings=warnings)
    frames = [clean_rewards(read_rows(r, extra=[by] if by else []), warnings) for r in runs]
    parts: list[pl.DataFrame] = []
    if len(frames) == 1:
        df = frames[0]
        expr, source = run_labels(df, by) if df.height else (None, "")
        metrics = _metrics([df], label)
        if expr is None:
            vals = task_values(df, metrics, maintain_order=False).with_columns(pl.lit("0").alias("_run")) if df.height else None
            if vals is not None:
                parts.append(vals)
            source = source or "one row set with no re-run label"
        else:
            parts.append(task_values(df.with_columns(expr.alias("_run")), metrics, keys=("_run", "task_key"), maintain_order=False))
    else:
        metrics = _metrics(frames, label)
        source = "separate row sets"
        for i, df in enumerate(frames, start=1):
            if df.height:
                parts.append(task_values(df, metrics, maintain_order=False).with_columns(pl.lit(f"run_{i}").alias("_run")))
    values = pl.concat([p.select("_run", "task_key", *metrics) for p in parts], how="vertical_relaxed") if parts else None
    return eval_variance_from_values(values, metrics, label=label, level=level, source=source, warnings=warnings)


def eval_variance_from_values(values: pl.DataFrame | None, metrics: list[str], *, label: str, level: float,
                              source: str, warnings: list[str]) -> EvalVarianceReport:
    """The :func:`eval_variance` report from per-(run, task) values (``_run``, ``task_key``, one column a metric).

    The kernel both engines share: the local path builds ``values`` with ``task_values``, the Ray
    path from partial sums merged by (run, task) (``whileai.measure._ray``).
    """
    report = EvalVarianceReport(metric=label if label == PASS_AT_1 else f"marker:{label}", level=level, run_source=source)
    if values is None or values.height == 0:
        report.warnings = warnings + ["no rows: nothing to measure. Pass the rows of three re-runs."]
        return report
    values = values.filter(pl.col("_run").is_not_null())
    by_metric, common = run_means(values, metrics)
    means = by_metric[label]
    report.n_runs = len(means)
    report.means = {str(k): float(v) for k, v in means.items() if v is not None}
    report.tasks_in_every_run = common[label]
    if report.means:
        report.mean = float(np.mean(list(report.means.values())))
    notes: list[str] = []
    if report.n_runs >= 2 and common[label] == 0:
        warnings.append("no task has a value in every run, so the runs measure different tasks; re-run the same task "
                        "set (simulate(tasks=base, runs=3)).")
    for m, mm in by_metric.items():
        run_vals = [v for v in mm.values() if v is not None]
        report.run_std_by_metric[m] = float(np.std(run_vals, ddof=1)) if len(run_vals) >= 2 else math.nan
    report.run_std = report.run_std_by_metric.get(label, math.nan)
    if report.n_runs < 2:
        warnings.append(f"{report.n_runs} run found, so there is no run_std. Run the eval {EVAL_RUNS} times "
                        "(simulate(tasks=base, runs=3)) and pass every run.")
    else:
        report.noise_band_df = report.n_runs - 1
        report.noise_band = float(t_quantile(level, report.noise_band_df)) * math.sqrt(2.0) * report.run_std
        report.run_std_points = 100.0 * report.run_std
        report.stability = _stability(report.run_std_points)
        if report.n_runs == 2:
            notes.append("2 runs: two is a difference, not a distribution; 3 or more re-runs give a standard "
                         "deviation worth reading (the band's t at df 1 is 12.7)")
    report.notes = notes
    report.warnings = warnings
    return report


def _metrics(frames: list[pl.DataFrame] | list[list[str]], label: str) -> list[str]:
    """pass_at_1 and the markers every run carries (frames, or each run's marker names); refuses ``label`` outside them."""
    names = [m if isinstance(m, list) else marker_names(m) for m in frames]
    shared = set(names[0]) if names else set()
    for more in names[1:]:
        shared &= set(more)
    if label != PASS_AT_1 and label not in shared:
        raise ArgumentError(f"metric must be measured in every run, got {label!r}. "
                            f"Measured in every run: {', '.join([PASS_AT_1, *sorted(shared)])}.")
    return [PASS_AT_1, *sorted(shared)]


def _stability(points: float) -> str:
    very, stable, noisy = STABILITY_POINTS
    if points < very:
        return "very_stable"
    if points <= stable:
        return "stable"
    if points <= noisy:
        return "noisy"
    return "high_variance"


def _variance_ray(runs: Sequence[Any], *, label: str, by: str | None,
                    warnings: list[str]) -> tuple[pl.DataFrame | None, list[str], str]:
    """``eval_variance``'s per-(run, task) values when a run is a Ray dataset; metrics; the run source."""
    from whileai.measure._ray import cells, nan_warning, per_task, run_source, values_of

    if len(runs) == 1:
        ds = runs[0]
        source = run_source(ds, by)
        c, markers = cells(ds, run_by=by, runs=True)
        nan_warning(c, warnings)
        metrics = _metrics([markers], label)
        if c.height == 0:
            return None, metrics, source
        if c["_run"].null_count() == c.height and by is None:
            vals = values_of(per_task(c, markers), metrics).with_columns(pl.lit("0").alias("_run"))
            return vals, metrics, "one row set with no re-run label"
        return values_of(per_task(c, markers, ("_run", "task_key")), metrics, ("_run", "task_key")), metrics, source
    parts: list[tuple[str, Any]] = []
    names: list[list[str]] = []
    for i, rows in enumerate(runs, start=1):
        if is_ray_dataset(rows):
            c, markers = cells(rows)
            nan_warning(c, warnings)
            parts.append((f"run_{i}", (c, markers)))
            names.append(markers)
        else:
            df = clean_rewards(read_rows(rows, extra=[by] if by else []), warnings)
            parts.append((f"run_{i}", df))
            names.append(marker_names(df))
    metrics = _metrics(names, label)
    frames = []
    for run, part in parts:
        if isinstance(part, pl.DataFrame):
            if part.height:
                frames.append(task_values(part, metrics, maintain_order=False).with_columns(pl.lit(run).alias("_run")))
        elif part[0].height:
            frames.append(values_of(per_task(part[0], part[1]), metrics).with_columns(pl.lit(run).alias("_run")))
    if not frames:
        return None, metrics, "separate row sets"
    return pl.concat([f.select("_run", "task_key", *metrics) for f in frames], how="vertical_relaxed"), metrics, \
        "separate row sets"
