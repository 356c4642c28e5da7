"""The delta report as text: ``format_delta_report`` and the small formatters it and the report share.

The headline comes first, exactly PASS, NO DIFFERENCE, FAIL or NOT COMPARABLE (causes); then the
target's reading, the eval's noise band, the sizing line, what would resolve a NO DIFFERENCE and
what the band costs; then one line per metric and one per ``by=`` group, then the warnings
(docs/measure.md, "delta_report (and compare)"). Nothing here computes: every number is a field of
the :class:`~whileai.measure._delta.DeltaReport` already.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from whileai.defaults import POWER
from whileai.measure._compare import _p
from whileai.measure._format import fmt_interval, fmt_signed
from whileai.measure._holdout import min_sign_flip_tasks

if TYPE_CHECKING:
    from whileai.measure._delta import DeltaReport, GroupDelta

__all__ = ["format_delta_report"]


def format_delta_report(report: DeltaReport) -> str:
    """The delta report as text: the headline first, then the reading, then one line per metric.

    The first line is exactly PASS, NO DIFFERENCE, FAIL or NOT COMPARABLE (causes) (docs/measure.md,
    "delta_report (and compare)").

    Args:
        report: A :class:`DeltaReport`.

    Returns:
        The printed report (``str(report)`` is the same text).
    """
    r = report
    lines = [r.headline, *_target_lines(r)]
    if r.detectable_effect is not None or r.tasks_needed is not None:
        lines.append(_sizing_line(r))
    if r.resolve.get("line"):
        lines.append(r.resolve["line"])
    if r.moved_detectable_effect is not None and r.detectable_effect is not None:
        lines.append(f"band cost: the noise band calls a gain moved at {POWER:.0%} power from "
                     f"{fmt_signed(r.moved_detectable_effect)} (the test alone: {fmt_signed(r.detectable_effect)})")
    lines.extend(_metric_line(name, m) for name, m in r.metrics.items())
    lines.extend(_group_lines(r))
    lines.extend(f"! {w}" for w in r.warnings)
    return "\n".join(lines)


def _target_lines(r: DeltaReport) -> list[str]:
    """The target's reading, the guards that failed, and the eval noise (or that it is unknown)."""
    lines = []
    t = r.metrics.get(r.target)
    if t is not None:
        lines.append(f"{r.target}: {r.target_verdict} ({fmt_signed(r.target_delta)}, {r.level:.0%} "
                     f"{_ci_words(r.target_ci95)}, {t.get('n_paired', 0)} paired tasks{_disagreement(t)})")
    if r.guards_failed:
        lines.append("failed guards: " + ", ".join(r.guards_failed))
    if r.noise_band is not None:
        lines.append(f"eval noise: run_std {r.run_std:.3f}, a delta under {r.noise_band:.3f} is noise ({r.noise_rule})")
    elif r.target_verdict == "moved_unreplicated":
        lines.append(f"repeated: 1 run a side, noise unknown ({r.target} {fmt_signed(r.target_delta)}; "
                     "simulate(tasks=..., runs=3) shows whether the verdict repeats)")
    return lines


def _sizing_line(r: DeltaReport) -> str:
    """What these paired tasks detect at ``POWER``, and what the observed delta needs."""
    floor = min_sign_flip_tasks(1.0 - r.level)
    size = (f"sizing: {r.n_paired_tasks} paired tasks detect {fmt_signed(r.detectable_effect)} at {POWER:.0%} power"
            if r.detectable_effect is not None else
            f"sizing: {r.n_paired_tasks} paired tasks detect no gain: the sign-flip test needs {floor} to reach "
            f"p < {1.0 - r.level:.2g}")
    if r.tasks_needed is not None:
        size += f"; the observed {fmt_signed(r.target_delta)} needs {r.tasks_needed}"
    if r.repeats and len(set(r.repeats.values())) > 1:
        size += f" (k={r.repeats.get('before')} before, k={r.repeats.get('after')} after)"
    return size


def _metric_line(name: str, m: Any) -> str:
    noise = f"  noise<{m['noise_band']:.3f}" if m.get("noise_band") is not None else ""
    word = {"up": "up", "down": "down"}.get(m.get("direction", "none"), "")
    return (f"  {name:<28} {_num(m.get('mean_a'))} -> {_num(m.get('mean_b'))}  {fmt_signed(m.get('delta', math.nan))} "
            f"{fmt_interval(_tuple(m.get('ci95')), signed=True)}  {word or m.get('gain_verdict', '')}  "
            f"({m.get('n_paired', 0)} paired{_disagreement(m, short=True)}){noise}")


def _group_lines(r: DeltaReport) -> list[str]:
    if not r.groups:
        return []
    lines = [f"by {r.by}:"]
    for g, grp in r.groups.items():
        flag = "  DOWN" if g in r.groups_down else ""
        lines.append(f"  {g:<28} {_num(grp.get('mean_a'))} -> {_num(grp.get('mean_b'))}  {fmt_signed(grp.get('delta', math.nan))} "
                     f"{fmt_interval(_tuple(grp.get('ci95')), signed=True)}  ({grp.get('n_paired', 0)} paired){flag}")
    return lines


def _num(v: Any) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.3f}"


def _tuple(v: Any) -> tuple[float, float] | None:
    return None if v is None else (float(v[0]), float(v[1]))


def _ci_words(ci: tuple[float, float] | None) -> str:
    return "interval n/a" if ci is None else f"{ci[0]:+.3f}..{ci[1]:+.3f}"


def _disagreement(m: Mapping[str, Any] | GroupDelta, *, short: bool = False) -> str:
    """Words for a metric whose printed interval reads otherwise than the test behind its verdict, else ''.

    The verdict follows the test (the exact sign-flip test on paired tasks, Welch's on the
    unpaired fallback); the printed interval is the estimate's precision (the score interval, or
    the t or bootstrap one asked for), which at few tasks can exclude zero while the exact test
    cannot reject, or the reverse.
    """
    if m.get("interval_agrees", True) or m.get("ci95") is None:
        return ""
    test = "sign-flip" if m.get("test") == "sign_flip" else "Welch"
    p = m.get("p_value")
    p_words = f"{test} p {_p(p)}" if p is not None and math.isfinite(p) else f"{test} test"
    if short:
        return f"; {p_words} decides"
    n = m.get("n_paired", 0) if m.get("paired") else m.get("n_used", 0)
    exact = "exact " if test == "sign-flip" else ""
    return f"; {p_words}: the interval and the {exact}test disagree at {n} tasks; the test decides"

