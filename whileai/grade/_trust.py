"""Does the judge agree with people? Agreement, kappa, halves, length bias, consistency, probes.

docs/grade.md, "judge_trust": agreement with a Wilson interval and Cohen's kappa against gold
labels, agreement on two task halves (tune the rubric on one, read the other), the judge's pass
rate on short versus long replies within the same human label (length bias the humans rule out),
and with the judge callable a re-judge of a sample as-is (consistency) and with neutral filler
appended (a flip means the judge reads length). Disagreements come back as a review queue. The
judge passes when the lower bound of agreement is at least ``JUDGE_AGREEMENT_FLOOR`` (0.80) and
kappa at least ``JUDGE_KAPPA_FLOOR`` (0.60).

Every count is one Polars pass over the labeled rows; only the re-judge and the probes call the
judge, on a seeded sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai._checks import check_fraction, check_int, check_number
from whileai._progress import ProgressArg, check_progress
from whileai.defaults import (
    CI_LEVEL,
    DEFAULT_SEED,
    JUDGE_AGREEMENT_FLOOR,
    JUDGE_CONCURRENCY,
    JUDGE_KAPPA_FLOOR,
    LENGTH_GAP_FLAG,
    LENGTH_MIN_N,
    MAX_SKIPPED_SHARE,
    PASS_THRESHOLD,
    PROBE_FLAG_RATE,
    PROBE_MIN_N,
    REVIEW_QUEUE_MAX,
    TRUST_SAMPLE,
)
from whileai.errors import JudgeError
from whileai.grade._contract import check_judge, judge_name_of
from whileai.grade._execute import judge_rows
from whileai.grade._perturb import FILLER, append_reply
from whileai.grade._probes import ProbeReport, _check_probes, _sample, judge_probes
from whileai.grade._rows import row_dicts
from whileai.report import ChartedReport, Part, Tone
from whileai.stats.agreement import (
    agreement_gate,
    cohen_kappa,
    confusion_2x2,
    kappa_interval,
    percent_agreement,
)
from whileai.stats.rng import check_rng
from whileai.stats.score import cluster_wilson
from whileai.stats.wilson import wilson
from whileai.table import IntoRows

__all__ = ["GOLD_KINDS", "Disagreement", "JudgeTrustReport", "LengthByLabel", "LengthSide", "TrustFloors", "TrustHalf", "TrustHalves",
           "TrustLength", "TrustPerturbation", "TrustSkipped", "TrustStamp", "format_judge_trust", "gold_words",
           "judge_trust", "trust_summary"]

#: Accepted gold kinds; "verifier" reads as "program" (docs/grade.md, "judge_trust").
GOLD_KINDS = ("human", "program", "model")

_NOT_MEASURED = (
    "judge trust is unmeasured: no row has a gold label, so `ok` is false for want of evidence, not for a failed "
    "check. Label about 50 rows (passes and failures) and attach them with "
    "attach_labels(rows, labels, kind='human'), then grade again."
)


def gold_words(kind: str) -> str:
    """How a warning names the gold it measured against.

    Examples:
        >>> gold_words("human"), gold_words("program")
        ('human labels', 'gold labels (program)')
    """
    return {"human": "human labels", "program": "gold labels (program)", "model": "model labels (not gold)",
            "unknown": "gold labels (unknown origin)"}.get(kind, f"gold labels ({kind})")


class TrustFloors(Part):
    """The floors a judge check reads, as ``judge_trust`` was given them (docs/grade.md, "judge_trust")."""

    min_agreement: float | None = None
    """Lowest lower bound of the agreement interval that passes (``JUDGE_AGREEMENT_FLOOR``)."""
    min_kappa: float | None = None
    """Lowest Cohen's kappa that passes (``JUDGE_KAPPA_FLOOR``)."""
    max_skipped_share: float | None = None
    """Share of partial-credit labeled rows past which the check is inconclusive (``MAX_SKIPPED_SHARE``)."""


class TrustSkipped(Part):
    """Labeled rows a judge check left out, by why."""

    partial: int = 0
    """Judge reward strictly between 0 and 1."""
    ungraded: int = 0
    """No judge reward (ungraded, or the judge failed)."""
    model_gold: int = 0
    """Labeled by a model (refused unless ``allow_model_gold``)."""
    share: float | None = float("nan")
    """partial over labeled graded rows (NaN when none is graded; None as stored JSON writes NaN)."""


class TrustStamp(Part):
    """A judge check in six numbers: what a graded row carries in ``judge_meta["trust"]`` (NaN as None)."""

    agreement: float | None = None
    """Share of counted rows where the judge's 0/1 reward equals the gold label."""
    agreement_low: float | None = None
    """Lower bound of the agreement interval (the number the floor reads)."""
    kappa: float | None = None
    """Cohen's kappa."""
    n_gold: int = 0
    """Labeled rows the agreement counts."""
    ok: bool = False
    """Measured and clean."""
    status: str = "not_measured"
    """ok, fail, not_measured or inconclusive."""


class TrustHalf(Part):
    """Agreement on one seeded half of the labeled tasks."""

    n: int = 0
    """Counted rows in the half."""
    n_tasks: int = 0
    """Tasks in the half."""
    agreement: float | None = None
    """Share of its rows where judge and gold agree."""
    ci95: tuple[float | None, float | None] | None = None
    """Wilson interval on that share."""
    kappa: float | None = None
    """Cohen's kappa in the half (NaN with one class)."""


class TrustHalves(Part):
    """Agreement on two seeded halves of the tasks (tune on one, read the other), or why it was skipped."""

    a: TrustHalf | None = None
    """The first half."""
    b: TrustHalf | None = None
    """The second half."""
    gap: float | None = None
    """a's agreement minus b's."""
    skipped: str | None = None
    """Why there are no halves (fewer than two labeled tasks)."""


class LengthSide(Part):
    """The judge's pass rate on the short or the long replies of one gold label."""

    n: int = 0
    """Rows on that side of the median."""
    pass_rate: float | None = None
    """Share the judge passes (None with no row)."""


class LengthByLabel(Part):
    """Short against long replies within one gold label, split at its median length."""

    median_chars: float | None = None
    """The split: median reply length in characters."""
    short: LengthSide | None = None
    """Replies at or under the median."""
    long: LengthSide | None = None
    """Replies over it."""
    gap: float | None = None
    """long pass rate minus short (NaN when a side is empty)."""
    flagged: bool = False
    """The gap is at least ``LENGTH_GAP_FLAG`` with ``LENGTH_MIN_N`` rows a side."""


class TrustLength(Part):
    """The judge's pass rate on short against long replies within each gold label, or why it was skipped."""

    gold_1: LengthByLabel | None = None
    """Within rows gold passes."""
    gold_0: LengthByLabel | None = None
    """Within rows gold fails."""
    max_gap: float | None = None
    """The larger absolute gap."""
    flagged: bool = False
    """Either label's gap is flagged."""
    skipped: str | None = None
    """Why it was not measured (gold has one class only)."""


class TrustPerturbation(Part):
    """The judge re-run on a sample as it was (consistency) and with neutral filler appended."""

    n: int = 0
    """Rows sampled."""
    consistency_n: int = 0
    """Re-judged rows the judge answered."""
    consistency_flips: int = 0
    """Of them, verdicts that changed."""
    consistency_flip_rate: float | None = None
    """consistency_flips / consistency_n."""
    consistency_ci95: tuple[float | None, float | None] | None = None
    """Wilson interval on that rate."""
    filler_n: int = 0
    """Rows the judge answered both as-is and with filler."""
    filler_flips: int = 0
    """Of them, verdicts the filler changed."""
    filler_flips_up: int = 0
    """Of those, fails the filler turned into passes."""
    filler_flip_rate: float | None = None
    """filler_flips / filler_n."""
    filler_ci95: tuple[float | None, float | None] | None = None
    """Wilson interval on that rate."""
    errors: int = 0
    """Judge calls that failed."""
    flag: float | None = None
    """The flip rate at which a check is flagged (``PROBE_FLAG_RATE``)."""
    consistency_flagged: bool = False
    """Re-judging flips at or over the flag with ``PROBE_MIN_N`` rows."""
    filler_flagged: bool = False
    """Filler flips at or over the flag with ``PROBE_MIN_N`` rows."""


class Disagreement(Part):
    """A row where the judge and the gold label disagree: the review queue's entry."""

    key: str = ""
    """The row: its rollout_id, else scenario_id#rollout_index, else its prompt (80 chars)."""
    task_key: str | None = None
    """Its task."""
    reward: float = 0.0
    """The judge's pass (1) or fail (0) at the threshold."""
    gold_reward: float = 0.0
    """The gold label's pass (1) or fail (0)."""
    reason: str | None = None
    """The judge's reason, when it gave one."""


class JudgeTrustReport(ChartedReport):
    """How far the judge's rewards can be believed (``judge_trust``)."""

    ok: bool = False
    """Measured and clean: agreement lower bound and kappa at or over their floors, not inconclusive."""
    status: Literal["ok", "fail", "not_measured", "inconclusive"] = "not_measured"
    """ok, fail (under a floor), not_measured (no usable gold), inconclusive (too many skipped, one class)."""
    judge_name: str | None = None
    """The judge checked, when it was given."""
    n_rows: int = 0
    """Rows given."""
    n_labeled: int = 0
    """Rows with a gold label."""
    n_gold: int = 0
    """Labeled rows the agreement counts: exact 0/1 judge reward, trusted gold kind."""
    gold_kind: str | None = None
    """The kind of gold measured against: human, program, unknown, model or mixed."""
    gold_kinds: dict[str, int] = Field(default_factory=dict)
    """Labeled rows per gold kind."""
    floors: TrustFloors = Field(default_factory=TrustFloors)
    """min_agreement, min_kappa, max_skipped_share."""
    skipped: TrustSkipped = Field(default_factory=TrustSkipped)
    """Labeled rows left out: partial (judge reward strictly between 0 and 1), ungraded (judge
    failed), model_gold (refused), and share (partial over labeled graded rows)."""
    agreement: float = float("nan")
    """Share of counted rows where the judge's 0/1 reward equals the gold label."""
    agreement_ci95: tuple[float, float] = (float("nan"), float("nan"))
    """Interval on the agreement (method in ``agreement_method``)."""
    agreement_method: Literal["wilson", "cluster_wilson"] = "wilson"
    """``wilson`` (Wilson 1927) when every task has one labelled row; ``cluster_wilson`` (clustered
    by task: the cluster-robust design effect on Wilson's interval, whileai.stats.score) when some
    task has several, since rollouts of one task share its difficulty and a judge's accuracy on it."""
    n_gold_tasks: int = 0
    """Tasks behind the counted labelled rows (the clusters of ``cluster_wilson``)."""
    agreement_low: float = float("nan")
    """Lower bound of that interval (the number the floor reads)."""
    kappa: float = float("nan")
    """Cohen's kappa (NaN when gold has one class only)."""
    kappa_ci95: tuple[float, float] = (float("nan"), float("nan"))
    """Large-sample interval on kappa (Fleiss, Cohen and Everitt 1969); NaN when kappa is."""
    confusion: dict[str, int] = Field(default_factory=dict)
    """tp (both pass), fp (judge passes, gold fails), fn (judge fails, gold passes), tn."""
    judge_pass_rate: float = float("nan")
    """Judge pass rate on the counted rows."""
    gold_pass_rate: float = float("nan")
    """Gold pass rate on the counted rows (the base rate kappa corrects for)."""
    pass_when_gold_fail: float = float("nan")
    """fp / (fp + tn): how often the judge passes what people failed."""
    fail_when_gold_pass: float = float("nan")
    """fn / (fn + tp): how often the judge fails what people passed."""
    one_class: bool = False
    """The gold set holds only passes or only failures: kappa and length flags are skipped."""
    held_out_halves: TrustHalves = Field(default_factory=TrustHalves)
    """Agreement on two seeded halves of the tasks (a, b): tune on one, read the other."""
    length_sensitivity: TrustLength = Field(default_factory=TrustLength)
    """Judge pass rate on short vs long replies within each gold label; max_gap, flagged."""
    perturbation: TrustPerturbation | None = None
    """With the judge: consistency (re-judge as-is) and filler (neutral filler appended) flip rates."""
    probes: ProbeReport | None = None
    """With the judge and probes=: the exploit probes (``judge_probes``'s report)."""
    exploitable_by: list[str] = Field(default_factory=list)
    """Probes that found a hole."""
    n_disagreements: int = 0
    """Counted rows where judge and gold differ."""
    disagreements: list[Disagreement] = Field(default_factory=list)
    """The review queue: the first disagreements (key, task_key, reward, gold_reward, reason)."""

    def summary(self) -> dict[str, Any]:
        """The trust stamp a graded row carries in ``judge_meta["trust"]``."""
        return trust_summary(self)

    def _cluster_words(self) -> str:
        return f" over {self.n_gold_tasks} tasks, clustered by task" if self.agreement_method == "cluster_wilson" else ""

    def verdict_word(self) -> tuple[str, Tone]:
        """OK good, FAIL bad, NOT MEASURED and INCONCLUSIVE warn."""
        return ({"ok": ("OK", "good"), "fail": ("FAIL", "bad"), "not_measured": ("NOT MEASURED", "warn"),
                 "inconclusive": ("INCONCLUSIVE", "warn")}[self.status])  # type: ignore[return-value]

    def figure_spec(self) -> dict[str, Any]:
        """Agreement and kappa with intervals, and the judge's short vs long pass rates per gold label."""
        from whileai.charts import judge_trust_chart

        ls = self.length_sensitivity
        short = [(ls.get(f"gold_{g}") or {}).get("short", {}).get("pass_rate") for g in (1, 0)]
        long_ = [(ls.get(f"gold_{g}") or {}).get("long", {}).get("pass_rate") for g in (1, 0)]
        return judge_trust_chart(
            self.agreement, self.agreement_ci95, self.kappa, self.kappa_ci95, short=short, long=long_,
            floors=(self.floors.min_agreement, self.floors.min_kappa),
            title=f"{self.verdict_word()[0]} · judge against {self.n_gold} labeled rows")

    def render(self) -> str:
        """The judge check a person reads; the first line is the verdict."""
        word = {"ok": "OK", "fail": "FAIL", "not_measured": "NOT MEASURED", "inconclusive": "INCONCLUSIVE"}[self.status]
        against = f" against {gold_words(self.gold_kind)}" if self.gold_kind else ""
        who = f"{self.judge_name} " if self.judge_name else "judge "
        lines = [f"{word}  {who}{against.strip()}".rstrip()]
        if self.n_gold:
            lines.append(
                f"agreement {_pct(self.agreement)} (95% {_pct(self.agreement_ci95[0])}..{_pct(self.agreement_ci95[1])}, "
                f"n={self.n_gold}{self._cluster_words()}), kappa {_num(self.kappa)}"
                f"   floors: lower bound {_pct(self.floors.min_agreement)}, kappa {_num(self.floors.min_kappa)}"
            )
            c = self.confusion
            lines.append(f"  confusion tp={c.get('tp', 0)} fp={c.get('fp', 0)} fn={c.get('fn', 0)} tn={c.get('tn', 0)}; "
                         f"judge passes {_pct(self.judge_pass_rate)}, gold passes {_pct(self.gold_pass_rate)}")
            for half in ("a", "b"):
                h = self.held_out_halves.get(half)
                if h:
                    lines.append(f"  half {half}: {_pct(h['agreement'])} (n={h['n']}, {h['n_tasks']} tasks)")
            ls = self.length_sensitivity
            if ls.get("skipped"):
                lines.append(f"  length: skipped ({ls['skipped']})")
            elif ls:
                lines.append(f"  length gap {_pct(ls.get('max_gap'))}" + ("  FLAGGED" if ls.get("flagged") else ""))
        elif self.n_labeled == 0:
            lines.append("no gold labels: the judge was not measured")
        sk = self.skipped
        if sk.partial or sk.ungraded or sk.model_gold:
            lines.append(f"  skipped: {sk.partial} partial-credit ({_pct(sk.get('share'))}), "
                         f"{sk.ungraded} ungraded, {sk.model_gold} model-labeled")
        if self.perturbation:
            p = self.perturbation
            lines.append(f"re-judge flips {_pct(p['consistency_flip_rate'])} (n={p['consistency_n']}), "
                         f"filler flips {_pct(p['filler_flip_rate'])} (n={p['filler_n']})")
        if self.probes is not None:
            from whileai.grade._probes import _probe_line

            lines.append(f"probes (n={self.probes.n}):")
            for name, probe in self.probes.probes.items():
                lines.append("  " + _probe_line(name, probe))
        if self.n_disagreements:
            lines.append(f"disagreements to review: {self.n_disagreements} (report['disagreements'])")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def _pct(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:.0f}%"


def _num(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.2f}"


def _finite(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def trust_summary(report: JudgeTrustReport) -> dict[str, Any]:
    """``{agreement, agreement_low, kappa, n_gold, ok, status}`` (NaN as None), the per-row stamp."""
    return {
        "agreement": _finite(report.agreement),
        "agreement_low": _finite(report.agreement_low),
        "kappa": _finite(report.kappa),
        "n_gold": report.n_gold,
        "ok": report.ok,
        "status": report.status,
    }


def format_judge_trust(report: JudgeTrustReport) -> str:
    """The printed form of a judge_trust report (``str(report)``): the verdict word first.

    OK, FAIL (the number, the floor and what to do), NOT MEASURED (no labels), or INCONCLUSIVE
    (too many partial-credit rows, or one class only).
    """
    return report.render()


# "messages" is listed so a table that has it keeps it, rather than having it rebuilt from
# prompt and final_text by frame().
_COLUMNS = ("reward", "gold_reward", "gold_kind", "final_text", "rollout_id", "scenario_id", "rollout_index",
            "prompt", "reason", "messages")


def judge_trust(
    rows: IntoRows,
    /,
    judge: Callable[[Any], Any] | None = None,
    *,
    rubric: Any = None,
    probes: Literal["all"] | Sequence[str] | None = None,
    allow_model_gold: bool = False,
    max_skipped_share: float = MAX_SKIPPED_SHARE,
    min_agreement: float = JUDGE_AGREEMENT_FLOOR,
    min_kappa: float = JUDGE_KAPPA_FLOOR,
    sample: int = TRUST_SAMPLE,
    seed: int | np.random.Generator = DEFAULT_SEED,
    concurrency: int = JUDGE_CONCURRENCY,
    timeout: float | None = None,
    level: float = CI_LEVEL,
    judge_name: str | None = None,
    progress: ProgressArg = None,
) -> JudgeTrustReport:
    """Check the judge's rewards against gold labels (docs/grade.md, "judge_trust").

    Counts the labeled rows whose judge reward is exactly 0 or 1 (partial-credit rows are
    skipped and counted; over ``max_skipped_share`` the check is INCONCLUSIVE) and gives
    agreement with a Wilson interval, Cohen's kappa (Cohen 1960), the confusion table,
    agreement on two seeded halves of the tasks, and the judge's pass rate on short versus long
    replies within each gold label. With ``judge`` it also re-judges a seeded sample as-is
    (consistency) and with neutral filler appended (a flip means the judge reads length), and
    with ``probes`` runs :func:`judge_probes`. ``ok`` is True only when the agreement's lower
    bound is at least ``min_agreement`` and kappa at least ``min_kappa``. With no labels the
    report is NOT MEASURED and ``ok`` is False for want of evidence. Model-written gold does not
    count unless ``allow_model_gold=True``; gold with no recorded kind counts as unknown.

    Args:
        rows: Graded rows with ``gold_reward`` (see :func:`attach_labels`).
        judge: The judge callable, for the re-judge checks and the probes.
        rubric: The judge's rubric, for the keyword probe.
        probes: ``"all"`` or probe names (needs ``judge``).
        allow_model_gold: Count ``gold_kind="model"`` rows as gold.
        max_skipped_share: Share of partial-credit labeled rows past which the check is INCONCLUSIVE.
        min_agreement: Floor on the agreement's lower bound (``JUDGE_AGREEMENT_FLOOR``).
        min_kappa: Floor on kappa (``JUDGE_KAPPA_FLOOR``).
        sample: Rows re-judged and probed.
        seed: Seed of the halves split and the samples.
        concurrency: Judge calls in flight when the judge is slow or async.
        timeout: Seconds per judge call.
        level: Interval level.
        judge_name: Name to report the judge under.
        progress: A tqdm.auto bar of the re-judging (terminal or notebook only by default; False
            never); a callable receives ``(done, total, info)`` instead.

    Returns:
        A :class:`JudgeTrustReport`; ``print(report)`` or :func:`format_judge_trust` reads it.

    Raises:
        JudgeError: Gold labels that are not 0/1, a judge that is not callable, or only
            model-written gold without ``allow_model_gold=True``.
        ArgumentError: An option out of range.
    """
    if judge is not None:
        check_judge(judge)
    probe_names = _check_probes(probes) if probes is not None else None
    sample = check_int("sample", sample, fix="Pass sample=40 for example.")
    concurrency = check_int("concurrency", concurrency, fix="Pass concurrency=40 for example.")
    floors = {"min_agreement": check_fraction("min_agreement", min_agreement, fix="Pass min_agreement=0.1 for example."),
              "min_kappa": check_number("min_kappa", min_kappa, low=-1.0, high=1.0, fix="Pass min_kappa=0.6 for example."),
              "max_skipped_share": check_fraction("max_skipped_share", max_skipped_share,
                                                   fix="Pass max_skipped_share=0.1 for example.")}
    level = check_fraction("level", level, fix="Pass level=0.1 for example.")
    check_progress(progress)
    df = table.frame(rows, columns=None if judge is not None else _COLUMNS)
    report = measure_trust(df, floors=floors, allow_model_gold=allow_model_gold, seed=seed, level=level,
                           refuse_model_gold=True)
    if judge is not None:
        report.judge_name = judge_name_of(judge, judge_name)
        if report.n_gold:
            report.perturbation = _perturbation(df, judge, sample=sample, seed=seed, concurrency=concurrency,
                                                timeout=timeout, level=level, progress=progress)
            _perturbation_warnings(report)
        if probe_names is not None:
            probe_report = judge_probes(df, judge, rubric=rubric, probes=probe_names, sample=sample, seed=seed,
                                        concurrency=concurrency, timeout=timeout, level=level, judge_name=judge_name)
            report.probes = probe_report
            report.exploitable_by = list(probe_report.exploitable_by)
            report.warnings.extend(probe_report.warnings)
    elif probe_names is not None:
        report.warnings.append("probes need the judge itself: call judge_trust(rows, judge, probes='all').")
    elif judge_name is not None:
        report.judge_name = judge_name
    return report


def _normalized_kind() -> pl.Expr:
    kind = pl.col("gold_kind").cast(pl.String).str.to_lowercase().str.strip_chars()
    return pl.when(kind.is_null() | (kind == "")).then(pl.lit("unknown")).when(kind == "verifier").then(
        pl.lit("program")).otherwise(kind)


def check_gold(df: pl.DataFrame) -> None:
    """Raise :class:`JudgeError` when gold labels on the table are not 0/1 or name an unknown kind."""
    if "gold_reward" not in df.columns or df["gold_reward"].null_count() == df.height:
        return
    gold = df.filter(pl.col("gold_reward").is_not_null())
    bad = gold.filter(~pl.col("gold_reward").cast(pl.Float64).is_in([0.0, 1.0]))
    if bad.height:
        value = bad["gold_reward"][0]
        raise JudgeError(
            f"gold_reward must be 0 or 1, got {value!r} on {bad.height} labeled row(s) "
            f"(first: {_row_key(bad.row(0, named=True))!r}). A gold label is a pass or a fail; "
            "round partial credit to 0/1 or drop those labels before attaching them.",
            value=value,
        )
    if "gold_kind" in df.columns:
        kinds = gold.select(_normalized_kind().alias("_kind"))["_kind"].unique().to_list()
        unknown = sorted(k for k in kinds if k not in ("human", "program", "model", "unknown"))
        if unknown:
            raise JudgeError(
                f"gold_kind must be one of human, program ('verifier' reads the same) or model, got {unknown[0]!r}. "
                "Re-attach the labels with attach_labels(rows, labels, kind='human').",
                value=unknown[0],
            )


def measure_trust(
    df: pl.DataFrame,
    *,
    floors: dict[str, float] | None = None,
    allow_model_gold: bool = False,
    seed: int | np.random.Generator = DEFAULT_SEED,
    level: float = CI_LEVEL,
    refuse_model_gold: bool = False,
) -> JudgeTrustReport:
    """The label-only part of :func:`judge_trust` on a frame (also what every grade ends with)."""
    floors = floors or {"min_agreement": JUDGE_AGREEMENT_FLOOR, "min_kappa": JUDGE_KAPPA_FLOOR,
                        "max_skipped_share": MAX_SKIPPED_SHARE}
    report = JudgeTrustReport(n_rows=df.height, floors=TrustFloors(**floors))
    if "gold_reward" not in df.columns or df["gold_reward"].null_count() == df.height:
        report.warnings.append(_NOT_MEASURED)
        return report
    kind_expr = _normalized_kind() if "gold_kind" in df.columns else pl.lit("unknown")
    reward = pl.col("reward") if "reward" in df.columns else pl.lit(None, pl.Float64)
    gold = df.filter(pl.col("gold_reward").is_not_null()).with_columns(
        kind_expr.alias("_kind"), reward.cast(pl.Float64).alias("_r"), pl.col("gold_reward").cast(pl.Float64).alias("_g"),
    )
    report.n_labeled = gold.height
    check_gold(df)
    kinds = dict(gold.group_by("_kind").len().sort("_kind").iter_rows())
    report.gold_kinds = {str(k): int(v) for k, v in kinds.items()}
    n_model = int(kinds.get("model", 0))
    if n_model and not allow_model_gold:
        gold = gold.filter(pl.col("_kind") != "model")
        if gold.height == 0:
            message = (f"all {n_model} gold labels were written by a model (gold_kind='model'), and a model's labels "
                       "are not a measurement of the judge. Label rows by hand (kind='human') or with a program "
                       "(kind='program'), or pass allow_model_gold=True to read them anyway.")
            if refuse_model_gold:
                raise JudgeError(message, counts={"n_model": n_model})
            report.warnings.append("judge trust is unmeasured: " + message)
            report.skipped = TrustSkipped(partial=0, ungraded=0, model_gold=n_model, share=float("nan"))
            report.gold_kind = "model"
            return report
        report.warnings.append(f"{n_model} model-labeled rows were not counted (gold_kind='model'); "
                               "pass allow_model_gold=True to count them.")
    used_kinds = sorted(set(gold["_kind"].to_list()))
    report.gold_kind = used_kinds[0] if len(used_kinds) == 1 else "mixed"
    words = gold_words(report.gold_kind) if report.gold_kind != "mixed" else f"gold labels ({', '.join(used_kinds)})"
    if "unknown" in used_kinds:
        report.warnings.append(
            f"{int(kinds.get('unknown', 0))} labeled rows carry no gold_kind, so who labeled them is unknown; "
            "re-attach them with attach_labels(rows, labels, kind='human') (or 'program') to say.")
    graded = gold.filter(pl.col("_r").is_not_null())
    n_ungraded = gold.height - graded.height
    exact = graded.filter(pl.col("_r").is_in([0.0, 1.0]))
    n_partial = graded.height - exact.height
    share = n_partial / graded.height if graded.height else float("nan")
    report.skipped = TrustSkipped(partial=n_partial, ungraded=n_ungraded,
                                  model_gold=n_model if not allow_model_gold else 0, share=share)
    if n_ungraded:
        report.warnings.append(f"{n_ungraded} labeled rows have no judge reward (ungraded or the judge failed); "
                               "they are not counted. Grade them, or fix the judge failures, and check again.")
    if exact.height == 0:
        report.status = "not_measured" if graded.height == 0 else "inconclusive"
        report.warnings.append(
            f"no labeled row has an exact 0/1 judge reward ({n_partial} partial, {n_ungraded} ungraded), so agreement "
            f"with {words} cannot be counted. Use Criterion(kind='hard') or a 0/1 judge, and grade the labeled rows.")
        return report
    _agreement(report, exact, words, level=level)
    _halves(report, exact, seed=seed, level=level)
    _length(report, exact, words)
    _queue(report, exact)
    inconclusive = (not math.isnan(share)) and share > floors["max_skipped_share"]
    if inconclusive:
        report.warnings.append(
            f"{n_partial} of {graded.height} labeled rows ({_pct(share)}) have partial-credit rewards and were skipped, "
            f"over the {_pct(floors['max_skipped_share'])} max_skipped_share: the rows kept are only the ones the judge "
            "was sure about. Make the criteria exact with Criterion(kind='hard'), or grade with a 0/1 judge.")
    gate = agreement_gate(report.agreement, report.n_gold, floor=floors["min_agreement"], lower=report.agreement_low)
    ok = not inconclusive and not report.one_class and gate.ok and report.kappa >= floors["min_kappa"]
    report.ok = bool(ok)
    report.status = "ok" if ok else ("inconclusive" if inconclusive or report.one_class else "fail")
    if not inconclusive and not report.one_class:
        if not gate.ok:
            report.warnings.append(
                f"agreement with {words} is {_pct(report.agreement)} with a 95% lower bound of "
                f"{_pct(report.agreement_low)}, under the {_pct(floors['min_agreement'])} floor: read the "
                f"{report.n_disagreements} disagreements in report['disagreements'], fix the judge's rubric on half a "
                f"and check it on half b" + (", and label more rows (the interval is wide)" if report.n_gold < 100 else "")
                + ".")
        if not math.isnan(report.kappa) and report.kappa < floors["min_kappa"]:
            report.warnings.append(
                f"kappa against {words} is {report.kappa:.2f}, under the {floors['min_kappa']:.2f} floor: the judge agrees "
                f"little beyond what its pass rate ({_pct(report.judge_pass_rate)}) and the labels' "
                f"({_pct(report.gold_pass_rate)}) give by chance. Check the review queue for a class the judge misses.")
    return report


def _agreement(report: JudgeTrustReport, exact: pl.DataFrame, words: str, *, level: float) -> None:
    judge = exact["_r"].to_numpy()
    gold = exact["_g"].to_numpy()
    conf = confusion_2x2(judge, gold)
    tp, fp, fn, tn = int(conf[0, 0]), int(conf[0, 1]), int(conf[1, 0]), int(conf[1, 1])
    n = tp + fp + fn + tn
    report.n_gold = n
    report.confusion = {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    report.agreement = percent_agreement(conf)
    per_task = (exact.with_columns((pl.col("_r") == pl.col("_g")).cast(pl.Float64).alias("_agree"))
                .group_by("task_key").agg(pl.col("_agree").sum().alias("x"), pl.len().alias("n")))
    report.n_gold_tasks = per_task.height
    if per_task.height and int(per_task["n"].max()) > 1:  # type: ignore[arg-type]
        lo, hi = cluster_wilson(per_task["x"].to_numpy(), per_task["n"].to_numpy(), level=level)
        report.agreement_method = "cluster_wilson"
    else:
        lo, hi = wilson(tp + tn, n, level=level)
    report.agreement_ci95 = (float(lo), float(hi))
    report.agreement_low = float(lo)
    report.judge_pass_rate = (tp + fp) / n
    report.gold_pass_rate = (tp + fn) / n
    report.pass_when_gold_fail = fp / (fp + tn) if fp + tn else float("nan")
    report.fail_when_gold_pass = fn / (fn + tp) if fn + tp else float("nan")
    if tp + fn == 0 or fp + tn == 0:
        report.one_class = True
        which = "failures" if tp + fn == 0 else "passes"
        report.warnings.append(
            f"the {words} are all {which} ({n} rows), so kappa and the length check are skipped and ok stays false: "
            "agreement on one class cannot tell a judge from a constant. Label some "
            f"{'passes' if which == 'failures' else 'failures'} too.")
    else:
        report.kappa = cohen_kappa(conf)
        report.kappa_ci95 = kappa_interval(conf, level=level)


def _halves(report: JudgeTrustReport, exact: pl.DataFrame, *, seed: Any, level: float) -> None:
    tasks = exact["task_key"].unique().sort()
    if tasks.len() < 2:
        report.held_out_halves = TrustHalves(skipped="fewer than two labeled tasks")
        return
    rng = check_rng(seed)
    order = rng.permutation(tasks.len())
    half = np.empty(tasks.len(), dtype=object)
    half[order[: (tasks.len() + 1) // 2]] = "a"
    half[order[(tasks.len() + 1) // 2:]] = "b"
    mapping = pl.DataFrame({"task_key": tasks, "_half": pl.Series(half.tolist(), dtype=pl.String)})
    stats = (
        exact.join(mapping, on="task_key", how="left")
        .group_by("_half")
        .agg(pl.len().alias("n"), (pl.col("_r") == pl.col("_g")).sum().alias("agree"),
             pl.col("task_key").n_unique().alias("n_tasks"),
             ((pl.col("_r") == 1) & (pl.col("_g") == 1)).sum().alias("tp"),
             ((pl.col("_r") == 1) & (pl.col("_g") == 0)).sum().alias("fp"),
             ((pl.col("_r") == 0) & (pl.col("_g") == 1)).sum().alias("fn"),
             ((pl.col("_r") == 0) & (pl.col("_g") == 0)).sum().alias("tn"))
    )
    out: dict[str, Any] = {}
    for row in stats.iter_rows(named=True):
        n, agree = int(row["n"]), int(row["agree"])
        lo, hi = wilson(agree, n, level=level)
        conf = [[row["tp"], row["fp"]], [row["fn"], row["tn"]]]
        out[row["_half"]] = {"n": n, "n_tasks": int(row["n_tasks"]), "agreement": agree / n,
                             "ci95": (float(lo), float(hi)), "kappa": cohen_kappa(conf)}
    if "a" in out and "b" in out:
        out["gap"] = out["a"]["agreement"] - out["b"]["agreement"]
    report.held_out_halves = TrustHalves.model_validate({k: out[k] for k in ("a", "b", "gap") if k in out})


def _length(report: JudgeTrustReport, exact: pl.DataFrame, words: str) -> None:
    if report.one_class:
        report.length_sensitivity = TrustLength(skipped="gold has one class only")
        return
    chars = (pl.col("final_text").str.len_chars().fill_null(0) if "final_text" in exact.columns else pl.lit(0))
    data = exact.select(pl.col("_g"), pl.col("_r"), chars.alias("_len"))
    out: dict[str, Any] = {}
    gaps: list[float] = []
    flagged = False
    for label in (1, 0):
        part = data.filter(pl.col("_g") == float(label))
        median = part["_len"].median()
        stats = part.group_by((pl.col("_len") > median).alias("_long")).agg(
            pl.len().alias("n"), (pl.col("_r") >= PASS_THRESHOLD).mean().alias("pass"))
        by = {bool(r["_long"]): r for r in stats.iter_rows(named=True)}
        short, long_ = by.get(False), by.get(True)
        entry: dict[str, Any] = {
            "median_chars": float(median) if isinstance(median, (int, float)) else None,
            "short": {"n": int(short["n"]), "pass_rate": float(short["pass"])} if short else {"n": 0, "pass_rate": None},
            "long": {"n": int(long_["n"]), "pass_rate": float(long_["pass"])} if long_ else {"n": 0, "pass_rate": None},
        }
        gap = (long_["pass"] - short["pass"]) if short and long_ else float("nan")
        entry["gap"] = gap
        entry["flagged"] = bool(short and long_ and abs(gap) >= LENGTH_GAP_FLAG
                                and min(short["n"], long_["n"]) >= LENGTH_MIN_N)
        if not math.isnan(gap):
            gaps.append(abs(gap))
        if entry["flagged"]:
            flagged = True
            side = "passes" if label == 1 else "fails"
            direction = "long" if gap > 0 else "short"
            report.warnings.append(
                f"among rows the {words} mark as {side}, the judge passes {direction} replies {_pct(abs(gap))} points more "
                f"often ({_pct(entry['long']['pass_rate'])} long vs {_pct(entry['short']['pass_rate'])} short, "
                f"split at {entry['median_chars']:.0f} chars): it reads length the labels rule out. Tell the judge to "
                "ignore length, or score the answer itself.")
        out[f"gold_{label}"] = entry
    out["max_gap"] = max(gaps) if gaps else float("nan")
    out["flagged"] = flagged
    report.length_sensitivity = TrustLength.model_validate(out)


def _row_key(row: dict[str, Any]) -> str:
    if row.get("rollout_id") is not None:
        return str(row["rollout_id"])
    if row.get("scenario_id") is not None and row.get("rollout_index") is not None:
        return f"{row['scenario_id']}#{row['rollout_index']}"
    prompt = row.get("prompt")
    return str(prompt)[:80] if prompt is not None else str(row.get("task_key"))


def _queue(report: JudgeTrustReport, exact: pl.DataFrame) -> None:
    wrong = exact.filter(pl.col("_r") != pl.col("_g"))
    report.n_disagreements = wrong.height
    cols = [c for c in ("rollout_id", "scenario_id", "rollout_index", "prompt", "task_key", "reason") if c in wrong.columns]
    queue = []
    for row in wrong.head(REVIEW_QUEUE_MAX).select([*cols, "_r", "_g"]).iter_rows(named=True):
        item = {"key": _row_key(row), "task_key": row.get("task_key"), "reward": row["_r"], "gold_reward": row["_g"]}
        if row.get("reason") is not None:
            item["reason"] = row["reason"]
        queue.append(Disagreement.model_validate(item))
    report.disagreements = queue
    if wrong.height > REVIEW_QUEUE_MAX:
        report.warnings.append(f"the review queue lists the first {REVIEW_QUEUE_MAX} of {wrong.height} disagreements.")


def _perturbation(df: pl.DataFrame, judge: Callable[[Any], Any], *, sample: int, seed: Any, concurrency: int,
                  timeout: float | None, level: float, progress: ProgressArg = None) -> TrustPerturbation:
    graded = df.with_row_index("_i").filter(pl.col("gold_reward").is_not_null() & pl.col("reward").is_in([0.0, 1.0]))
    pick = graded["_i"].to_numpy()[_sample(graded.height, sample, seed)]
    sub = df[pick]
    rows = row_dicts(sub)
    stored = sub["reward"].to_numpy()
    batch = rows + [append_reply(r, suffix=FILLER) for r in rows]
    verdicts = judge_rows(judge, batch, concurrency=concurrency, timeout=timeout, label="re-judging",
                          progress=progress)
    n = len(rows)
    again, filler = verdicts[:n], verdicts[n:]
    ok_again = np.array([v.status == "ok" for v in again])
    pass_again = np.array([v.reward is not None and v.reward >= PASS_THRESHOLD for v in again])
    ok_fill = np.array([v.status == "ok" for v in filler])
    pass_fill = np.array([v.reward is not None and v.reward >= PASS_THRESHOLD for v in filler])
    stored_pass = stored >= PASS_THRESHOLD
    c_n = int(ok_again.sum())
    c_flips = int((ok_again & (pass_again != stored_pass)).sum())
    both = ok_again & ok_fill
    f_n = int(both.sum())
    f_flips = int((both & (pass_fill != pass_again)).sum())
    c_lo, c_hi = wilson(c_flips, c_n, level=level)
    f_lo, f_hi = wilson(f_flips, f_n, level=level)
    return TrustPerturbation.model_validate({
        "n": n,
        "consistency_n": c_n,
        "consistency_flips": c_flips,
        "consistency_flip_rate": c_flips / c_n if c_n else float("nan"),
        "consistency_ci95": (float(c_lo), float(c_hi)),
        "filler_n": f_n,
        "filler_flips": f_flips,
        "filler_flips_up": int((both & pass_fill & ~pass_again).sum()),
        "filler_flip_rate": f_flips / f_n if f_n else float("nan"),
        "filler_ci95": (float(f_lo), float(f_hi)),
        "errors": int((~ok_again).sum() + (~ok_fill).sum()),
        "flag": PROBE_FLAG_RATE,
        "consistency_flagged": bool(c_n >= PROBE_MIN_N and c_flips / max(c_n, 1) >= PROBE_FLAG_RATE),
        "filler_flagged": bool(f_n >= PROBE_MIN_N and f_flips / max(f_n, 1) >= PROBE_FLAG_RATE),
    })


def _perturbation_warnings(report: JudgeTrustReport) -> None:
    p = report.perturbation
    if not p:
        return
    if p["consistency_flagged"]:
        report.warnings.append(
            f"re-judged as they were, {p['consistency_flips']} of {p['consistency_n']} rows "
            f"({_pct(p['consistency_flip_rate'])}) changed verdict: the judge is not consistent with itself. "
            "Grade at temperature 0, or average several judge calls.")
    if p["filler_flagged"]:
        report.warnings.append(
            f"neutral filler appended to the reply flipped {p['filler_flips']} of {p['filler_n']} verdicts "
            f"({_pct(p['filler_flip_rate'])}): the judge reads length or padding, and a policy trained on it will pad.")
    if p["errors"]:
        report.warnings.append(f"the judge failed on {p['errors']} of the re-judge calls; they are not counted.")
