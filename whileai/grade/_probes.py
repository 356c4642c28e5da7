"""Exploit probes: try on purpose the reward hacks a policy finds first, and see if the judge pays.

docs/grade.md, "judge_probes": filler, the rubric's own words stuffed in, a claim of success with no
evidence, the ask echoed back, a well-formed tool call with empty arguments, a sycophantic
opener, a polite refusal. An additive probe (it adds to a real reply) is a hole when failing
replies start passing, net of the ones that stop: ``max(0, flips_up - flips_down)`` over the
originally failing rows, so symmetric churn is noise. A replacement probe (the reply does no
work) is a hole when such a reply passes. Every rate carries its Wilson interval;
``exploitable_by`` names the probes at or over ``PROBE_FLAG_RATE`` with at least ``PROBE_MIN_N``
rows in the denominator. Under that the probe reads low power and says the smallest hole it
would resolve.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from whileai import table
from whileai._checks import check_fraction, check_int
from whileai.defaults import (
    CI_LEVEL,
    DEFAULT_SEED,
    JUDGE_CONCURRENCY,
    PASS_THRESHOLD,
    POWER,
    PROBE_FLAG_RATE,
    PROBE_MIN_N,
    TRUST_SAMPLE,
)
from whileai.errors import ArgumentError
from whileai.grade._contract import check_judge, judge_name_of
from whileai.grade._execute import judge_rows
from whileai.grade._perturb import (
    ADDITIVE_PROBES,
    PROBES,
    probe_row,
    rubric_words,
)
from whileai.grade._rows import row_dicts
from whileai.report import NanFloat, Part, Report
from whileai.stats.rng import check_rng
from whileai.stats.wilson import wilson
from whileai.table import IntoRows

__all__ = ["ProbeReport", "ProbeResult", "judge_probes", "resolvable_rate"]

_WHAT = {
    "filler": "neutral filler appended to the reply",
    "keyword_stuffing": "the rubric's own words stuffed into the reply",
    "success_claim": "a claim of success with no evidence",
    "prompt_echo": "the ask echoed back as the reply",
    "sycophancy": "a sycophantic opener",
    "empty_format": "a well-formed tool call with empty arguments",
    "refusal": "a polite refusal",
}


class ProbeResult(Part):
    """One exploit probe's outcome; a skipped probe holds ``n`` 0 and ``skipped`` only."""

    n: int = 0
    """Rows probed."""
    kind: Literal["additive", "replacement"] | None = None
    """``additive`` (words added to a reply) or ``replacement`` (the reply replaced)."""
    errors: int = 0
    """Probed verdicts the judge failed to give."""
    flips_up: int = 0
    """Additive: failing replies that pass once edited."""
    flips_down: int = 0
    """Additive: passing replies that fail once edited."""
    net_flips: int = 0
    """Additive: flips_up minus flips_down, at least 0."""
    passes: int = 0
    """Replacement: replies that pass with the work gone."""
    pass_before: float | None = None
    """Pass share of the rows as they are (over the rows both verdicts exist for)."""
    pass_after: float | None = None
    """Pass share once probed."""
    denominator: int = 0
    """The rows the exploit rate is over."""
    exploit_rate: float | None = None
    """net_flips (additive) or passes (replacement) over the denominator."""
    ci95: tuple[float | None, float | None] | None = None
    """Its Wilson interval."""
    low_power: bool = False
    """The denominator is under ``min_n``."""
    resolves: float | None = None
    """With low power: the smallest rate this many rows would flag (``resolvable_rate``)."""
    flagged: bool = False
    """The judge is exploitable by this probe."""
    skipped: str | None = None
    """Why the probe did not run."""


class ProbeReport(Report):
    """What each exploit probe did to the judge's verdicts (``judge_probes``)."""

    judge_name: str = ""
    """The judge probed."""
    n: int = 0
    """Rows sampled and probed."""
    seed: int | None = DEFAULT_SEED
    """The seed of the row sample."""
    pass_before: NanFloat = float("nan")
    """Share of the sampled rows the judge passes as they are."""
    probes: dict[str, ProbeResult] = Field(default_factory=dict)
    """Per probe: n, kind, pass_before, pass_after, flips_up, flips_down, net_flips, denominator,
    exploit_rate, ci95, low_power, resolves, flagged, errors (or n 0 and skipped with the reason)."""
    exploitable_by: list[str] = Field(default_factory=list)
    """Probes at or over the flag rate with at least ``min_n`` rows in the denominator."""
    flag: float = PROBE_FLAG_RATE
    """The exploit rate at which a probe is a hole."""
    min_n: int = PROBE_MIN_N
    """Rows a denominator needs before a probe can be flagged."""
    notes: list[str] = Field(default_factory=list)
    """What the numbers can and cannot say."""

    def render(self) -> str:
        """The probe table a person reads."""
        head = f"probes on {self.n} rows with {self.judge_name or 'the judge'}"
        if self.n:
            head += f" (it passes {_pct(self.pass_before)} of them as they are)"
        lines = [head]
        for name, p in self.probes.items():
            lines.append("  " + _probe_line(name, p))
        if self.exploitable_by:
            lines.append("exploitable by: " + ", ".join(self.exploitable_by))
        lines.extend(f"note: {n}" for n in self.notes)
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def _pct(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:.0f}%"


def _ci(ci: Sequence[float | None] | None) -> str:
    if not ci or ci[0] is None or ci[1] is None or any(isinstance(v, float) and math.isnan(v) for v in ci):
        return "[n/a]"
    return f"[{_pct(ci[0])}..{_pct(ci[1])}]"


def _probe_line(name: str, p: ProbeResult) -> str:
    if p.get("skipped"):
        return f"{name:<17} skipped: {p['skipped']}"
    rate = f"{_pct(p['exploit_rate']):>4} {_ci(p['ci95']):<12}"
    if p["kind"] == "additive":
        body = f"net {p['net_flips']:+d} of {p['denominator']} failing (+{p['flips_up']}/-{p['flips_down']})"
    else:
        body = f"{p['passes']} of {p['denominator']} pass with no work done"
    tail = ""
    if p["flagged"]:
        tail = "  EXPLOITABLE"
    elif p["low_power"]:
        tail = f"  low power (n={p['denominator']}; {_resolves_text(p['resolves'])})"
    if p.get("errors"):
        tail += f"  ({p['errors']} judge failures)"
    return f"{name:<17} {rate} {body}{tail}"


def _resolves_text(resolves: float | None) -> str:
    if resolves is None or (isinstance(resolves, float) and math.isnan(resolves)):
        return "resolves nothing"
    return f"resolves about {resolves:.2f} at {POWER:.0%} power"


def resolvable_rate(n: int, *, flag: float = PROBE_FLAG_RATE, power: float = POWER, level: float = CI_LEVEL) -> float:
    """The smallest exploit rate ``n`` rows would show to be over ``flag`` with probability ``power``.

    The hole is shown when the Wilson lower bound of the observed rate reaches ``flag``; that
    needs at least ``x*`` exploits out of ``n``, and P(Binomial(n, p) >= x*) = I_p(x*, n - x* + 1)
    reaches ``power`` at p = Beta(x*, n - x* + 1).ppf(power). NaN for n = 0.

    Examples:
        >>> round(resolvable_rate(10), 2)
        0.38
    """
    if n <= 0:
        return float("nan")
    from scipy.stats import beta

    counts = np.arange(n + 1)
    lo, _ = wilson(counts, np.full(n + 1, n), level=level)
    ok = np.nonzero(lo >= flag)[0]
    if not ok.size:
        return float("nan")
    x = int(counts[ok[0]])
    if x == 0:
        return 0.0
    return float(beta.ppf(power, x, n - x + 1))


def _check_probes(probes: Any) -> tuple[str, ...]:
    if probes is None or probes == "all" or probes is True:
        return PROBES
    if isinstance(probes, str):
        probes = [probes]
    try:
        names = tuple(str(p) for p in probes)
    except TypeError as exc:
        raise ArgumentError(f"probes must be 'all' or a list of probe names, got {probes!r}. "
                            f"Pass probes='all' or some of {', '.join(PROBES)}.") from exc
    unknown = [p for p in names if p not in PROBES]
    if unknown:
        raise ArgumentError(f"probes must be names from {', '.join(PROBES)}, got {unknown[0]!r}. "
                            "Pass probes='all' or a list of those names.")
    if not names:
        raise ArgumentError("probes must name at least one probe, got an empty list. Pass probes='all'.")
    return names


def _sample(n_rows: int, sample: int, seed: Any) -> np.ndarray:
    rng = check_rng(seed)
    if n_rows <= sample:
        return np.arange(n_rows)
    return np.sort(rng.choice(n_rows, size=sample, replace=False))


def _passes(verdicts: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    ok = np.array([v.status == "ok" for v in verdicts], dtype=bool)
    passed = np.array([v.reward is not None and v.reward >= PASS_THRESHOLD for v in verdicts], dtype=bool)
    return ok, passed


def judge_probes(
    rows: IntoRows,
    /,
    judge: Callable[[Any], Any],
    *,
    rubric: Any = None,
    probes: Literal["all"] | Sequence[str] = "all",
    sample: int = TRUST_SAMPLE,
    seed: int | np.random.Generator = DEFAULT_SEED,
    concurrency: int = JUDGE_CONCURRENCY,
    timeout: float | None = None,
    flag: float = PROBE_FLAG_RATE,
    min_n: int = PROBE_MIN_N,
    level: float = CI_LEVEL,
    judge_name: str | None = None,
) -> ProbeReport:
    """Try the reward hacks a policy finds first on the judge, on purpose (docs/grade.md, "judge_probes").

    A seeded sample of rows is judged as it is, then once per probe with the reply edited.
    Additive probes (``filler``, ``keyword_stuffing``, ``sycophancy``) add to the real reply and
    count ``max(0, flips_up - flips_down)`` over the rows the judge failed as they were.
    Replacement probes (``success_claim``, ``prompt_echo``, ``empty_format``, ``refusal``)
    replace everything the agent did with a reply that does no work and count how many pass.
    Each rate carries a Wilson interval; a probe is flagged at or over ``flag`` with at least
    ``min_n`` rows in its denominator, else it reads low power with the smallest hole it would
    resolve at 80% power. A policy trained on this judge will find the same holes.

    Args:
        rows: The rows to probe (any input ``table.frame`` accepts).
        judge: The judge (any callable under the judge contract, sync or async).
        rubric: The judge's rubric (a ``Rubric``, text or list of texts): its words are what the
            keyword probe stuffs in; without it that probe is skipped and says so.
        probes: ``"all"`` or a list of names from ``PROBES``.
        sample: Rows probed (seeded sample; all rows when fewer).
        seed: Seed of the sample.
        concurrency: Judge calls in flight when the judge is slow or async.
        timeout: Seconds per judge call; a late call counts as a judge failure.
        flag: Exploit rate at which a probe is a hole (``PROBE_FLAG_RATE``).
        min_n: Rows a denominator needs before a probe can be flagged (``PROBE_MIN_N``).
        level: Level of the Wilson intervals.
        judge_name: Name to report the judge under.

    Returns:
        A :class:`ProbeReport`; ``report["exploitable_by"]`` lists the holes.

    Raises:
        JudgeError: ``judge`` is not callable.
        ArgumentError: An unknown probe name or an out-of-range option.
    """
    check_judge(judge)
    names = _check_probes(probes)
    sample = check_int("sample", sample, fix="Pass sample=40 for example.")
    min_n = check_int("min_n", min_n, fix="Pass min_n=40 for example.")
    concurrency = check_int("concurrency", concurrency, fix="Pass concurrency=40 for example.")
    flag = check_fraction("flag", flag, fix="Pass flag=0.1 for example.")
    level = check_fraction("level", level, fix="Pass level=0.1 for example.")
    df = table.frame(rows)
    idx = _sample(df.height, sample, seed)
    base = row_dicts(df[idx])
    words = rubric_words(rubric)
    report = ProbeReport(judge_name=judge_name_of(judge, judge_name), n=len(base),
                         seed=seed if isinstance(seed, int) else None, flag=flag, min_n=min_n)
    batch = list(base)
    spans: dict[str, tuple[int, int]] = {}
    for name in names:
        if name == "keyword_stuffing" and not words:
            continue
        start = len(batch)
        batch.extend(probe_row(name, row, words=words) for row in base)
        spans[name] = (start, len(batch))
    verdicts = judge_rows(judge, batch, concurrency=concurrency, timeout=timeout, label="probing")
    ok0, pass0 = _passes(verdicts[: len(base)])
    report.pass_before = float(pass0[ok0].mean()) if ok0.any() else float("nan")
    if not ok0.any():
        report.warnings.append(
            f"the judge failed on all {len(base)} sampled rows as they are "
            f"({verdicts[0].reason if verdicts else 'no rows'}); fix the judge before probing it."
        )
    for name in names:
        if name not in spans:
            report.probes[name] = ProbeResult(n=0, skipped="no rubric words to stuff: pass rubric= (the judge's rubric "
                                              "text or Rubric) so the keyword probe knows what to stuff in")
            continue
        start, stop = spans[name]
        report.probes[name] = ProbeResult(**_score_probe(name, ok0, pass0, verdicts[start:stop], flag=flag, min_n=min_n,
                                                         level=level))
    report.exploitable_by = [n for n, p in report.probes.items() if p.get("flagged")]
    for name in report.exploitable_by:
        report.warnings.append(_hole_warning(name, report.probes[name]))
    low = [n for n, p in report.probes.items() if p.get("low_power")]
    if low:
        report.notes.append(
            f"{len(low)} probe(s) had fewer than {min_n} rows to judge by ({', '.join(low)}): low power, not flagged, "
            f"since one flip on ten rows is already the {flag:.0%} flag; pass sample= larger to resolve smaller holes."
        )
    return report


def _score_probe(name: str, ok0: np.ndarray, pass0: np.ndarray, after: list[Any], *, flag: float, min_n: int,
                 level: float) -> dict[str, Any]:
    ok1, pass1 = _passes(after)
    errors = int((~ok1).sum())
    kind = "additive" if name in ADDITIVE_PROBES else "replacement"
    out: dict[str, Any] = {"n": int(len(after)), "kind": kind, "errors": errors}
    if kind == "additive":
        both = ok0 & ok1
        failing = both & ~pass0
        up = int((failing & pass1).sum())
        down = int((both & pass0 & ~pass1).sum())
        denominator = int(failing.sum())
        hits = max(0, up - down)
        out.update(flips_up=up, flips_down=down, net_flips=hits,
                   pass_before=_share(pass0[both]), pass_after=_share(pass1[both]))
    else:
        denominator = int(ok1.sum())
        hits = int((ok1 & pass1).sum())
        out.update(passes=hits, pass_before=_share(pass0[ok0]), pass_after=_share(pass1[ok1]))
    rate = hits / denominator if denominator else float("nan")
    lo, hi = wilson(hits, denominator, level=level)
    low_power = denominator < min_n
    out.update(
        denominator=denominator,
        exploit_rate=rate,
        ci95=(float(lo), float(hi)),
        low_power=low_power,
        resolves=resolvable_rate(denominator, flag=flag, level=level) if low_power else None,
        flagged=bool(not low_power and denominator > 0 and rate >= flag),
    )
    return out


def _share(mask: np.ndarray) -> float:
    return float(mask.mean()) if mask.size else float("nan")


def _hole_warning(name: str, p: ProbeResult) -> str:
    what = _WHAT[name]
    lo, hi = p["ci95"]
    if p["kind"] == "additive":
        body = (f"{_pct(p['exploit_rate'])} of the replies it failed pass once edited "
                f"(net {p['net_flips']} of {p['denominator']}; 95% {_pct(lo)}..{_pct(hi)})")
    else:
        body = (f"{_pct(p['exploit_rate'])} of replies pass with the work gone "
                f"({p['passes']} of {p['denominator']}; 95% {_pct(lo)}..{_pct(hi)})")
    return (f"judge is exploitable by {what} ({name}): {body}. A policy trained on this judge will learn it; "
            "make the judge check the evidence (tool results, the answer itself) rather than the words.")


#: The same function as :func:`judge_probes`, under the name whileai 0.131's top level used.
