"""Mean and interval over tasks for one metric (``metric_summary``) or every marker (``marker_summary``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import Field

from whileai._checks import check_int
from whileai.defaults import (
    BINARY_CI_METHOD,
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    CI_METHOD,
    DEFAULT_SEED,
    MIN_CI_TASKS,
    PASS_CI_METHOD,
)
from whileai.errors import ArgumentError
from whileai.measure._args import check_ci_method, check_level
from whileai.measure._format import nan_to_none
from whileai.measure._intervals import interval_over_tasks
from whileai.measure._metrics import (
    MARKER_PREFIX,
    PASS_AT_1,
    marker_names,
    metric_label,
    task_values,
)
from whileai.measure._passat import pass_at
from whileai.measure._rows import clean_rewards, read_rows
from whileai.report import Report
from whileai.stats.intervals import IntervalMethod
from whileai.stats.rng import check_rng
from whileai.stats.score import rate_score_interval
from whileai.table import IntoRows

__all__ = ["MarkerSummary", "MetricSummary", "marker_summary", "metric_summary"]


class MetricSummary(Report):
    """One metric's mean over tasks with its interval (whileai 0.131 ``metric_summary`` keys)."""

    metric: str = PASS_AT_1
    """``pass_at_1`` or ``marker:<name>``."""
    n_tasks: int = 0
    """Tasks with a value."""
    n_rows: int = 0
    """Rows with a value (applicable rows)."""
    n_rows_at_1: int = 0
    """Rows at 1.0."""
    n_rows_at_0: int = 0
    """Rows at 0.0."""
    mean: float = math.nan
    """Mean over tasks of the task's mean value."""
    ci95: tuple[float, float] | None = None
    """Interval on the mean at ``level``; None when degenerate or under three tasks."""
    level: float = CI_LEVEL
    """Confidence level."""
    ci_method: str = PASS_CI_METHOD
    """Interval method: the clustered score interval pass@1 uses (``score`` on 0/1 values,
    ``score_rates`` on partial values; ``whileai.stats.score.rate_score_interval``) on pass_at_1
    and on every marker in [0, 1]; ``t`` (Student-t over task means) on a marker outside [0, 1],
    or the method asked for."""
    degenerate: bool = False
    """Every applicable row has the same value: no interval, since the metric has not been shown to vary."""
    note: str = ""
    """What qualifies the number."""

    def render(self) -> str:
        """One line: name, mean, interval or the degenerate statement, counts."""
        return _line(self.metric, self) + "".join(f"\n! {w}" for w in self.warnings)


def _line(name: str, s: MetricSummary) -> str:
    if math.isnan(s.mean):
        return f"{name:<24} n/a  (no values)"
    if s.degenerate:
        return (f"{name:<24} {s.mean:.3f}  degenerate: all {s.n_rows} rows scored {s.mean:.2f}, no interval "
                f"({s.n_tasks} tasks)")
    ci = "[n/a]" if s.ci95 is None else f"[{s.ci95[0]:.3f}..{s.ci95[1]:.3f}]"
    return f"{name:<24} {s.mean:.3f} {ci}  ({s.n_tasks} tasks, {s.n_rows} rows)"


class MarkerSummary(Report):
    """Every marker's mean over tasks with its interval; ``report["name"]`` reads one marker's summary."""

    markers: dict[str, MetricSummary] = Field(default_factory=dict)
    """Per marker: its :class:`MetricSummary`."""
    degenerate: list[str] = Field(default_factory=list)
    """Markers with the same value on every applicable row."""

    def __getitem__(self, key: str) -> Any:
        if key in self.markers:
            return self.markers[key]
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        return key in self.markers or super().__contains__(key)

    def render(self) -> str:
        """One line per marker, then the warnings."""
        if not self.markers:
            return "marker_summary: no markers on these rows" + "".join(f"\n! {w}" for w in self.warnings)
        lines = [_line(name, s) for name, s in self.markers.items()]
        return "\n".join(lines + [f"! {w}" for w in self.warnings])


def _summaries(df: pl.DataFrame, names: list[str], *, level: float, ci_method: str, n_boot: int,
               rng: np.random.Generator) -> dict[str, MetricSummary]:
    out: dict[str, MetricSummary] = {}
    if not names:
        return out
    markers = [n for n in names if n != PASS_AT_1]
    rows_per_task = [pl.col("markers").struct.field(n).cast(pl.Float64).count().alias(f"{n}/count") for n in markers]
    vals = task_values(df, names, maintain_order=False, extra=rows_per_task)
    row_exprs = []
    for n in names:
        col = pl.col("reward") if n == PASS_AT_1 else pl.col("markers").struct.field(n)
        row_exprs += [col.count().alias(f"{n}/n"), (col == 1.0).sum().alias(f"{n}/1"), (col == 0.0).sum().alias(f"{n}/0"),
                      col.min().alias(f"{n}/lo"), col.max().alias(f"{n}/hi")]
    counts = df.select(row_exprs).row(0, named=True)
    for n in names:
        s = MetricSummary(metric=n if n == PASS_AT_1 else MARKER_PREFIX + n, level=level, ci_method=ci_method)
        v = vals[n].drop_nulls().to_numpy().astype(np.float64)
        s.n_tasks = int(v.size)
        s.n_rows = int(counts[f"{n}/n"])
        s.n_rows_at_1, s.n_rows_at_0 = int(counts[f"{n}/1"]), int(counts[f"{n}/0"])
        if v.size:
            s.mean = float(v.mean())
            if counts[f"{n}/lo"] == counts[f"{n}/hi"]:
                s.degenerate = True
                s.note = (f"all {s.n_rows} applicable rows scored {counts[f'{n}/lo']:g}; {n} has not been shown to be "
                          "able to come out any other way")
            else:
                notes: list[str] = []
                unit = 0.0 <= counts[f"{n}/lo"] and counts[f"{n}/hi"] <= 1.0
                method = ci_method
                if method == "score" and not unit:
                    notes.append(f"{n} takes values outside [0, 1], so its interval is the t interval on task means "
                                 "(the score interval reads a rate)")
                    method = CI_METHOD
                if method == "score":
                    have = vals[n].is_not_null().to_numpy()
                    rows = (vals["n_graded"] if n == PASS_AT_1 else vals[f"{n}/count"]).to_numpy()[have]
                    lo, hi, s.ci_method = _rate_interval(v, rows.astype(np.float64), level, n, notes)
                else:
                    lo, hi, s.ci_method = interval_over_tasks(v, method=method, level=level, n_boot=n_boot, seed=rng,
                                                              bounds=(0.0, 1.0) if unit else None, what=n, notes=notes,
                                                              binary_ci=BINARY_CI_METHOD)
                s.ci95 = nan_to_none((lo, hi))
                s.note = "; ".join(notes)
        out[n] = s
    return out


def _rate_interval(means: np.ndarray, rows: np.ndarray, level: float, what: str,
                   notes: list[str]) -> tuple[float, float, str]:
    """The clustered score interval pass@1 uses, on a marker's per-task means over its rows."""
    if means.size < MIN_CI_TASKS:
        notes.append(f"no interval on {what}: {means.size} task(s), and an interval needs {MIN_CI_TASKS}")
        return float("nan"), float("nan"), "score"
    return rate_score_interval(means * rows, rows, level=level)


def metric_summary(rows: IntoRows, /, metric: str = PASS_AT_1, *, level: float = CI_LEVEL,
                   ci_method: IntervalMethod | Literal["score"] | None = None,
                   n_boot: int = BOOTSTRAP_DRAWS, seed: int | np.random.Generator | None = DEFAULT_SEED) -> MetricSummary:
    """One metric's mean over tasks with an interval over tasks (docs/measure.md, "The interval").

    The metric is averaged within each task, then over tasks. On ``pass_at_1`` the interval is
    the one :func:`~whileai.measure.pass_at` gives pass@1 (the clustered score interval,
    ``PASS_CI_METHOD``, :mod:`whileai.stats.score`), so the two never disagree on the same rows;
    a marker in [0, 1] is a rate too and gets the same interval on its rows
    (:func:`whileai.stats.score.rate_score_interval`; Korn and Graubard 1998); a marker outside
    [0, 1] the Student-t interval on task means (``CI_METHOD``, Miller 2024, arXiv:2411.00640). A metric with the
    same value on every applicable row is degenerate: it gets no interval and a warning, since
    a phrase list that matches nothing looks exactly like a behaviour that never happened.

    Args:
        rows: Graded rollouts.
        metric: ``"pass_at_1"`` or a marker (``"marker:<name>"`` or the bare name).
        level: Confidence level.
        ci_method: ``"score"``, ``"t"``, ``"percentile"`` or ``"bca"``; None is ``PASS_CI_METHOD``.
        n_boot: Bootstrap draws for a bootstrap method.
        seed: Seed or Generator.

    Returns:
        A :class:`MetricSummary`.

    Raises:
        ArgumentError: A metric the rows do not carry, or an option outside its values.

    Examples:
        >>> rows = [{"task_id": t, "reward": r} for t, r in zip("abcdef", (1, 0, 1, 1, 0, 1))]
        >>> round(metric_summary(rows).mean, 3)
        0.667
    """
    level = check_level(level)
    name = metric_label(metric)
    method = PASS_CI_METHOD if ci_method is None else ci_method
    if method != "score":
        check_ci_method(method)
    check_int("n_boot", n_boot)
    rng = check_rng(seed)
    warnings: list[str] = []
    df = clean_rewards(read_rows(rows), warnings)
    if name != PASS_AT_1 and name not in marker_names(df):
        raise ArgumentError(f"metric must be pass_at_1 or a marker the rows carry, got {metric!r}. "
                            f"Markers here: {', '.join(marker_names(df)) or 'none'}.")
    if df.height == 0:
        return MetricSummary(metric=metric, level=level, ci_method=method, warnings=warnings + ["no rows: nothing to measure."])
    s = _summaries(df, [name], level=level, ci_method=CI_METHOD if method == "score" and name == PASS_AT_1
                   else method, n_boot=n_boot, rng=rng)[name]
    if method == "score" and name == PASS_AT_1 and not s.degenerate and s.n_tasks:
        p = pass_at(df, level=level, ci_method="score")
        s.ci95, s.ci_method = p.ci95, p.ci_method
    if s.degenerate:
        warnings.append(f"{name} is degenerate: {s.note}.")
    s.warnings = warnings
    return s


def marker_summary(rows: IntoRows, /, *, names: Sequence[str] | None = None, level: float = CI_LEVEL,
                   ci_method: IntervalMethod | Literal["score"] = PASS_CI_METHOD,
                   n_boot: int = BOOTSTRAP_DRAWS, seed: int | np.random.Generator | None = DEFAULT_SEED) -> MarkerSummary:
    """Every marker's mean over tasks with its interval; degenerate markers named in one warning.

    Markers live in ``row["markers"]`` (1.0 is the good outcome). Each is averaged within task
    over the rows that carry it, then over tasks, with the clustered score interval pass@1 uses
    (:func:`whileai.stats.score.rate_score_interval`: effective tasks, Korn and Graubard 1998;
    modified Wilson, Brown, Cai and DasGupta 2001) on its rows; a marker outside [0, 1] gets the
    Student-t interval on task means.
    A marker that came out the same on every row is degenerate: no interval, a line saying so
    next to the mean, and one warning naming every such marker (docs/measure.md, "metric_summary and marker_summary").

    Args:
        rows: Rows with markers.
        names: Only these markers (default every marker the rows carry).
        level: Confidence level.
        ci_method: ``"score"`` (``PASS_CI_METHOD``), ``"t"``, ``"percentile"`` or ``"bca"``.
        n_boot: Bootstrap draws for a bootstrap method.
        seed: Seed or Generator.

    Returns:
        A :class:`MarkerSummary`; ``report["no_hedging"]`` is that marker's :class:`MetricSummary`.

    Raises:
        ArgumentError: A name the rows do not carry.

    Examples:
        >>> rows = [{"task_id": t, "reward": 1, "markers": {"polite": 1.0, "brief": v}}
        ...         for t, v in zip("abcd", (1.0, 0.0, 1.0, 1.0))]
        >>> marker_summary(rows).degenerate
        ['polite']
    """
    level = check_level(level)
    if ci_method != "score":
        check_ci_method(ci_method)
    check_int("n_boot", n_boot)
    rng = check_rng(seed)
    warnings: list[str] = []
    df = clean_rewards(read_rows(rows), warnings)
    have = marker_names(df)
    if names is None:
        chosen = have
    else:
        chosen = [metric_label(n) for n in ([names] if isinstance(names, str) else list(names))]
        missing = [n for n in chosen if n not in have]
        if missing:
            raise ArgumentError(f"names must be markers the rows carry, got {missing!r}. Markers here: {', '.join(have) or 'none'}.")
    report = MarkerSummary()
    if df.height and chosen:
        report.markers = _summaries(df, list(chosen), level=level, ci_method=ci_method, n_boot=n_boot, rng=rng)
    report.degenerate = [n for n, s in report.markers.items() if s.degenerate]
    if report.degenerate:
        warnings.append(f"degenerate marker(s) {', '.join(report.degenerate)}: the same value on every applicable row, so "
                        "no interval; a phrase list that matches nothing looks exactly like a behaviour that never happened.")
    report.warnings = warnings
    return report
