"""Score-type intervals on a mean over tasks that hold near 0 and 1, vectorised for simulation.

Three pieces, each from the literature:

* **Modified Wilson** (Brown, Cai and DasGupta 2001, "Interval Estimation for a Binomial
  Proportion", Statistical Science 16:101, section 4.1.1): Wilson's score interval, with the end
  nearest 0 replaced by the Poisson bound ``lambda_x / n`` when only ``x <= 3`` successes sit
  there (``lambda_x`` the ``alpha`` quantile of Gamma(x, 1): 0.051, 0.355, 0.818 for x = 1, 2, 3),
  and the mirror image near 1. Plain Wilson's lower end overshoots the truth at one or two
  successes, which is where pass^k sits. ``x`` may be fractional (an effective count).
* **Effective tasks** (Korn and Graubard 1998, "Confidence intervals for proportions with small
  expected number of positive counts estimated from survey data", Survey Methodology 24:193): a
  mean of per-task values in [0, 1] is read as a proportion over ``T / deff`` tasks, where the
  design effect ``deff = s^2 / (m (1 - m))`` compares the tasks' sample variance with the
  Bernoulli variance at their mean (at most 1 for values in [0, 1], the Bhatia-Davis bound), with
  the degrees-of-freedom correction ``(z / t_{T-1})^2`` on the effective size. Our two departures:
  ``deff`` is floored at ``floor`` (a task with n rollouts carries at most the information of
  n / k independent k-draws, so for pass^k and pass@k the floor is k / n, for pass@1 1 / n): a
  sample that missed the rare tasks far from the mean otherwise reads as near-exact; and the t
  correction is applied in proportion to how much the variance was estimated,
  ``(z / t)^{2 (1 - deff)}``, so 0/1 task values (deff 1, Bernoulli variance known from the mean)
  get plain modified Wilson over tasks.
* **Monotone envelope for pass@1** (:func:`clustered_rate_interval`): more passes must never
  lower either end. A design effect read off the data is not monotone (a pass added to a task
  that already passes raises the clustering and widens both ends), so the lower end is the
  smallest lower end over every table that adds passes to this one, and the upper end the largest
  over every table that removes passes. With equal rollouts per task the interval depends on the
  counts only through the total A and the sum of squares B, the lower end falls as B rises at a
  fixed A, and the largest B reachable by adding d passes comes from filling the tasks that
  pass most first (and removing from the ones that pass least), so each envelope is one pass over
  at most N = T n points. With unequal rollouts the same greedy path is used over task rates.

* **MOVER for a paired gain** (:func:`paired_score_interval`): the interval on mean(after) -
  mean(before) over paired tasks is recovered from each side's score interval (Zou and Donner
  2008, "Construction of confidence limits about effect measures: a general approach",
  Statistics in Medicine 27:1693; for paired proportions Newcombe 1998, Statistics in Medicine
  17:2635, method 10), with the correlation of the paired task values. It keeps the sides'
  width at 0 and 1, where the paired differences of a gain that moved every task alike tie and
  the t interval on them has no width.

Measured coverage over a grid of task counts, k, rollouts and difficulty is in docs/measure.md
(``benchmarks/coverage.py``; the paired gain in ``tests/measure/test_compare_interval.py``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from whileai.defaults import CI_LEVEL, SCORE_POISSON_MAX_X

__all__ = ["cluster_wilson", "clustered_rate_interval", "effective_tasks", "modified_wilson", "paired_score_interval",
           "rate_score_interval", "score_interval"]


def _z(level: float) -> float:
    from whileai.stats.intervals import normal_quantile

    return normal_quantile(level)


def modified_wilson(successes: ArrayLike, trials: ArrayLike, *, level: float = CI_LEVEL
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Modified Wilson interval for ``successes`` of ``trials`` (Brown, Cai and DasGupta 2001, 4.1.1).

    Wilson's score interval, with the lower end replaced by ``lambda_x / n`` when
    ``0 < x <= SCORE_POISSON_MAX_X`` (``lambda_x`` the ``1 - level`` quantile of Gamma(x, 1)) and the
    upper end by ``1 - lambda_{n-x} / n`` when ``0 < n - x <= SCORE_POISSON_MAX_X``. Successes and
    trials may be fractional (effective counts) and arrays (vectorised); NaN where trials is 0.

    Args:
        successes: Successes (may be fractional).
        trials: Trials (may be fractional), the same shape or broadcastable.
        level: Confidence level.

    Returns:
        ``(lo, hi)`` arrays.

    Examples:
        >>> lo, hi = modified_wilson(1, 100)
        >>> round(float(lo), 5), round(float(hi), 4)
        (0.00051, 0.0545)
        >>> lo, hi = modified_wilson(30, 50)
        >>> round(float(lo), 4), round(float(hi), 4)
        (0.4618, 0.7239)
    """
    return _modified_wilson(successes, trials, level, lower=True, upper=True)


def _modified_wilson(successes: ArrayLike, trials: ArrayLike, level: float, *, lower: bool, upper: bool
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`modified_wilson`, its Poisson corner applied to the lower and/or upper end only.

    An end left out is Wilson's; the envelope below reads one end of each of its tables, and the
    corner it would skip is what imports scipy.special (0.2 to 0.4 s in a fresh process).
    """
    x = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    x, n = np.broadcast_arrays(x, n)
    z = _z(level)
    alpha = 1.0 - level
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.clip(x / n, 0.0, 1.0)
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
        lo = np.array(np.clip(centre - half, 0.0, 1.0), dtype=np.float64)
        hi = np.array(np.clip(centre + half, 0.0, 1.0), dtype=np.float64)
        y = n - x
        # the Poisson ends, computed only where they apply (a sparse corner of a long envelope)
        low_x = lower & (x > 0) & (x <= SCORE_POISSON_MAX_X) & (n > 0)
        low_y = upper & (y > 0) & (y <= SCORE_POISSON_MAX_X) & (n > 0)
        if low_x.any() or low_y.any():
            # only in these corners: the import costs 0.2 to 0.4 s
            from scipy.special import gammaincinv
        if low_x.any():
            lo[low_x] = np.minimum(lo[low_x], gammaincinv(x[low_x], alpha) / n[low_x])
        if low_y.any():
            hi[low_y] = np.maximum(hi[low_y], 1.0 - gammaincinv(y[low_y], alpha) / n[low_y])
    good = n > 0
    return np.where(good, lo, np.nan), np.where(good, hi, np.nan)


def _t_shrink(level: float, tasks: float) -> tuple[float, float]:
    """``(z / t_{T-1})^2`` and the design effect above which the partial correction stops growing."""
    from whileai.stats.intervals import t_quantile

    z = _z(level)
    t = float(t_quantile(level, max(tasks - 1.0, 1.0)))
    shrink = (z / t) ** 2
    log_s = -np.log(shrink)
    cap = 1.0 if log_s <= 1.0 else 1.0 / log_s  # keeps T * shrink^(1-d) / d non-increasing in d
    return shrink, cap


def _neff_from_deff(deff: np.ndarray, tasks: float, level: float) -> np.ndarray:
    shrink, cap = _t_shrink(level, tasks)
    d = np.minimum(deff, cap)
    return tasks * shrink ** (1.0 - d) / d


def effective_tasks(values: ArrayLike, *, floor: float, level: float = CI_LEVEL, axis: int = -1
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Mean and effective task count of per-task values in [0, 1] (Korn and Graubard 1998).

    ``deff = s^2 / (m (1 - m))`` clipped to ``[floor, 1]`` (1 where the mean is 0 or 1), and
    ``n_eff = T (z / t_{T-1})^{2 (1 - deff)} / deff``.

    Args:
        values: Per-task values in [0, 1]; tasks along ``axis``.
        floor: Smallest design effect (``k / n`` for pass^k and pass@k from n rollouts).
        level: Confidence level.
        axis: Axis of tasks.

    Returns:
        ``(mean, n_eff)`` with ``axis`` removed.

    Examples:
        >>> m, n = effective_tasks([0.0, 1.0, 1.0, 1.0, 0.0, 1.0], floor=1.0)
        >>> round(float(m), 4), round(float(n), 1)
        (0.6667, 6.0)
    """
    x = np.moveaxis(np.asarray(values, dtype=np.float64), axis, -1)
    tasks = x.shape[-1]
    m = x.mean(axis=-1)
    s2 = x.var(axis=-1, ddof=1) if tasks > 1 else np.zeros_like(m)
    return m, _neff_from_moments(m, s2, tasks, floor, level)


def _neff_from_moments(m: np.ndarray, s2: np.ndarray, tasks: float, floor: float | np.ndarray,
                       level: float) -> np.ndarray:
    bern = m * (1.0 - m)
    with np.errstate(divide="ignore", invalid="ignore"):
        deff = np.where(bern > 1e-15, s2 / np.where(bern > 1e-15, bern, 1.0), 1.0)
    deff = np.clip(deff, floor, 1.0)
    return _neff_from_deff(deff, tasks, level)


def score_interval(values: ArrayLike, *, floor: float, level: float = CI_LEVEL, axis: int = -1
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Score interval on the mean of per-task values in [0, 1]: modified Wilson over effective tasks.

    The pass^k and pass@k interval: per-task unbiased estimates (Chen et al. 2021; Yao et al.
    2024) averaged over tasks, read as a proportion over :func:`effective_tasks` tasks, with
    :func:`modified_wilson` on it (Korn and Graubard 1998; Brown, Cai and DasGupta 2001). NaN
    under two tasks.

    Args:
        values: Per-task values in [0, 1]; tasks along ``axis`` (other axes are independent sets).
        floor: Smallest design effect, ``k / n`` for pass^k and pass@k from n rollouts a task.
        level: Confidence level.
        axis: Axis of tasks.

    Returns:
        ``(lo, hi)`` arrays with ``axis`` removed.

    Examples:
        >>> lo, hi = score_interval([0.0] * 30, floor=1.0)
        >>> round(float(lo), 3), round(float(hi), 3)
        (0.0, 0.114)
    """
    x = np.moveaxis(np.asarray(values, dtype=np.float64), axis, -1)
    if x.shape[-1] < 2:
        nan = np.full(x.shape[:-1], np.nan)
        return nan, nan.copy()
    m, neff = effective_tasks(x, floor=floor, level=level)
    return modified_wilson(m * neff, neff, level=level)


def _rate_bounds(total: np.ndarray, squares: np.ndarray, tasks: int, n_mean: float, level: float, *,
                 lower: bool = True, upper: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The score interval from the sum and sum of squares of T task rates (rollout floor 1 / n).

    ``lower`` / ``upper``: whether that end is needed (one left out is returned as Wilson's).
    """
    m = total / tasks
    s2 = np.maximum(squares - tasks * m * m, 0.0) / (tasks - 1)
    neff = _neff_from_moments(m, s2, tasks, 1.0 / n_mean, level)
    return _modified_wilson(m * neff, neff, level, lower=lower, upper=upper)


def clustered_rate_interval(passes: ArrayLike, rollouts: ArrayLike, *, level: float = CI_LEVEL
                            ) -> tuple[np.ndarray, np.ndarray]:
    """pass@1 interval over tasks from pass counts, monotone in the passes (see the module docstring).

    The score interval of :func:`score_interval` on task pass rates ``c / n`` with the rollout
    floor ``deff >= 1 / n`` (never narrower than Wilson over every rollout, Korn and Graubard
    1998's truncation), made monotone by the envelope over tables with more (lower end) or fewer
    (upper end) passes. Exact monotonicity holds with the same rollouts on every task; with
    unequal rollouts the envelope follows the same greedy path over rates.

    Args:
        passes: Passing rollouts per task, shape (T,) or (sets, T) for simulation.
        rollouts: Graded rollouts per task (broadcast against ``passes``), each >= 1.
        level: Confidence level.

    Returns:
        ``(lo, hi)``; NaN under two tasks.

    Examples:
        >>> lo0, hi0 = clustered_rate_interval([0] * 16, [2] * 16)
        >>> lo1, hi1 = clustered_rate_interval([1] + [0] * 15, [2] * 16)
        >>> bool(hi1 >= hi0 and lo1 >= lo0)
        True
    """
    c = np.atleast_2d(np.asarray(passes, dtype=np.float64))
    n = np.broadcast_to(np.atleast_2d(np.asarray(rollouts, dtype=np.float64)), c.shape)
    squeeze = np.ndim(passes) == 1
    sets, tasks = c.shape
    if tasks < 2:
        nan = np.full(sets, np.nan)
        return (nan[0], nan[0].copy()) if squeeze else (nan, nan.copy())
    rate = c / n
    total = rate.sum(axis=1)
    squares = (rate * rate).sum(axis=1)
    n_mean = float(n.mean())
    lo, hi = _rate_bounds(total, squares, tasks, n_mean, level)
    width = int(n.max())
    step = np.arange(width, dtype=np.float64)
    # lower end: add passes, filling the tasks with the highest rate first
    order = np.argsort(-rate, axis=1, kind="stable")
    cs, ns = np.take_along_axis(c, order, 1), np.take_along_axis(n, order, 1)
    j = step[None, None, :]
    add = (j >= cs[..., None]) & (j < ns[..., None])  # the j-th pass of a task, added: rate (j + 1) / n
    inc_sum = np.where(add, 1.0 / ns[..., None], 0.0).reshape(sets, -1)
    inc_sq = np.where(add, (2.0 * j + 1.0) / (ns[..., None] ** 2), 0.0).reshape(sets, -1)
    if inc_sum.shape[1]:
        plo, _ = _rate_bounds(total[:, None] + inc_sum.cumsum(1), squares[:, None] + inc_sq.cumsum(1),
                              tasks, n_mean, level, upper=False)
        lo = np.minimum(lo, np.nanmin(plo, axis=1))
    # upper end: remove passes, emptying the tasks with the lowest rate first
    order = np.argsort(rate, axis=1, kind="stable")
    cs, ns = np.take_along_axis(c, order, 1), np.take_along_axis(n, order, 1)
    jj = (width - step)[None, None, :]  # remove the pass that takes a task from jj to jj - 1
    rem = jj <= cs[..., None]
    dec_sum = np.where(rem, 1.0 / ns[..., None], 0.0).reshape(sets, -1)
    dec_sq = np.where(rem, (2.0 * jj - 1.0) / (ns[..., None] ** 2), 0.0).reshape(sets, -1)
    if dec_sum.shape[1]:
        _, phi = _rate_bounds(np.maximum(total[:, None] - dec_sum.cumsum(1), 0.0),
                              np.maximum(squares[:, None] - dec_sq.cumsum(1), 0.0), tasks, n_mean, level,
                              lower=False)
        hi = np.maximum(hi, np.nanmax(phi, axis=1))
    if squeeze:
        return lo[0], hi[0]
    return lo, hi


def rate_score_interval(sums: ArrayLike, counts: ArrayLike, *, level: float = CI_LEVEL
                        ) -> tuple[float, float, str]:
    """The one interval on a rate over tasks: pass@1, and every marker read as a rate.

    Per task, ``sums`` of values in [0, 1] over ``counts`` rows (rollouts). When every sum is a
    whole number (0/1 rewards or markers) it is :func:`clustered_rate_interval` on the counts
    (the clustered score interval, monotone in the passes, method ``"score"``); otherwise (partial
    credit) :func:`score_interval` on the task rates with the rollout floor ``1 / mean rows a task``
    (method ``"score_rates"``). Korn and Graubard 1998; Brown, Cai and DasGupta 2001.

    Args:
        sums: Per-task sum of the values (passes for 0/1 values).
        counts: Per-task rows behind each sum, each >= 1.
        level: Confidence level.

    Returns:
        ``(lo, hi, method)``; NaN ends under two tasks.

    Examples:
        >>> lo, hi, how = rate_score_interval([0] * 16, [2] * 16)
        >>> round(hi, 3), how
        (0.194, 'score')
    """
    total = np.asarray(sums, dtype=np.float64).ravel()
    n = np.asarray(counts, dtype=np.float64).ravel()
    if total.size < 2:
        return float("nan"), float("nan"), "score"
    whole = np.abs(total - np.round(total)) < 1e-9
    if whole.all():
        lo, hi = clustered_rate_interval(np.round(total), n, level=level)
        return float(lo), float(hi), "score"
    rates = total / n
    lo, hi = score_interval(rates, floor=min(1.0, 1.0 / float(n.mean())), level=level)
    return float(lo), float(hi), "score_rates"


def cluster_wilson(successes: ArrayLike, trials: ArrayLike, *, level: float = CI_LEVEL
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Cluster-robust Wilson interval on a pooled share whose rows come in clusters (tasks).

    The share p = sum(x) / sum(n) over clusters; its cluster-robust variance
    ``sum((x_t - p n_t)^2) / N^2`` (the ratio-estimator variance with clusters as the unit,
    Cochran 1977, Sampling Techniques, 6.9) over the binomial ``p (1 - p) / N`` is the design
    effect, truncated at 1 (Korn and Graubard 1998: never narrower than the rows read as
    independent); the interval is :func:`modified_wilson` on ``N / deff`` effective rows, with the
    degrees-of-freedom correction ``(z / t_{T-1})^2`` once the clusters spread more than the rows
    (deff above 1). With one row per cluster it is modified Wilson over rows.

    Args:
        successes: Successes per cluster, shape (T,) or (sets, T).
        trials: Rows per cluster (broadcast), each >= 1.
        level: Confidence level.

    Returns:
        ``(lo, hi)``; NaN when there are no rows.

    Examples:
        >>> lo, hi = cluster_wilson([4, 4, 0, 4], [4, 4, 4, 4])
        >>> lo1, hi1 = modified_wilson(12, 16)
        >>> bool(lo < lo1 and hi >= hi1)
        True
    """
    x = np.atleast_2d(np.asarray(successes, dtype=np.float64))
    n = np.broadcast_to(np.atleast_2d(np.asarray(trials, dtype=np.float64)), x.shape)
    squeeze = np.ndim(successes) == 1
    clusters = x.shape[1]
    total = n.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = x.sum(axis=1) / total
        bern = p * (1.0 - p) * total
        spread = ((x - p[:, None] * n) ** 2).sum(axis=1)
        deff = np.where(bern > 0, spread / np.where(bern > 0, bern, 1.0), 1.0)
    deff = np.maximum(deff, 1.0)
    if clusters > 1:
        shrink, _ = _t_shrink(level, clusters)
        # the t correction once the variance is read between clusters (deff above 1)
        neff = total / deff * np.where(deff > 1.0 + 1e-9, shrink, 1.0)
    else:
        neff = total
    lo, hi = modified_wilson(p * neff, neff, level=level)
    if squeeze:
        return lo[0], hi[0]
    return lo, hi


def paired_score_interval(before: ArrayLike, after: ArrayLike, *, rollouts_before: ArrayLike,
                          rollouts_after: ArrayLike, level: float = CI_LEVEL, axis: int = -1
                          ) -> tuple[np.ndarray, np.ndarray]:
    """MOVER interval on mean(after) - mean(before) over paired tasks (Zou and Donner 2008; Newcombe 1998).

    Each side's interval ``(l, u)`` on its mean ``m`` is :func:`score_interval` with the rollout
    floor ``deff >= 1 / (mean graded rollouts a task)``, the one pass@1 reads (on task values, without
    :func:`clustered_rate_interval`'s monotone envelope); with ``d = m_b - m_a``
    and ``r`` the correlation of the paired task values (Zou and Donner 2008, Statistics in
    Medicine 27:1693, equations 8 and 9; Newcombe 1998, Statistics in Medicine 17:2635, method 10)::

        L = d - sqrt((m_b - l_b)^2 + (u_a - m_a)^2 - 2 r (m_b - l_b)(u_a - m_a))
        U = d + sqrt((u_b - m_b)^2 + (m_a - l_a)^2 - 2 r (u_b - m_b)(m_a - l_a))

    clipped to [-1, 1]. ``r`` is Pearson's (0 when a side does not vary), held to at most the
    value that leaves a paired difference the rollouts' own noise: the two sides' rollouts are
    drawn apart, so ``Var(d_t) >= w_a + w_b``, with ``w`` a side's mean within-task binomial
    variance ``p (1 - p) / n``, read at the Jeffreys rate ``p = (passes + 1/2) / (n + 1)`` (Brown,
    Cai and DasGupta 2001, section 4.1.2), so a task whose rollouts all agree is not read as
    noiseless, against the side variances the score intervals use (``deff m (1 - m)``):
    ``r <= (v_a + v_b - w_a - w_b) / (2 sqrt(v_a v_b))``, floored at 0. Without that hold a sample
    whose differences happen to tie reads as near-exact: Pearson's r alone covered 0.85 at 6 tasks
    from Beta(0.5, 0.5) with 2 rollouts a task (0.95 with it), and gave two runs with the same 0/1
    task values the interval (0, 0). NaN under two tasks.

    Args:
        before: Per-task values in [0, 1] of the first run; tasks along ``axis`` (other axes are
            independent sets).
        after: The second run's values on the same tasks, the same shape.
        rollouts_before: Graded rollouts behind each ``before`` value (broadcast against it).
        rollouts_after: Graded rollouts behind each ``after`` value (broadcast against it).
        level: Confidence level.
        axis: Axis of tasks.

    Returns:
        ``(lo, hi)`` arrays with ``axis`` removed.

    Examples:
        >>> lo, hi = paired_score_interval([0.5] * 6, [1.0] * 6, rollouts_before=2, rollouts_after=2)
        >>> round(float(lo), 3), round(float(hi), 3)
        (0.024, 0.772)
    """
    a = np.asarray(before, dtype=np.float64)
    b = np.asarray(after, dtype=np.float64)
    na = np.moveaxis(np.broadcast_to(np.asarray(rollouts_before, dtype=np.float64), a.shape), axis, -1)
    nb = np.moveaxis(np.broadcast_to(np.asarray(rollouts_after, dtype=np.float64), b.shape), axis, -1)
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    tasks = a.shape[-1]
    if tasks < 2:
        nan = np.full(a.shape[:-1], np.nan)
        return nan, nan.copy()
    ends = []
    parts = []
    for x, n in ((a, na), (b, nb)):
        floor = 1.0 / np.maximum(n.mean(axis=-1), 1.0)
        ends.append(score_interval(x, floor=floor, level=level))
        m = x.mean(axis=-1)
        c = x - m[..., None]
        s2 = (c * c).sum(axis=-1) / (tasks - 1)
        bern = m * (1.0 - m)
        with np.errstate(divide="ignore", invalid="ignore"):
            deff = np.clip(np.where(bern > 1e-15, s2 / np.where(bern > 1e-15, bern, 1.0), 1.0), floor, 1.0)
            rate = (x * n + 0.5) / (n + 1.0)  # Jeffreys: a unanimous task is not read as noiseless
            within = np.where(n >= 1.0, rate * (1.0 - rate) / np.maximum(n, 1.0), 0.0).mean(axis=-1)
        parts.append((m, c, s2, deff * bern, within))
    (la, ua), (lb, ub) = ends
    (ma, ca, s2a, va, wa), (mb, cb, s2b, vb, wb) = parts
    sab = (ca * cb).sum(axis=-1) / (tasks - 1)
    varies = (s2a > 1e-15) & (s2b > 1e-15)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(varies, sab / np.sqrt(np.where(varies, s2a * s2b, 1.0)), 0.0)
        both = (va > 1e-15) & (vb > 1e-15)
        hold = np.where(both, (va + vb - wa - wb) / (2.0 * np.sqrt(np.where(both, va * vb, 1.0))), 0.0)
    r = np.minimum(np.clip(r, -1.0, 1.0), np.maximum(hold, 0.0))
    d = mb - ma
    down_b, up_a = mb - lb, ua - ma
    up_b, down_a = ub - mb, ma - la
    lo = d - np.sqrt(np.maximum(down_b ** 2 + up_a ** 2 - 2.0 * r * down_b * up_a, 0.0))
    hi = d + np.sqrt(np.maximum(up_b ** 2 + down_a ** 2 - 2.0 * r * up_b * down_a, 0.0))
    return np.clip(lo, -1.0, 1.0), np.clip(hi, -1.0, 1.0)
