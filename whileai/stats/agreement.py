"""Agreement between two raters: confusion tables, raw agreement and Cohen's kappa.

Cohen (1960, "A Coefficient of Agreement for Nominal Scales", Educational and Psychological
Measurement 20:37): for a K x K table n_ab over N items, p_o = sum_a n_aa / N,
p_e = sum_a (n_a. / N)(n_.a / N), kappa = (p_o - p_e) / (1 - p_e). The formulas are the ones in
peers.md section 4.5. Pure numpy; undefined values are NaN, never a plausible number.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from whileai.defaults import CI_LEVEL, JUDGE_AGREEMENT_FLOOR, PASS_THRESHOLD

__all__ = ["AgreementGate", "agreement_gate", "cohen_kappa", "confusion_2x2", "kappa_interval", "percent_agreement"]


class AgreementGate(NamedTuple):
    """Whether a judge's agreement with people is shown to clear the floor."""

    ok: bool
    """The agreement's lower bound is at least the floor."""
    lower: float
    """The lower end of the agreement's interval at ``level`` (NaN when no labels)."""


def agreement_gate(agreement: float | None, n: int | None, *, floor: float = JUDGE_AGREEMENT_FLOOR,
                   level: float = CI_LEVEL, lower: float | None = None) -> AgreementGate:
    """The one judge-agreement rule: the interval's lower bound must reach ``floor`` (``judge_trust`` and the platform).

    A point agreement of 0.80 over 30 labels is consistent with a judge that agrees 0.65 of the
    time; the rule asks that the lower end of the agreement's interval clear the floor
    (``JUDGE_AGREEMENT_FLOOR``, 0.80; Zheng et al. 2023, "Judging LLM-as-a-Judge": agreement with
    people as the yardstick). The bound is ``lower`` when the caller measured one (``judge_trust``'s
    interval clustered by task), else Wilson's lower end on ``agreement x n`` of ``n`` labels (Wilson
    1927). No labels, or no count of them, gives ``ok=False`` and a NaN bound.

    Args:
        agreement: Share of labels the judge agrees with, 0 to 1 (None: unmeasured).
        n: Labels behind it (None: not stated).
        floor: Smallest lower bound that passes.
        level: Confidence level of the interval.
        lower: A lower bound already measured (overrides the Wilson bound).

    Returns:
        An :class:`AgreementGate`.

    Examples:
        >>> agreement_gate(0.9, 30).ok, agreement_gate(0.9, 200).ok
        (False, True)
    """
    if lower is None:
        if agreement is None or n is None or n <= 0 or not math.isfinite(agreement):
            return AgreementGate(False, float("nan"))
        from whileai.stats.wilson import wilson

        lo, _ = wilson(float(agreement) * n, float(n), level=level)
        lower = float(lo)
    return AgreementGate(bool(math.isfinite(lower) and lower >= floor), float(lower))


def confusion_2x2(rater: ArrayLike, gold: ArrayLike) -> np.ndarray:
    """The 2 x 2 confusion table of two 0/1 raters: rows are ``rater`` (1, 0), columns ``gold`` (1, 0).

    ``[[tp, fp], [fn, tn]]``: tp = both 1, fp = rater 1 and gold 0, fn = rater 0 and gold 1,
    tn = both 0.

    Args:
        rater: 0/1 values (the judge).
        gold: 0/1 values of the same length (the people).

    Returns:
        An int64 array of shape (2, 2).

    Examples:
        >>> confusion_2x2([1, 1, 0, 0], [1, 0, 1, 0]).tolist()
        [[1, 1], [1, 1]]
    """
    a = np.asarray(rater, dtype=np.float64).ravel() >= PASS_THRESHOLD
    b = np.asarray(gold, dtype=np.float64).ravel() >= PASS_THRESHOLD
    if a.shape != b.shape:
        raise ValueError(f"rater and gold must have the same length, got {a.size} and {b.size}.")
    tp = int(np.count_nonzero(a & b))
    fp = int(np.count_nonzero(a & ~b))
    fn = int(np.count_nonzero(~a & b))
    tn = int(a.size - tp - fp - fn)
    return np.array([[tp, fp], [fn, tn]], dtype=np.int64)


def _table(table: ArrayLike) -> np.ndarray:
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"a confusion table must be square (K x K), got shape {t.shape}.")
    if np.any(t < 0) or not np.all(np.isfinite(t)):
        raise ValueError("a confusion table must hold finite non-negative counts.")
    return t


def percent_agreement(table: ArrayLike) -> float:
    """Raw agreement p_o: the share of items on the table's diagonal; NaN for an empty table.

    Examples:
        >>> percent_agreement([[40, 5], [5, 50]])
        0.9
    """
    t = _table(table)
    n = t.sum()
    return float(np.trace(t) / n) if n > 0 else float("nan")


def cohen_kappa(table: ArrayLike) -> float:
    """Cohen's kappa of a K x K confusion table (Cohen 1960).

    kappa = (p_o - p_e) / (1 - p_e) with p_e from the two raters' marginals. Undefined, and so
    NaN, when the table is empty or chance agreement is 1 (both raters used one and the same
    class on every item, so there is nothing to beat).

    Args:
        table: Counts, rows one rater and columns the other, categories in the same order.

    Returns:
        kappa in [-1, 1], or NaN when undefined.

    Examples:
        >>> round(cohen_kappa([[20, 5], [10, 15]]), 4)
        0.4
    """
    t = _table(table)
    n = t.sum()
    if n <= 0:
        return float("nan")
    p_o = np.trace(t) / n
    p_e = float(np.dot(t.sum(axis=1), t.sum(axis=0))) / (n * n)
    if 1.0 - p_e <= 1e-12:
        return float("nan")
    return float((p_o - p_e) / (1.0 - p_e))


def kappa_interval(table: ArrayLike, *, level: float = 0.95) -> tuple[float, float]:
    """A large-sample interval on Cohen's kappa: kappa +/- z * se, clipped to [-1, 1].

    The standard error is the non-null asymptotic one of Fleiss, Cohen and Everitt (1969,
    "Large sample standard errors of kappa and weighted kappa", Psychological Bulletin 72:323):
    ``var = [sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2 + (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
    - (k - p_e (1 - k))^2] / (N (1 - p_e)^2)``. NaN bounds where kappa is undefined.

    Args:
        table: A K x K confusion table of counts.
        level: Two-sided confidence level.

    Returns:
        ``(low, high)``.

    Examples:
        >>> [round(x, 3) for x in kappa_interval([[20, 5], [10, 15]])]
        [0.151, 0.649]
    """
    from scipy.special import ndtri

    t = _table(table)
    n = t.sum()
    k = cohen_kappa(t)
    if n <= 0 or not np.isfinite(k):
        return (float("nan"), float("nan"))
    p = t / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_e = float(rows @ cols)
    diag = np.diag(p)
    a = float(np.sum(diag * (1.0 - (rows + cols) * (1.0 - k)) ** 2))
    off = p.copy()
    np.fill_diagonal(off, 0.0)
    b = (1.0 - k) ** 2 * float(np.sum(off * (cols[:, None] + rows[None, :]) ** 2))
    c = (k - p_e * (1.0 - k)) ** 2
    se = float(np.sqrt(max(a + b - c, 0.0) / (n * (1.0 - p_e) ** 2)))
    z = float(ndtri(0.5 + level / 2.0))
    return (max(-1.0, k - z * se), min(1.0, k + z * se))
