"""Paired comparison of two runs on the tasks they share (``compare_runs``)."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import polars as pl

from whileai._checks import check_choice, check_int
from whileai.defaults import (
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    COMPARE_CI_METHOD,
    DEFAULT_SEED,
    MIN_CI_TASKS,
    MIN_PAIRED_TASKS,
    PERMUTATION_ALPHA_MARGIN,
    PERMUTATION_DRAWS,
)
from whileai.errors import ArgumentError
from whileai.measure._args import check_level
from whileai.measure._format import fmt_interval, fmt_signed, nan_to_none
from whileai.measure._metrics import (
    MARKER_PREFIX,
    PASS_AT_1,
    marker_names,
    metric_label,
    task_values,
)
from whileai.measure._rows import clean_rewards, read_rows
from whileai.measure._stream import stream_side
from whileai.report import Report
from whileai.stats.intervals import INTERVAL_METHODS, mean_interval, t_quantile
from whileai.stats.permutation import sign_flip_interval, sign_flip_test
from whileai.stats.rng import check_rng
from whileai.stats.score import paired_score_interval
from whileai.table import IntoRows, is_ray_dataset

__all__ = ["Comparison", "compare_runs"]

#: Interval methods on a paired gain: the sign-flip test's own interval (``COMPARE_CI_METHOD``), the
#: MOVER score interval, then the rest.
CompareMethod = Literal["sign_flip", "score", "t", "percentile", "bca"]
COMPARE_CI_METHODS: tuple[str, ...] = ("sign_flip", "score", *INTERVAL_METHODS)

Verdict = Literal["b_better", "a_better", "no_difference_detected", "insufficient_data"]


class Comparison(Report):
    """Two runs compared on one metric, paired by task (whileai 0.131 ``compare_runs`` keys)."""

    metric: str = PASS_AT_1
    """``pass_at_1`` or ``marker:<name>``."""
    paired: bool = False
    """True when the difference is over paired tasks; False for the unpaired fallback."""
    n_paired: int = 0
    """Tasks both runs share (by task_key) with a value on both sides."""
    n_only_a: int = 0
    """Tasks only the first run (before) has; dropped from a paired comparison."""
    n_only_b: int = 0
    """Tasks only the second run (after) has; dropped from a paired comparison."""
    paired_share: float = math.nan
    """Paired tasks over all tasks either run has: a verdict over a quarter of the eval reads as one."""
    n_used: int = 0
    """Tasks the difference is over (paired tasks, or every task in the unpaired fallback)."""
    mean_a: float = math.nan
    """Metric of the first run (before) over the tasks used."""
    mean_b: float = math.nan
    """Metric of the second run (after) over the tasks used."""
    delta: float = math.nan
    """mean_b - mean_a: the mean paired difference (after minus before)."""
    ci95: tuple[float, float] | None = None
    """Interval on delta at ``level``; None when undefined."""
    level: float = CI_LEVEL
    """Confidence level."""
    ci_method: str = COMPARE_CI_METHOD
    """Interval method used: ``sign_flip`` (``COMPARE_CI_METHOD``: the shifts the deciding sign-flip
    test does not reject, joined with the ``score`` interval away from zero, so it excludes zero
    exactly when the test rejects), ``score`` (the MOVER interval from each side's clustered score
    interval, Zou and Donner 2008), ``t`` (Student-t on paired differences, Miller 2024,
    section 4; also what ``score`` falls back to on values outside [0, 1]), ``percentile`` or ``bca``;
    ``welch`` on the unpaired fallback."""
    p_value: float = math.nan
    """Two-sided sign-flip permutation p-value (paired) or Welch t-test p-value (unpaired)."""
    p_method: str = "none"
    """``exact`` or ``monte_carlo`` sign flip, ``welch`` for the unpaired fallback, ``none``."""
    p_mc_error: float = 0.0
    """Monte Carlo standard error of ``p_value`` (0 when exact); the note says when it straddles alpha."""
    task_std: float = math.nan
    """Standard deviation of the per-task paired difference (the sizing input; NaN unpaired)."""
    verdict: Verdict = "insufficient_data"
    """``b_better`` / ``a_better`` when the test (``test``) rejects at ``1 - level``;
    ``no_difference_detected`` when it does not (not that the runs are equal); ``insufficient_data``
    when it cannot be computed."""
    test: Literal["sign_flip", "welch", "none"] = "none"
    """The one test behind ``verdict`` and ``p_value``: the exact sign-flip test on paired tasks (it
    holds its false-alarm rate at any task count), Welch's t-test on the unpaired fallback."""
    interval_agrees: bool = True
    """Whether ``ci95`` reads the same as the test (excludes zero exactly when the test rejects);
    when False, ``note`` says why and the verdict follows the test."""
    direction: Literal["up", "down", "none"] = "none"
    """Sign of a delta the test calls significant."""
    note: str = ""
    """What qualifies the comparison (fallback, dropped tasks)."""

    def render(self) -> str:
        """One line: means, delta, interval, p-value, verdict, tasks."""
        side = f"{self.n_paired} paired" if self.paired else f"{self.n_used} tasks, unpaired"
        line = (f"{self.metric}: {_f(self.mean_a)} -> {_f(self.mean_b)}  {fmt_signed(self.delta)} "
                f"{fmt_interval(self.ci95, signed=True)}  p={_p(self.p_value)}  {self.verdict} ({side})")
        lines = [line] + ([f"  {self.note}"] if self.note else [])
        return "\n".join(lines + [f"! {w}" for w in self.warnings])


def _f(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.3f}"


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def compare_runs(before: IntoRows, after: IntoRows, *, metric: str = PASS_AT_1, level: float = CI_LEVEL,
                 ci_method: CompareMethod = COMPARE_CI_METHOD,
                 n_boot: int = BOOTSTRAP_DRAWS, n_perm: int = PERMUTATION_DRAWS,
                 min_paired: int = MIN_PAIRED_TASKS, seed: int | np.random.Generator | None = DEFAULT_SEED) -> Comparison:
    """Compare two runs on the tasks they share: a paired interval and a sign-flip p-value.

    Rows are grouped into tasks by ``task_key``; each task's value is its mean reward (pass@1) or
    mean marker. Tasks both runs have are paired and the difference after - before is taken per
    task (Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640, section 4: paired
    differences remove the between-task variance). The interval on the mean difference is the
    MOVER interval (Zou and Donner 2008, Statistics in Medicine 27:1693; Newcombe 1998, Statistics
    in Medicine 17:2635, method 10) built from each side's score interval on its mean, the one
    ``pass_at`` reads for pass@1 (design effect floored at 1 / graded rollouts a task; on task
    values, without pass@1's monotone envelope), and the correlation of the paired task values (``COMPARE_CI_METHOD``; docs/measure.md, "compare_runs"):
    it keeps its width at 0 and 1 and when every task moved alike, where the Student-t interval on
    the paired differences (``ci_method="t"``) has none. Values outside [0, 1] (a marker on another
    scale) take the t interval, and the note says so; ``"percentile"`` or ``"bca"`` bootstraps the
    paired tasks. The p-value is a two-sided sign-flip
    permutation test, exact when it can be (Good 2005, ch. 3). One test decides: the verdict is
    the sign-flip test's at ``1 - level`` (it holds its false-alarm rate at any task count, where
    the t interval runs above it at 8 tasks), so the printed p always agrees with the verdict;
    when the interval reads otherwise, ``interval_agrees`` is False and the note says why. With fewer than ``min_paired``
    shared tasks, and fewer shared tasks than tasks on one side only, the comparison falls back to
    unpaired task means (Welch's interval and t-test) and the note says so; where most tasks are
    on both sides the paired test runs from ``MIN_CI_TASKS`` (3) shared tasks (it cannot reject
    under 6 at 0.05, and says so). Tasks on one side only are dropped from the paired comparison and
    counted (``n_only_a``, ``n_only_b``, ``paired_share``).

    Args:
        before: The first run's rows (``a``).
        after: The second run's rows (``b``).
        metric: ``"pass_at_1"`` or a marker, as ``"marker:<name>"`` or the bare name.
        level: Confidence level (``CI_LEVEL``).
        ci_method: ``"sign_flip"`` (default, the test's own interval), ``"score"``, ``"t"``, ``"percentile"`` or ``"bca"``.
        n_boot: Bootstrap draws for a bootstrap ``ci_method``.
        n_perm: Monte Carlo sign flips when the exact test is too large (``PERMUTATION_DRAWS``).
        min_paired: Fewest shared tasks for the paired path (``MIN_PAIRED_TASKS``).
        seed: Seed or Generator.

    Returns:
        A :class:`Comparison`; ``verdict`` is ``b_better``, ``a_better``,
        ``no_difference_detected`` (the test does not reject, not that the runs are equal) or
        ``insufficient_data``.

    Raises:
        ArgumentError: An option outside its allowed values, or a metric neither side measures.
        SchemaError: A reward outside [0, 1] or not a number.

    Examples:
        >>> a = [{"task_id": t, "reward": r} for t in "abcdef" for r in (0, 1)]
        >>> b = [{"task_id": t, "reward": 1} for t in "abcdef" for _ in (0, 1)]
        >>> r = compare_runs(a, b)
        >>> r.delta, r.verdict, r.p_value
        (0.5, 'b_better', 0.03125)
        >>> [round(x, 3) for x in r.ci95], r.ci_method
        ([0.024, 0.772], 'sign_flip')
    """
    if not isinstance(metric, str) or not metric:
        raise ArgumentError(f"metric must be 'pass_at_1' or a marker name, got {metric!r}. Pass metric='pass_at_1'.")
    level = check_level(level)
    check_choice("ci_method", ci_method, COMPARE_CI_METHODS)
    check_int("n_boot", n_boot)
    check_int("n_perm", n_perm)
    check_int("min_paired", min_paired, minimum=2)
    rng = check_rng(seed)
    warnings: list[str] = []
    label = metric_label(metric)
    # Each side is reduced to its per-task values before the next is read: one run's rows are held at a time.
    a_vals, a_names = _side(before, warnings, label)
    b_vals, b_names = _side(after, warnings, label)
    if a_vals is None or b_vals is None:
        have = set(a_names) & set(b_names)
        measured = ", ".join([PASS_AT_1, *sorted(have)])
        raise ArgumentError(f"metric must be measured on both runs, got {metric!r}. Measured on both: {measured}.")
    out = compare_values(a_vals, b_vals, metric=label if label == PASS_AT_1 else MARKER_PREFIX + label,
                         level=level, ci_method=ci_method, n_boot=n_boot, n_perm=n_perm, min_paired=min_paired, rng=rng)
    out.warnings = warnings + out.warnings
    return out


def _side(rows: Any, warnings: list[str], label: str) -> tuple[pl.DataFrame | None, list[str]]:
    """One run as (per-task values of ``label``, marker names): rows, a streamed Parquet file, or Ray's merged sums.

    The values are None when the run does not measure ``label`` (a marker it lacks). Rows
    compared on pass@1 are read without their markers: decoding them is a third of a JSONL
    read, and the marker names only check a marker metric. The rows read are dropped on
    return, so the second run is read while only the first one's per-task values are held.
    """
    if is_ray_dataset(rows):
        vals, names, found = _compare_side_ray(rows)
        warnings.extend(found)
        return (_pick(vals, label) if _measures(label, names) else None), names
    streamed = stream_side(rows, [label])
    if streamed is not None:
        warnings.extend(streamed.warnings)
        return (_pick(streamed.values, label) if _measures(label, streamed.markers) else None), streamed.markers
    df = clean_rewards(read_rows(rows, markers=label != PASS_AT_1), warnings)
    names = marker_names(df)
    return (_values(df, label) if _measures(label, names) else None), names


def _measures(label: str, markers: list[str]) -> bool:
    """True when a run with these markers measures ``label`` (pass@1 always is)."""
    return label == PASS_AT_1 or label in markers


_EMPTY = {"task_key": pl.String, "value": pl.Float64, "n_graded": pl.Int64}


def _pick(vals: pl.DataFrame, label: str) -> pl.DataFrame:
    """``task_key``, ``value`` of one metric and ``n_graded`` from per-task values over every metric.

    ``n_graded`` (graded rollouts a task) sets the score interval's design-effect floor.
    """
    if vals.height == 0:
        return pl.DataFrame(schema=_EMPTY)
    return (vals.select("task_key", pl.col(label).alias("value"), pl.col("n_graded").cast(pl.Int64))
            .filter(pl.col("value").is_not_null()))


def _values(df: pl.DataFrame, label: str) -> pl.DataFrame:
    if df.height == 0:
        return pl.DataFrame(schema=_EMPTY)
    return _pick(task_values(df, [label], maintain_order=False), label)


def aligned(a: pl.DataFrame, b: pl.DataFrame, columns: list[str], keys: list[str] | None = None) -> pl.DataFrame:
    """Both sides' per-task values on one row per task (full join, sorted by the keys).

    Columns ``<name>`` (before) and ``<name>_b`` (after), null where a side lacks the task. Sorted
    so the same rows give the same numbers whatever order the group-by returned.
    """
    on = keys or ["task_key"]
    left = a.select(*on, *columns)
    right = b.select(*on, *columns).rename({c: f"{c}_b" for c in columns})
    return left.join(right, on=on, how="full", coalesce=True).sort(on)


def compare_values(a: pl.DataFrame, b: pl.DataFrame, *, metric: str, level: float, ci_method: str, n_boot: int,
                   n_perm: int, min_paired: int, rng: np.random.Generator) -> Comparison:
    """The comparison on per-task values (``task_key``, ``value``, ``n_graded``) of each side."""
    both = aligned(a, b, ["value", "n_graded"])
    return compare_arrays(both["value"].to_numpy().astype(np.float64), both["value_b"].to_numpy().astype(np.float64),
                          metric=metric, level=level, ci_method=ci_method, n_boot=n_boot, n_perm=n_perm,
                          min_paired=min_paired, rng=rng, n_a=_counts(both["n_graded"]),
                          n_b=_counts(both["n_graded_b"]))


def _counts(col: pl.Series) -> np.ndarray:
    """Graded rollouts a task as floats (NaN where a side lacks the task)."""
    return col.cast(pl.Float64).to_numpy().astype(np.float64)


def compare_arrays(va_all: np.ndarray, vb_all: np.ndarray, *, metric: str, level: float, ci_method: str, n_boot: int,
                   n_perm: int, min_paired: int, rng: np.random.Generator, n_a: np.ndarray | None = None,
                   n_b: np.ndarray | None = None) -> Comparison:
    """The comparison on two aligned arrays of task values (NaN where a side lacks the task).

    ``n_a`` and ``n_b`` are the graded rollouts behind each value (the ``score`` interval's
    design-effect floor); None reads one rollout a task (floor 1, never narrower).
    """
    out = Comparison(metric=metric, level=level, ci_method=ci_method)
    has_a, has_b = ~np.isnan(va_all), ~np.isnan(vb_all)
    pair = has_a & has_b
    n_paired = int(pair.sum())
    out.n_paired = n_paired
    out.n_only_a = int((has_a & ~has_b).sum())
    out.n_only_b = int((has_b & ~has_a).sum())
    union = int((has_a | has_b).sum())
    out.paired_share = n_paired / union if union else math.nan
    notes: list[str] = []
    if out.n_only_a or out.n_only_b:
        notes.append(f"{out.n_only_a} task(s) only before and {out.n_only_b} only after were dropped from the pairing")
    # Fewer than min_paired shared tasks fall back to unpaired task means only where the shared
    # tasks are a minority: where most tasks are on both sides, the unpaired test would read those
    # pairs as independent draws (4 tasks that all gained read p = 2 / C(8, 4) = 0.029, or 0.008
    # with one more task on one side, while 5 paired read 0.0625), so the paired test runs from
    # MIN_CI_TASKS shared tasks and says when it cannot reject.
    mostly_paired = n_paired >= MIN_CI_TASKS and 2 * n_paired >= union
    if n_paired >= min_paired or mostly_paired:
        va, vb = va_all[pair], vb_all[pair]
        d = vb - va
        out.paired = True
        out.n_used = n_paired
        out.mean_a, out.mean_b = float(va.mean()), float(vb.mean())
        out.delta = float(d.mean())
        out.task_std = float(d.std(ddof=1))
        if n_paired >= MIN_CI_TASKS:
            na = np.ones(n_paired) if n_a is None else np.asarray(n_a, dtype=np.float64)[pair]
            nb = np.ones(n_paired) if n_b is None else np.asarray(n_b, dtype=np.float64)[pair]
        alpha = 1.0 - level
        test = sign_flip_test(d, n_perm=n_perm, seed=rng, alpha=alpha)
        out.p_value = 1.0 if test.method == "none" else test.p_value
        out.p_method = "exact" if test.method == "none" else test.method
        out.p_mc_error = test.mc_error
        out.test = "sign_flip"
        if test.straddles:
            notes.append(f"the Monte Carlo p-value {_p(test.p_value)} (error {test.mc_error:.4f} after {test.draws} "
                         f"draws) is within {PERMUTATION_ALPHA_MARGIN:g} errors of {alpha:g}: the verdict could go "
                         "either way; pair more tasks")
        if n_paired >= MIN_CI_TASKS:
            na = np.ones(n_paired) if n_a is None else np.asarray(n_a, dtype=np.float64)[pair]
            nb = np.ones(n_paired) if n_b is None else np.asarray(n_b, dtype=np.float64)[pair]
            ci, out.ci_method = _paired_interval(va, vb, na, nb, method=ci_method, level=level, n_boot=n_boot,
                                                 rng=rng, metric=metric, notes=notes, p_at_zero=out.p_value,
                                                 n_perm=n_perm)
            out.ci95 = nan_to_none(ci)
        if test.n_nonzero and 2.0 ** (1 - test.n_nonzero) >= alpha:
            notes.append(f"{test.n_nonzero} task(s) differ, so the exact sign-flip test cannot reach p < {alpha:g} "
                         f"(its smallest p is {2.0 ** (1 - test.n_nonzero):.3g}); pair more tasks")
    else:
        va, vb = va_all[has_a], vb_all[has_b]
        notes.insert(0, f"fewer than {min_paired} shared tasks ({n_paired}); unpaired task means, weaker test")
        out.n_used = int(va.size + vb.size)
        if va.size:
            out.mean_a = float(va.mean())
        if vb.size:
            out.mean_b = float(vb.mean())
        if va.size >= MIN_CI_TASKS and vb.size >= MIN_CI_TASKS:
            out.delta = out.mean_b - out.mean_a
            ci, p = _welch(va, vb, level)
            out.ci95, out.p_value, out.p_method, out.test = nan_to_none(ci), p, "welch", "welch"
            out.ci_method = "welch"
        elif va.size and vb.size:
            out.delta = out.mean_b - out.mean_a
            notes.append(f"an unpaired interval needs {MIN_CI_TASKS} tasks a side")
    out.verdict, out.direction = _verdict(out, level)
    _agreement(out, level, notes)
    if out.verdict == "insufficient_data" and not (has_a.any() and has_b.any()):
        out.warnings.append("one side has no graded task for this metric: nothing to compare. Grade both runs.")
    out.note = "; ".join(notes)
    return out


def _paired_interval(va: np.ndarray, vb: np.ndarray, na: np.ndarray, nb: np.ndarray, *, method: str, level: float,
                     n_boot: int, rng: np.random.Generator, metric: str, notes: list[str],
                     p_at_zero: float = math.nan, n_perm: int = PERMUTATION_DRAWS) -> tuple[tuple[float, float], str]:
    """The interval on mean(vb - va) over paired tasks, and the method used.

    ``sign_flip``: the shifts the sign-flip test does not reject
    (:func:`whileai.stats.permutation.sign_flip_interval`, moved onto ``p_at_zero``), joined with
    the ``score`` interval (the ``t`` interval off [0, 1]) on each end, except on the side of zero
    where joining would cross zero: the union of two 95% sets covers at least as often as either,
    the score interval keeps width where every task moved alike (where the test's own set has
    none), and zero is inside exactly when the test does not reject.
    ``score``: the MOVER interval of :func:`whileai.stats.score.paired_score_interval` (each side's
    clustered score interval, floor 1 / mean graded rollouts a task) on values in [0, 1]; on
    values outside it (a marker on another scale), the t interval, with a note.
    """
    if method == "sign_flip":
        unit = float(min(va.min(), vb.min())) >= 0.0 and float(max(va.max(), vb.max())) <= 1.0
        bounds = (-1.0, 1.0) if unit else (-math.inf, math.inf)
        own = sign_flip_interval(vb - va, level=level, p_at_zero=p_at_zero, n_perm=n_perm, seed=rng, bounds=bounds)
        (slo, shi), _ = _paired_interval(va, vb, na, nb, method="score", level=level, n_boot=n_boot, rng=rng,
                                         metric=metric, notes=notes)
        rejects = math.isfinite(p_at_zero) and p_at_zero < 1.0 - level
        lo, hi = join_intervals((own.lo, own.hi), (slo, shi), rejects=rejects)
        if own.method == "monte_carlo":
            notes.append(f"the sign-flip interval's ends are from {own.draws} Monte Carlo sign patterns")
        return (lo, hi), "sign_flip"
    if method == "score":
        if float(min(va.min(), vb.min())) >= 0.0 and float(max(va.max(), vb.max())) <= 1.0:
            slo_, shi_ = paired_score_interval(va, vb, rollouts_before=np.nan_to_num(na),
                                               rollouts_after=np.nan_to_num(nb), level=level)
            return (float(slo_), float(shi_)), "score"
        notes.append("task values outside [0, 1], so the interval is the t interval on the paired differences "
                     "(the score interval reads values in [0, 1])")
        method = "t"
    limits = (-1.0, 1.0) if metric == PASS_AT_1 else None
    return mean_interval(vb - va, method=method, level=level, n_boot=n_boot, seed=rng, bounds=limits), method  # type: ignore[arg-type]


def join_intervals(test: tuple[float, float], other: tuple[float, float], *, rejects: bool) -> tuple[float, float]:
    """The test's own interval widened to ``other`` on each end, except across zero where the test rejects.

    The union of two 95% confidence sets covers at least as often as either; keeping the test's end
    on the side of zero where the test rejects keeps "excludes zero" and "significant" one decision
    (docs/measure.md, "compare_runs").
    """
    lo, hi = test
    if math.isfinite(other[0]) and not (rejects and test[0] > 0.0 and other[0] <= 0.0):
        lo = min(lo, other[0])
    if math.isfinite(other[1]) and not (rejects and test[1] < 0.0 and other[1] >= 0.0):
        hi = max(hi, other[1])
    return lo, hi


def _welch(a: np.ndarray, b: np.ndarray, level: float) -> tuple[tuple[float, float], float]:
    """Welch's interval on mean(b) - mean(a) and its two-sided t-test p-value.

    When neither side varies the t statistic is infinite and says nothing of the sample sizes;
    the p-value is then the exact two-sided permutation test's (Fisher 1935): of the
    C(n_a + n_b, n_a) ways to split the values into sides of these sizes, only the observed split
    (and its mirror when the sides are the same size) is as far apart, so p = (1 or 2) / C.
    """
    from scipy.special import stdtr

    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    delta = float(b.mean() - a.mean())
    if se == 0.0:
        if delta == 0.0:
            return (delta, delta), 1.0
        return (delta, delta), (2.0 if a.size == b.size else 1.0) / math.comb(a.size + b.size, a.size)
    df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    q = float(t_quantile(level, df))
    p = float(2.0 * stdtr(df, -abs(delta) / se))
    return (max(-1.0, delta - q * se), min(1.0, delta + q * se)), p


def _verdict(out: Comparison, level: float) -> tuple[Verdict, Literal["up", "down", "none"]]:
    """One test decides: significant when its p is under 1 - level, in the direction of the delta."""
    if out.test == "none" or not math.isfinite(out.p_value) or not math.isfinite(out.delta):
        return "insufficient_data", "none"
    if out.p_value < 1.0 - level and out.delta != 0.0:
        return ("b_better", "up") if out.delta > 0 else ("a_better", "down")
    return "no_difference_detected", "none"


def _agreement(out: Comparison, level: float, notes: list[str]) -> None:
    """Say so when the printed interval and the deciding test read differently."""
    if out.ci95 is None or out.verdict == "insufficient_data":
        return
    excludes = out.ci95[0] > 0.0 or out.ci95[1] < 0.0
    rejects = out.verdict in ("b_better", "a_better")
    out.interval_agrees = excludes == rejects
    if out.interval_agrees:
        return
    alpha = 1.0 - level
    if excludes:
        notes.append(f"the {out.ci_method} interval excludes zero but the exact sign-flip test does not reject "
                     f"(p={_p(out.p_value)} >= {alpha:g}); the verdict follows the test, which holds its false-alarm "
                     "rate at any task count where the interval runs above it at few tasks")
    else:
        notes.append(f"the sign-flip test rejects (p={_p(out.p_value)} < {alpha:g}) but the {out.ci_method} interval "
                     "covers zero; the verdict follows the test (the interval is the estimate's precision, the test "
                     "the decision)")


def _compare_side_ray(ds: Any) -> tuple[pl.DataFrame, list[str], list[str]]:
    """One ``compare_runs`` side: per-task values of pass_at_1 and every marker, marker names, warnings."""
    from whileai.measure._ray import cells, nan_warning, per_task, values_of

    c, markers = cells(ds)
    warnings: list[str] = []
    nan_warning(c, warnings)
    return values_of(per_task(c, markers), [PASS_AT_1, *markers]), markers, warnings
