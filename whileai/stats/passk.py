"""Unbiased per-task pass@k and pass^k from n rollouts with c passes, vectorised over tasks.

pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", arXiv:2107.03374,
equation 1) is the chance that at least one of k rollouts drawn without replacement from the n
passes: ``1 - C(n - c, k) / C(n, k)``. pass^k (Yao et al. 2024, tau-bench, arXiv:2406.12045) is
the chance that all k pass: ``C(c, k) / C(n, k)``. Both are unbiased for their population values
when the n rollouts are i.i.d. draws, and both are averaged over tasks (peers.md section 4.1-4.2).

Both are computed as a product of k ratios, ``C(m, k) / C(n, k) = prod_{i<k} (m - i) / (n - i)``,
the numerically stable form of the Codex paper's code; the loop runs over k, never over tasks.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["comb_ratio", "pass_at_k", "pass_pow_k"]


_DISTINCT_MIN = 4096  # above this many tasks, compute per distinct (m, n) pair


def _integral(x: np.ndarray) -> bool:
    return bool(np.isfinite(x).all() and (x >= 0).all() and (x == np.floor(x)).all() and x.max() < 2**26)


def comb_ratio(m: ArrayLike, n: ArrayLike, k: int) -> np.ndarray:
    """``C(m, k) / C(n, k)`` elementwise for ``0 <= m <= n``; NaN where ``n < k``.

    Args:
        m: Counts (``c`` for pass^k, ``n - c`` for the pass@k complement).
        n: Rollouts per task.
        k: Draws, ``k >= 1``.

    Returns:
        Float64 array of the ratio; 0 where ``m < k <= n``.

    Examples:
        >>> comb_ratio([4, 3, 2], [8, 8, 3], 4).round(6).tolist()
        [0.014286, 0.0, nan]
    """
    m_arr = np.asarray(m, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if m_arr.shape == n_arr.shape and m_arr.size > _DISTINCT_MIN and _integral(m_arr) and _integral(n_arr):
        # tasks share few (m, n) pairs: compute each distinct pair once and scatter back
        width = float(m_arr.max()) + 2.0
        keys, inverse = np.unique(n_arr * width + m_arr, return_inverse=True)
        return comb_ratio(keys % width, keys // width, k)[inverse.reshape(m_arr.shape)]
    out = np.ones(np.broadcast(m_arr, n_arr).shape, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(int(k)):
            out *= np.clip(m_arr - i, 0.0, None) / (n_arr - i)
    return np.where(n_arr >= k, out, np.nan)


def pass_pow_k(n: ArrayLike, c: ArrayLike, k: int) -> np.ndarray:
    """Per-task unbiased pass^k, ``C(c, k) / C(n, k)`` (tau-bench, Yao et al. 2024).

    Args:
        n: Graded rollouts per task.
        c: Passing rollouts per task.
        k: Rollouts that must all pass.

    Returns:
        Float64 array, NaN where a task has fewer than k rollouts.

    Examples:
        >>> pass_pow_k([4, 4, 8], [4, 3, 6], 4).round(4).tolist()
        [1.0, 0.0, 0.2143]
    """
    return comb_ratio(c, n, k)


def pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> np.ndarray:
    """Per-task unbiased pass@k, ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021, equation 1).

    Args:
        n: Graded rollouts per task.
        c: Passing rollouts per task.
        k: Rollouts of which at least one must pass.

    Returns:
        Float64 array, NaN where a task has fewer than k rollouts.

    Examples:
        >>> pass_at_k([4, 4, 8], [0, 1, 2], 4).round(4).tolist()
        [0.0, 1.0, 0.7857]
    """
    n_arr = np.asarray(n, dtype=np.float64)
    return 1.0 - comb_ratio(n_arr - np.asarray(c, dtype=np.float64), n_arr, k)
