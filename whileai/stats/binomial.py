"""The one-sided exact binomial test."""

from __future__ import annotations

__all__ = ["binomial_greater_p"]


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
