"""What a trainer will use from a set: ``profile`` counts it, ``selection_report`` checks it per method."""

from __future__ import annotations

from typing import Any

import polars as pl
from pydantic import Field

from whileai import table
from whileai._checks import check_choice
from whileai.defaults import PASS_THRESHOLD, TRAIN_MIN_MIXED_TASKS
from whileai.report import Report
from whileai.train._knobs import METHODS

__all__ = ["SelectionReport", "TrainingProfile", "profile", "selection_report"]

# Why each class of task teaches a grouped method nothing (Shao et al. 2024, DeepSeekMath GRPO,
# eq. 3: a group whose rewards are all equal has zero advantage; DPO and a reward model need a
# pass and a fail of the same ask to make a pair).
_REASONS = {
    "all_pass": "every rollout passes: zero advantage in a group-relative update, and no rejected side for a pair",
    "all_fail": "every rollout fails: zero advantage in a group-relative update, and no chosen side for a pair",
    "single_rollout": "one graded rollout: nothing in the same ask to compare it with",
    "ungraded": "no graded rollout (reward is null): grade it first",
}


class TrainingProfile(Report):
    """What a training set holds, counted per task: the numbers ``selection_report`` checks."""

    n_rows: int = 0
    """Rows given."""
    n_graded: int = 0
    """Rows with a numeric reward."""
    passing_rows: int = 0
    """Graded rows at reward >= pass_threshold."""
    failing_rows: int = 0
    """Graded rows below pass_threshold."""
    ungraded_rows: int = 0
    """Rows with no reward."""
    n_tasks: int = 0
    """Distinct tasks (task_key)."""
    mixed_tasks: int = 0
    """Tasks with at least one pass and one fail: what GRPO, DPO and a reward model learn from."""
    all_pass_tasks: int = 0
    """Tasks with two or more graded rollouts, all passing."""
    all_fail_tasks: int = 0
    """Tasks with two or more graded rollouts, all failing."""
    single_rollout_tasks: int = 0
    """Tasks with exactly one graded rollout."""
    ungraded_tasks: int = 0
    """Tasks with no graded rollout."""
    mixed_rows: int = 0
    """Graded rows in mixed tasks."""
    pass_threshold: float = PASS_THRESHOLD
    """A rollout passes at reward >= this."""

    def render(self) -> str:
        """One line of counts."""
        return (f"{self.n_rows} rows ({self.passing_rows} pass, {self.failing_rows} fail, {self.ungraded_rows} ungraded) "
                f"over {self.n_tasks} tasks: {self.mixed_tasks} mixed, {self.all_pass_tasks} all-pass, "
                f"{self.all_fail_tasks} all-fail, {self.single_rollout_tasks} single-rollout, "
                f"{self.ungraded_tasks} ungraded")


def profile(rows: table.IntoRows, /, *, pass_threshold: float = PASS_THRESHOLD) -> TrainingProfile:
    """Count what a trainer will use: rows by outcome, tasks by whether they mix a pass and a fail.

    ``profile(rows)["mixed_tasks"]`` is how to size a grouped set: GRPO, DPO and a reward model
    learn only from tasks with both a pass and a fail (a group of equal rewards has zero
    advantage, Shao et al. 2024, arXiv:2402.03300, eq. 3; a pair needs both sides). One
    group-by over tasks.

    Args:
        rows: Graded rollouts, anything ``table.frame`` reads.
        pass_threshold: A rollout passes at reward >= this.

    Returns:
        A :class:`TrainingProfile`.

    Examples:
        >>> rows = [{"scenario_id": "a", "reward": r} for r in (1.0, 0.0)] + [
        ...     {"scenario_id": "b", "reward": 1.0}, {"scenario_id": "b", "reward": 1.0}]
        >>> p = profile(rows)
        >>> p["mixed_tasks"], p["all_pass_tasks"], p["failing_rows"]
        (1, 1, 1)
    """
    df = table.frame(rows)
    reward = pl.col("reward").cast(pl.Float64) if "reward" in df.columns else pl.lit(None, pl.Float64)
    tasks = (
        df.lazy()
        .select(pl.col("task_key"), reward.alias("r"))
        .group_by("task_key")
        .agg(
            pl.col("r").is_not_null().sum().alias("k"),
            (pl.col("r") >= pass_threshold).sum().alias("n1"),
            (pl.col("r") < pass_threshold).sum().alias("n0"),
            pl.len().alias("n"),
        )
        .collect()
    )
    k, n1, n0 = tasks["k"], tasks["n1"], tasks["n0"]
    mixed = (n1 > 0) & (n0 > 0)
    return TrainingProfile(
        n_rows=df.height,
        n_graded=int(k.sum()),
        passing_rows=int(n1.sum()),
        failing_rows=int(n0.sum()),
        ungraded_rows=int((tasks["n"] - k).sum()),
        n_tasks=tasks.height,
        mixed_tasks=int(mixed.sum()),
        all_pass_tasks=int(((k >= 2) & (n0 == 0)).sum()),
        all_fail_tasks=int(((k >= 2) & (n1 == 0)).sum()),
        single_rollout_tasks=int((k == 1).sum()),
        ungraded_tasks=int((k == 0).sum()),
        mixed_rows=int(k.filter(mixed).sum()),
        pass_threshold=pass_threshold,
    )


class SelectionReport(Report):
    """The check a trainer runs on a profile before it trains: what it uses, what it drops and why."""

    method: str = "sft"
    """sft, dpo, grpo or rm."""
    ok: bool = True
    """False when SFT would train on failing rows (``wai.train.sft`` refuses them unless check="warn")."""
    unit: str = "rows"
    """What n_given and n_used count: rows (SFT) or tasks (grouped methods)."""
    n_given: int = 0
    """Rows (SFT) or tasks given."""
    n_used: int = 0
    """Rows (SFT) or mixed tasks the method learns from."""
    min_mixed_tasks: int = TRAIN_MIN_MIXED_TASKS
    """Fewest mixed tasks before a grouped method warns."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Count per dropped class (all_pass, all_fail, single_rollout, ungraded; SFT: failing)."""
    reasons: dict[str, str] = Field(default_factory=dict)
    """Why each dropped class teaches the method nothing."""

    def render(self) -> str:
        """A headline and one line per dropped class."""
        head = "OK" if self.ok and not self.warnings else ("REFUSED" if not self.ok else "WARN")
        lines = [f"{head} {self.method}: uses {self.n_used} of {self.n_given} {self.unit}"]
        lines.extend(f"  dropped {name}: {n} ({self.reasons.get(name, '')})" for name, n in self.dropped.items() if n)
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def selection_report(profile: TrainingProfile | dict[str, Any], /, *, method: str,
                     min_mixed_tasks: int = TRAIN_MIN_MIXED_TASKS) -> SelectionReport:
    """The check every training call runs before it trains, returned as a report: it never raises.

    A pre-check anyone can run without torch: ``ok``, what the method would use against what it
    is given, and the reason per dropped class. SFT trains on every row as given, so a set with
    failing rows is not ok; ``wai.train.sft`` then raises ``TrainingSelectionError`` before it
    loads torch (select passing rows first, or pass ``check="warn"`` to it). GRPO, DPO and a
    reward model learn only from mixed tasks (a group of equal rewards has zero advantage, Shao
    et al. 2024, arXiv:2402.03300, eq. 3), so nothing is refused, and fewer than
    ``min_mixed_tasks`` warns with the count used against the count given and the reason per
    dropped class (the training calls issue those warnings).

    Args:
        profile: A :class:`TrainingProfile` (or its dict).
        method: ``"sft"``, ``"dpo"``, ``"grpo"`` or ``"rm"``.
        min_mixed_tasks: Fewest mixed tasks before a grouped method warns.

    Returns:
        A :class:`SelectionReport`.

    Examples:
        >>> p = profile([{"scenario_id": "a", "reward": r} for r in (1.0, 0.0)])
        >>> selection_report(p, method="sft").ok, selection_report(p, method="grpo").n_used
        (False, 1)
    """
    check_choice("method", method, METHODS)
    p = profile if isinstance(profile, TrainingProfile) else TrainingProfile(**dict(profile))
    if method == "sft":
        dropped = {"failing": p.failing_rows, "ungraded": p.ungraded_rows}
        report = SelectionReport(method=method, unit="rows", n_given=p.n_rows, n_used=p.n_rows,
                                 ok=p.failing_rows == 0, min_mixed_tasks=min_mixed_tasks, dropped={}, reasons={})
        if p.failing_rows:
            report.dropped = {k: v for k, v in dropped.items() if v}
            report.reasons = {"failing": "SFT imitates every row it is given, failures included",
                              "ungraded": _REASONS["ungraded"]}
            report.warnings.append(
                f"{p.failing_rows} of {p.n_rows} rows fail (reward < {p.pass_threshold:g}): SFT would teach them. "
                "Train on the passing rows (scored.passes() or select(mode='sft')), or pass check='warn' to train on them on purpose.")
        return report
    dropped = {"all_pass": p.all_pass_tasks, "all_fail": p.all_fail_tasks,
               "single_rollout": p.single_rollout_tasks, "ungraded": p.ungraded_tasks}
    report = SelectionReport(method=method, unit="tasks", n_given=p.n_tasks, n_used=p.mixed_tasks,
                             min_mixed_tasks=min_mixed_tasks, dropped=dropped,
                             reasons={k: _REASONS[k] for k, v in dropped.items() if v})
    if p.mixed_tasks < min_mixed_tasks:
        parts = "; ".join(f"{v} {k} ({_REASONS[k]})" for k, v in dropped.items() if v)
        report.warnings.append(
            f"{method} learns from {p.mixed_tasks} of {p.n_tasks} tasks, under min_mixed_tasks={min_mixed_tasks}"
            + (f": dropped {parts}" if parts else "")
            + ". Simulate more tasks, or more rollouts a task, until profile(rows)['mixed_tasks'] reaches it.")
    return report
