"""How many paired tasks a holdout needs (``holdout_size``) and what a size detects (``detectable_effect``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import Field

from whileai._checks import check_int
from whileai.defaults import (
    ALPHA,
    BASE_PASS_RATE,
    BOOTSTRAP_DRAWS,
    CEILING_PASS_RATE,
    CI_LEVEL,
    DEFAULT_SEED,
    DIFFICULTY_BAND,
    HOLDOUT_K,
    MIN_HOLDOUT_TASKS,
    MIN_PAIRED_TASKS,
    POWER,
    SIGN_FLIP_POWER_REPS,
)
from whileai.errors import ArgumentError
from whileai.measure._args import check_level, check_probability
from whileai.measure._metrics import PASS_AT_1, task_values
from whileai.measure._rows import clean_rewards, read_rows
from whileai.measure._stream import stream_side
from whileai.report import ChartedReport
from whileai.stats.bootstrap import bootstrap_moments
from whileai.stats.power import (
    binomial_paired_var,
    concentrated_paired_var,
    noncentral_t_sf,
    sign_flip_tasks_needed,
    z_sum,
)
from whileai.stats.rng import check_rng
from whileai.table import IntoRows

__all__ = ["HoldoutSizeReport", "detectable_effect", "holdout_size"]


class HoldoutSizeReport(ChartedReport):
    """Paired tasks a holdout needs to show a gain at the asked power (whileai 0.131 keys)."""

    n_tasks: int = 0
    """Paired tasks needed."""
    effect: float = math.nan
    """The gain in pass rate to prove (0.05 = 5 points)."""
    base: float = BASE_PASS_RATE
    """The before pass rate the answer assumes (given, measured, or BASE_PASS_RATE when saturated)."""
    k: int = HOLDOUT_K
    """Rollouts per task a side."""
    power: float = POWER
    """Chance of detecting the gain when it is real."""
    alpha: float = ALPHA
    """Two-sided test size."""
    task_std: float = math.nan
    """Standard deviation of a task's paired difference behind the answer."""
    sd_source: Literal["model", "rows", "given"] = "model"
    """model (binomial), rows (measured off before/after), or given (task_std=)."""
    half_width: float = math.nan
    """Half-width of the interval on the delta at that many tasks."""
    n_tasks_t_test: int | None = None
    """The paired t test's answer on the model path (``n_tasks`` is the sign-flip test's, never fewer)."""
    n_tasks_concentrated: int | None = None
    """Tasks needed when the gain lands on the fewest tasks (they reach 1.0); the model path only.
    It applies when the change targets one failure (a fix for the tasks that fail one way): those
    tasks move and the rest tie, so the paired sd is the spread of the gain, not rollout noise, and
    ``n_tasks`` would give it 0.54 to 0.78 power. Use it when you cannot say the gain is spread."""
    base_spread: float | None = None
    """Standard deviation of the true task pass rates, estimated from the before rows."""
    spread_ratio: float | None = None
    """1 / (1 - Var(p_i) / (p (1 - p))): how many times the tasks pairing needs the binomial model asks for."""
    n_paired: int | None = None
    """Paired tasks the measured sd came from."""
    saturated: bool = False
    """The measured base sits at the ceiling (or the paired sd is 0): the answer uses BASE_PASS_RATE."""
    n_tasks_low: int | None = None
    """Low end of the range on n_tasks (bootstrap over the paired tasks)."""
    n_tasks_high: int | None = None
    """High end of the range on n_tasks."""
    n_tasks_range_method: str | None = None
    """How the range was computed."""
    notes: list[str] = Field(default_factory=list)
    """The assumptions the answer rests on."""

    def figure_spec(self) -> dict[str, Any]:
        """The power to detect ``effect`` against n_tasks, the answer marked.

        The paired t test's power (:func:`paired_t_power`), 0 under the tasks at which the exact
        sign-flip test can reject at all: the rule ``holdout_size`` answers by.
        """
        from whileai.charts import curve
        from whileai.defaults import CURVE_POINTS, MIN_HOLDOUT_TASKS

        top = max(2 * self.n_tasks, 4 * MIN_HOLDOUT_TASKS)
        xs = np.unique(np.linspace(MIN_HOLDOUT_TASKS, top, CURVE_POINTS).round().astype(int))
        ok = math.isfinite(self.task_std) and self.task_std > 0
        floor = min_sign_flip_tasks(self.alpha)
        power = paired_t_power(self.effect, self.task_std if ok else 1.0, xs, alpha=self.alpha)
        ys = [(float(p) if n >= floor else 0.0) if ok else None for n, p in zip(xs, power)]
        return curve([float(x) for x in xs], ys, hline=self.power, vline=float(self.n_tasks) or None,
                     y_range=(0.0, 1.0), name="power",
                     title=f"{self.n_tasks} paired tasks for a {self.effect:+.3f} gain at k={self.k} ({self.sd_source} sd)",
                     x_title="paired tasks", y_title=f"power (alpha {self.alpha:.2f})")

    def render(self) -> str:
        """Three to five lines: the answer, the sd behind it, the concentrated case, notes."""
        lines = [f"holdout {self.n_tasks} paired tasks for a {self.effect:+.3f} gain at k={self.k} "
                 f"(base {self.base:.2f}, power {self.power:.2f}, alpha {self.alpha:.2f})"]
        extra = f", {self.n_paired} paired tasks" if self.n_paired else ""
        rng = (f", range {self.n_tasks_low}-{self.n_tasks_high} tasks ({self.n_tasks_range_method})"
               if self.n_tasks_low is not None else "")
        lines.append(f"task_std {self.task_std:.4f} ({self.sd_source}{extra}), half-width {self.half_width:.4f}{rng}")
        if self.n_tasks_concentrated is not None:
            lines.append(f"if the gain lands on only the tasks it touches: {self.n_tasks_concentrated} tasks")
        if self.spread_ratio is not None and self.base_spread is not None:
            lines.append(f"task spread {self.base_spread:.3f} around {self.base:.2f}: the model asks for "
                         f"{self.spread_ratio:.2f}x the tasks pairing needs")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines + [f"! {w}" for w in self.warnings])


def _check_effect(effect: Any) -> float:
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not 0.0 < float(effect) < 1.0:
        raise ArgumentError(f"effect must be the gain in pass rate to prove, between 0 and 1, got {effect!r}. "
                            "Pass effect=0.05 for 5 points.")
    return float(effect)


def _check_base(base: Any) -> float:
    """A before pass rate in [0, 1): at exactly 1 no gain is left and the binomial variance is 0."""
    if not isinstance(base, bool) and isinstance(base, (int, float)) and float(base) == 1.0:
        raise ArgumentError(f"base must be below 1, got {base!r}: at a pass rate of 1 there is no gain left to prove "
                            "and the binomial variance is 0. Pass the before pass rate you expect; harder situations "
                            f"put it inside the {DIFFICULTY_BAND[0]:.0%} to {DIFFICULTY_BAND[1]:.0%} difficulty band.")
    return check_probability("base", base, open_low=False)


def min_sign_flip_tasks(alpha: float) -> int:
    """The fewest paired tasks at which ``delta_report``'s exact sign-flip test can reject at ``alpha``.

    With n tasks that differ, the two-sided sign-flip p-value is at least ``2 / 2^n`` (every
    difference positive, or every one negative; Fisher 1935, The Design of Experiments, section 21),
    and the verdict needs ``p < alpha``; under ``MIN_PAIRED_TASKS`` shared tasks the comparison is
    not paired at all. 6 at alpha 0.05.

    Examples:
        >>> min_sign_flip_tasks(0.05), min_sign_flip_tasks(0.01)
        (6, 8)
    """
    n = max(MIN_PAIRED_TASKS, MIN_HOLDOUT_TASKS)
    while 2.0 ** (1 - n) >= alpha:
        n += 1
    return n


def paired_t_power(effect: float, sd: Any, n_tasks: Any, *, alpha: float = ALPHA) -> np.ndarray:
    """Power of the two-sided paired t test to detect ``effect``, from the noncentral t distribution.

    ``P(|T| > t_{1-alpha/2, n-1})`` with T noncentral t at n - 1 degrees of freedom and
    noncentrality ``effect sqrt(n) / sd`` (Cohen 1988, Statistical Power Analysis, section 2.3;
    ``whileai.stats.power.noncentral_t_sf``). 1 where sd is 0, NaN under 2 tasks. Broadcasts over ``sd`` and ``n_tasks``.

    Examples:
        >>> round(float(paired_t_power(0.3, 0.35, 13)), 3)
        0.81
    """
    from scipy.special import stdtrit

    n = np.asarray(n_tasks, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    n, sd = np.broadcast_arrays(n, sd)
    ok = (n >= 2) & (sd > 0)
    df = np.where(ok, n - 1.0, 1.0)
    nc = np.where(ok, effect * np.sqrt(np.where(ok, n, 1.0)) / np.where(ok, sd, 1.0), 0.0)
    q = stdtrit(df, 1.0 - alpha / 2.0)  # scipy.stats.t.ppf's own function
    power = noncentral_t_sf(q, df, nc) + noncentral_t_sf(q, df, -nc)  # the far tail as sf at -nc
    return np.where(n < 2, np.nan, np.where(sd > 0, power, 1.0))


def tasks_needed(effect: float, sd: Any, *, power: float = POWER, alpha: float = ALPHA) -> np.ndarray:
    """Paired tasks needed to detect ``effect`` at ``power``: the t test's, where the sign-flip test can decide.

    The smallest n at which :func:`paired_t_power` reaches ``power`` and the exact sign-flip test
    can reach ``alpha`` at all (:func:`min_sign_flip_tasks`), found from Miller's normal answer
    ``ceil((z_{1-alpha/2} + z_power)^2 sd^2 / effect^2)`` (Miller 2024, arXiv:2411.00640,
    equation 9) by stepping. The t correction adds about two tasks at large n; at small n the
    normal answer asks for too few. Broadcasts over ``sd``.

    Examples:
        >>> int(tasks_needed(0.3, 0.35)), int(tasks_needed(0.5, 0.2))
        (13, 6)
    """
    floor = min_sign_flip_tasks(alpha)
    sd = np.asarray(sd, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        normal = np.ceil((z_sum(power, alpha) * sd / effect) ** 2 - 1e-9)
    # past 2**52 a float64 count no longer steps by one (n + 1 == n): an effect that small next to
    # its sd (floating-point noise in a mean difference) keeps the normal answer, capped to int64
    n = np.minimum(np.where(sd > 0, np.maximum(normal, floor), floor), float(2**62))
    steppable = n < 2.0**52
    short = steppable & (paired_t_power(effect, sd, n, alpha=alpha) < power)
    while short.any():
        n = n + short
        short = steppable & (paired_t_power(effect, sd, n, alpha=alpha) < power)
    spare = steppable & (n > floor) & (paired_t_power(effect, sd, n - 1, alpha=alpha) >= power)
    while spare.any():
        n = n - spare
        spare = steppable & (n > floor) & (paired_t_power(effect, sd, n - 1, alpha=alpha) >= power)
    return n.astype(np.int64)


def detectable_gain(n_tasks: int, sd_of: Callable[[float], float], *, top: float | None = None, power: float = POWER,
                    alpha: float = ALPHA) -> float:
    """The smallest gain that ``n_tasks`` paired tasks detect at ``power``: :func:`tasks_needed` inverted.

    ``sd_of(gain)`` is the paired sd at that gain (a constant, or the binomial model's, whose
    gain cannot pass ``top``). The t test's power grows with the gain in both cases (for the
    binomial model ``gain / sd(gain)`` increases on (0, 1 - base]), so bisection finds the edge to
    1e-12; the answer is the upper end, where the power is at least ``power``, so
    ``tasks_needed`` of it gives back ``n_tasks``. NaN under :func:`min_sign_flip_tasks` tasks, or
    when even ``top`` is not detectable.

    Examples:
        >>> round(detectable_gain(13, lambda gain: 0.35), 4)
        0.2963
    """
    if n_tasks < min_sign_flip_tasks(alpha):
        return float("nan")

    def reaches(gain: float) -> bool:
        return bool(paired_t_power(gain, sd_of(gain), n_tasks, alpha=alpha) >= power)

    if top is None:  # a constant sd: double until detectable (the noncentrality grows with the gain)
        top = 1.0
        while not reaches(top):
            top *= 2.0
    elif not reaches(top):
        return float("nan")
    low, high = 0.0, top
    while high - low > 1e-12 * max(1.0, high):
        mid = 0.5 * (low + high)
        if reaches(mid):
            high = mid
        else:
            low = mid
    return high


def holdout_size(effect: float, *, base: float = BASE_PASS_RATE, k: int | None = None, power: float = POWER,
                 alpha: float = ALPHA, before: IntoRows | None = None, after: IntoRows | None = None, task_std: float | None = None,
                 ceiling_pass_rate: float = CEILING_PASS_RATE, n_boot: int = BOOTSTRAP_DRAWS,
                 level: float = CI_LEVEL, seed: int | np.random.Generator | None = DEFAULT_SEED) -> HoldoutSizeReport:
    """Paired tasks a holdout needs to prove a gain of ``effect`` at ``power`` (paired t power, Miller 2024 eq. 9).

    The smallest n at which the two-sided paired t test reaches ``power`` by the noncentral t
    distribution (:func:`paired_t_power`) and the exact sign-flip test that decides
    ``delta_report`` can reach ``alpha`` at all (``2 / 2^n < alpha``: 6 tasks at 0.05), stepped
    up from ``n = (z_{1-alpha/2} + z_power)^2 sd^2 / effect^2`` (Miller 2024, arXiv:2411.00640,
    equation 9), which it matches at large n up to about two tasks. sd is the per-task paired
    difference's standard deviation, from one of three sources (docs/measure.md, "holdout_size and
    detectable_effect"):

    * model (default): binomial, k rollouts a side, the gain spread evenly across tasks and the
      arms independent; sd^2 = (p(1-p) + q(1-q)) / k. It also returns ``n_tasks_concentrated``,
      the answer when the gain lands on the fewest tasks (they go to 1.0), where most tasks tie
      and the model under-sizes by several times. ``before=`` alone measures the base and the
      spread of task difficulty, and the ratio by which the model over-asks for such tasks.
    * rows (``before=``, ``after=``): the paired sd measured off a previous eval of both arms on
      the same tasks, with the covariance pairing buys in it, and a bootstrap range.
    * given (``task_std=``): the number read off a delta report,
      ``(hi - lo) * sqrt(n_paired_tasks) / 3.92`` from its target_ci95.

    A ``base`` you pass is used as given (only a base of 1, where no gain is left, is refused). A
    base measured off ``before=`` at or above ``ceiling_pass_rate``, or a paired sd of 0, says
    the eval is saturated, not what a holdout will show: the answer then uses BASE_PASS_RATE,
    ``saturated`` is True and a warning names the fix.

    Args:
        effect: The gain in pass rate to prove (0.05 = 5 points).
        base: The before pass rate for the model (``BASE_PASS_RATE``).
        k: Rollouts per task a side (default: the before rows' k, else ``HOLDOUT_K``).
        power: Power (``POWER``).
        alpha: Two-sided test size (``ALPHA``).
        before: Rows of a previous before arm (for the measured paths).
        after: Rows of the matching after arm on the same tasks.
        task_std: A per-task paired sd you already know.
        ceiling_pass_rate: A base measured off ``before=`` at or above this is saturated
            (``CEILING_PASS_RATE``); a ``base`` you pass is never replaced.
        n_boot: Bootstrap draws for the range on the rows path.
        level: Level of that range.
        seed: Seed or Generator.

    Returns:
        A :class:`HoldoutSizeReport`.

    Raises:
        ArgumentError: An effect outside (0, 1), a base of 1, base + effect above 1, ``after`` without ``before``.

    Examples:
        >>> holdout_size(0.05).n_tasks
        383
        >>> holdout_size(0.05).n_tasks_concentrated
        411
    """
    effect = _check_effect(effect)
    base = _check_base(base)
    check_int("k", k, minimum=1, allow_none=True)
    power = check_probability("power", power)
    alpha = check_probability("alpha", alpha)
    ceiling_pass_rate = check_probability("ceiling_pass_rate", ceiling_pass_rate, open_high=False)
    check_int("n_boot", n_boot)
    level = check_level(level)
    if task_std is not None and (isinstance(task_std, bool) or not isinstance(task_std, (int, float))
                                 or not math.isfinite(task_std) or task_std < 0):
        raise ArgumentError(f"task_std must be a number >= 0, got {task_std!r}. "
                            "Read it off a delta report: (hi - lo) * sqrt(n_paired_tasks) / 3.92.")
    if after is not None and before is None:
        raise ArgumentError("after must come with before, got after= alone. Pass before= and after= (the two arms of a "
                            "previous eval on the same tasks), or before= alone for the spread.")
    rng = check_rng(seed)
    warnings: list[str] = []
    notes: list[str] = []
    report = HoldoutSizeReport(effect=effect, base=base, k=k or HOLDOUT_K, power=power, alpha=alpha)

    if task_std is not None:
        report.sd_source = "given"
        if task_std > 0:
            report.task_std = float(task_std)
            _finish(report, float(task_std))
            notes.append("sd given: the paired difference's spread you measured; the answer is only as good as it.")
            report.notes, report.warnings = notes, warnings
            return report
        _saturate(report, "the given task_std is 0, which would size any holdout at the floor: a spread nobody "
                  "measured, not evidence that tasks agree", warnings)
    elif before is not None:
        a_vals = _pass_rates(before, warnings)
        if a_vals is None or a_vals.height == 0:
            raise ArgumentError("before must hold graded rows, got none with a reward. Grade the previous eval first.")
        if k is None:
            report.k = int(a_vals["n_graded"].max())  # type: ignore[arg-type]
        if after is not None:
            b_vals = _pass_rates(after, warnings)
            if b_vals is None or b_vals.height == 0:
                raise ArgumentError("after must hold graded rows, got none with a reward. Grade the previous eval first.")
            joined = a_vals.join(b_vals, on="task_key", suffix="_b").sort("task_key")
            report.n_paired = joined.height
            if joined.height < 3:
                raise ArgumentError(f"before and after must share at least 3 graded tasks to measure a paired sd, got "
                                    f"{joined.height}. Size with the model (holdout_size(effect, base=...)) instead.")
            d = (joined[f"{PASS_AT_1}_b"] - joined[PASS_AT_1]).to_numpy().astype(np.float64)
            measured_base = float(joined[PASS_AT_1].mean())  # type: ignore[arg-type]
            sd = float(d.std(ddof=1))
            report.sd_source = "rows"
            report.base = measured_base
            if measured_base >= ceiling_pass_rate or sd == 0.0:
                why = (f"the measured base {measured_base:.2f} is at or above the ceiling {ceiling_pass_rate:.2f}: the "
                       "before arm passes nearly every task, so most paired differences tie and the sd measured off "
                       "them understates what a holdout inside the difficulty band will show"
                       if measured_base >= ceiling_pass_rate else
                       "the measured paired sd is 0: every task tied, which would size any holdout at the floor and "
                       "says the eval is saturated, not that tasks agree")
                _saturate(report, why, warnings)
            else:
                report.task_std = sd
                _finish(report, sd)
                _range(report, d, n_boot=n_boot, level=level, rng=rng)
                notes.append(f"sd measured off {joined.height} paired tasks of a previous eval: it carries the covariance "
                             "pairing buys, and tasks that differ in difficulty.")
            report.notes, report.warnings = notes, warnings
            return report
        # before alone: base and spread measured, answer from the model
        rates = a_vals[PASS_AT_1].to_numpy().astype(np.float64)
        n = a_vals["n_graded"].to_numpy().astype(np.float64)
        report.base = float(rates.mean())
        if rates.size >= 2:
            within = np.where(n > 1, rates * (1.0 - rates) / np.maximum(n - 1.0, 1.0), 0.0)
            var_p = max(0.0, float(rates.var(ddof=1)) - float(within.mean()))
            report.base_spread = math.sqrt(var_p)
            pq = report.base * (1.0 - report.base)
            if pq > 0 and var_p < pq:
                report.spread_ratio = 1.0 / (1.0 - var_p / pq)
        if report.base >= ceiling_pass_rate:
            _saturate(report, f"the measured base {report.base:.2f} is at or above the ceiling {ceiling_pass_rate:.2f}: "
                      "the before arm passes nearly every task, which says the eval is too easy, not where a holdout "
                      "will start", warnings)
            report.notes, report.warnings = notes, warnings
            return report

    if not report.saturated:
        _model(report, notes)
    report.notes, report.warnings = notes, warnings
    return report


def _pass_rates(rows: IntoRows, warnings: list[str]) -> pl.DataFrame | None:
    """Graded tasks' pass rates (task_key, n_graded, pass_at_1) sorted by task, None for no rows.

    A Parquet path goes through the streaming engine (``_stream``); sorted, the sums over tasks
    run in one order whatever order the group-by returned.
    """
    streamed = stream_side(rows, [])
    if streamed is not None:
        warnings.extend(streamed.warnings)
        vals = streamed.values.select("task_key", "n_graded", PASS_AT_1)
    else:
        df = clean_rewards(read_rows(rows), warnings)
        if df.height == 0:
            return None
        vals = task_values(df, [PASS_AT_1], maintain_order=False)
    return vals.drop_nulls(PASS_AT_1).sort("task_key")


def _model(report: HoldoutSizeReport, notes: list[str]) -> None:
    base, effect, k = report.base, report.effect, report.k
    if base + effect > 1.0:
        raise ArgumentError(f"base + effect must be at most 1, got base {base:.3f} + effect {effect:.3f}. "
                            f"Pass a smaller effect (at most {1.0 - base:.3f}) or size on harder tasks.")
    report.sd_source = "model"
    sd = math.sqrt(binomial_paired_var(base, effect, k))
    report.task_std = sd
    _finish_model(report, base, sd, notes)
    report.n_tasks_concentrated = int(tasks_needed(effect, math.sqrt(concentrated_paired_var(base, effect, k)),
                                                   power=report.power, alpha=report.alpha))
    notes.append("binomial model: the gain spread evenly across tasks and the two arms independent draws at "
                 f"k={k} rollouts a task. A gain only some tasks exercise leaves most tasks tied and needs "
                 f"n_tasks_concentrated ({report.n_tasks_concentrated}); tasks that differ in difficulty need fewer "
                 "(before= reports the spread, before= and after= measure the paired sd).")
    if report.spread_ratio is not None:
        notes.append(f"these tasks spread {report.base_spread:.3f} around {base:.2f}, so the model asks for about "
                     f"{report.spread_ratio:.2f}x the tasks pairing needs (pass after= too to measure it).")


def _finish_model(report: HoldoutSizeReport, base: float, sd: float, notes: list[str]) -> None:
    """The binomial model's answer: the t test's, then stepped up until the exact sign-flip test reaches the power."""
    _finish(report, sd)
    report.n_tasks_t_test = report.n_tasks
    n_sign_flip = sign_flip_tasks_needed(report.effect, base, report.k, report.n_tasks, power=report.power,
                                         alpha=report.alpha)
    if n_sign_flip > report.n_tasks:
        notes.append(f"sized for the exact sign-flip test that decides delta_report (seeded simulation of "
                     f"{SIGN_FLIP_POWER_REPS} evals at each n): {n_sign_flip} tasks, where the paired t test's "
                     f"{report.n_tasks} gives it less power on these binomial rates")
        report.n_tasks = n_sign_flip
        from scipy.special import stdtrit

        report.half_width = float(stdtrit(n_sign_flip - 1, 1.0 - report.alpha / 2.0)) * sd / math.sqrt(n_sign_flip)


def _finish(report: HoldoutSizeReport, sd: float) -> None:
    report.n_tasks = int(tasks_needed(report.effect, sd, power=report.power, alpha=report.alpha))
    from scipy.special import stdtrit

    report.half_width = float(stdtrit(report.n_tasks - 1, 1.0 - report.alpha / 2.0)) * sd / math.sqrt(report.n_tasks)


def _saturate(report: HoldoutSizeReport, why: str, warnings: list[str]) -> None:
    report.saturated = True
    warnings.append(f"{why}; this answer uses base {BASE_PASS_RATE:.2f}. Use harder situations so the baseline sits "
                    f"inside the {DIFFICULTY_BAND[0]:.0%} to {DIFFICULTY_BAND[1]:.0%} difficulty band, then size again "
                    "(or pass base= to size at a before pass rate you choose).")
    report.base = BASE_PASS_RATE
    if report.effect + BASE_PASS_RATE > 1.0:
        raise ArgumentError(f"effect must be at most {1.0 - BASE_PASS_RATE:.2f} to size at base {BASE_PASS_RATE:.2f}, "
                            f"got {report.effect!r}. Pass a smaller effect.")
    sd = math.sqrt(binomial_paired_var(BASE_PASS_RATE, report.effect, report.k))
    report.task_std = sd
    report.sd_source = "model"
    _finish_model(report, BASE_PASS_RATE, sd, report.notes)
    report.n_tasks_concentrated = int(tasks_needed(
        report.effect, math.sqrt(concentrated_paired_var(BASE_PASS_RATE, report.effect, report.k)),
        power=report.power, alpha=report.alpha))


def _range(report: HoldoutSizeReport, d: np.ndarray, *, n_boot: int, level: float, rng: np.random.Generator) -> None:
    _, var = bootstrap_moments(d, n_boot=n_boot, seed=rng)
    needed = tasks_needed(report.effect, np.sqrt(np.maximum(var, 0.0)), power=report.power, alpha=report.alpha)
    lo, hi = np.quantile(needed, [(1.0 - level) / 2.0, 1.0 - (1.0 - level) / 2.0])
    report.n_tasks_low, report.n_tasks_high = int(lo), int(hi)
    report.n_tasks_range_method = f"percentile bootstrap over the paired tasks, {n_boot} draws, {level:.0%}"


def detectable_effect(n_tasks: int, *, base: float = BASE_PASS_RATE, k: int = HOLDOUT_K, power: float = POWER,
                      alpha: float = ALPHA, task_std: float | None = None) -> float:
    """The smallest gain ``n_tasks`` paired tasks detect at ``power``: ``holdout_size`` solved for the gain.

    The same rule as :func:`holdout_size`: the gain at which the paired t test's power by the
    noncentral t distribution reaches ``power`` at n - 1 degrees of freedom (Cohen 1988, section
    2.3; Miller 2024, arXiv:2411.00640, equation 9 is its large-n form,
    ``(z_{1-alpha/2} + z_power) sd / sqrt(n)``), with sd ``task_std`` or the binomial model's at
    that gain (spread evenly, k rollouts a side, from ``base`` as given). NaN below the fewest
    tasks at which the exact sign-flip test can reject at ``alpha`` (6 at 0.05), or when even a
    gain to 1.0 is not detectable.

    Args:
        n_tasks: Paired tasks.
        base: The before pass rate for the model.
        k: Rollouts per task a side.
        power: Power.
        alpha: Two-sided test size.
        task_std: A measured per-task paired sd (overrides the model).

    Returns:
        The detectable gain in pass rate, or NaN.

    Examples:
        >>> round(detectable_effect(100), 4)
        0.0951
    """
    n = check_int("n_tasks", n_tasks, minimum=0)
    base = _check_base(base)
    check_int("k", k, minimum=1)
    power = check_probability("power", power)
    alpha = check_probability("alpha", alpha)
    assert n is not None
    if task_std is not None:
        if isinstance(task_std, bool) or not isinstance(task_std, (int, float)) or not math.isfinite(task_std) or task_std < 0:
            raise ArgumentError(f"task_std must be a number >= 0, got {task_std!r}. Read it off a delta report.")
        if n < min_sign_flip_tasks(alpha):
            return float("nan")
        sd = float(task_std)
        return 0.0 if sd == 0.0 else detectable_gain(n, lambda _gain: sd, power=power, alpha=alpha)
    return detectable_gain(n, lambda gain: math.sqrt(binomial_paired_var(base, gain, int(k))), top=1.0 - base,
                           power=power, alpha=alpha)

