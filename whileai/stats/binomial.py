"""The one-sided exact binomial test, and the preference-pair length confound read with it."""

from __future__ import annotations

from whileai.defaults import ALPHA, PAIR_LENGTH_CONFOUND

__all__ = ["binomial_greater_p", "length_confound"]


def binomial_greater_p(successes: int, n: int, p: float = 0.5) -> float:
    """P(X >= successes) for X ~ Binomial(n, p): the one-sided exact binomial test's p-value.

    Clopper and Pearson 1934; computed by ``scipy.stats.binomtest(..., alternative="greater")``.

    Examples:
        >>> round(binomial_greater_p(9, 10), 6)  # (10 + 1) / 2**10
        0.010742
    """
    from scipy.stats import binomtest

    if n <= 0:
        return 1.0
    return float(binomtest(int(successes), int(n), p, alternative="greater").pvalue)


def length_confound(chosen_longer: int, n: int) -> bool:
    """Whether chosen is the longer side (``table.pair_length_delta() > 0``) too often to be chance.

    At least ``PAIR_LENGTH_CONFOUND`` of the ``n`` pairs, and a one-sided exact binomial test
    against a fair half below ``ALPHA`` (DPO learns length faster than behaviour: Park et al.
    2024, arXiv:2403.19159). The pairs report and the preference export both warn on it.

    Examples:
        >>> length_confound(12, 12), length_confound(7, 10), length_confound(0, 0)
        (True, False, False)
    """
    return n > 0 and chosen_longer / n >= PAIR_LENGTH_CONFOUND and binomial_greater_p(chosen_longer, n) < ALPHA
