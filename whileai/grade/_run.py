"""``run_judge``: a reward per rollout under one contract, written back as columns.

The judge is user code, so it is called once per row with the row as a dict; everything around
that call is columnar. Verdicts are collected into flat lists (reward, status, reason, markers,
judge_meta) and land on the table in one ``with_columns``; no row dict is rebuilt. Every grade
ends by checking the judge against the gold labels on the rows, when there are any.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

import polars as pl
from pydantic import Field

from whileai import table
from whileai._checks import check_choice, check_fraction, check_int, check_number
from whileai._progress import ProgressArg, check_progress
from whileai.defaults import (
    JUDGE_AGREEMENT_FLOOR,
    JUDGE_CONCURRENCY,
    JUDGE_KAPPA_FLOOR,
    JUDGE_TIMEOUT_S,
    MAX_SKIPPED_SHARE,
    PASS_THRESHOLD,
)
from whileai.errors import ArgumentError, JudgeError
from whileai.grade._contract import STATUSES, Verdict, check_judge, check_scale, judge_name_of
from whileai.grade._execute import run_calls, to_verdict
from whileai.grade._rows import iter_row_chunks
from whileai.grade._trust import JudgeTrustReport, TrustStamp, check_gold, gold_words, measure_trust
from whileai.report import NanFloat, Part, Report
from whileai.table import IntoRows
from whileai.table import normalize as nz

__all__ = ["GradeFailure", "GradeReport", "run_judge"]

_TRUST_MODES = ("warn", "require", "off")
_SOURCES = ("grade", "eval")


class GradeFailure(Part):
    """A row the judge gave no reward."""

    row: int = 0
    """Its position in the rows given."""
    status: str = ""
    """Its judge_status: missing_reward, invalid_result, error or timeout."""
    reason: str | None = None
    """What went wrong, in one line."""


class GradeReport(Report):
    """What a grade did: counts per judge_status, the run id, and the judge check."""

    judge_name: str = ""
    """The name the judge is recorded under (a lambda is ``lambda_judge``)."""
    scoring_run_id: str = ""
    """The id stamped on every row's ``lineage.scoring_run_id``."""
    source: str = "grade"
    """grade (training rewards) or eval (held-out scores)."""
    n_rows: int = 0
    """Rows given to the judge."""
    n_graded: int = 0
    """Rows with judge_status ok (a reward)."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Rows per judge_status: ok, missing_reward, invalid_result, error, timeout."""
    reward_mean: NanFloat = float("nan")
    """Mean reward over the graded rows."""
    pass_share: NanFloat = float("nan")
    """Share of graded rows with reward >= 0.5 (rows, not tasks; pass_at gives the task-level rate)."""
    partial_share: NanFloat = float("nan")
    """Share of graded rows with a reward strictly between 0 and 1."""
    markers: list[str] = Field(default_factory=list)
    """Marker names the judge returned."""
    failures: list[GradeFailure] = Field(default_factory=list)
    """The first failed rows: row index, status and reason."""
    mode: str = "inline"
    """How the judge ran: inline, threads or async."""
    concurrency: int = JUDGE_CONCURRENCY
    """Judge calls in flight when it ran on workers or a loop."""
    seconds: float = 0.0
    """Wall time of the grade."""
    trust: TrustStamp | None = None
    """The judge check against gold labels (agreement, agreement_low, kappa, n_gold, ok, status),
    or None when there were no labels or trust='off'."""
    trust_report: JudgeTrustReport | None = Field(default=None, exclude=True)
    """The full judge_trust report behind ``trust``."""

    def render(self) -> str:
        """The grade summary a person reads."""
        parts = [f"{name} {self.counts[name]}" for name in STATUSES if self.counts.get(name)]
        lines = [f"graded {self.n_graded} of {self.n_rows} rows with {self.judge_name} "
                 f"({self.scoring_run_id}): {', '.join(parts) or 'no rows'}"]
        if self.n_graded:
            lines.append(f"reward mean {self.reward_mean:.2f}, {self.pass_share:.0%} of graded rows pass"
                         + (f", {self.partial_share:.0%} partial credit" if self.partial_share else ""))
        tr = self.trust_report
        if tr is not None and tr.n_gold:
            word = {"ok": "OK", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}.get(tr.status, tr.status)
            kappa = "n/a" if math.isnan(tr.kappa) else f"{tr.kappa:.2f}"
            lines.append(f"judge check: {word} (agreement {tr.agreement:.0%} [{tr.agreement_ci95[0]:.0%}.."
                         f"{tr.agreement_ci95[1]:.0%}], kappa {kappa}, n={tr.n_gold} {gold_words(tr.gold_kind or 'unknown')})")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def run_judge(
    rows: IntoRows,
    /,
    judge: Callable[[Any], Any],
    *,
    judge_name: str | None = None,
    source: Literal["grade", "eval"] = "grade",
    concurrency: int = JUDGE_CONCURRENCY,
    timeout: float | Literal["default"] | None = "default",
    scale: tuple[float, float] | None = None,
    version: str | None = None,
    run_id: str | None = None,
    trust: Literal["warn", "require", "off"] = "warn",
    allow_model_gold: bool = False,
    max_skipped_share: float = MAX_SKIPPED_SHARE,
    progress: ProgressArg = None,
) -> table.StepResult:
    """Grade every row with ``judge`` and return the scored rows (README.md, "The loop, offline, no key", Grade).

    The judge takes one row dict and returns a number in [0, 1], a bool, or
    ``{"reward": ..., "markers": {...}, "reason": ..., ...}``. Markers land in the ``markers``
    struct (merged with markers already there); every other key goes to ``judge_meta``. A judge
    that raises, times out or returns something unusable leaves ``reward`` null on that row,
    never 0, with ``judge_status`` (ok, missing_reward, invalid_result, error, timeout) and the
    reason, and grading goes on; the report counts each outcome. A fast sync judge runs inline;
    a slow one (over ``JUDGE_SLOW_S`` a call) or an async one runs with at most ``concurrency``
    calls in flight. Every row's lineage gets ``scoring_run_id``, ``source`` and ``judge``.

    When rows carry gold labels (:func:`attach_labels`) the grade ends with the judge check
    (:func:`judge_trust` without re-judging) and stamps its summary on every row as
    ``judge_meta["trust"]`` (agreement, agreement_low, kappa, n_gold, ok); ``trust="require"``
    raises when the judge is unmeasured or under a floor, ``"off"`` skips the check.

    Args:
        rows: The rollouts (any input ``table.frame`` accepts; a fluent object keeps its meta).
        judge: The judge or verifier (sync or async callable).
        judge_name: Name recorded in ``judge_name`` (default: the function's name, a lambda is
            ``lambda_judge``, a verifier its class name).
        source: ``grade`` for training rewards, ``eval`` for held-out scores (lineage.source).
        concurrency: Calls in flight for slow or async judges (``JUDGE_CONCURRENCY``).
        timeout: Seconds per call; a call past it is ``timeout`` (runs every call on workers).
            ``"default"``: ``JUDGE_TIMEOUT_S`` on the calls made off the main thread (the first
            calls, slow and async judges; a judge fast on its first calls stays inline,
            untimed). None: no timeout.
        scale: ``(lo, hi)``: the judge returns ratings on this scale, mapped to [0, 1]; a bool
            is a verdict under any scale (True 1.0, False 0.0).
        version: Stamped as ``lineage.judge_version``.
        run_id: The scoring run id (default: ``score_`` plus 12 random hex).
        trust: ``warn`` (default), ``require`` or ``off`` for the judge check.
        allow_model_gold: Count model-written gold labels in the judge check.
        max_skipped_share: Partial-credit share past which the judge check is INCONCLUSIVE.
        progress: A tqdm.auto bar of rows judged (from ``PROGRESS_MIN_JUDGE_ROWS`` rows, on a
            terminal or in a notebook; True always, False never); a callable receives
            ``(done, total, info)`` instead.

    Returns:
        A :class:`whileai.table.StepResult`: the rows with the rewards in ``df``, a
        :class:`GradeReport` in ``report``. ``wai.run_judge`` and ``data.grade`` wrap it as
        ``ScoredData``.

    Raises:
        JudgeError: ``judge`` is not callable, or ``trust="require"`` and the check fails.
        ArgumentError: An option out of range.

    Examples:
        >>> scored = run_judge([{"prompt": "2+2?", "final_text": "4"}], lambda row: row["final_text"] == "4")
        >>> scored.df["reward"].to_list(), scored.df["judge_status"].to_list()
        ([1.0], ['ok'])
    """
    check_judge(judge)
    source = check_choice("source", source, _SOURCES, fix=f"Pass source={_SOURCES[0]!r}.")  # type: ignore[assignment]
    trust = check_choice("trust", trust, _TRUST_MODES, fix=f"Pass trust={_TRUST_MODES[0]!r}.")  # type: ignore[assignment]
    concurrency = check_int("concurrency", concurrency, fix="Pass concurrency=8.")
    off_thread_timeout = JUDGE_TIMEOUT_S if timeout == "default" else None
    timeout = None if timeout == "default" else check_number(
        "timeout", timeout, low=0.0, open_low=True, allow_none=True, fix="Pass timeout=30, 'default' or None.")
    scale_pair = check_scale(scale)
    max_skipped_share = check_fraction("max_skipped_share", max_skipped_share,
                                       fix="Pass max_skipped_share=0.1 for example.")
    if not isinstance(allow_model_gold, bool):
        raise ArgumentError(f"allow_model_gold must be True or False, got {allow_model_gold!r}.")
    name = judge_name_of(judge, judge_name)
    scoring_run_id = run_id if run_id is not None else f"score_{uuid.uuid4().hex[:12]}"
    started = time.perf_counter()
    df = table.frame(rows)
    check_progress(progress)
    if trust == "require":
        check_gold(df)  # bad labels fail before a single judge call, not after all of them
    raws, mode = run_calls(judge, iter_row_chunks(df), df.height, concurrency=concurrency, timeout=timeout,
                           off_thread_timeout=off_thread_timeout, progress=progress)
    rewards, statuses, reasons, markers, metas, failure_classes = _collect(raws, scale_pair,
                                                                           timeout or off_thread_timeout)
    del raws
    report = GradeReport(judge_name=name, scoring_run_id=scoring_run_id, source=source, n_rows=df.height,
                         mode=mode, concurrency=concurrency)
    reward_s = pl.Series("reward", rewards, dtype=pl.Float64)
    status_s = pl.Series("judge_status", statuses, dtype=pl.String)
    cols: list[Any] = [
        reward_s,
        status_s,
        pl.lit(name, pl.String).alias("judge_name"),
        pl.Series("reason", reasons, dtype=pl.String),
        _lineage(df, scoring_run_id=scoring_run_id, source=source, judge=name, version=version),
    ]
    marker_expr, marker_names = _markers(df, markers)
    if marker_expr is not None:
        cols.append(marker_expr)
    report.markers = marker_names
    if any(fc is not None for fc in failure_classes):
        cols.append(pl.Series("failure_class", failure_classes, dtype=pl.String))
    out = df.with_columns(cols)
    _count(report, reward_s, status_s, reasons)
    trust_stamp: Any = None
    if trust != "off":
        try:
            trust_report = measure_trust(out, floors={"min_agreement": JUDGE_AGREEMENT_FLOOR,
                                                      "min_kappa": JUDGE_KAPPA_FLOOR,
                                                      "max_skipped_share": max_skipped_share},
                                         allow_model_gold=allow_model_gold)
        except JudgeError as exc:  # unusable labels: the grade stands, the check says why it did not run
            trust_report = JudgeTrustReport(n_rows=out.height, warnings=[f"judge check skipped: {exc}"])
            skipped = True
        else:
            skipped = False
        trust_report.judge_name = name
        report.trust_report = trust_report
        if trust_report.n_labeled:
            trust_stamp = trust_report.summary()
            report.trust = TrustStamp(**trust_stamp)
        _trust_outcome(report, trust_report, trust, skipped=skipped)
    out = out.with_columns(_judge_meta(metas, trust_stamp, include_trust=trust != "off"))
    report.seconds = time.perf_counter() - started
    return table.StepResult(out, report)


def _collect(raws: list[Any], scale: tuple[float, float] | None,
             timeout: float | None) -> tuple[list[Any], list[str], list[Any], list[Any], list[Any], list[Any]]:
    """Verdict columns from the judge's raw returns; a plain number or ``{"reward": x}`` takes a fast path."""
    n = len(raws)
    rewards: list[Any] = []
    append = rewards.append
    slow: list[tuple[int, Verdict]] = []
    for i, raw in enumerate(raws):
        kind = type(raw)
        if scale is None:
            if kind is dict:
                if len(raw) == 1:
                    value = raw.get("reward")
                    vkind = type(value)
                    if (vkind is float or vkind is int or vkind is bool) and 0 <= value <= 1:
                        append(float(value))
                        continue
            elif (kind is float or kind is int or kind is bool) and 0 <= raw <= 1:
                append(float(raw))
                continue
        verdict = to_verdict(raw, scale, timeout)
        append(verdict.reward)
        slow.append((i, verdict))
    statuses = ["ok"] * n
    reasons: list[Any] = [None] * n
    markers: list[Any] = [None] * n
    metas: list[Any] = [None] * n
    failure_classes: list[Any] = [None] * n
    for i, v in slow:
        statuses[i] = v.status
        reasons[i] = v.reason
        markers[i] = v.markers
        metas[i] = v.meta
        failure_classes[i] = v.failure_class
    return rewards, statuses, reasons, markers, metas, failure_classes


def _lineage(df: pl.DataFrame, *, scoring_run_id: str, source: str, judge: str, version: str | None) -> pl.Expr:
    new = {"scoring_run_id": scoring_run_id, "source": source, "judge": judge}
    if version is not None:
        new["judge_version"] = str(version)
    keep: list[pl.Expr] = []
    dtype = df.schema.get("lineage")
    if isinstance(dtype, pl.Struct):
        keep = [pl.col("lineage").struct.field(f.name) for f in dtype.fields if f.name not in new]
    return pl.struct([*keep, *(pl.lit(v, pl.String).alias(k) for k, v in new.items())]).alias("lineage")


def _markers(df: pl.DataFrame, markers: list[Any]) -> tuple[pl.Expr | None, list[str]]:
    names: dict[str, None] = {}
    for m in markers:
        if m:
            for key in m:
                names.setdefault(key, None)
    if not names:
        return None, []
    fields = {k: pl.Series(k, [m.get(k) if m else None for m in markers], dtype=pl.Float64) for k in names}
    dtype = df.schema.get("markers")
    old = [f.name for f in dtype.fields] if isinstance(dtype, pl.Struct) else []
    exprs: list[pl.Expr] = [pl.col("markers").struct.field(f) for f in old if f not in fields]
    for key, series in fields.items():
        lit = pl.lit(series)
        if key in old:
            exprs.append(pl.coalesce(lit, pl.col("markers").struct.field(key).cast(pl.Float64)).alias(key))
        else:
            exprs.append(lit.alias(key))
    return pl.struct(exprs).alias("markers"), list(names)


def _judge_meta(metas: list[Any], trust_stamp: Any, *, include_trust: bool) -> pl.Series:
    dumps = nz.dumps
    values: list[str | None]
    if include_trust:
        empty = dumps({"trust": trust_stamp})
        values = [empty if not m else dumps({**m, "trust": trust_stamp}) for m in metas]
    else:
        values = [None if not m else dumps(m) for m in metas]
    return pl.Series("judge_meta", values, dtype=pl.String)


def _count(report: GradeReport, reward: pl.Series, status: pl.Series, reasons: list[Any]) -> None:
    counts = dict(status.value_counts().iter_rows()) if status.len() else {}
    report.counts = {name: int(counts.get(name, 0)) for name in STATUSES}
    report.n_graded = report.counts["ok"]
    graded = reward.drop_nulls()
    if graded.len():
        report.reward_mean = float(graded.mean())  # type: ignore[arg-type]
        report.pass_share = float((graded >= PASS_THRESHOLD).mean())  # type: ignore[arg-type]
        report.partial_share = float(((graded > 0) & (graded < 1)).mean())  # type: ignore[arg-type]
    failed = report.n_rows - report.n_graded
    if failed:
        bad = status.ne("ok").arg_true().head(5).to_list()
        report.failures = [GradeFailure(row=int(i), status=status[i], reason=reasons[i]) for i in bad]
        kinds = ", ".join(f"{name} {report.counts[name]}" for name in STATUSES[1:] if report.counts[name])
        first = report.failures[0].reason if report.failures else ""
        scope = f"all {report.n_rows}" if failed == report.n_rows else f"{failed} of {report.n_rows}"
        report.warnings.append(
            f"the judge failed on {scope} rows ({kinds}; first: {first}). Their reward stays null, not 0, and "
            "pass rates skip them; fix the judge and grade again.")


def _trust_outcome(report: GradeReport, trust_report: JudgeTrustReport, mode: str, *, skipped: bool = False) -> None:
    if trust_report.ok:
        return
    if skipped:
        line = trust_report.warnings[0]
    elif trust_report.n_labeled == 0:
        line = ("judge not measured: no gold labels on these rows. Label about 50 rows with "
                "attach_labels(rows, labels, kind='human') and grade again to measure it.")
    else:
        detail = next((w for w in trust_report.warnings if not w.startswith("the review queue")), "")
        word = {"fail": "FAIL", "inconclusive": "INCONCLUSIVE", "not_measured": "NOT MEASURED"}.get(trust_report.status, "")
        line = f"judge check {word}: {detail}".rstrip(": ")
    if mode == "require":
        raise JudgeError(f"the judge must pass its check against gold labels under trust='require', got: {line} "
                         "Or pass trust='warn' to grade anyway.", reason=trust_report.status,
                         report=trust_report)
    report.warnings.append(line)
