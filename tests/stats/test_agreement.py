"""Cohen's kappa and raw agreement against their formulas and an independent implementation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from whileai.stats.agreement import cohen_kappa, confusion_2x2, percent_agreement
from whileai.stats.wilson import wilson


def _pairs(table):
    """Expand a K x K table into item-level (rater, gold) pairs."""
    out = []
    for a, row in enumerate(table):
        for b, count in enumerate(row):
            out.extend([(a, b)] * int(count))
    return out


def _kappa_items(pairs, k):
    """Kappa computed from item labels with plain loops (no table algebra)."""
    n = len(pairs)
    if n == 0:
        return math.nan
    po = sum(1 for a, b in pairs if a == b) / n
    pe = sum((sum(1 for a, _ in pairs if a == c) / n) * (sum(1 for _, b in pairs if b == c) / n) for c in range(k))
    return math.nan if pe == 1 else (po - pe) / (1 - pe)


def _kappa_2x2_closed(tp, fp, fn, tn):
    """The 2 x 2 closed form: 2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d))."""
    a, b, c, d = tp, fp, fn, tn
    den = (a + b) * (b + d) + (a + c) * (c + d)
    return math.nan if den == 0 else 2 * (a * d - b * c) / den


TABLES = [
    [[20, 5], [10, 15]],
    [[40, 0], [0, 60]],      # all agree, two classes
    [[0, 30], [25, 0]],      # all disagree
    [[50, 0], [0, 0]],       # one class, all agree: chance agreement 1
    [[30, 10], [0, 0]],      # rater always 1, gold mixed
    [[0, 0], [7, 3]],        # rater always 0
    [[1, 0], [0, 0]],
    [[13, 2], [4, 81]],
]


@pytest.mark.parametrize("table", TABLES)
def test_kappa_matches_item_level_and_closed_form(table):
    got = cohen_kappa(table)
    items = _kappa_items(_pairs(table), 2)
    closed = _kappa_2x2_closed(table[0][0], table[0][1], table[1][0], table[1][1])
    if math.isnan(items):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(items, abs=1e-12)
        assert got == pytest.approx(closed, abs=1e-12)


def test_kappa_hand_values():
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.4
    assert cohen_kappa([[20, 5], [10, 15]]) == pytest.approx(0.4)
    assert cohen_kappa([[40, 0], [0, 60]]) == pytest.approx(1.0)
    # perfect disagreement with balanced margins is -1
    assert cohen_kappa([[0, 50], [50, 0]]) == pytest.approx(-1.0)
    # a constant rater against mixed gold agrees exactly at chance
    assert cohen_kappa([[30, 10], [0, 0]]) == pytest.approx(0.0)


def test_kappa_degenerate_is_nan():
    assert math.isnan(cohen_kappa([[0, 0], [0, 0]]))
    assert math.isnan(cohen_kappa([[50, 0], [0, 0]]))
    assert math.isnan(cohen_kappa(np.zeros((3, 3))))
    assert math.isnan(percent_agreement([[0, 0], [0, 0]]))


def test_kappa_three_classes_matches_items():
    rng = np.random.default_rng(3)
    for _ in range(20):
        table = rng.integers(0, 12, size=(3, 3))
        assert cohen_kappa(table) == pytest.approx(_kappa_items(_pairs(table), 3), nan_ok=True)


def test_agreement_and_confusion():
    judge = [1, 1, 1, 0, 0, 0, 1, 0]
    gold = [1, 0, 1, 0, 1, 0, 1, 0]
    table = confusion_2x2(judge, gold)
    assert table.tolist() == [[3, 1], [1, 3]]
    assert percent_agreement(table) == pytest.approx(6 / 8)
    assert confusion_2x2([], []).tolist() == [[0, 0], [0, 0]]


def test_bad_tables_raise():
    with pytest.raises(ValueError, match="square"):
        cohen_kappa([[1, 2, 3]])
    with pytest.raises(ValueError, match="non-negative"):
        cohen_kappa([[1, -2], [3, 4]])
    with pytest.raises(ValueError, match="same length"):
        confusion_2x2([1, 0], [1])


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (8, 10), (1, 1), (0, 1), (37, 80), (500, 1000), (3, 7)])
def test_wilson_matches_scipy(k, n):
    lo, hi = wilson(k, n)
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert float(lo) == pytest.approx(ref.low, abs=1e-9)
    assert float(hi) == pytest.approx(ref.high, abs=1e-9)


def test_wilson_formula_and_empty():
    k, n, z = 8, 10, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    lo, hi = wilson(k, n)
    assert (float(lo), float(hi)) == pytest.approx((centre - half, centre + half))
    lo, hi = wilson(0, 0)
    assert math.isnan(float(lo)) and math.isnan(float(hi))


def test_wilson_coverage_by_exact_enumeration():
    # Exact coverage over the binomial distribution stays near 95% (Brown, Cai, DasGupta 2001).
    from scipy.stats import binom

    for n, p in itertools.product((20, 50), (0.1, 0.5, 0.8)):
        ks = np.arange(n + 1)
        lo, hi = wilson(ks, np.full(n + 1, n))
        covered = (lo <= p) & (p <= hi)
        coverage = float(binom.pmf(ks, n, p)[covered].sum())
        assert 0.90 <= coverage <= 0.99


def test_kappa_interval_matches_the_2x2_formula():
    from whileai.stats import kappa_interval

    # Fleiss, Cohen and Everitt (1969) written out for a 2 x 2 table by hand
    a, b, c, d = 40, 6, 5, 35
    n = a + b + c + d
    p11, p12, p21, p22 = a / n, b / n, c / n, d / n
    r1, r2, c1, c2 = p11 + p12, p21 + p22, p11 + p21, p12 + p22
    po, pe = p11 + p22, r1 * c1 + r2 * c2
    k = (po - pe) / (1 - pe)
    var = (p11 * (1 - (r1 + c1) * (1 - k)) ** 2 + p22 * (1 - (r2 + c2) * (1 - k)) ** 2
           + (1 - k) ** 2 * (p12 * (c1 + r2) ** 2 + p21 * (c2 + r1) ** 2) - (k - pe * (1 - k)) ** 2) / (n * (1 - pe) ** 2)
    lo, hi = kappa_interval([[a, b], [c, d]])
    assert (lo, hi) == pytest.approx((k - 1.959963985 * var ** 0.5, k + 1.959963985 * var ** 0.5))


def test_kappa_interval_covers_at_its_level():
    import numpy as np

    from whileai.stats import cohen_kappa, kappa_interval

    # seeded simulation: a judge agreeing with gold 85% of the time on a 55% base rate, 200 rows
    rng = np.random.default_rng(11)
    probs = np.array([0.55 * 0.85, 0.45 * 0.15, 0.55 * 0.15, 0.45 * 0.85])  # tp, fp, fn, tn
    t = probs.reshape(2, 2)
    true_k = cohen_kappa(t * 1e6)
    hits = 0
    sims = 2000
    for _ in range(sims):
        counts = rng.multinomial(200, probs).reshape(2, 2)
        lo, hi = kappa_interval(counts)
        hits += lo <= true_k <= hi
    assert 0.93 <= hits / sims <= 0.97


def test_kappa_interval_is_nan_when_kappa_is():
    import math

    from whileai.stats import kappa_interval

    assert all(math.isnan(v) for v in kappa_interval([[10, 0], [0, 0]]))
