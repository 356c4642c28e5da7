"""The publish gate: refuse an RL-shaped set a grouped update would learn nothing from.

docs/select.md, "The publish gate": an RL-shaped run (repeats of one ask) is refused with
``PublishGateError`` when it is ungraded or has no mixed group; the report warns when unanimous
asks, or asks outside the difficulty band, are still present, and reports duplicates,
near-duplicate asks, length spread and the pooled reward correlations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import polars as pl
from pydantic import Field

from whileai import table
from whileai.defaults import DIFFICULTY_BAND, HACK_THRESHOLD, LENGTH_MAX_SPREAD, NEAR_DUP_JACCARD
from whileai.errors import PublishGateError
from whileai.report import Report
from whileai.selection._args import check_band, check_choice
from whileai.selection._calibration import CalibrationCounts, calibrate
from whileai.selection._groups import Signal, group_signal
from whileai.selection._hygiene import (
    Duplicates,
    LengthSpread,
    NearDuplicateAsks,
    duplicate_report,
    length_report,
    near_duplicate_asks,
)
from whileai.selection._rows import eval_sourced, has
from whileai.selection._scans import (
    Correlations,
    correlation_warnings,
    correlations,
    eval_sourced_warning,
)
from whileai.table import IntoRows

__all__ = ["GateReport", "publish_gate"]

_MODES = ("rl", "sft")


class GateReport(Report):
    """What the publish gate found. ``ok`` is False when it refused (``refusal`` says why)."""

    ok: bool = True
    """True unless the gate refused the set."""
    refusal: str | None = None
    """Why it refused: ``ungraded_rl_rows``, ``no_mixed_groups`` or ``reward_hack`` and a sentence."""
    rl_shaped: bool = False
    """Repeats of one ask (or ``mode="rl"``): the set is for a grouped update."""
    mode: str | None = None
    """The mode named on the call."""
    n_rows: int = 0
    """Rows checked."""
    n_graded: int = 0
    """Rows with a reward."""
    band: tuple[float, float] = DIFFICULTY_BAND
    """The difficulty band checked against."""
    signal: Signal = Field(default_factory=Signal)
    """``group_signal`` over the rows (mixed, unanimous, in-band counts and k-way numbers)."""
    calibration: CalibrationCounts = Field(default_factory=CalibrationCounts)
    """``calibrate``'s report: rows a stamp would cover, carried stamps kept."""
    duplicates: Duplicates = Field(default_factory=lambda: Duplicates.model_validate({}))
    """Duplicate rollouts within an ask still present."""
    near_duplicate_prompts: NearDuplicateAsks = Field(default_factory=NearDuplicateAsks)
    """Different tasks whose asks share most of their words."""
    length: LengthSpread = Field(default_factory=lambda: LengthSpread.model_validate({}))
    """Reply-length spread per ask."""
    correlations: Correlations = Field(default_factory=Correlations)
    """Pooled reward correlation with reply length, tool calls and turns, flagged at HACK_THRESHOLD."""
    hack_scan: Any = None
    """``whileai.guard.hack_scan`` over RL-shaped rows, when ``endorsed=`` or ``strict_hacks`` was given."""
    eval_sourced: int = 0
    """Rows whose reward came from evaluate()."""

    def render(self) -> str:
        """First line OK or REFUSED, then the counts and warnings."""
        head = "publish gate: OK" if self.ok else f"publish gate: REFUSED ({self.refusal})"
        s = self.signal
        lines = [head, f"  {self.n_rows} rows, {self.n_graded} graded; "
                       + ("RL-shaped" if self.rl_shaped else "not RL-shaped")
                       + (f"; asks mixed {s.n_mixed}, in band {s.n_in_band}, "
                          f"unanimous {s.n_all_zero + s.n_all_one}" if s else "")]
        if self.hack_scan is not None:
            lines.append(f"  hack scan: {_regime(self.hack_scan) or 'unknown'}")
        lines.extend(f"  warning: {w}" for w in self.warnings)
        return "\n".join(lines)


def publish_gate(
    rows: IntoRows,
    /,
    *,
    mode: Literal["rl", "sft"] | None = None,
    band: tuple[float, float] = DIFFICULTY_BAND,
    strict: bool = True,
    endorsed: Sequence[str] | None = None,
    strict_hacks: bool = False,
    policy: str | None = None,
    model: str | None = None,
) -> GateReport:
    """Check a training set before it is published, and refuse one a grouped update cannot use.

    RL-shaped means ``mode="rl"``, or (with no mode) some task with more than one row. Such a
    set is refused (``PublishGateError`` when ``strict``) when no row is graded or no ask has
    both a pass and a fail: every group-relative advantage would be zero (docs/select.md, "The publish
    gate"). With ``strict_hacks``, a ``hack_scan`` regime of ``reward_hack`` refuses too. The
    report warns (never drops) when unanimous asks or mixed asks outside ``band`` are still
    present (``select(mode="rl")`` prunes them), and reports duplicate rollouts (counted as the
    prune counts them), near-duplicate asks across tasks (word-set Jaccard >= NEAR_DUP_JACCARD),
    reply-length spread (a reply over LENGTH_MAX_SPREAD times its ask's median) and the pooled
    reward correlations (Gao et al. 2022). Calibration
    stamps are counted as ``calibrate`` would write them; carried stamps are kept, not
    re-measured. Nothing is mutated: call ``calibrate(rows)`` for the stamped rows.

    Args:
        rows: The rows to publish (anything ``table.frame`` reads; empty is OK and not RL-shaped).
        mode: "rl", "sft" or None (infer from repeats).
        band: The difficulty band (``DIFFICULTY_BAND``).
        strict: Raise on a refusal (False returns the report with ``ok=False``).
        endorsed: Features the reward should track; runs ``whileai.guard.hack_scan`` on RL rows.
        strict_hacks: Refuse when the hack scan says ``reward_hack``.
        policy: Policy version for the calibration stamp (default: each row's).
        model: Model for the calibration stamp (default: each row's).

    Returns:
        A :class:`GateReport`.

    Raises:
        PublishGateError: ``strict`` and the set is refused; ``.report`` on the error holds the report.
        ArgumentError: A bad ``mode`` or ``band``.
    """
    if mode is not None:
        check_choice("mode", mode, _MODES)
    lo, hi = check_band(band)
    df = table.frame(rows, allow_empty=True)
    if df.height == 0:
        return GateReport(ok=True, rl_shaped=False, mode=mode, band=(lo, hi),
                          warnings=["no rows to publish; the gate checked nothing"])
    if not has(df, "reward"):
        df = df.with_columns(pl.lit(None, pl.Float64).alias("reward"))
    n_graded = int(df["reward"].is_not_null().sum())
    repeats = bool(df.group_by("task_key").len()["len"].max() > 1)  # type: ignore[operator]
    rl = mode == "rl" or (mode is None and repeats)
    signal = group_signal(df, band=(lo, hi))
    cal = calibrate(df, policy=policy, model=model).report

    scan = None
    warnings: list[str] = []
    if rl and (endorsed is not None or strict_hacks):
        from whileai.selection._rl import _check_endorsed, _hack_scan

        scan = _hack_scan(df, _check_endorsed(endorsed or []), warnings)

    refusal = _refusal(df, rl=rl, n_graded=n_graded, signal=signal, scan=scan, strict_hacks=strict_hacks)
    if rl and refusal is None:
        warnings.extend(_signal_warnings(signal, cal, lo=lo, hi=hi))
    if n_graded < df.height:
        warnings.append(f"{df.height - n_graded} row(s) have no reward")
    hygiene = _hygiene(df, warnings)

    report = GateReport(
        ok=refusal is None,
        refusal=None if refusal is None else refusal[0],
        rl_shaped=rl,
        mode=mode,
        n_rows=df.height,
        n_graded=n_graded,
        band=(lo, hi),
        signal=Signal.model_validate(signal.model_dump()),
        calibration=CalibrationCounts.model_validate(cal.model_dump()),
        duplicates=hygiene.duplicates,
        near_duplicate_prompts=hygiene.near_duplicate_prompts,
        length=hygiene.length,
        correlations=hygiene.correlations,
        eval_sourced=hygiene.eval_sourced,
        hack_scan=scan,
        warnings=warnings,
    )
    if refusal is not None and strict:
        raise PublishGateError(f"{refusal[0]}: {refusal[1]}", reason=refusal[0], report=report)
    return report


def _regime(scan: Any) -> Any:
    return scan.get("regime") if isinstance(scan, dict) else getattr(scan, "regime", None)


def _scan_warnings(scan: Any) -> list[str]:
    value = scan.get("warnings") if isinstance(scan, dict) else getattr(scan, "warnings", None)
    return [str(w) for w in value or []]


# ------------------------------------------------------------------------------------------
# the gate's phases: refuse, say what select would still drop, the hygiene checks
# ------------------------------------------------------------------------------------------


def _refusal(df: pl.DataFrame, *, rl: bool, n_graded: int, signal: Any, scan: Any,
             strict_hacks: bool) -> tuple[str, str] | None:
    """Why the set is refused (a code and the sentence that says what to do), or None."""
    if rl and n_graded == 0:
        return ("ungraded_rl_rows", f"RL-shaped rows must be graded to publish, got 0 graded of {df.height} rows: "
                "a grouped update needs a reward on every rollout to have contrast. Grade first "
                "(data.grade(judge=...) or whileai.grade.run_judge), then publish.")
    if rl and signal.n_mixed == 0:
        return ("no_mixed_groups", f"RL-shaped rows must have at least one ask with both a pass and a fail, got none "
                f"of {signal.n_groups} asks ({signal.n_all_one} all pass, {signal.n_all_zero} all fail, "
                f"{signal.n_single} with one graded rollout): every group-relative advantage is zero and the run "
                "would train nothing. Regrade with a stricter rubric, raise difficulty, or grade more repeats.")
    if strict_hacks and scan is not None and _regime(scan) == "reward_hack":
        first = next(iter(_scan_warnings(scan)), "the reward tracks something it should not")
        return ("reward_hack", f"the reward must track the endorsed features, got a reward_hack regime from "
                f"hack_scan ({first}). Fix the judge (judge_trust, endorsed=) before publishing, or pass "
                "strict_hacks=False.")
    return None


def _signal_warnings(signal: Any, cal: Any, *, lo: float, hi: float) -> list[str]:
    """What an accepted RL set still holds that ``select(mode="rl")`` would drop, and carried stamps."""
    out = []
    out_of_band = signal.n_mixed - signal.n_in_band
    if out_of_band:
        out.append(f"{out_of_band} mixed ask(s) fall outside the {lo:.0%}..{hi:.0%} band and were not pruned; "
                   'select(mode="rl") drops them')
    unanimous = signal.n_all_zero + signal.n_all_one
    if unanimous:
        out.append(f'{unanimous} unanimous ask(s) still present ({signal.n_all_one} all pass, '
                   f'{signal.n_all_zero} all fail); select(mode="rl") drops them')
    if cal.n_carried:
        out.append(f"{cal.n_carried} row(s) keep the calibration stamp measured before a prune; the stamp is "
                   "the graded pass rate over k repeats, while this report's signal is over the rows present")
    return out


class _Hygiene(NamedTuple):
    """The gate's data-hygiene scans, each a report block."""

    duplicates: Duplicates
    near_duplicate_prompts: NearDuplicateAsks
    length: LengthSpread
    correlations: Correlations
    eval_sourced: int


def _hygiene(df: pl.DataFrame, warnings: list[str]) -> _Hygiene:
    """Duplicates, near-duplicate asks, length spread, pooled correlations and eval-sourced rewards."""
    duplicates = duplicate_report(df)
    if duplicates.n_dropped:
        warnings.append(f"{duplicates.n_dropped} duplicate rollout(s) within {duplicates.groups_affected} ask(s) "
                        'present; select(mode="rl") drops them')
    near = near_duplicate_asks(df, threshold=NEAR_DUP_JACCARD)
    if near.n_pairs:
        warnings.append(f"{near.n_prompts_involved} ask(s) of different tasks are near duplicates (word Jaccard >= "
                        f"{NEAR_DUP_JACCARD:g}, {near.n_pairs} pair(s) found): one situation counted as several "
                        "tasks in every report. Give them one scenario_id, or drop the copies before splitting")
    lengths = length_report(df, max_spread=LENGTH_MAX_SPREAD)
    if lengths.n_groups_wide_spread:
        warnings.append(f"{lengths.n_groups_wide_spread} ask(s) have a reply more than {LENGTH_MAX_SPREAD:g}x the "
                        "ask's median length; check hack_scan for reply_length before training")
    corr = correlations(df, threshold=HACK_THRESHOLD)
    warnings.extend(correlation_warnings(corr))
    n_eval = int(df.select(eval_sourced(df).sum()).item())
    if n_eval:
        warnings.append(eval_sourced_warning(n_eval, "row(s)"))
    return _Hygiene(duplicates, near, lengths, corr, n_eval)
