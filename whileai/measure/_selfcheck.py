"""``self_check``: the comparison's statistics checked by simulation on scripted arms with known truth."""

from __future__ import annotations

import math
import time
from typing import Literal

import numpy as np
import polars as pl
from pydantic import Field

from whileai._checks import check_choice, check_int
from whileai.defaults import (
    ALPHA,
    BOOTSTRAP_DRAWS,
    CI_METHOD,
    SELF_CHECK_CASES,
    SELF_CHECK_COVERAGE_CASES,
    SELF_CHECK_DIFFICULTY,
    SELF_CHECK_DRIFT,
    SELF_CHECK_DRIFT_CASES,
    SELF_CHECK_DUPLICATE_SHARE,
    SELF_CHECK_EFFECTS,
    SELF_CHECK_FLAG_ERRORS,
    SELF_CHECK_K,
    SELF_CHECK_POWER_CASES,
    SELF_CHECK_SEED,
    SELF_CHECK_TRIALS,
)
from whileai.errors import ArgumentError
from whileai.measure._args import check_ci_method, check_probability
from whileai.measure._compare import compare_runs
from whileai.report import Part, Report
from whileai.stats.intervals import IntervalMethod, mean_interval, t_interval, t_quantile
from whileai.stats.rng import check_rng

__all__ = ["SelfCheckCase", "SelfCheckReport", "UnreplicatedPass", "self_check"]

Side = Literal["above", "below", "both"]


class SelfCheckCase(Part):
    """One check of ``self_check``: a rate measured on scripted arms against the rate theory gives."""

    name: str = ""
    """What is checked, in words."""
    cases: int = 0
    """Tasks per simulated eval."""
    effect: float = 0.0
    """The true gain between the arms."""
    measured: float | None = None
    """The rate measured over the trials."""
    target: float | None = None
    """The rate it should be: the test size, the interval level, or the power theory gives."""
    mc_error: float | None = None
    """The Monte Carlo error of ``measured`` at ``target``."""
    side: str = ""
    """Which side is bad: above (false alarms), below (coverage) or both (power)."""
    flagged: bool = False
    """More than ``flag_at`` Monte Carlo errors off target on the bad side."""


class UnreplicatedPass(Part):
    """How often identical arms read PASS (UNREPLICATED) when the eval drifts between runs."""

    measured: float | None = None
    """Share of evals that read PASS."""
    drift: float | None = None
    """Standard deviation of the drift between runs (``SELF_CHECK_DRIFT``)."""
    cases: int = 0
    """Tasks an eval."""
    trials: int = 0
    """Evals simulated."""
    alpha: float | None = None
    """The test size."""


class SelfCheckReport(Report):
    """Each statistic against its target, with the Monte Carlo error and a flag."""

    trials: int = 0
    """Simulated evaluations per check."""
    seed: int = SELF_CHECK_SEED
    """Seed of the whole run (same seed, same report)."""
    k: int = SELF_CHECK_K
    """Rollouts per task in the scripted arms."""
    alpha: float = ALPHA
    """Test size; the intervals are at 1 - alpha."""
    ci_method: str = CI_METHOD
    """Interval method checked (the one compare_runs and delta_report use by default)."""
    n_boot: int = BOOTSTRAP_DRAWS
    """Bootstrap draws when ci_method is a bootstrap."""
    flag_at: float = SELF_CHECK_FLAG_ERRORS
    """A check is flagged more than this many Monte Carlo errors off target on its bad side."""
    checks: list[SelfCheckCase] = Field(default_factory=list)
    """Per check: name, cases, effect, measured, target, mc_error, side, flagged."""
    n_flagged: int = 0
    """Checks flagged."""
    ok: bool = True
    """No check flagged and every first trial matched compare_runs."""
    unreplicated_pass: UnreplicatedPass = Field(default_factory=UnreplicatedPass)
    """How often identical arms read PASS (UNREPLICATED) when the eval drifts between runs by
    ``drift`` and no run_std is given (``measured``, over ``trials`` evals of ``cases`` tasks): the
    false passes a noise floor would catch, which is why that headline says UNREPLICATED."""
    matched_compare: bool = True
    """Each check's first trial, run through compare_runs, gave the same delta and interval."""
    seconds: float = 0.0
    """Wall time."""

    def render(self) -> str:
        """The table: check, measured, target, MC error, OK/FLAG."""
        lines = [
            "self-check: the paired comparison compare_runs and delta_report run, on scripted arms with known truth",
            f"seed {self.seed}, {self.trials} trials per check, k={self.k}, {self.ci_method} interval, alpha {self.alpha:g}",
            "",
            f"{'check':<44}{'measured':>9}{'target':>8}{'MC error':>10}",
        ]
        for c in self.checks:
            lines.append(f"{c['name']:<44}{c['measured']:>8.1%}{c['target']:>8.1%}{c['mc_error']:>9.1%}  "
                         f"{'FLAG' if c['flagged'] else 'OK'}")
        lines += ["", f"FLAG is more than {self.flag_at:g} Monte Carlo errors on the bad side (above for false alarms, "
                  "below for coverage, either way for power)."]
        if self.unreplicated_pass:
            u = self.unreplicated_pass
            lines.append(f"unreplicated PASS on pure noise (eval drifting {u['drift']:.3f} between runs, one run a side, "
                         f"no run_std, {u['cases']} cases): {u['measured']:.1%} of evals; a noise floor (run_std) "
                         "catches these, and without one the headline says UNREPLICATED")
        lines.append("Every check's first trial also ran through compare_runs and matched it."
                     if self.matched_compare else "A check's first trial did NOT match compare_runs: report this as a bug.")
        lines.append(f"all {len(self.checks)} checks on target." if self.ok and not self.n_flagged
                     else f"{self.n_flagged} of {len(self.checks)} checks flagged.")
        return "\n".join(lines + [f"! {w}" for w in self.warnings])


def self_check(*, trials: int = SELF_CHECK_TRIALS, seed: int = SELF_CHECK_SEED, alpha: float = ALPHA,
               ci_method: IntervalMethod = CI_METHOD,
               n_boot: int = BOOTSTRAP_DRAWS, flag_at: float = SELF_CHECK_FLAG_ERRORS, k: int = SELF_CHECK_K,
               scope: Literal["all", "compare"] = "all") -> SelfCheckReport:
    """Check the paired comparison by simulation: false alarms, coverage and power against known truth.

    Scripted arms: tasks with pass rates drawn uniform in ``SELF_CHECK_DIFFICULTY``, k rollouts a
    side, the after arm's pass rates shifted by a planted gain. Each check simulates ``trials``
    evaluations (vectorised over trials) with the interval compare_runs uses and compares the
    rate it measures with its target: the false-alarm rate on identical arms against alpha (also
    with half the tasks near duplicates of others), the coverage of the interval for the true
    gain at 10 and 20 tasks against 1 - alpha (where a percentile bootstrap falls short; Efron and
    Tibshirani 1993, ch. 13), and the detection rate of +10 and +16 points at 30 and 60 tasks
    against the power theory predicts (noncentral t on the known per-task sd; Miller 2024,
    arXiv:2411.00640, section 5). The Monte Carlo error is sqrt(target (1 - target) / trials); a
    check more than ``flag_at`` errors off on its bad side is flagged. Each check's first trial
    is also run through :func:`compare_runs` on real rows and must give the same numbers. Seven
    more checks cover the other intervals and tests (see ``_interval_checks``): pass^k and pass@k
    from 2k rollouts, sparse pass@1, clustered judge agreement, the sign-flip verdict's false
    alarms at 8 tasks, the hack scan's floor and the failure table's flags.

    Args:
        trials: Evaluations per check (``SELF_CHECK_TRIALS``; the CLI's --full uses
            ``SELF_CHECK_FULL_TRIALS``).
        seed: Seed (``SELF_CHECK_SEED``).
        alpha: Test size; intervals at 1 - alpha.
        ci_method: The interval to check (default the library's ``CI_METHOD``).
        n_boot: Bootstrap draws for a bootstrap method.
        flag_at: Monte Carlo errors before a check is flagged (``SELF_CHECK_FLAG_ERRORS``).
        k: Rollouts per task (``SELF_CHECK_K``).
        scope: ``"all"`` (every check) or ``"compare"`` (the eight paired-comparison checks only).

    Returns:
        A :class:`SelfCheckReport`.

    Examples:
        >>> report = self_check(trials=20, seed=1)
        >>> len(report.checks), report.matched_compare
        (15, True)
    """
    check_int("trials", trials, minimum=1)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ArgumentError(f"seed must be an int, got {seed!r}. Pass seed=0.")
    alpha = check_probability("alpha", alpha)
    check_ci_method(ci_method)
    check_int("n_boot", n_boot)
    check_int("k", k, minimum=1)
    check_choice("scope", scope, ("all", "compare"))
    if isinstance(flag_at, bool) or not isinstance(flag_at, (int, float)) or not flag_at > 0:
        raise ArgumentError(f"flag_at must be a number > 0, got {flag_at!r}. Pass flag_at=3.0.")
    start = time.perf_counter()
    rng = check_rng(int(seed))
    level = 1.0 - alpha
    lo_p, hi_p = SELF_CHECK_DIFFICULTY
    first_effect = SELF_CHECK_EFFECTS[0]
    plan: list[tuple[str, int, float, str, Side, float]] = [
        (f"false alarm, identical arms, {SELF_CHECK_CASES} cases", SELF_CHECK_CASES, 0.0, "alarm", "above", 0.0),
    ]
    for n in SELF_CHECK_COVERAGE_CASES:
        plan.append((f"{level:.0%} range holds the true gain, {n} cases", n, first_effect, "cover", "below", 0.0))
    for n in SELF_CHECK_POWER_CASES:
        for e in SELF_CHECK_EFFECTS:
            plan.append((f"detects +{e * 100:.0f} points, {n} cases (theory)", n, e, "detect", "both", 0.0))
    plan.append((f"false alarm, {SELF_CHECK_DUPLICATE_SHARE:.0%} near-duplicate cases", SELF_CHECK_CASES, 0.0, "alarm",
                 "above", SELF_CHECK_DUPLICATE_SHARE))

    report = SelfCheckReport(trials=int(trials), seed=int(seed), k=int(k), alpha=alpha, ci_method=ci_method,
                             n_boot=n_boot, flag_at=float(flag_at))
    for name, cases, effect, kind, side, dup in plan:
        p = rng.uniform(lo_p, hi_p, size=(trials, cases))
        if dup:
            n_dup = int(round(dup * cases))
            src = rng.integers(0, cases - n_dup, size=(trials, n_dup))
            p[:, cases - n_dup:] = np.take_along_axis(p[:, :cases - n_dup], src, axis=1)
        q = np.clip(p + effect, 0.0, 1.0)
        ca = rng.binomial(k, p)
        cb = rng.binomial(k, q)
        d = (cb - ca) / k
        seeds = rng.integers(0, 2**31 - 1, size=trials)
        lo, hi = _intervals(d, method=ci_method, level=level, n_boot=n_boot, seeds=seeds)
        if kind == "alarm":
            hits = (lo > 0.0) | (hi < 0.0)
            target = alpha
        elif kind == "cover":
            hits = (lo <= effect) & (effect <= hi)
            target = level
        else:
            hits = lo > 0.0
            target = _theory_power(effect, cases, k, alpha, lo_p, hi_p)
        measured = float(hits.mean())
        mc = math.sqrt(target * (1.0 - target) / trials)
        off = measured - target
        flagged = bool((side == "above" and off > flag_at * mc) or (side == "below" and -off > flag_at * mc)
                       or (side == "both" and abs(off) > flag_at * mc))
        report.checks.append(SelfCheckCase(name=name, cases=cases, effect=effect, measured=measured, target=target,
                                           mc_error=mc, side=side, flagged=flagged))
        if not _matches(ca[0], cb[0], k, float(lo[0]), float(hi[0]), float(d[0].mean()), ci_method, level, n_boot,
                        int(seeds[0])):
            report.matched_compare = False
    _unreplicated(report, trials=int(trials), rng=rng, alpha=alpha)
    if scope == "all":
        _interval_checks(report, trials=int(trials), rng=rng, alpha=alpha, flag_at=float(flag_at))
    report.n_flagged = sum(c["flagged"] for c in report.checks)
    report.ok = report.n_flagged == 0 and report.matched_compare
    if trials < 100:
        report.warnings.append(f"{trials} trials per check: the Monte Carlo error is wide; pass trials=400 (wai self-check "
                               "--full) for a reading worth quoting.")
    report.seconds = time.perf_counter() - start
    return report


def _unreplicated(report: SelfCheckReport, *, trials: int, rng: np.random.Generator, alpha: float) -> None:
    """Identical arms, each eval run shifted by a drift of sd ``SELF_CHECK_DRIFT``: the share that reads PASS unreplicated.

    The exact sign-flip test holds alpha within one run; a run-level drift it cannot see moves every
    task alike, so without a noise floor some null evals reject upward (delta_report's
    ``moved_unreplicated``, printed as PASS (UNREPLICATED ...)).
    """
    from whileai.stats.permutation import sign_flip_test

    cases, k = SELF_CHECK_DRIFT_CASES, report.k
    p = rng.uniform(*SELF_CHECK_DIFFICULTY, size=(trials, cases))
    drift = rng.normal(0.0, SELF_CHECK_DRIFT, size=(trials, 2))
    ca = rng.binomial(k, np.clip(p + drift[:, :1], 0.0, 1.0))
    cb = rng.binomial(k, np.clip(p + drift[:, 1:], 0.0, 1.0))
    d = (cb - ca) / k
    passes = np.array([sign_flip_test(row).p_value < alpha and row.mean() > 0 for row in d])
    report.unreplicated_pass = UnreplicatedPass(measured=float(passes.mean()), drift=SELF_CHECK_DRIFT, cases=cases,
                                                trials=trials, alpha=alpha)


def _interval_checks(report: SelfCheckReport, *, trials: int, rng: np.random.Generator, alpha: float,
                     flag_at: float) -> None:
    """The checks behind pass_at's, judge_trust's, hack_scan's, compare_runs' and failure_table's numbers.

    Cells are the ones where the old methods failed (docs/measure.md): pass^k and pass@k from 2k
    rollouts, pass@1 with sparse passes, judge agreement with several labelled rows a task, the
    hack scan's floor over the whole search, the sign-flip verdict at 8 tasks, and the failure
    table's Holm-corrected flags on groups that do not matter.
    """
    from whileai.guard import hack_scan
    from whileai.measure._failures import failure_table
    from whileai.stats.grid import draw_passes, truth
    from whileai.stats.passk import pass_at_k, pass_pow_k
    from whileai.stats.permutation import sign_flip_test
    from whileai.stats.score import cluster_wilson, clustered_rate_interval, score_interval
    from whileai.testing import word_table

    level = 1.0 - alpha

    def add(name: str, cases: int, hits: np.ndarray, target: float, side: Side) -> None:
        measured = float(np.mean(hits))
        mc = math.sqrt(target * (1.0 - target) / trials)
        off = measured - target
        flagged = bool((side == "above" and off > flag_at * mc) or (side == "below" and -off > flag_at * mc))
        report.checks.append(SelfCheckCase(name=name, cases=cases, effect=0.0, measured=measured, target=target,
                                           mc_error=mc, side=side, flagged=flagged))

    for metric, diff, fn in (("pass_pow_k", "Beta(2,2)", pass_pow_k), ("pass_at_k", "Beta(4,1)", pass_at_k)):
        c = draw_passes(rng, diff, trials, 30, 8)
        lo, hi = score_interval(fn(8, c, 4), floor=0.5, level=level)
        value = truth(diff, metric, 4)  # type: ignore[arg-type]
        word = "pass^4" if metric == "pass_pow_k" else "pass@4"
        add(f"{word} range, 8 rollouts, 30 cases", 30, (lo <= value) & (value <= hi), level, "below")
    c = draw_passes(rng, "Beta(1,9)", trials, 16, 2)
    lo, hi = clustered_rate_interval(c, 2, level=level)
    value = truth("Beta(1,9)", "pass_at_1")
    add("pass@1 range, sparse passes, 16 cases", 16, (lo <= value) & (value <= hi), level, "below")
    acc = rng.beta(8.5, 1.5, size=(trials, 20))
    lo, hi = cluster_wilson(rng.binomial(4, acc), 4, level=level)
    add("judge agreement range, 4 labels x 20 cases", 20, (lo <= 0.85) & (0.85 <= hi), level, "below")
    p = rng.uniform(*SELF_CHECK_DIFFICULTY, size=(trials, 8))
    d = (rng.binomial(report.k, p) - rng.binomial(report.k, p)) / report.k
    alarms = np.array([sign_flip_test(row).p_value < alpha for row in d])
    add("false alarm, sign-flip verdict, 8 cases", 8, alarms, alpha, "above")
    seeds = rng.integers(0, 2**31 - 1, size=(trials, 2))
    hack = np.array([hack_scan(word_table(20, 8, seed=int(a)), n_perm=50, seed=int(b), trace=False).n_above_floor > 0
                     for a, b in seeds])
    add("false alarm, hack scan floor", 20, hack, alpha, "above")
    flags = []
    for a, _ in seeds:
        g = np.random.default_rng(int(a))
        pr = g.uniform(*SELF_CHECK_DIFFICULTY, size=SELF_CHECK_CASES)
        task = np.repeat(np.arange(SELF_CHECK_CASES), report.k)
        rows = pl.DataFrame({"task_id": [f"t{t}" for t in task], "reward": (g.random(task.size) < pr[task]).astype(float),
                             "group": g.choice(["a", "b", "c", "d"], size=task.size)})
        flags.append(bool(failure_table(rows, by="group", alpha=alpha).below))
    add(f"false flag, failure table, {SELF_CHECK_CASES} cases", SELF_CHECK_CASES, np.array(flags), alpha,
        "above")


def _intervals(d: np.ndarray, *, method: str, level: float, n_boot: int, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if method == "t":
        lo, hi = t_interval(d, level=level, axis=1, bounds=(-1.0, 1.0))
        return np.asarray(lo), np.asarray(hi)
    out = np.array([mean_interval(row, method=method, level=level, n_boot=n_boot, seed=int(s),  # type: ignore[arg-type]
                                  bounds=(-1.0, 1.0)) for row, s in zip(d, seeds)])
    return out[:, 0], out[:, 1]


def _theory_power(effect: float, n: int, k: int, alpha: float, lo_p: float, hi_p: float) -> float:
    """Chance the t interval's lower end clears zero: noncentral t with the design's per-task sd."""
    from scipy.special import nctdtr

    def mean_pq(a: float, b: float) -> float:  # E[p(1-p)] for p uniform on (a, b)
        return (a + b) / 2.0 - (a * a + a * b + b * b) / 3.0

    var = (mean_pq(lo_p, hi_p) + mean_pq(lo_p + effect, hi_p + effect)) / k
    ncp = effect * math.sqrt(n) / math.sqrt(var)
    crit = float(t_quantile(1.0 - alpha, n - 1))
    return float(1.0 - nctdtr(n - 1, ncp, crit))


def _matches(ca: np.ndarray, cb: np.ndarray, k: int, lo: float, hi: float, delta: float, method: str, level: float,
             n_boot: int, seed: int) -> bool:
    """Run one simulated evaluation through compare_runs on real rows; same delta and interval?"""
    tasks = np.repeat(np.arange(ca.size), k)
    slot = np.tile(np.arange(k), ca.size)
    before = pl.DataFrame({"task_id": [f"t{i}" for i in tasks], "reward": (slot < ca[tasks]).astype(np.float64)})
    after = pl.DataFrame({"task_id": [f"t{i}" for i in tasks], "reward": (slot < cb[tasks]).astype(np.float64)})
    r = compare_runs(before, after, level=level, ci_method=method, n_boot=n_boot, seed=seed)  # type: ignore[arg-type]
    if r.ci95 is None:
        return False
    return bool(np.isclose(r.delta, delta, rtol=0, atol=1e-12) and np.isclose(r.ci95[0], lo, rtol=0, atol=1e-9)
                and np.isclose(r.ci95[1], hi, rtol=0, atol=1e-9))
