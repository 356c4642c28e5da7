"""pass@1, pass^k and pass@k with intervals over tasks (the ``PassAt`` report)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import Field

from whileai._checks import check_choice, check_int
from whileai.defaults import (
    BINARY_CI_METHOD,
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    DEFAULT_SEED,
    KWAY_CI_METHOD,
    MIN_CI_TASKS,
    MIN_K,
    PASS_CI_METHOD,
    PASS_CI_METHODS,
    PASS_THRESHOLD,
)
from whileai.errors import ArgumentError
from whileai.measure._args import check_level
from whileai.measure._format import nan_to_none
from whileai.measure._intervals import interval_over_tasks, rate_interval
from whileai.measure._rows import clean_rewards, failure_exprs, read_rows
from whileai.measure._runs import run_config
from whileai.measure._tasks import task_stats
from whileai.report import ChartedReport, align_rows, fmt_num
from whileai.stats.passk import pass_at_k, pass_pow_k
from whileai.stats.rng import check_rng
from whileai.stats.score import rate_score_interval, score_interval
from whileai.table import IntoRows, is_ray_dataset

__all__ = ["PassAt", "PassMethod", "pass_at"]

PassMethod = Literal["score", "t", "percentile", "bca"]

_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_METHOD_WORDS = {"score": "clustered score interval over tasks", "t": "t interval over tasks", "percentile": "bootstrap over tasks",
                 "bca": "BCa bootstrap over tasks", "wilson": "Wilson interval over tasks",
                 "wilson_rollouts": "Wilson interval over rollouts"}


def _word(k: int) -> str:
    return _WORDS[k] if 0 <= k < len(_WORDS) else str(k)


class PassAt(ChartedReport):
    """pass@1, pass^k and pass@k over tasks, each with its interval (``print`` gives the one line)."""

    pass_at_1: float = math.nan
    """Mean over tasks of the task's mean reward (partial credit counts as its value)."""
    ci95: tuple[float, float] | None = None
    """Interval on pass@1 at ``level`` (method in ``ci_method``); None when undefined."""
    pass_pow_k: float = math.nan
    """Mean over k-eligible tasks of the unbiased C(c,k)/C(n,k): all k tries pass (tau-bench)."""
    pass_pow_k_ci95: tuple[float, float] | None = None
    """Interval on pass^k (method in ``kway_ci_method``, over the k-eligible tasks)."""
    pass_at_k: float = math.nan
    """Mean over k-eligible tasks of the unbiased 1 - C(n-c,k)/C(n,k): one of k passes (Chen et al. 2021)."""
    pass_at_k_ci95: tuple[float, float] | None = None
    """Interval on pass@k (method in ``kway_ci_method``, over the k-eligible tasks)."""
    headroom: float = math.nan
    """pass@k minus the pass rate at the same threshold (pass@1 on 0/1 rewards) over the k-eligible
    tasks: the gap an RL update could close. Never negative."""
    k: int = 1
    """Rollouts per task the k-way numbers are for."""
    k_source: Literal["given", "smallest_group"] = "smallest_group"
    """Whether k was passed or read off the rows (the smallest group with at least two rollouts)."""
    n_groups: int = 0
    """Tasks with at least one graded rollout (the 'groups' of the printed line)."""
    n_tasks: int = 0
    """Tasks in the rows, graded or not."""
    n_rows: int = 0
    """Rows in the input."""
    n_graded: int = 0
    """Rows with a reward."""
    n_partial: int = 0
    """Graded rows whose reward is neither 0 nor 1 (partial credit; pass^k and pass@k split them at 0.5)."""
    n_groups_at_k: int = 0
    """Tasks with at least k graded rollouts: the ones pass^k and pass@k are over."""
    n_groups_short: int = 0
    """Graded tasks with fewer than k graded rollouts."""
    n_groups_imputed: int = 0
    """Short tasks whose rollouts all agreed and were counted as all-pass or all-fail (``unanimous_short=True``)."""
    short_tasks: Literal["excluded", "imputed_unanimous", "none"] = "none"
    """What was done with tasks short of k: left out of pass^k/pass@k, or unanimous ones imputed."""
    level: float = CI_LEVEL
    """Confidence level of every interval."""
    ci_method: str = PASS_CI_METHOD
    """Interval method used on pass@1: ``score`` (the clustered score interval, monotone in the
    passes; ``PASS_CI_METHOD``), ``score_rates`` (the same on partial-credit rates, without the
    monotone envelope), ``t`` (Student-t over task means, Miller 2024), ``wilson`` (every task
    scored 0 or 1, under ``t`` or a bootstrap), ``wilson_rollouts`` (every task had the same rate,
    under ``t``), or a bootstrap."""
    kway_ci_method: str = KWAY_CI_METHOD
    """Interval method used on pass^k and pass@k: ``score`` (``KWAY_CI_METHOD``), else ``wilson``
    when every task's value is 0 or 1 (n == k) or the requested bootstrap / t."""
    n_boot: int = BOOTSTRAP_DRAWS
    """Bootstrap draws behind bootstrap intervals."""
    per_task: Any = Field(default=None, exclude=True)
    """Per-task table (polars DataFrame): task_key, n, n_graded, c, pass_rate, pass_pow_k, pass_at_k, short."""
    by: list[str] | None = None
    """The ``by=`` dimensions, when given."""
    groups: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """With ``by=``: per ``dimension=value``, pass_at_1, ci95, pass_pow_k, pass_at_k, n_tasks, n_rows
    (each group measured as its own table, same options)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """What the rows were produced with (temperature, max_tokens, policy/model/judge versions, shares)."""
    note: str = ""
    """Facts that qualify the numbers, printed inside the parentheses of the line."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; ``per_task`` becomes ``{task_key: pass rate}`` as in whileai 0.131."""
        out = super().to_dict()
        if isinstance(self.per_task, pl.DataFrame) and self.per_task.height:
            out["per_task"] = dict(zip(self.per_task["task_key"].to_list(),
                                       [None if v is None or v != v else v for v in self.per_task["pass_rate"].to_list()]))
        else:
            out["per_task"] = {}
        return out

    def render(self) -> str:
        """The seed's one line, then one ``!`` line per warning."""
        k = self.k

        def part(value: float, ci: tuple[float, float] | None) -> str:
            text = fmt_num(value)
            if ci is not None and not math.isnan(value):
                text += f" [{ci[0]:.2f}..{ci[1]:.2f}]"
            return text

        tail = f"{self.n_groups} groups, k={k}" + (f"; {self.note}" if self.note else "")
        line = (f"pass@1 {part(self.pass_at_1, self.ci95)} | pass^{k} (pass_pow_k) "
                f"{part(self.pass_pow_k, self.pass_pow_k_ci95)} | pass@{k} {part(self.pass_at_k, self.pass_at_k_ci95)}"
                f" | headroom {fmt_num(self.headroom)} ({tail})")
        group_lines = [f"  {name}: pass@1 {part(g['pass_at_1'], g['ci95'])} ({g['n_tasks']} tasks, {g['n_rows']} rows)"
                       for name, g in self.groups.items()]
        return "\n".join([line, *group_lines, *(f"! {w}" for w in self.warnings)])

    def table(self, *, style: Literal["tsv", "markdown", "text"] = "tsv") -> str:
        """The metric table with the 'What it says' column (the landing page's table form).

        ``style="text"`` aligns the columns for a terminal.
        """
        rows = self.table_rows()
        if style == "text":
            return align_rows(rows)
        if style == "markdown":
            lines = ["| " + " | ".join(r) + " |" for r in rows]
            lines.insert(1, "|" + "---|" * len(rows[0]))
            return "\n".join(lines)
        return "\n".join("\t".join(r) for r in rows)

    def figure_spec(self) -> dict[str, Any]:
        """pass@1, pass^k and pass@k as bars with their intervals (whileai.charts.interval_bars).

        With ``by=``, one bar of pass@1 per group instead, each with its interval.
        """
        from whileai.charts import interval_bars

        if self.groups:
            cis = [g.get("ci95") for g in self.groups.values()]
            many = len(self.by or ()) > 1
            names = [name if many else name.split("=", 1)[-1] for name in self.groups]
            return interval_bars(names, [g.get("pass_at_1") for g in self.groups.values()],
                                 [c[0] if c else None for c in cis], [c[1] if c else None for c in cis],
                                 title=f"pass@1 by {', '.join(self.by or ())} ({self.level:.0%} intervals)",
                                 y_title="pass@1")
        k = self.k
        cis = [self.ci95, self.pass_pow_k_ci95, self.pass_at_k_ci95]
        return interval_bars(
            ["pass@1", f"pass^{k}", f"pass@{k}"], [self.pass_at_1, self.pass_pow_k, self.pass_at_k],
            [c[0] if c else None for c in cis], [c[1] if c else None for c in cis],
            title=f"{self.n_groups} tasks, k={k}, {self.level:.0%} intervals", y_title="pass rate")

    def table_rows(self) -> list[tuple[str, ...]]:
        """The metric table's rows, header first."""
        k = self.k
        n_text = f"{self.n_groups} tasks, k={k}"
        nk_text = f"{self.n_groups_at_k} tasks, k={k}"

        def ci_text(ci: tuple[float, float] | None, value: float) -> str:
            return "" if ci is None or math.isnan(value) else f"{ci[0]:.2f} to {ci[1]:.2f}"

        rows: list[tuple[str, ...]] = [
            ("Metric", "Value", "95% interval" if abs(self.level - 0.95) < 1e-12 else f"{self.level:.0%} interval",
             "n", "What it says"),
            ("pass@1", fmt_num(self.pass_at_1), ci_text(self.ci95, self.pass_at_1), n_text,
             f"how often the agent does the job on one try; {_METHOD_WORDS.get(self.ci_method, self.ci_method)}"),
            (f"pass^{k}", fmt_num(self.pass_pow_k), ci_text(self.pass_pow_k_ci95, self.pass_pow_k), nk_text,
             f"how often all {_word(k)} tries pass; the reliability line"),
            (f"pass@{k}", fmt_num(self.pass_at_k), ci_text(self.pass_at_k_ci95, self.pass_at_k), nk_text,
             f"at least one of {_word(k)} passes"),
            ("headroom", fmt_num(self.headroom), "", "", f"pass@{k} minus the pass rate (pass@1 on 0/1 rewards), the gap an RL update could close"),
        ]
        return rows


def pass_at(rows: IntoRows, /, *, k: int | None = None, min_k: int = MIN_K, unanimous_short: bool = False,
            level: float = CI_LEVEL, ci_method: PassMethod = PASS_CI_METHOD,
            kway_ci_method: PassMethod = KWAY_CI_METHOD,
            binary_ci: Literal["wilson"] | None = BINARY_CI_METHOD,
            n_boot: int = BOOTSTRAP_DRAWS, seed: int | np.random.Generator | None = DEFAULT_SEED,
            by: str | Sequence[str] | None = None) -> PassAt:
    """pass@1, pass^k and pass@k over tasks, each with an interval over tasks.

    Rows are grouped into tasks by ``task_key`` (a task is a situation, not a string). Per task:
    pass@1 is the mean reward over its graded rollouts (partial credit counts as its value);
    pass^k is the unbiased C(c, k) / C(n, k) (Yao et al. 2024, tau-bench, arXiv:2406.12045) and
    pass@k the unbiased 1 - C(n - c, k) / C(n, k) (Chen et al. 2021, arXiv:2107.03374, eq. 1),
    with c the rollouts at reward >= 0.5. Each number is the mean over tasks. Every interval is
    over tasks (the unit that repeats), and by default a score interval
    (:mod:`whileai.stats.score`): the mean read as a proportion over effective tasks, T over the
    design effect, with a degrees-of-freedom correction (Korn and Graubard 1998, Survey
    Methodology 24:193) and the modified Wilson ends near 0 and 1 (Brown, Cai and DasGupta 2001,
    Statistical Science 16:101). pass@1's (``PASS_CI_METHOD``) is also monotone: more passes never
    lower either end. pass^k and pass@k (``KWAY_CI_METHOD``) are over the k-eligible tasks'
    unbiased estimates, with the design effect floored at k / n. Measured coverage over 150
    cells (8 to 300 tasks, k 2 to 8, n = k and 2k, five difficulty shapes) is in docs/measure.md.
    ``ci_method="t"`` is the Student-t interval on task means (Miller 2024, arXiv:2411.00640), and
    ``"percentile"`` / ``"bca"`` bootstraps; under those, task values that are all 0 or 1 get
    Wilson's interval over tasks (``BINARY_CI_METHOD``). Ungraded rows (reward null) are left out.

    Args:
        rows: Graded rollouts (anything ``table.frame`` reads, or a ``ray.data.Dataset``: the Ray
            engine, ``docs/scale.md``).
        k: Rollouts per task for pass^k and pass@k; default the smallest group with at least
            two graded rollouts.
        min_k: With k read off the rows, pass^k and pass@k are reported only from this k up
            (``MIN_K``); a k you pass is always honoured.
        unanimous_short: Count a task with fewer than k rollouts that all agree as all-pass or
            all-fail instead of leaving it out (an assumption; off by default).
        level: Confidence level (``CI_LEVEL``).
        ci_method: Interval on pass@1: ``"score"`` (``PASS_CI_METHOD``), ``"t"``,
            ``"percentile"`` or ``"bca"``.
        kway_ci_method: Interval on pass^k and pass@k: ``"score"`` (``KWAY_CI_METHOD``), ``"t"``,
            ``"percentile"`` or ``"bca"``.
        binary_ci: ``"wilson"`` (``BINARY_CI_METHOD``) for task values that are all 0 or 1; None
            keeps ``ci_method`` / ``kway_ci_method`` there too.
        n_boot: Bootstrap draws (``BOOTSTRAP_DRAWS``).
        seed: Seed or Generator for the bootstrap.
        by: A column, ``tools_used`` or a marker (or a list of them): each group is also
            measured on its own and listed in ``groups`` (``failure_table`` adds failure shares
            and a below-the-rest flag).

    Returns:
        A :class:`PassAt`; ``print`` gives ``pass@1 0.67 [0.55..0.78] | pass^4 (pass_pow_k) ...``
        and ``.table()`` the metric table.

    Raises:
        ArgumentError: An option outside its allowed values.
        SchemaError: A reward outside [0, 1] or not a number.

    Examples:
        >>> rows = [{"task_id": t, "reward": r} for t in "abcd" for r in (1, 1, 0, 1)]
        >>> pass_at(rows).pass_at_1
        0.75
    """
    check_int("k", k, minimum=1, allow_none=True)
    check_int("min_k", min_k, minimum=1)
    level = check_level(level)
    check_choice("ci_method", ci_method, PASS_CI_METHODS)
    check_choice("kway_ci_method", kway_ci_method, PASS_CI_METHODS)
    if binary_ci is not None:
        check_choice("binary_ci", binary_ci, ("wilson",))
    check_int("n_boot", n_boot, minimum=1)
    names = None
    if by is not None:  # the failure table's module (and its reports) loads with by= only
        from whileai.measure._failures import check_by

        names = check_by(by)
    rng = check_rng(seed)
    options: dict[str, Any] = {"k": k, "min_k": min_k, "unanimous_short": unanimous_short, "level": level,
                               "ci_method": ci_method, "kway_ci_method": kway_ci_method, "binary_ci": binary_ci,
                               "n_boot": n_boot, "rng": rng}
    if is_ray_dataset(rows):
        if names is not None:
            raise ArgumentError(f"by must be left off for a Ray dataset, got by={by!r}. Filter the dataset to each "
                                "group (ds.filter(...)) and measure each, or read the rows into Polars first.")
        return _pass_at_ray(rows, **options)
    df, report = _pass_at_local(rows, names, options)
    if names is not None:
        _by_groups(report, df, names, k=k, min_k=min_k, unanimous_short=unanimous_short, level=level,
                   ci_method=ci_method, kway_ci_method=kway_ci_method, binary_ci=binary_ci, n_boot=n_boot, seed=rng)
    return report


def _pass_at_local(rows: IntoRows, names: list[str] | None, options: dict[str, Any],
                   intervals: bool = True) -> tuple[pl.DataFrame, PassAt]:
    """The rows read and cleaned, and their :func:`pass_at` report (the local engine)."""
    warnings: list[str] = []
    extra = [] if names is None else [*names, *(["messages"] if "tools_used" in names else [])]
    df = clean_rewards(read_rows(rows, extra=extra, markers=names is not None), warnings)
    stats = task_stats(df, threshold=PASS_THRESHOLD, maintain_order=False) if df.height else empty_task_stats()
    config = run_config(df) if df.height else {"mixed": [], "n_rows": 0}
    return df, pass_at_from_stats(stats, reward_facts(df), warnings=warnings, config=config, intervals=intervals,
                                  **options)


def pass_at_numbers(rows: IntoRows, /) -> PassAt:
    """:func:`pass_at` with its defaults, less the intervals: the same numbers, every ``*ci95`` None.

    For callers that read k, pass@1, pass^k, pass@k and headroom and print no interval
    (``group_signal``): the k-way numbers keep one source, and the interval kernels (and the
    scipy.special import they need) are not run for numbers no one reads.
    """
    options: dict[str, Any] = {"k": None, "min_k": MIN_K, "unanimous_short": False, "level": CI_LEVEL,
                               "ci_method": PASS_CI_METHOD, "kway_ci_method": KWAY_CI_METHOD,
                               "binary_ci": BINARY_CI_METHOD, "n_boot": BOOTSTRAP_DRAWS, "rng": check_rng(DEFAULT_SEED)}
    return _pass_at_local(rows, None, options, intervals=False)[1]


def empty_task_stats() -> pl.DataFrame:
    """The per-task table of no rows (``task_stats``'s columns)."""
    return pl.DataFrame(schema={"task_key": pl.String, "n": pl.Int64, "n_graded": pl.Int64, "c": pl.Int64,
                                "reward_sum": pl.Float64, "reward_mean": pl.Float64})


def reward_facts(df: pl.DataFrame) -> dict[str, Any]:
    """Row-level facts the report's warnings read: rows, partial-credit rows, reward range, failures.

    Each is a sum, a min or a max over rows, so an engine that sees the rows in parts merges them
    exactly (``docs/scale.md``).
    """
    if df.height == 0:
        return {"n_rows": 0, "n_partial": 0, "lo": None, "hi": None, "n_reward": 0, "n_judge_failed": 0,
                "n_agent_crashed": 0}
    reward = pl.col("reward")
    crashed, failed = failure_exprs(df)
    info = df.select(
        (reward.is_not_null() & (reward != 0.0) & (reward != 1.0)).sum().alias("n_partial"),
        reward.min().alias("lo"), reward.max().alias("hi"), reward.count().alias("n_reward"),
        failed.sum().alias("n_judge_failed"), crashed.sum().alias("n_agent_crashed"),
    ).row(0, named=True)
    return {"n_rows": df.height, **{k: (v if k in ("lo", "hi") else int(v)) for k, v in info.items()}}


def pass_at_from_stats(stats: pl.DataFrame, facts: dict[str, Any], *, k: int | None, min_k: int,
                       unanimous_short: bool, level: float, ci_method: str, kway_ci_method: str,
                       binary_ci: str | None, n_boot: int, rng: np.random.Generator, warnings: list[str],
                       config: dict[str, Any], intervals: bool = True) -> PassAt:
    """The :func:`pass_at` report from the per-task table (``task_stats`` columns) and row facts.

    The kernel both engines share: the local path builds ``stats`` with one Polars group-by, the
    Ray path merges per-partition partial sums by task key (``whileai.measure._ray``). Tasks are
    taken in ``task_key`` order, so the same rows give the same numbers whatever order the
    group-by returned. ``intervals=False`` leaves every interval None (``pass_at_numbers``).
    """
    notes: list[str] = []
    stats = stats.sort("task_key")
    n_rows = int(facts["n_rows"])
    report = PassAt(level=level, ci_method=ci_method, kway_ci_method=kway_ci_method, n_boot=n_boot, n_rows=n_rows)
    report.n_tasks = stats.height
    report.config = config
    graded = stats.filter(pl.col("n_graded") > 0)
    n_graded = graded["n_graded"].to_numpy().astype(np.int64)
    c = graded["c"].to_numpy().astype(np.int64)
    rates = graded["reward_mean"].to_numpy().astype(np.float64)
    report.n_groups = graded.height
    report.n_graded = int(n_graded.sum())
    if n_rows == 0:
        warnings.append("no rows: nothing to measure. Pass graded rollouts.")
    elif report.n_graded == 0:
        warnings.append(f"none of the {n_rows} rows carries a reward: grade first (data.grade(judge=...)).")
        _judge_failures(facts, warnings)
    if report.n_graded:
        _describe_rewards(facts, report, warnings)
        if report.n_tasks > report.n_groups:
            notes.append(f"{report.n_tasks - report.n_groups} task(s) with no graded rollout left out")

    # pass@1 over every graded task
    if report.n_groups:
        report.pass_at_1 = float(rates.mean())
    if report.n_groups and intervals:
        if ci_method == "score":
            lo, hi, report.ci_method = _score_pass1(rates, n_graded, graded["reward_sum"].to_numpy(), level, notes)
        else:
            lo, hi, report.ci_method = rate_interval(
                rates, float(n_graded.sum()), float(graded["reward_sum"].sum()), method=ci_method, level=level,
                n_boot=n_boot, seed=rng, what="pass@1", notes=notes, binary_ci=binary_ci)
        report.ci95 = nan_to_none((lo, hi))

    # k and the k-eligible tasks
    k_value, k_ok = _choose_k(k, min_k, n_graded, report, notes, warnings)
    report.k = k_value
    eligible = n_graded >= k_value
    short = ~eligible
    report.n_groups_at_k = int(eligible.sum())
    report.n_groups_short = int(short.sum())
    pow_k = pass_pow_k(n_graded, c, k_value)
    at_k = pass_at_k(n_graded, c, k_value)
    use = eligible.copy()
    if report.n_groups_short and k_ok:
        if unanimous_short:
            unanimous = short & ((c == 0) | (c == n_graded))
            pow_k = np.where(unanimous, (c == n_graded).astype(np.float64), pow_k)
            at_k = np.where(unanimous, (c > 0).astype(np.float64), at_k)
            use |= unanimous
            report.n_groups_imputed = int(unanimous.sum())
            report.short_tasks = "imputed_unanimous"
            notes.append(f"{report.n_groups_short} task(s) have fewer than {k_value} rollouts: "
                         f"{report.n_groups_imputed} unanimous ones imputed, the rest left out of pass^{k_value} and pass@{k_value}")
        else:
            report.short_tasks = "excluded"
            notes.append(f"{report.n_groups_short} task(s) have fewer than {k_value} rollouts and are left out "
                         f"of pass^{k_value} and pass@{k_value}")
    if k_ok and use.any():
        report.pass_pow_k = float(pow_k[use].mean())
        report.pass_at_k = float(at_k[use].mean())
        # pass@k counts rollouts at reward >= PASS_THRESHOLD: the gap is to the pass rate at the same
        # threshold (pass@1 itself for 0/1 rewards), never negative since pass@k >= c / n
        report.headroom = report.pass_at_k - float((c[use] / n_graded[use]).mean())
        if intervals:
            report.kway_ci_method = _kway_intervals(report, pow_k[use], at_k[use], k_value, float(n_graded[use].mean()),
                                                    level, kway_ci_method, n_boot, rng, binary_ci, notes)
        if int(use.sum()) < report.n_groups:
            notes.append(f"headroom is over the {int(use.sum())} tasks with {k_value} rollouts")

    report.per_task = stats.select(
        "task_key", "n", "n_graded", "c", pl.col("reward_mean").alias("pass_rate"),
    ).with_columns(
        pl.Series("pass_pow_k", _scatter(stats, graded, np.where(use, pow_k, np.nan))),
        pl.Series("pass_at_k", _scatter(stats, graded, np.where(use, at_k, np.nan))),
        (pl.col("n_graded") < k_value).alias("short"),
    )
    report.note = "; ".join(notes)
    report.warnings = warnings
    return report


def _kway_intervals(report: PassAt, pow_k: np.ndarray, at_k: np.ndarray, k_value: int, n_mean: float, level: float,
                    kway_ci_method: str, n_boot: int, rng: np.random.Generator, binary_ci: str | None,
                    notes: list[str]) -> str:
    """The intervals on pass^k and pass@k over the k-eligible tasks, set on ``report``; returns the method used."""
    if kway_ci_method == "score":
        floor = min(1.0, k_value / n_mean)
        lo, hi, used_pow = _score_kway(pow_k, floor, level, f"pass^{k_value}", notes)
        report.pass_pow_k_ci95 = nan_to_none((lo, hi))
        lo, hi, used_at = _score_kway(at_k, floor, level, f"pass@{k_value}", notes)
        report.pass_at_k_ci95 = nan_to_none((lo, hi))
    else:
        lo, hi, used_pow = interval_over_tasks(
            pow_k, method=kway_ci_method, level=level, n_boot=n_boot, seed=rng, bounds=(0.0, 1.0),
            what=f"pass^{k_value}", notes=notes, binary_ci=binary_ci)
        report.pass_pow_k_ci95 = nan_to_none((lo, hi))
        lo, hi, used_at = interval_over_tasks(
            at_k, method=kway_ci_method, level=level, n_boot=n_boot, seed=rng, bounds=(0.0, 1.0),
            what=f"pass@{k_value}", notes=notes, binary_ci=binary_ci)
        report.pass_at_k_ci95 = nan_to_none((lo, hi))
    return used_pow if used_pow == used_at else f"{used_pow}/{used_at}"


def _by_groups(report: PassAt, df: pl.DataFrame, names: list[str], **options: Any) -> None:
    """Each ``by`` group measured on its own rows (the group-by is one partition per dimension)."""
    from whileai.measure._failures import group_frame

    report.by = []
    for key in names:
        frame, dim = group_frame(df, key) if df.height else (df.with_columns(pl.lit(None, pl.String).alias("_group")), key)
        report.by.append(dim)
        for (value,), sub in sorted(frame.partition_by("_group", as_dict=True).items(), key=lambda kv: str(kv[0][0])):
            g = pass_at(sub.drop("_group"), **options)
            report.groups[f"{dim}={value}"] = {
                "pass_at_1": g.pass_at_1, "ci95": g.ci95, "pass_pow_k": g.pass_pow_k,
                "pass_pow_k_ci95": g.pass_pow_k_ci95, "pass_at_k": g.pass_at_k, "pass_at_k_ci95": g.pass_at_k_ci95,
                "n_tasks": g.n_groups, "n_rows": g.n_rows}


def _score_pass1(rates: np.ndarray, n_graded: np.ndarray, reward_sum: np.ndarray, level: float,
                 notes: list[str]) -> tuple[float, float, str]:
    """The clustered score interval on pass@1 (monotone in passes); on rates when rewards are partial."""
    if rates.size < MIN_CI_TASKS:
        notes.append(f"no interval on pass@1: {rates.size} task(s), and an interval needs {MIN_CI_TASKS}")
        return float("nan"), float("nan"), "score"
    lo, hi, how = rate_score_interval(reward_sum, n_graded, level=level)
    if how == "score_rates":
        notes.append("partial-credit rewards: the pass@1 interval is the score interval on task rates, "
                     "without the monotone envelope")
    return lo, hi, how


def _score_kway(values: np.ndarray, floor: float, level: float, what: str, notes: list[str]) -> tuple[float, float, str]:
    if values.size < MIN_CI_TASKS:
        notes.append(f"no interval on {what}: {values.size} task(s), and an interval needs {MIN_CI_TASKS}")
        return float("nan"), float("nan"), "score"
    lo, hi = score_interval(values, floor=floor, level=level)
    return float(lo), float(hi), "score"


def _choose_k(k: int | None, min_k: int, n_graded: np.ndarray, report: PassAt, notes: list[str],
              warnings: list[str]) -> tuple[int, bool]:
    """Pick k; return (k, whether the k-way numbers are reported)."""
    most = int(n_graded.max()) if n_graded.size else 0
    if k is not None:
        report.k_source = "given"
        if n_graded.size and k > most:
            warnings.append(f"k={k} is more than any task's graded rollouts (the most is {most}), so pass^{k} and "
                            f"pass@{k} are undefined. Pass k={most} or lower, or run more repeats.")
            return int(k), False
        return int(k), bool(n_graded.size)
    multi = n_graded[n_graded >= 2]
    chosen = int(multi.min()) if multi.size else max(most, 1)
    if multi.size and int(multi.max()) > chosen:
        notes.append(f"groups are uneven ({chosen} to {int(multi.max())} repeats); k is the smallest")
    if n_graded.size and chosen < min_k:
        more = f"; or pass k={chosen} (or min_k={chosen}) to report pass^{chosen} and pass@{chosen} on these rows" \
            if chosen >= 2 else ""
        notes.append(f"pass^k and pass@k are reported from {min_k} rollouts per task (min_k) and these rows have "
                     f"{chosen}; set repeats>={min_k} for pass^k and pass@k{more}")
        return chosen, False
    return chosen, bool(n_graded.size)


def _scatter(stats: pl.DataFrame, graded: pl.DataFrame, values: np.ndarray) -> np.ndarray:
    """Values computed on the graded tasks, placed back on every task (NaN for ungraded)."""
    out = np.full(stats.height, np.nan)
    if graded.height == stats.height:
        return values.astype(np.float64)
    mask = (stats["n_graded"] > 0).to_numpy()
    out[mask] = values
    return out


def _describe_rewards(facts: dict[str, Any], report: PassAt, warnings: list[str]) -> None:
    report.n_partial = int(facts["n_partial"])
    if facts["n_reward"] >= MIN_CI_TASKS and facts["lo"] == facts["hi"]:
        warnings.append(f"every graded row scored {facts['lo']:.2f} ({facts['n_reward']} of {facts['n_reward']}); "
                        "check the judge before reading this number.")
    _judge_failures(facts, warnings)


def _judge_failures(facts: dict[str, Any], warnings: list[str]) -> None:
    crashed = int(facts.get("n_agent_crashed", 0))
    failed = int(facts["n_judge_failed"])
    if crashed:
        warnings.append(f"{crashed} row(s) ended in an agent or harness error (the rollout itself failed, so there "
                        "was nothing to grade); they are left out. Fix the agent or harness and re-run those samples.")
    if failed:
        warnings.append(f"the judge failed on {failed} row(s) (judge_status not ok); they are left out. "
                        "Re-run the judge on data.unjudged().")


def _pass_at_ray(ds: Any, **options: Any) -> Any:
    """``whileai.pass_at`` on a Ray dataset: merged per-task sums into ``pass_at_from_stats``."""
    from whileai.measure._ray import cells, facts_of, nan_warning, per_task, ray_config, stats_of

    c, _ = cells(ds)
    warnings: list[str] = []
    nan_warning(c, warnings)
    return pass_at_from_stats(stats_of(per_task(c, [])), facts_of(c), warnings=warnings, config=ray_config(c),
                              **options)
