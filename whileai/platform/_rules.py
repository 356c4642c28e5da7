"""The rules a tracked agent's page is read by: verdict, eval checks, brief, dashboard, noise floor, cost.

Pure functions of an :class:`~whileai.platform._views.AgentState` (the stored rows of one agent):
no I/O, no clock, no randomness. The client (``Tracked``), the server's routes and the Runs page
call these same functions, so a verdict reads the same wherever it is shown (docs/platform.md).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence

from whileai._cost import gpu_cost
from whileai.defaults import (
    BRIEF_MAX_ITEMS,
    CANNOT_READ_SHOWN,
    CI_LEVEL,
    DEFAULT_SEED,
    JUDGE_AGREEMENT_FLOOR,
    LENGTH_BIAS_MAX,
    SAMPLE_FAILURES,
    SAMPLE_PASSES,
    VERDICT_MIN_N,
)
from whileai.errors import ArgumentError
from whileai.platform._models import (
    EVAL_CHECKS,
    Behavior,
    Example,
    RunRecord,
    ScoreRecord,
    check_behavior_name,
)
from whileai.platform._views import (
    AgentState,
    Brief,
    BriefItem,
    Dashboard,
    EvalCheck,
    EvalHealth,
    RunMissing,
    TaskChange,
    Verdict,
    VersionDiff,
)
from whileai.stats.agreement import agreement_gate

__all__ = [
    "brief_of", "candidate_of", "cost_of", "dashboard_of", "eval_checks", "evals_of", "latest_scores",
    "diff_of", "frontier_versions", "noise_floor_points", "sample_of", "served_because", "served_of", "trained", "verdict_of",
]

# A version name that carries settings instead of what changed: a learning rate, a seed, a step
# count, a batch size or an epoch count spelled into it (dapo-lr5e-05-s17-180st).
_SETTINGS_NAME = re.compile(r"(lr\d|\d(\.\d+)?e-?\d|(^|[-_])s\d+($|[-_])|\d+st(eps?)?($|[-_])|(^|[-_])bs\d|(^|[-_])ep\d)",
                            re.IGNORECASE)

# The order failed checks are worth doing in (platform._models.EVAL_CHECKS).
_FIX_ORDER = EVAL_CHECKS


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _signed(value: float) -> str:
    return f"{value:+.1f}"


# --- scores ---------------------------------------------------------------------------------------


class _Index:
    """One pass over a state's scores, shared by every rule that reads them (built once per state)."""

    def __init__(self, state: AgentState) -> None:
        self.scores = sorted(state.scores, key=lambda s: s.seq)
        self.latest: dict[tuple[str, str], ScoreRecord] = {}
        self.by_behavior: dict[str, list[ScoreRecord]] = {}
        self.by_pair: dict[tuple[str, str], list[ScoreRecord]] = {}
        for s in self.scores:
            key = (s.behavior, s.version or s.run_id)
            self.latest[key] = s
            self.by_behavior.setdefault(s.behavior, []).append(s)
            self.by_pair.setdefault(key, []).append(s)
        self.by_version: dict[str, dict[str, ScoreRecord]] = {}
        for (b, ver), s in self.latest.items():
            self.by_version.setdefault(ver, {})[b] = s
        self.behaviors = sorted(self.by_behavior)
        self.frontier = frontier_versions(state.runs)
        self.served, self.served_because = _served(state, {s.run_id for s in self.scores}, self.frontier)


def _index(state: AgentState) -> _Index:
    if state._index is None:
        state._index = _Index(state)
    return state._index


def frontier_versions(runs: Iterable[RunRecord]) -> set[str]:
    """The versions of runs marked ``record={"frontier": True}``: a line to beat, never served."""
    return {r.version or r.id for r in runs if (r.record or {}).get("frontier")}


def _served(state: AgentState, scored: set[str], frontier: set[str]) -> tuple[str | None, str]:
    if state.agent.served:
        return state.agent.served, "promoted"
    for run in state.runs:
        version = run.version or run.id
        if run.id in scored and version not in frontier:
            return version, (f"not promoted: {version} is the first version scored that is not a frontier run; "
                             f"tracked.promote(VERSION) names the one in production")
    return None, ("nothing to serve yet: only frontier runs are scored" if scored else "no version scored yet")


def latest_scores(scores: Iterable[ScoreRecord], behavior: str | None = None) -> dict[tuple[str, str], ScoreRecord]:
    """Each (behavior, version)'s newest score by posting order.

    Examples:
        >>> s = [ScoreRecord(id="a", run_id="r1", behavior="b", version="v0", value=60, seq=1, created_at=""),
        ...      ScoreRecord(id="c", run_id="r2", behavior="b", version="v0", value=64, seq=3, created_at="")]
        >>> latest_scores(s)[("b", "v0")].value
        64.0
    """
    out: dict[tuple[str, str], ScoreRecord] = {}
    for s in sorted(scores, key=lambda s: s.seq):
        if behavior is not None and s.behavior != behavior:
            continue
        out[(s.behavior, s.version or s.run_id)] = s
    return out


def served_of(state: AgentState) -> str | None:
    """The served version: the agent's ``served`` slot, else the first run scored that is not a frontier run.

    A frontier run (``record={"frontier": True}``) is the line to beat, never the baseline, so it
    is skipped whatever order it was posted in. The default is said, not silent:
    :func:`served_because` gives the sentence every verdict and the brief carry.
    """
    return _index(state).served


def served_because(state: AgentState) -> str:
    """Why :func:`served_of` is what it is: ``"promoted"``, or the default's sentence."""
    return str(_index(state).served_because)


def candidate_of(state: AgentState, behavior: str, version: str | None = None) -> str | None:
    """The version a verdict on ``behavior`` compares, resolved per behavior.

    The newest version scored on that behavior that is not the served one, ordered by when the
    score was posted, so two held-out sets with one arm each get two verdicts whatever order the
    arms were posted in, and re-scoring the served version demotes nothing (whileai 0.131 verdict).
    A frontier run is the line to beat, never a default candidate. ``version`` names the candidate
    instead; it must be scored on ``behavior``.

    Raises:
        ArgumentError: ``version`` is not scored on ``behavior``, or is the served version.
    """
    idx = _index(state)
    served = idx.served
    versions = [s.version or s.run_id for s in idx.by_behavior.get(behavior, [])]
    if version is None:  # a frontier run is the line to beat, never a candidate by default
        versions = [v for v in versions if v not in idx.frontier]
    if version is not None and version == served:
        can_be = ", ".join(sorted({v for v in versions if v != served})) or "none scored yet"
        raise ArgumentError(f"version must be a candidate, not the served version, got {version!r}, which is "
                            f"served. Name another version (scored on {behavior!r}: {can_be}), or leave version "
                            "off for the newest.", argument="version", value=version)
    if version is not None:
        if version not in versions:
            scored = ", ".join(sorted(set(versions))) or "none"
            raise ArgumentError(f"version must be scored on {behavior!r} to be its candidate, got {version!r} "
                                f"(scored: {scored}). Post run.score({behavior!r}, ...) on that version first.",
                                argument="version", value=version)
        return version
    others = [v for v in versions if v != served]
    return others[-1] if others else None


def _compare(cand: ScoreRecord, served: ScoreRecord, floor: float | None) -> tuple[str, float, tuple[float, float] | None]:
    """The comparison rule: word, delta and interval, for two scores on one behavior."""
    delta = cand.value - served.value
    if cand.ci is None or served.ci is None:
        return "no_interval", delta, None
    half = math.sqrt(cand.ci ** 2 + served.ci ** 2)
    ci = (delta - half, delta + half)
    if ci[0] <= 0.0 <= ci[1]:
        return "no_difference", delta, ci
    if floor is not None and abs(delta) <= floor:
        return "within_noise", delta, ci
    return ("beats" if delta > 0 else "trails"), delta, ci


def _rests_on(spec: Behavior, n: int | None) -> tuple[str, list[str]]:
    reasons: list[str] = []
    if spec.graded_by == "program":
        grader = "graded by a program"
    elif spec.agreement is None:
        grader = "judge agreement unmeasured"
        reasons.append("judge agreement unmeasured")
    else:
        over = f" over {spec.human_n} human labels" if spec.human_n is not None else ""
        grader = f"judge agreement {spec.agreement:.2f}{over}"
        gate = agreement_gate(spec.agreement, spec.human_n)
        if not gate.ok:
            reasons.append(_agreement_failure(spec, gate.lower))
    if n is None:
        reasons.append("n not posted")
    elif n < VERDICT_MIN_N:
        reasons.append(f"n={n} under {VERDICT_MIN_N}")
    if spec.reward_is_judge:
        reasons.append("the training reward is the judge")
    return f"{grader}, n={'n/a' if n is None else n}", reasons


def verdict_of(state: AgentState, behavior: str, version: str | None = None) -> Verdict:
    """The verdict on one behavior: does the candidate beat the served version, and is it real.

    The difference interval is delta ± sqrt(ci_candidate² + ci_served²) (both 95% half-widths, so
    the scores are treated as independent). The candidate ``beats`` or ``trails`` only when that
    interval excludes zero *and* |delta| clears the behavior's declared noise floor; an interval
    over zero, a delta inside the re-run band or a missing interval is said in those words. When a
    different run of the candidate version also beats the served version on another behavior
    (same rule, that behavior's floor), the line ends ``moved, replicated on <behavior>``; one run
    scored on two sets is not a replication. The line starts ``unproven:`` when n < 50, the
    judge's agreement is unmeasured (not asked of a program) or its 95% lower bound over
    ``human_n`` labels is under 0.80 (``agreement_gate``, the rule ``judge_trust`` applies), or the
    training reward is the judge (whileai 0.131 verdict; Lambert 2025, chapter Evaluation).

    Args:
        state: The agent's stored rows.
        behavior: The behavior's name.
        version: Name the candidate instead of resolving it (must be scored on ``behavior``).

    Returns:
        A :class:`Verdict`; ``str()`` is its line.
    """
    spec = state.behaviors.get(behavior) or Behavior(name=check_behavior_name(behavior))
    idx = _index(state)
    served = idx.served
    cand_version = candidate_of(state, behavior, version)
    latest = idx.latest
    s_score = latest.get((behavior, served)) if served else None
    c_score = latest.get((behavior, cand_version)) if cand_version else None
    v = Verdict(behavior=behavior, candidate=cand_version, served=served, noise_floor=spec.noise_floor,
                served_because=idx.served_because)
    if c_score is None or s_score is None or cand_version is None or served is None:
        scored = sorted({k[1] for k in latest if k[0] == behavior})
        v.line = (f"{behavior}: no comparison yet ({', '.join(scored) or 'no version'} scored"
                  + (f"; the served version {served} is not" if served and s_score is None and scored else "")
                  + "); score a candidate and the served version on it to get a verdict." + _served_note(idx))
        return v
    v.candidate_score, v.served_score = c_score.value, s_score.value
    word, delta, ci = _compare(c_score, s_score, spec.noise_floor)
    v.word, v.delta, v.ci95 = word, delta, ci  # type: ignore[assignment]
    ns = [x for x in (c_score.n, s_score.n) if x is not None]
    v.n = min(ns) if len(ns) == 2 else None
    v.rests_on, v.unproven_because = _rests_on(spec, v.n)
    v.unproven = bool(v.unproven_because)
    head = f"{cand_version} against {served} on {behavior}: {_signed(delta)} points"
    floor_text = f"noise floor {spec.noise_floor:.1f}" if spec.noise_floor is not None else "no noise floor declared"
    if word == "no_interval":
        which = [x for x, s in ((cand_version, c_score), (served, s_score)) if s.ci is None]
        body = f"{head} with no interval (no ci on {', '.join(map(str, which))}); post ci= with the score."
    elif word == "no_difference":
        body = f"{head}, interval {_signed(ci[0])}..{_signed(ci[1])} includes zero: no difference shown."  # type: ignore[index]
    elif word == "within_noise":
        body = f"{head}, inside the re-run band ({floor_text}): no difference shown."
    else:
        verb = "beats" if word == "beats" else "trails"
        body = (f"{cand_version} {verb} {served} on {behavior} by {_signed(delta)} points "
                f"(95% {_signed(ci[0])}..{_signed(ci[1])}; {floor_text})")  # type: ignore[index]
        if word == "beats":
            v.replicated_on = _replications(state, idx, behavior, cand_version, c_score.run_id, served)
            if v.replicated_on:
                body += f", moved, replicated on {', '.join(v.replicated_on)}"
        body += "."
        if spec.noise_floor is None and not v.replicated_on:  # a skimmer reads the first word: say it could be noise
            body = f"UNREPLICATED (no noise floor declared, not replicated, so it could be eval noise): {body}"
    mine, theirs = idx.by_version.get(cand_version, {}), idx.by_version.get(served, {})
    significant, pointwise = [], []
    for b in sorted(mine):
        if b == behavior or b not in theirs or not mine[b].value < theirs[b].value:
            continue
        floor_b = (state.behaviors.get(b) or Behavior(name=b)).noise_floor
        word_b, delta_b, ci_b = _compare(mine[b], theirs[b], floor_b)
        if word_b == "trails" and ci_b is not None:
            significant.append(f"{b} {_signed(delta_b)} (95% {_signed(ci_b[0])}..{_signed(ci_b[1])})")
            v.trails_elsewhere.append(b)
        else:
            why_b = "no interval yet" if ci_b is None else (
                "inside the re-run band" if word_b == "within_noise" else "interval includes zero")
            pointwise.append(f"{b} {_signed(delta_b)}, {why_b}")
    v.lower_elsewhere = sorted(v.trails_elsewhere + [p.split(" ")[0] for p in pointwise])
    if significant:
        body += f" Lower on {len(significant)} other behavior(s), interval below zero: {'; '.join(significant)}."
    if pointwise:
        body += (f" {len(pointwise)} other behavior(s) lower on point estimates only "
                 f"({'; '.join(pointwise)}): a prompt to look.")
    body += f" Rests on: {v.rests_on}."
    v.line = ("unproven: " if v.unproven else "") + body + (
        f" Unproven because: {'; '.join(v.unproven_because)}." if v.unproven else "") + _served_note(idx)
    return v


def _served_note(idx: _Index) -> str:
    """The sentence a verdict ends with when the served version is a default, not a promotion."""
    return "" if idx.served_because == "promoted" else f" Served version {idx.served}: {idx.served_because}."


def _replications(state: AgentState, idx: _Index, behavior: str, version: str, run_id: str, served: str) -> list[str]:
    """Other behaviors a different run of ``version`` beats ``served`` on, each proven (n, judge, reward)."""
    out: list[str] = []
    for other in idx.behaviors:
        base = idx.latest.get((other, served))
        if other == behavior or base is None:
            continue
        spec = state.behaviors.get(other) or Behavior(name=other)
        runs = [s for s in idx.by_pair.get((other, version), []) if s.run_id != run_id]
        for s in runs:  # a replication on a behavior that is itself unproven proves nothing
            n = min(s.n, base.n) if s.n is not None and base.n is not None else None
            if _compare(s, base, spec.noise_floor)[0] == "beats" and not _rests_on(spec, n)[1]:
                out.append(other)
                break
    return out


# --- version against version ----------------------------------------------------------------------


def diff_of(behavior: str, a: str, b: str, rows_a: Sequence[Example], rows_b: Sequence[Example], *,
            seed: int = DEFAULT_SEED) -> VersionDiff:
    """Two versions' graded rows on one behavior, paired by task: improved, regressed, same.

    A row's task is its ``task`` key, else its prompt, never its position. Each task's pass rate
    on each side is the share of its rows that passed; a task improved when ``b``'s rate is
    higher, regressed when lower. The paired delta over the shared tasks, its 95% interval and
    p-value are ``compare_runs`` on pass@1 (the library's paired statistic: score interval and
    sign-flip permutation test over tasks; Miller 2024, "Adding Error Bars to Evals",
    arXiv:2411.00640), in points.

    Args:
        behavior: The behavior both scores are on.
        a: The version compared from.
        b: The version compared to.
        rows_a: ``a``'s graded rows on it.
        rows_b: ``b``'s graded rows on it.
        seed: Seed of the comparison's resampling.

    Returns:
        A :class:`VersionDiff`; ``str()`` is its line.
    """
    from whileai.measure import compare_runs

    def by_task(rows: Sequence[Example]) -> dict[str, list[Example]]:
        out: dict[str, list[Example]] = {}
        for r in rows:
            out.setdefault(r.key, []).append(r)
        return out

    ta, tb = by_task(rows_a), by_task(rows_b)
    shared = [k for k in ta if k in tb]
    diff = VersionDiff(behavior=behavior, a=a, b=b, n_paired=len(shared), only_a=len(set(ta) - set(tb)),
                       only_b=len(set(tb) - set(ta)))
    for key in shared:
        ra, rb = ta[key], tb[key]
        rate_a, rate_b = sum(r.ok for r in ra) / len(ra), sum(r.ok for r in rb) / len(rb)
        change = TaskChange(task=key, a_rate=rate_a, b_rate=rate_b, a_n=len(ra), b_n=len(rb), prompt=ra[0].prompt,
                            a_reply=ra[0].reply, b_reply=rb[0].reply, a_why=ra[0].why, b_why=rb[0].why)
        (diff.improved if rate_b > rate_a else diff.regressed if rate_b < rate_a else diff.same).append(change)
    diff.improved.sort(key=lambda c: c.a_rate - c.b_rate)
    diff.regressed.sort(key=lambda c: c.a_rate - c.b_rate, reverse=True)
    head = f"{b} against {a} on {behavior}, task by task"
    if not shared:
        diff.line = (f"{head}: no task in common ({len(ta)} on {a}, {len(tb)} on {b}); score both on the same test "
                     "set, with task= on each row, to pair them.")
        return diff
    rows = [[{"scenario_id": k, "reward": float(r.ok)} for k, rs in t.items() for r in rs] for t in (ta, tb)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = compare_runs(rows[0], rows[1], seed=seed)
    diff.delta = None if cmp.delta is None or math.isnan(cmp.delta) else 100.0 * cmp.delta
    diff.ci95 = None if cmp.ci95 is None else (100.0 * cmp.ci95[0], 100.0 * cmp.ci95[1])
    diff.p_value, diff.verdict, diff.note = cmp.p_value, cmp.verdict, cmp.note or ""
    interval = "" if diff.ci95 is None else f" (95% {_signed(diff.ci95[0])}..{_signed(diff.ci95[1])})"
    delta = "n/a" if diff.delta is None else _signed(diff.delta)
    unpaired = f"; {diff.only_a} task(s) only on {a} and {diff.only_b} only on {b} left out" if (
        diff.only_a or diff.only_b) else ""
    diff.line = (f"{head}: {delta} points{interval} over {len(shared)} paired task(s), {cmp.verdict}; "
                 f"{len(diff.improved)} improved, {len(diff.regressed)} regressed, {len(diff.same)} same{unpaired}.")
    return diff


# --- eval checks ----------------------------------------------------------------------------------


def eval_checks(spec: Behavior, scores: Sequence[ScoreRecord]) -> EvalHealth:
    """The eight checks the Evals table runs on one behavior, each with value, failure, fix and call.

    frozen (a named test version), size (n >= 50), judge (a program, or agreement >= 0.8 with
    people), length bias (|gap| <= 0.10 within one human label), noise floor (measured), clean (no
    test rows in training), reward is not the judge, and can fail (not every version at 100).

    Args:
        spec: The behavior.
        scores: Its scores (any order; the newest per version are read).
    """
    name = spec.name
    latest = latest_scores(scores, name)
    ns = [s.n for s in latest.values() if s.n is not None]
    n = min(ns) if ns else None
    values = [s.value for s in latest.values()]
    program = spec.graded_by == "program"
    checks = [
        EvalCheck(name="frozen", ok=bool(spec.test_version), value=spec.test_version,
                  failure=None if spec.test_version else "the test set has no version, so two scores may be on different sets.",
                  fix="Name the frozen held-out set the scores are on.",
                  call=f'Behavior("{name}", test_version="{name}-holdout@1")', rule="test_version is set",
                  source="Lambert 2025, chapter Evaluation: a held-out set is frozen before it is scored"),
        EvalCheck(name="size", ok=n is not None and n >= VERDICT_MIN_N, value=n,
                  failure=None if n is not None and n >= VERDICT_MIN_N else
                  (f"n={n} asks: a verdict reads unproven under {VERDICT_MIN_N}." if n is not None else "no score posts n."),
                  fix="Score on a larger held-out set, sized for the gain you want to prove.",
                  call="wai.holdout_size(0.05, before=rows)", rule=f"n >= {VERDICT_MIN_N} on every scored version",
                  source="Miller 2024, Adding Error Bars to Evals (arXiv:2411.00640); whileai 0.131 verdict rule"),
        _judge_check(spec, program),
        _length_check(spec, program),
        EvalCheck(name="noise_floor", ok=spec.noise_floor is not None, value=spec.noise_floor,
                  failure=None if spec.noise_floor is not None else "no noise floor: a re-run's own movement can read as a gain.",
                  fix="Score the same version two or more times and post the band.",
                  call=f'tracked.noise_floor("{name}", rerun_1, rerun_2, rerun_3)',
                  rule="noise_floor measured (t(df=runs-1) x run_std x sqrt(2), points)",
                  source="Lambert 2025, chapter Evaluation: evals move 0.25 to 1.5 points between re-runs"),
        EvalCheck(name="clean", ok=spec.contamination == 0, value=spec.contamination,
                  failure=None if spec.contamination == 0 else
                  ("contamination not measured." if spec.contamination is None
                   else f"{spec.contamination} test row(s) are in the training set."),
                  fix="Check the training rows against the test set and drop what overlaps.",
                  call=f'wai.decontaminate(train_rows, against=[test_rows]); Behavior("{name}", contamination=0)',
                  rule="no test row in the training set (same task, verbatim, or 8-gram overlap)",
                  source="Touvron et al. 2023, Llama 2, section A.6 (8-gram contamination rule)"),
        EvalCheck(name="reward_not_judge", ok=spec.reward_is_judge is False, value=spec.reward_is_judge,
                  failure=None if spec.reward_is_judge is False else
                  ("not stated whether the training reward is this judge." if spec.reward_is_judge is None
                   else "the training reward is this judge: the score measures what was optimised."),
                  fix="Grade the eval with a grader the training reward did not use, and say so.",
                  call=f'Behavior("{name}", reward_is_judge=False)', rule="reward_is_judge is False",
                  source="Gao et al. 2023, Scaling Laws for Reward Model Overoptimization"),
        EvalCheck(name="can_fail", ok=bool(values) and min(values) < 100.0, value=max(values) if values else None,
                  failure=None if values and min(values) < 100.0 else
                  ("no score yet." if not values else "every scored version is at 100: a set nobody can fail shows no gain."),
                  fix="Add harder asks, so the served version fails some of them.",
                  call="wai.simulate(agent, tools=TOOLS, hard_share=0.5)", rule="some scored version is under 100 points",
                  source="Lambert 2025, chapter Evaluation: a saturated benchmark cannot rank models"),
    ]
    return EvalHealth(behavior=name, ok=all(c.ok for c in checks), checks=checks)


def _agreement_failure(spec: Behavior, lower: float) -> str:
    """Why the judge gate fails: its 95% lower bound under the floor, or no label count to bound it with."""
    if spec.human_n is None or not math.isfinite(lower):
        return (f"judge agreement {spec.agreement:.2f} without human_n: the gate reads its 95% lower bound, "
                f"which needs the label count")
    return (f"judge agreement {spec.agreement:.2f} over {spec.human_n} labels has a 95% lower bound of {lower:.2f}, "
            f"under {JUDGE_AGREEMENT_FLOOR:.2f}")


def _judge_check(spec: Behavior, program: bool) -> EvalCheck:
    gate = agreement_gate(spec.agreement, spec.human_n)
    ok = program or gate.ok
    failure = None if ok else ("judge agreement with people not measured." if spec.agreement is None
                               else _agreement_failure(spec, gate.lower) + ".")
    return EvalCheck(name="judge", ok=ok, value="program" if program else spec.agreement, failure=failure,
                     fix="Label some replies by hand and measure the judge against them.",
                     call=f'wai.judge_trust(labeled_rows); Behavior("{spec.name}", agreement=..., human_n=...)',
                     rule=f"graded by a program, or the 95% lower bound of agreement with human labels >= "
                          f"{JUDGE_AGREEMENT_FLOOR:.2f} (judge_trust's rule)",
                     source="Zheng et al. 2023, Judging LLM-as-a-Judge (agreement with people); judge_trust floor")


def _length_check(spec: Behavior, program: bool) -> EvalCheck:
    bias = spec.length_bias
    ok = program or (bias is not None and abs(bias) <= LENGTH_BIAS_MAX)
    failure = None if ok else ("length bias not measured." if bias is None
                               else f"the judge passes long replies {bias:+.2f} more often within one human label.")
    return EvalCheck(name="length_bias", ok=ok, value="n/a (program)" if program else bias, failure=failure,
                     fix="Measure the judge's pass rate on short against long replies with the same human label.",
                     call=f'wai.judge_trust(labeled_rows); Behavior("{spec.name}", length_bias=...)',
                     rule=f"|length_bias| <= {LENGTH_BIAS_MAX:.2f}",
                     source="Dubois et al. 2024, Length-Controlled AlpacaEval")


def evals_of(state: AgentState) -> list[EvalHealth]:
    """One :class:`EvalHealth` per behavior the agent defines or has scored, by name."""
    idx = _index(state)
    names = sorted(set(state.behaviors) | set(idx.behaviors))
    return [eval_checks(state.behaviors.get(b) or Behavior(name=b), idx.by_behavior.get(b, [])) for b in names]


# --- the brief ------------------------------------------------------------------------------------


def brief_of(state: AgentState, *, verdicts: Mapping[str, Verdict] | None = None,
             evals: Sequence[EvalHealth] | None = None) -> Brief:
    """The three parts at the top of the agent's page, from the same rows by the same rules.

    What happened (scored runs; each behavior's newest score per version, in points), what it
    means (the verdict when two versions are scored; else the one fact that decides what the page
    can say), what to do next (failed eval checks in the order worth doing, at most three, each
    with the call), and what a person cannot read yet. ``verdicts`` and ``evals`` reuse what the
    caller already computed from the same state.
    """
    idx = _index(state)
    latest = idx.latest
    scored_runs = {s.run_id for s in idx.scores}
    brief = Brief(agent=state.agent.name)
    behaviors = idx.behaviors
    if scored_runs:
        brief.happened.append(f"{len(scored_runs)} scored run(s) of {len(state.runs)}.")
        if idx.served_because != "promoted":
            brief.happened.append(f"Served version {idx.served or 'none'}: {idx.served_because}.")
    per_behavior: dict[str, list[str]] = {}
    for (b, ver), s in sorted(latest.items(), key=lambda kv: kv[1].seq):
        per_behavior.setdefault(b, []).append(f"{ver} {_pts(s.value)}" + (f" (±{s.ci:.1f})" if s.ci is not None else ""))
    for b in behaviors:
        brief.happened.append(f"{b}: {', '.join(per_behavior[b])} (points).")
    health = {e.behavior: e for e in (evals if evals is not None else evals_of(state))}
    brief.means = _means(state, idx, health, verdicts)
    failed = [(b, c) for b in behaviors for c in health[b].checks if not c.ok]
    failed.sort(key=lambda bc: (_FIX_ORDER.index(bc[1].name), bc[0]))
    brief.next = [BriefItem(text=f"{b}: {c.failure} {c.fix}", call=c.call) for b, c in failed[:BRIEF_MAX_ITEMS]]
    brief.cannot_read = _cannot_read(state)
    return brief


def _means(state: AgentState, idx: _Index, evals: Mapping[str, EvalHealth],
           verdicts: Mapping[str, Verdict] | None) -> str:
    behaviors, latest = idx.behaviors, idx.latest
    if not behaviors:
        return "No run has posted a score yet: run.score(behavior, value, ci=, n=) puts the first one up."
    versions: dict[str, set[str]] = {}
    for bb, ver in latest:
        versions.setdefault(bb, set()).add(ver)
    lines = []
    for b in behaviors:
        if len(versions[b]) >= 2:
            lines.append(verdicts[b].line if verdicts and b in verdicts else verdict_of(state, b).line)
    if lines:
        return " ".join(lines)
    for b in behaviors:
        can_fail = next(c for c in evals[b].checks if c.name == "can_fail")
        if not can_fail.ok and can_fail.value is not None:
            return f"{b}: every version scores 100 on a set nobody can fail, so no gain can show on it."
    only = sorted({ver for _, ver in latest})
    return (f"Only {', '.join(only)} is scored: score a candidate version on the same behaviors to get a verdict.")


def _grouped(kind: str, texts: list[str], call: str) -> list[BriefItem]:
    """One item per kind: the first few named, then how many more (a page of 10,000 lines reads as none)."""
    if not texts:
        return []
    shown = "; ".join(texts[:CANNOT_READ_SHOWN])
    more = f"; and {len(texts) - CANNOT_READ_SHOWN:,} more" if len(texts) > CANNOT_READ_SHOWN else ""
    return [BriefItem(text=f"{kind}: {shown}{more}.", call=call)]


def _cannot_read(state: AgentState) -> list[BriefItem]:
    silent, settings = [], []
    for run in state.runs:
        record = run.record or {}
        said = bool(run.notes) or bool((record.get("provenance") or {}).get("pins", {}).get("harness")) \
            or bool(record.get("optimizer"))
        if not said:
            silent.append(f"{run.id} ({run.version})")
        if run.version and _SETTINGS_NAME.search(run.version):
            settings.append(repr(run.version))
    no_rubric = [name for name, spec in sorted(state.behaviors.items()) if not spec.rubric and spec.graded_by == "judge"]
    no_rows = [f"{s.behavior} on {s.version}" for s in _index(state).scores if not s.examples and not s.n_rows]
    first = silent[0].split(" ")[0] if silent else "RUN_ID"
    return [
        *_grouped("runs that do not say what they changed", silent, f'tracked.open("{first}").note("what changed and why")'),
        *_grouped("tests with no rubric", no_rubric, f'Behavior("{no_rubric[0] if no_rubric else "name"}", rubric="what passes, what fails")'),
        *_grouped("scores with no graded rows", no_rows, 'run.score(behavior, value, ..., rows=[Example(...)])'),
        *_grouped("version names that carry settings instead of what changed (settings belong in record.optimizer; "
                  "the name says what a colleague would say)", settings,
                  'tracked.run("longer-training", record={"optimizer": {...}})'),
    ]


# --- dashboard ------------------------------------------------------------------------------------


def dashboard_of(state: AgentState) -> Dashboard:
    """The agent's Runs page as data: versions, train curve, deltas, live traffic, verdicts, gaps.

    ``agent.candidate`` is the agent-level slot: the newest version scored on any behavior that is
    not the served one. Each run lists what it is missing (record, score, hours + cost) and the
    ``PATCH /runs/{id}`` body that fills it.
    """
    idx = _index(state)
    served, latest = idx.served, idx.latest
    others = [s for s in idx.scores if (s.version or s.run_id) not in idx.frontier | {served}]
    agent = state.agent.model_copy(update={"served": served, "candidate": (others[-1].version or others[-1].run_id)
                                           if others else None})
    versions = sorted(latest.values(), key=lambda s: s.seq)
    behaviors = sorted(set(idx.behaviors) | set(state.behaviors))
    scored = {s.run_id for s in idx.scores}
    verdicts = {b: verdict_of(state, b) for b in idx.behaviors}
    evals = evals_of(state)
    return Dashboard(
        agent=agent, experiment=state.experiment,
        behaviors=[state.behaviors.get(b) or Behavior(name=b) for b in behaviors],
        runs=state.runs, versions=versions, train=state.train,
        deltas={r.id: {"headline_verdict": (r.delta or {}).get("headline_verdict"),
                       "target_delta": (r.delta or {}).get("target_delta"),
                       "target_ci95": (r.delta or {}).get("target_ci95"),
                       "holdout": (r.summary or {}).get("holdout")} for r in state.runs if r.delta or (r.summary or {}).get("holdout")},
        live=state.live,
        verdicts=list(verdicts.values()),
        evals=evals,
        missing=[_missing(r, r.id in scored, (r.version or r.id) in idx.frontier) for r in state.runs],
        figures=state.figures,
        brief=brief_of(state, verdicts=verdicts, evals=evals),
        served_because=idx.served_because,
    )


def trained(run: RunRecord, frontier: bool = False) -> bool:
    """Whether a run trained (points logged, steps, a dataset or a base model): only those owe hours and cost."""
    return not frontier and (run.n_points > 0 or run.total_steps is not None or run.dataset_id is not None
                             or run.base_model is not None or run.hours is not None or run.cost_usd is not None)


def _missing(run: RunRecord, has_score: bool, frontier: bool = False) -> RunMissing:
    out = RunMissing(run_id=run.id, version=run.version)
    if not run.record:
        out.missing.append("record")
        out.patch["record"] = {"optimizer": {"learning_rate": "...", "steps": "..."}}
    if not has_score:
        out.missing.append("score")
        out.call = f'tracked.open("{run.id}").score("behavior", value, ci=, n=, rows=[...])'
    if trained(run, frontier) and (run.hours is None or run.cost_usd is None):
        out.missing.append("hours + cost")  # placeholders to replace, never a plausible number
        out.patch.update({k: "..." for k, v in (("hours", run.hours), ("cost_usd", run.cost_usd)) if v is None})
    return out


# --- numbers --------------------------------------------------------------------------------------


def noise_floor_points(run_std: float, runs: int, *, level: float = CI_LEVEL) -> float:
    """The re-run band in points: t(df = runs - 1) x run_std x sqrt(2) x 100.

    ``run_std`` is the standard deviation of the re-runs' pass rates (0 to 1), as
    ``eval_variance`` reports it; two single runs of the same model land this far apart by chance
    (Lambert 2025, chapter Evaluation).

    Examples:
        >>> round(noise_floor_points(0.02, 3), 2)
        12.17
    """
    from whileai.stats.intervals import t_quantile

    if runs < 2:
        raise ArgumentError(f"runs must be at least 2 re-runs of the same eval, got {runs!r}. Pass two or more row sets.")
    if not math.isfinite(run_std) or run_std < 0:
        raise ArgumentError(f"run_std must be a finite number >= 0, got {run_std!r}. Pass eval_variance(...).run_std.")
    return float(t_quantile(level, runs - 1)) * float(run_std) * math.sqrt(2.0) * 100.0


def cost_of(gpu: str | None, seconds: float | None) -> tuple[float | None, str]:
    """The training cost estimate: seconds / 3600 x the GPU's list rate, to the cent, and its basis.

    The one formula is ``whileai._cost.gpu_cost`` (``wai.train`` prices its runs with it too).

    Examples:
        >>> cost_of("A10G", 56)
        (0.02, 'estimate: A10G at $1.10/h, modal.com/pricing 2026-09-20')
        >>> cost_of("Z9", 56)[0] is None
        True
    """
    return gpu_cost(gpu, seconds)


def sample_of(rows: Sequence[Example]) -> list[Example]:
    """The score card's 20-row sample when ``examples=`` is not given: the first 14 failures and 6 passes."""
    fails = [r for r in rows if not r.ok][:SAMPLE_FAILURES]
    passes = [r for r in rows if r.ok][:SAMPLE_PASSES]
    return [r.sample() for r in fails + passes]
