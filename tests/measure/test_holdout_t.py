"""Sizing by the paired t test's power and the sign-flip floor; an explicit base kept; the interval/test line.

References: scipy.stats.nct (the paired t test's power, searched by brute force over n, never
from the normal answer), exact enumeration of sign patterns (the sign-flip test's smallest p and
a 10-task p-value), and seeded simulations of the t test and the sign-flip test at the answer.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from whileai.errors import ArgumentError
from whileai.measure import delta_report, detectable_effect, holdout_size
from whileai.stats.permutation import sign_flip_test

ALPHA, POWER = 0.05, 0.8


def t_power(effect, sd, n, alpha=ALPHA):
    """Two-sided paired t test power at n tasks, straight from scipy's noncentral t."""
    n = np.asarray(n, float)
    df, nc = n - 1, effect * np.sqrt(n) / sd
    q = stats.t.ppf(1 - alpha / 2, df)
    # scipy's nct.cdf gives NaN where the far tail underflows (noncentrality past about 10, the tail under 1e-20)
    return stats.nct.sf(q, df, nc) + np.nan_to_num(stats.nct.cdf(-q, df, nc), nan=0.0)


def t_power_integral(effect, sd, n, alpha=ALPHA):
    """The same power from its definition: T = (Z + nc) / sqrt(V / df), V chi-square, integrated over V."""
    df, nc = n - 1, effect * math.sqrt(n) / sd
    q = stats.t.ppf(1 - alpha / 2, df)

    def given(v):
        s = math.sqrt(v / df)
        return (stats.norm.cdf(nc - q * s) + stats.norm.cdf(-nc - q * s)) * stats.chi2.pdf(v, df)

    lo, hi = stats.chi2.ppf([1e-13, 1 - 1e-13], df)  # where the chi-square mass is, so quad sees the peak
    return integrate.quad(given, lo, hi, epsabs=1e-12, limit=200)[0]


def smallest_p_enumerated(n):
    """The smallest two-sided sign-flip p over n differing tasks, by enumerating all 2^n sign patterns."""
    d = np.ones(n)  # every task moved the same way: the most extreme data there is
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
    sums = np.abs(signs @ d)
    return float(np.mean(sums >= abs(d.sum()) - 1e-12))


def sign_flip_floor(alpha=ALPHA):
    return next(n for n in range(1, 20) if smallest_p_enumerated(n) < alpha)


def n_reference(effect, sd, alpha=ALPHA, power=POWER, top=20000):
    """Smallest n >= the sign-flip floor with nct power >= power, by brute force from 2."""
    ns = np.arange(2, top)
    ok = (t_power(effect, sd, ns, alpha) >= power) & (ns >= max(5, sign_flip_floor(alpha)))
    return int(ns[np.argmax(ok)])


def binomial_sd(base, effect, k):
    q = base + effect
    return math.sqrt((base * (1 - base) + q * (1 - q)) / k)


@pytest.mark.parametrize("effect,sd,n", [(0.3, 0.35, 13), (0.05, 0.34, 369), (0.5, 0.2, 6), (1.0, 0.35, 13),
                                         (0.2, 0.4, 3)])
def test_the_power_function_is_the_noncentral_t_integral(effect, sd, n):
    from whileai.measure._holdout import paired_t_power

    assert float(paired_t_power(effect, sd, n)) == pytest.approx(t_power_integral(effect, sd, n), abs=1e-7)


# (effect, base, k): the probes' cases; the first four were 367, 45, 4902, 19 under the normal formula
CASES = [(0.05, 0.6, 4), (0.1, 0.3, 8), (0.02, 0.5, 2), (0.15, 0.8, 4), (0.2, 0.5, 4), (0.3, 0.5, 4), (0.4, 0.3, 4),
         (0.5, 0.3, 8), (0.6, 0.2, 8)]


@pytest.mark.parametrize("effect,base,k", CASES)
def test_holdout_size_is_the_smallest_n_the_t_test_and_the_sign_flip_test_allow(effect, base, k):
    r = holdout_size(effect, base=base, k=k)
    sd = binomial_sd(base, effect, k)
    assert r.task_std == pytest.approx(sd)
    assert r.n_tasks_t_test == n_reference(effect, sd) <= r.n_tasks
    assert t_power(effect, sd, r.n_tasks) >= POWER


def test_large_n_stays_with_millers_equation_up_to_the_t_correction():
    """At large n the answer is equation 9's plus the t correction (about z^2 / 2 = 2 tasks)."""
    z = stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(POWER)
    for effect, base, k in CASES[:4]:
        sd = binomial_sd(base, effect, k)
        normal = math.ceil((z * sd / effect) ** 2 - 1e-9)
        assert holdout_size(effect, base=base, k=k).n_tasks_t_test - normal in (1, 2, 3)
    assert [holdout_size(e, base=b, k=k).n_tasks_t_test for e, b, k in CASES[:4]] == [369, 47, 4904, 21]


def test_the_sign_flip_floor_is_where_the_exact_test_can_first_reject():
    floor = sign_flip_floor()
    assert floor == 6 and smallest_p_enumerated(5) == pytest.approx(0.0625)
    # the library's test agrees at the floor and just under it
    assert sign_flip_test(np.ones(6)).p_value < ALPHA <= sign_flip_test(np.ones(5)).p_value
    # a huge gain the t test would see in 4 tasks still needs 6: 2 / 2^4 can never be under 0.05
    for effect, base, k in [(0.5, 0.3, 8), (0.6, 0.2, 8)]:
        assert n_reference(effect, binomial_sd(base, effect, k), top=7) == 6  # t alone: 4 tasks
        assert holdout_size(effect, base=base, k=k).n_tasks == 6
    assert math.isnan(detectable_effect(5)) and math.isfinite(detectable_effect(6))
    assert holdout_size(0.6, base=0.2, k=8, alpha=0.01).n_tasks == sign_flip_floor(0.01) == 8


@pytest.mark.parametrize("effect,base,k", [(0.3, 0.5, 4), (0.4, 0.3, 4), (0.15, 0.8, 4), (0.5, 0.3, 8)])
def test_seeded_simulation_has_the_power_at_the_answer(effect, base, k):
    """400 seeded binomial evals at the answer: the paired t test detects the gain 80% of the time.

    The sign-flip test that decides the delta report is measured too: it can reject at the answer
    (the old answers, 2 tasks at +0.5 from 0.3, gave it power 0), with power near the t test's.
    """
    reps = 400
    mc = 3 * math.sqrt(POWER * (1 - POWER) / reps)
    n = holdout_size(effect, base=base, k=k).n_tasks
    rng = np.random.default_rng(11)
    d = rng.binomial(k, base + effect, (reps, n)) / k - rng.binomial(k, base, (reps, n)) / k
    mean, se = d.mean(axis=1), d.std(axis=1, ddof=1) / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / se, np.sign(mean) * np.inf)
    assert (np.abs(t) > stats.t.ppf(1 - ALPHA / 2, n - 1)).mean() >= POWER - mc
    flips = np.mean([sign_flip_test(row, seed=rng).p_value < ALPHA for row in d])
    assert flips >= POWER - 0.15


@pytest.mark.parametrize("n", [6, 10, 25, 100, 369])
def test_detectable_effect_inverts_holdout_size_under_the_same_rule(n):
    e = detectable_effect(n)
    assert t_power(e, binomial_sd(0.6, e, 4), n) == pytest.approx(POWER, abs=1e-6)
    assert holdout_size(e).n_tasks_t_test == n
    # a measured sd: the gain at which scipy's nct power is 0.8, solved independently
    ref = optimize.brentq(lambda g: t_power(g, 0.3, n) - POWER, 1e-6, 5.0, xtol=1e-12)
    assert detectable_effect(n, task_std=0.3) == pytest.approx(ref, abs=1e-9)
    assert holdout_size(detectable_effect(n, task_std=0.3), task_std=0.3).n_tasks == n


def test_an_explicit_base_is_used_as_given():
    """No jump at 0.9: a base you pass is the base the answer uses, and detectable_effect agrees."""
    sizes = {b: holdout_size(0.05, base=b) for b in (0.85, 0.88, 0.89, 0.90, 0.92, 0.95)}
    for b, r in sizes.items():
        assert r.base == b and not r.saturated and not r.warnings
        assert r.n_tasks_t_test == n_reference(0.05, binomial_sd(b, 0.05, 4))
    ns = [r.n_tasks for r in sizes.values()]
    assert ns == sorted(ns, reverse=True)  # higher base, less binomial variance, fewer tasks
    e = detectable_effect(100, base=0.92)
    assert holdout_size(e, base=0.92).n_tasks_t_test == 100
    with pytest.raises(ArgumentError, match="base must be below 1, got 1.0: at a pass rate of 1 there is no gain"):
        holdout_size(0.05, base=1.0)
    with pytest.raises(ArgumentError, match="base must be below 1"):
        detectable_effect(100, base=1.0)


def test_a_measured_base_at_the_ceiling_still_saturates_with_its_own_reason():
    from whileai.testing import rollout_table

    high = rollout_table(30, 4, seed=2, pass_rates=np.full(30, 0.97), messages=False)
    r = holdout_size(0.05, before=high)
    assert r.saturated and r.base == 0.6 and r.n_tasks == holdout_size(0.05).n_tasks
    assert "at p = 1" not in r.warnings[0] and "too easy" in r.warnings[0] and "pass base=" in r.warnings[0]


def _rows(rates, seed, shift=0.0, k=4):
    rng = np.random.default_rng(seed)
    return [{"task_id": f"t{t}", "reward": float(x)} for t, p in enumerate(rates)
            for x in rng.random(k) < min(1.0, p + shift)]


def _disagreeing_pair():
    """10 tasks where the t interval excludes zero and the exact sign-flip test gives p = 0.0625."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.2, 0.7, 10)
    a = [{"task_id": f"t{t}", "reward": float(x)} for t in range(10) for x in rng.random(4) < p[t]]
    b = [{"task_id": f"t{t}", "reward": float(x)} for t in range(10) for x in rng.random(4) < min(1, p[t] + 0.12)]
    return a, b


def _enumerated_p(d):
    d = d[d != 0]
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=d.size)))
    return float(np.mean(np.abs(signs @ np.abs(d)) >= abs(d.sum()) - 1e-12))


def test_the_printed_line_says_when_the_interval_and_the_test_disagree():
    a, b = _disagreeing_pair()
    r = delta_report(a, b, ci_method="t")  # the t interval excludes zero here (the default is score)
    t = r.metrics["pass_at_1"]
    lo, hi = r.target_ci95
    assert lo > 0 and r.target_verdict == "no_change_detected" and r.headline == "NO DIFFERENCE"
    d = np.array([np.mean([x["reward"] for x in b if x["task_id"] == f"t{i}"])
                  - np.mean([x["reward"] for x in a if x["task_id"] == f"t{i}"]) for i in range(10)])
    assert t["p_value"] == pytest.approx(_enumerated_p(d)) == pytest.approx(0.0625)
    lines = str(r).splitlines()
    assert lines[1].endswith("10 paired tasks; sign-flip p 0.0625: the interval and the exact test disagree at 10 "
                             "tasks; the test decides)")
    assert any(line.lstrip().startswith("pass_at_1") and "(10 paired; sign-flip p 0.0625 decides)" in line
               for line in lines[2:])
    # agreeing reports say nothing of it
    big = delta_report(_rows(np.linspace(0.2, 0.6, 40), 1), _rows(np.linspace(0.2, 0.6, 40), 2, shift=0.3))
    assert big.metrics["pass_at_1"]["interval_agrees"] and "disagree" not in str(big) and "decides" not in str(big)


def test_the_sizing_line_uses_the_same_rule():
    rates = np.linspace(0.2, 0.6, 40)
    r = delta_report(_rows(rates, 1), _rows(rates, 2, shift=0.1))
    t = r.metrics["pass_at_1"]
    n, sd = t["n_paired"], t["task_std"]
    ref = optimize.brentq(lambda g: t_power(g, sd, n) - POWER, 1e-6, 5.0, xtol=1e-12)
    assert r.detectable_effect == pytest.approx(ref, abs=1e-9)
    assert r.tasks_needed == n_reference(abs(r.target_delta), sd)
    assert f"sizing: {n} paired tasks detect {r.detectable_effect:+.3f} at 80% power" in str(r)


def test_the_sizing_line_under_the_sign_flip_floor():
    rates = [0.2, 0.3, 0.4, 0.5, 0.6]
    r = delta_report(_rows(rates, 1), _rows(rates, 2, shift=0.3))
    assert r.n_paired_tasks == 5 and r.detectable_effect is None
    assert "sizing: 5 paired tasks detect no gain: the sign-flip test needs 6 to reach p < 0.05" in str(r)


def test_the_power_curve_is_the_rule_the_answer_uses():
    """The figure's curve is the t test's power (0 where the sign-flip test cannot reject) and crosses at n_tasks."""
    for r in (holdout_size(0.05), holdout_size(0.5, base=0.3, k=8)):
        spec = r.figure_spec()
        x, y = spec["data"][0]["x"], spec["data"][0]["y"]
        assert y == pytest.approx([t_power(r.effect, r.task_std, n) if n >= sign_flip_floor() else 0.0 for n in x])
        assert all(b >= a for a, b in zip(y, y[1:]))
        n = r.n_tasks if r.n_tasks_t_test is None else r.n_tasks_t_test
        assert t_power(r.effect, r.task_std, n) >= r.power
        assert n == sign_flip_floor() or t_power(r.effect, r.task_std, n - 1) < r.power


def test_tasks_needed_ends_for_an_effect_at_floating_point_noise():
    """A mean difference of float noise (8e-18 next to an sd of 0.3) asks for more tasks than a float
    counts by one; the answer is the normal one, capped, instead of a loop that never ends."""
    import signal

    from whileai.measure._holdout import tasks_needed

    def stuck(*_):  # the old stepping loop spun forever here
        raise TimeoutError("tasks_needed did not return")

    old = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(20)
    try:
        got = tasks_needed(8.3e-18, [0.3, 0.35])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert got.dtype == np.int64 and (got == 2**62).all()
    assert int(tasks_needed(0.3, 0.35)) == 13  # an ordinary effect steps as before
