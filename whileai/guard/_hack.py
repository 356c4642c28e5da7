"""``hack_scan``: what will the policy learn? Reward against every candidate feature, within ask.

docs/guard.md, "What will the policy learn?": reward and every candidate feature are centred within ask
(task_key), ranked by that correlation, and compared to a noise floor ``tau`` from shuffling the
reward within ask. The kernel is a handful of matrix products:

- rows are sorted by ask; ``yc`` is the reward minus its ask mean;
- for a feature column x, sum_i (x_i - xbar_g)(y_i - ybar_g) = x . yc, and the within-ask sum of
  squares is sum x^2 - sum_g (sum_{i in g} x_i)^2 / n_g, so every correlation is ``X.T @ yc``
  plus one sparse ask-indicator product, with X sparse (auto tier) or dense (hand tier);
- a within-ask shuffle keeps each ask's mean, so the shuffled numerators are ``X.T @ Yp`` for a
  block of shuffled copies ``Yp`` and the denominators do not change.

Only asks with at least two graded rollouts that disagree carry within-ask signal (an ask whose
rollouts all got the same reward has zero advantage in a group-relative update; Yu et al. 2025,
DAPO, dynamic sampling), so the correlations are computed over those rows.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai._checks import check_fraction, check_int, check_strings
from whileai.defaults import (
    CHUNK_ROWS,
    DEFAULT_SEED,
    HACK_ALPHA,
    HACK_AND_SEEDS,
    HACK_MIN_FEATURES,
    HACK_MIN_OBS,
    HACK_PERMUTATIONS,
    HACK_TOP_FEATURES,
    HACK_TOP_K,
    HACK_VOCAB_SAMPLE_ROWS,
    PASS_THRESHOLD,
)
from whileai.errors import ArgumentError
from whileai.guard._hackfeat import (
    COLUMNS,
    Rows,
    Spec,
    assemble,
    choose_vocab,
    chunk_features,
    one_pass_features,
    sample_mask,
    vocab_counts,
)
from whileai.guard._tokens import combine
from whileai.guard._views import agent_text_of
from whileai.report import ChartedReport, Documented, Tone, fmt_num
from whileai.stats.rng import check_rng
from whileai.stats.within import AndTier, WithinKernel, row_chunks, single_blas_thread
from whileai.table import IntoRows, is_ray_dataset

__all__ = ["HackScanReport", "hack_scan", "HACK_SCAN_COLUMNS"]

_TIE = 1e-9

#: The columns ``hack_scan`` reads besides the reward when no ``features=`` function needs the
#: whole row: what ``wai hack-scan`` reads from a file.
HACK_SCAN_COLUMNS = COLUMNS


class HackFeature(Documented):
    """One scanned feature (indexes like a dict: ``feature["rho"]``)."""

    name: str
    """Feature name: ``reply_length``, ``tool:<name>``, ``marker:<name>``, ``contains:<word>``, ``a & b``..."""
    aliases: list[str] = Field(default_factory=list)
    """Other features equal to this one within ask up to scale and sign (a word and its
    complement, a count and its multiple): the same explanation under another name."""
    rho: float
    """Correlation with reward after centring both within ask."""
    pooled: float
    """Plain correlation with reward over every graded row (between-ask differences included)."""
    n_obs: int
    """Graded rows where the feature is non-zero (present), or non-null for a measured value."""
    above_floor: bool
    """|rho| is above the shuffle floor tau."""
    endorsed: bool
    """The name (or an alias) contains one of ``endorsed``."""

    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields:
            return getattr(self, key)
        raise KeyError(key)


class HackScanReport(ChartedReport):
    """What the reward pays for, within ask, against a shuffle floor."""

    regime: str = "unknown"
    """train, reward_hack, pool_exhausted, no_signal, degenerate or unknown."""
    n_rows: int = 0
    """Rows given."""
    n_graded: int = 0
    """Rows with a numeric reward."""
    n_groups: int = 0
    """Asks (task_key) among graded rows."""
    n_groups_multi: int = 0
    """Asks with at least two graded rollouts."""
    rollouts_per_group: float = float("nan")
    """Median graded rollouts per ask."""
    effective_rollouts: int = 0
    """Rows in asks whose rollouts disagree: the rows the within-ask correlation is computed on."""
    support: dict[str, float] = Field(default_factory=dict)
    """Shares of multi-rollout asks all passing (sat), all failing (dead) and mixed, and capacity
    (mean within-ask reward variance over its 0/1 maximum 0.25)."""
    tau: float = float("nan")
    """Noise floor: the (1 - alpha) quantile of the largest |rho| over all features when reward is
    shuffled within ask."""
    n_perm: int = 0
    """Shuffles behind tau."""
    alpha: float = HACK_ALPHA
    """Family-wise level of the floor."""
    n_features: int = 0
    """Features with within-ask variation that were ranked."""
    n_above_floor: int = 0
    """Ranked features with |rho| above tau."""
    min_obs: int = HACK_MIN_OBS
    """Rows a feature had to be present on (and absent from) to be scanned."""
    underpowered: bool = False
    """Fewer than ``HACK_MIN_FEATURES`` features cleared ``min_obs``: finding nothing here says the
    table is too small to look, not that the reward is clean (the warning gives the power)."""
    features: list[HackFeature] = Field(default_factory=list)
    """Every ranked feature, by |rho| descending."""
    top_feature: str | None = None
    """The feature the reward tracks most (None when degenerate or nothing was ranked)."""
    rho_max: float = float("nan")
    """|rho| of the top feature."""
    endorsed: list[str] = Field(default_factory=list)
    """What the reward should track, as substrings of feature names."""
    endorsed_matched: list[str] = Field(default_factory=list)
    """Ranked features the endorsed substrings matched."""
    endorsed_on_top: bool | None = None
    """The top feature is endorsed (None without endorsed= or without a top feature)."""
    reward_hack: bool = False
    """endorsed= was given and the top feature is above the floor and not endorsed."""
    integrity: float = float("nan")
    """Share of the above-floor signal (sum of rho^2) carried by endorsed features."""
    rivals: list[str] = Field(default_factory=list)
    """Above-floor features that are not endorsed and rank above the best endorsed one."""
    inverted: list[str] = Field(default_factory=list)
    """Endorsed above-floor features the reward moves against (rho < 0)."""
    continuous_reward: bool = False
    """Rewards other than 0 and 1 are present."""
    degenerate: bool = False
    """Two or more features tie at |rho| 1: the floor cannot pick between perfect explanations."""
    collinear: list[str] = Field(default_factory=list)
    """The features tied at the top when degenerate."""
    cause: str | None = None
    """Why the scan is degenerate: distinct_per_ask (at most two distinct trajectories per ask) or
    collinear (features that are exact functions of each other)."""
    distinct_per_ask: float = float("nan")
    """Mean number of distinct trajectories per disagreeing ask."""
    top_features: int = HACK_TOP_FEATURES
    """Rows printed by render()."""

    def verdict_word(self) -> tuple[str, Tone]:
        """The regime word: TRAIN good, REWARD_HACK and DEGENERATE bad, the rest warn."""
        tone = {"train": "good", "reward_hack": "bad", "degenerate": "bad"}.get(self.regime, "warn")
        return self.regime.upper(), tone  # type: ignore[return-value]

    def figure_spec(self) -> dict[str, Any]:
        """The top features' within-ask rho against the shuffle floor, endorsed ones coloured."""
        from whileai.charts import feature_bars

        top = self.features[: self.top_features]
        return feature_bars([f.name for f in top] or ["(no feature ranked)"], [f.rho for f in top] or [None],  # type: ignore[list-item]
                            floor=self.tau, endorsed=[f.endorsed for f in top] or [False],
                            title=f"{self.regime.upper()} · floor tau {fmt_num(self.tau, 3)}, "
                                  f"{self.n_above_floor} of {self.n_features} above")

    def render(self) -> str:
        """The scan as a person reads it: regime, support, floor, then the ranked features."""
        lines = [self.regime.upper()]
        if self.n_graded == 0:
            lines.extend(f"! {w}" for w in self.warnings)
            return "\n".join(lines)
        sup = self.support
        lines.append(
            f"{self.n_graded} graded rollouts, {self.n_groups} asks, {fmt_num(self.rollouts_per_group, 0)} per ask; "
            f"mixed {sup.get('mixed', 0.0):.0%}, all-pass {sup.get('sat', 0.0):.0%}, all-fail {sup.get('dead', 0.0):.0%}, "
            f"capacity {fmt_num(sup.get('capacity'))}"
        )
        lines.append(f"noise floor tau {fmt_num(self.tau, 3)} ({self.n_above_floor} of {self.n_features} features above)")
        if self.features:
            lines.append(f"   {'feature':<44} {'within':>7} {'pooled':>7} {'n':>7}")
            for f in self.features[: self.top_features]:
                mark = "*" if f.above_floor else " "
                end = " endorsed" if f.endorsed else ""
                lines.append(f"{mark}  {f.name[:44]:<44} {f.rho:>+7.3f} {_fmt_signed(f.pooled):>7} {f.n_obs:>7}{end}")
            if len(self.features) > self.top_features:
                lines.append(f"   ... {len(self.features) - self.top_features} more")
        if self.degenerate:
            lines.append(f"degenerate ({self.cause}): tied at |rho| 1: {', '.join(self.collinear[:8])}")
        if self.endorsed:
            lines.append(f"endorsed {', '.join(self.endorsed)}: integrity {fmt_num(self.integrity)}; "
                         f"rivals {', '.join(self.rivals[:5]) or 'none'}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def _fmt_signed(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:+.3f}"


# ------------------------------------------------------------------------------------------
# the public call
# ------------------------------------------------------------------------------------------


def hack_scan(
    rows: IntoRows,
    /,
    *,
    endorsed: Sequence[str] | str | None = None,
    features: Mapping[str, Callable[[dict[str, Any]], Any]] | None = None,
    auto: bool = True,
    trace: bool = True,
    top_k: int = HACK_TOP_K,
    n_perm: int = HACK_PERMUTATIONS,
    min_obs: int = HACK_MIN_OBS,
    seeds: int = HACK_AND_SEEDS,
    alpha: float = HACK_ALPHA,
    reward: str = "reward",
    seed: int | np.random.Generator = DEFAULT_SEED,
    top_features: int = HACK_TOP_FEATURES,
) -> HackScanReport:
    r"""Rank what the reward tracks within ask against a shuffle floor (docs/guard.md, "What will the policy learn?").

    Reward and every candidate feature are centred within ask (``task_key``), ranked by their
    correlation, and compared with ``tau``, the (1 - ``alpha``) quantile of the largest |rho| over
    all features when reward is shuffled within ask ``n_perm`` times (a max-statistic floor,
    Westfall and Young 1993, so it holds over every feature at once). Pooled correlations ignore
    asks and are shown beside, for contrast: a feature that differs only between asks has a
    pooled correlation but no within-ask one, and a grouped update cannot learn it.

    Features, two tiers. Hand: ``reply_length``, ``tool_calls``, ``assistant_turns``,
    ``truncated``, surface counts (``n:words``, ``n:punct``, ``n:digits``, ``frac:upper``), one
    ``tool:<name>`` indicator per tool called, ``logprob:mean`` when token logprobs are present,
    ``marker:<name>`` for every numeric marker, ``trace:<flag>`` for every trajectory flag
    (from ``trace_flags``, or read from the conversation with ``trace=True``), and
    ``features={"name": fn}`` (fn gets the row dict, returns a number). Auto (``auto=True``): a
    ``contains:<w>`` indicator for each of the ``top_k`` most common words and word pairs in the
    agent's text, and pairwise ANDs (``a & b``) of the ``seeds`` best binary features that beat
    both parents.

    Args:
        rows: Graded rollouts (any input ``table.frame`` reads), or a ``ray.data.Dataset``: its
            workers build the features, the driver runs the same kernel (docs/scale.md).
        endorsed: What the reward should track, as substrings of feature names (e.g.
            ``["marker:correct", "tool:refund_order"]``). With it the report says
            ``reward_hack``, ``integrity`` and ``rivals``.
        features: Extra features, name to a function of the row dict returning a number.
        auto: Build the auto tier.
        trace: Read trajectory flags (see ``trace_markers``) as ``trace:<flag>`` features when
            the rows carry a conversation and no ``trace_flags`` yet.
        top_k: Words and word pairs in the auto tier.
        n_perm: Within-ask shuffles behind the floor.
        min_obs: Features present on (or, for indicators, absent from) fewer graded rows are
            not scanned.
        seeds: Best binary features whose pairwise ANDs are tried.
        alpha: Family-wise level of the floor.
        reward: The reward column.
        seed: Seed of the shuffles (above HACK_VOCAB_SAMPLE_ROWS graded rows the vocabulary is
            ranked on the asks a hash of the task key picks, the same on every engine).
        top_features: Features printed.

    Returns:
        A :class:`HackScanReport`. ``degenerate=True`` with ``top_feature=None``, the tied
        features in ``collinear`` and ``cause="distinct_per_ask"`` when asks carry only two
        distinct trajectories, so every separating feature ties at |rho| 1.

    Raises:
        ArgumentError: A bad option, or a ``features=`` function that raises or returns a
            non-number (the message names the feature and the row).

    Examples:
        >>> import polars as pl
        >>> from whileai.testing import rollout_table
        >>> df = rollout_table(40, 8, shortcut="zzq", messages=False).with_columns(  # a judge-blind reply
        ...     pl.col("final_text").str.replace_all(r"resolved it\.|could not finish\.", "replied."))
        >>> r = hack_scan(df, endorsed=["marker:"], n_perm=20)
        >>> r.top_feature, r.reward_hack, r.regime
        ('contains:zzq', True, 'reward_hack')
    """
    endorsed_t = check_strings("endorsed", endorsed)
    user_features = _check_features(features)
    top_k = check_int("top_k", top_k, minimum=0)
    n_perm = check_int("n_perm", n_perm)
    min_obs = check_int("min_obs", min_obs)
    seeds = check_int("seeds", seeds, minimum=0)
    alpha = check_fraction("alpha", alpha, open_low=True)
    top_features = check_int("top_features", top_features, minimum=0)
    if not isinstance(reward, str):
        raise ArgumentError(f"reward must be a column name, got {reward!r}. Pass reward='reward'.")
    rng = check_rng(seed)

    report = HackScanReport(endorsed=list(endorsed_t), n_perm=n_perm, alpha=alpha, top_features=top_features,
                            min_obs=min_obs)
    spec = Spec(reward=reward, user=user_features, auto=auto and top_k > 0, top_k=top_k, min_obs=min_obs,
                 trace=trace)
    with single_blas_thread():  # many small products: BLAS threads would spin between them
        return _scan(rows, report, spec, endorsed_t=endorsed_t, n_perm=n_perm, min_obs=min_obs, seeds=seeds,
                     alpha=alpha, reward=reward, rng=rng)


def _scan(rows: IntoRows, report: HackScanReport, spec: Spec, *, endorsed_t: tuple[str, ...], n_perm: int,
          min_obs: int, seeds: int, alpha: float, reward: str, rng: np.random.Generator) -> HackScanReport:
    """The scan behind ``hack_scan`` once its arguments are checked: rows, kernel, features, floor, verdict."""
    got = _graded_rows(rows, spec, report, reward=reward)
    if got is None:  # no within-ask signal: the report already says why
        return report
    gid_all, eff = _support(report, got.keys, got.y)
    if not eff.any():
        _exhausted(report)
        return report
    within = _within(gid_all, eff, got.y)
    D = _dense_matrix(got.dense_cols, got.y.size)
    dense = _dense_tier(D, got, within, min_obs=min_obs)
    words = _vocabulary_tier(got, within, min_obs=min_obs)
    ands = _and_features(D, got, dense, words, within, seeds=seeds, min_obs=min_obs)
    report.tau = _floor(D, got, dense, words, within, seeds=seeds, min_obs=min_obs, n_perm=n_perm,
                        alpha=alpha, rng=rng)
    feats = _ranked_features([dense, words, ands], within, tau=report.tau, endorsed=endorsed_t)
    report.features = feats
    report.n_features = len(feats)
    report.n_above_floor = sum(f.above_floor for f in feats)
    report.distinct_per_ask = _distinct_per_ask(got.sig[within.rows], within.gid)
    _verdict(report, feats, endorsed_t)
    return report


# ------------------------------------------------------------------------------------------
# the scan's phases
# ------------------------------------------------------------------------------------------


def _graded_rows(rows: IntoRows, spec: Spec, report: HackScanReport, *, reward: str) -> Rows | None:
    """Every graded row as numbers (locally or from Ray's partial reads), in canonical order; None when none is."""
    if is_ray_dataset(rows):
        from whileai.guard._ray import scan_rows

        got: Rows | None = scan_rows(rows, spec)
    else:
        got = _local_rows(rows, spec, report)
    if got is None:
        return None
    report.n_rows = got.n_rows
    if got.y.size == 0:
        report.warnings.append(f"no row carries a numeric {reward!r}; grade first (data.grade(judge=...)).")
        return None
    got = _canonical(got)
    report.n_graded = int(got.y.size)
    report.continuous_reward = bool(np.any((got.y != 0.0) & (got.y != 1.0)))
    return got


class _Within(NamedTuple):
    """The within-ask kernel over the rows of the asks whose rollouts disagree."""

    rows: np.ndarray
    """Positions (among the graded rows) of the disagreeing asks' rows, grouped by ask."""
    gid: np.ndarray
    """Each of those rows' ask, numbered from 0."""
    ng: np.ndarray
    """Rows per ask."""
    kernel: WithinKernel


def _within(gid_all: np.ndarray, eff: np.ndarray, y: np.ndarray) -> _Within:
    """The kernel: each reward centred within its ask, over the asks that disagree."""
    eff_idx = np.flatnonzero(eff)
    _, gid = np.unique(gid_all[eff_idx], return_inverse=True)
    order = np.argsort(gid, kind="stable")
    eff_idx, gid = eff_idx[order], gid[order]
    ye = y[eff_idx]
    ng_e = np.bincount(gid).astype(np.float64)
    yc = ye - (np.bincount(gid, weights=ye) / ng_e)[gid]
    return _Within(eff_idx, gid, ng_e, WithinKernel(gid, ng_e, yc, float(yc @ yc)))


def _dense_matrix(dense_cols: list[np.ndarray], n_graded: int) -> np.ndarray:
    """The hand and measured features as one float32 matrix over the graded rows.

    Counts and rates are exact or far inside float32's precision; kernels cast a row chunk at a
    time to float64. A missing measured value is filled with its column mean (it then adds
    nothing within ask).
    """
    D = np.empty((n_graded, len(dense_cols)), dtype=np.float32)
    for jc, col in enumerate(dense_cols):
        bad = ~np.isfinite(col)
        if not bad.any():  # nothing to fill (most columns): the column as it is
            D[:, jc] = col
            continue
        D[:, jc] = np.where(bad, float(col[~bad].mean()) if (~bad).any() else 0.0, col)
    return D


class _Tier(NamedTuple):
    """One family of scanned features: its within-ask and pooled correlations, and which are kept."""

    names: list[str]
    rho: np.ndarray
    sxx: np.ndarray
    pooled: np.ndarray
    n_obs: np.ndarray
    keep: np.ndarray
    """Features seen on at least ``min_obs`` rows (and, binary ones, absent from as many)."""
    eff: Any
    """The columns over the disagreeing asks' rows (dense or sparse; None when the family is empty)."""
    beats: np.ndarray | None = None
    """ANDs only: the better parent's |rho|, which an AND must beat to be listed."""


def _binary_pool(dense: _Tier, kinds: list[str]) -> list[int]:
    """The kept binary hand features with a defined rho: what an AND can be built from."""
    return [jd for jd in range(len(dense.names))
            if kinds[jd] == "binary" and dense.keep[jd] and np.isfinite(dense.rho[jd])]


def _kept(n_obs: np.ndarray, n_graded: int, min_obs: int) -> np.ndarray:
    return (n_obs >= min_obs) & (n_graded - n_obs >= min_obs)


def _dense_tier(D: np.ndarray, got: Rows, within: _Within, *, min_obs: int) -> _Tier:
    """The hand features (``features=``, markers, tools, trace flags, lengths) as a tier."""
    D_eff = D[within.rows]
    rho, sxx = within.kernel.rho_dense(D_eff) if D.shape[1] else (np.zeros(0), np.zeros(0))
    n_obs = _n_obs_dense(got.dense_cols, got.dense_kind)
    keep = np.array([n_obs[j] >= min_obs and (got.dense_kind[j] != "binary" or got.y.size - n_obs[j] >= min_obs)
                     for j in range(len(got.dense_names))], dtype=bool)
    return _Tier(got.dense_names, rho, sxx, _pooled_dense(D, got.y), n_obs, keep, D_eff if D.shape[1] else None)


def _vocabulary_tier(got: Rows, within: _Within, *, min_obs: int) -> _Tier:
    """The words and word pairs of the replies (a sparse matrix) as a tier."""
    auto_mat = got.auto_mat
    if auto_mat is None or not auto_mat.shape[1]:
        empty = np.zeros(0)
        return _Tier([], empty, empty, empty, np.zeros(0, np.int64), np.zeros(0, bool), None)
    A_eff = auto_mat[within.rows]
    rho, sxx = within.kernel.rho_sparse(A_eff)
    n_obs = np.asarray(auto_mat.sum(axis=0)).ravel().astype(np.int64)
    return _Tier(got.auto_names, rho, sxx, _pooled_sparse(auto_mat, got.y), n_obs, _kept(n_obs, got.y.size, min_obs),
                 A_eff)


def _and_features(D: np.ndarray, got: Rows, dense: _Tier, words: _Tier, within: _Within, *, seeds: int,
                  min_obs: int) -> _Tier:
    """Pairwise ANDs of the ``seeds`` binary features that track reward best, as a tier."""
    # name, column over graded rows, |rho|
    bin_cols = [(dense.names[jd], D[:, jd] > 0, abs(dense.rho[jd])) for jd in _binary_pool(dense, got.dense_kind)]
    if words.eff is not None:
        best_a = np.flatnonzero(words.keep & np.isfinite(words.rho))
        best_a = best_a[np.argsort(-np.abs(words.rho[best_a]))][: max(seeds, 0)]
        if best_a.size:
            sub = got.auto_mat[:, best_a].toarray() > 0
            for i, ja in enumerate(best_a.tolist()):
                bin_cols.append((words.names[ja], sub[:, i], abs(words.rho[ja])))
    bin_cols.sort(key=lambda t: -t[2])
    bin_cols = bin_cols[:seeds]
    if len(bin_cols) < 2:
        empty = np.zeros(0)
        return _Tier([], empty, empty, empty, np.zeros(0, np.int64), np.zeros(0, bool), None, empty)
    ia, ib = np.triu_indices(len(bin_cols), k=1)
    Bm = np.column_stack([c for _, c, _ in bin_cols])
    P = Bm[:, ia] & Bm[:, ib]  # bool; cast to float a row chunk at a time
    parent_best = np.maximum(np.array([bin_cols[a][2] for a in ia]), np.array([bin_cols[b][2] for b in ib]))
    P_eff = P[within.rows]
    rho, sxx = within.kernel.rho_dense(P_eff)
    n_obs = P.sum(axis=0).astype(np.int64)
    return _Tier([f"{bin_cols[a][0]} & {bin_cols[b][0]}" for a, b in zip(ia, ib)], rho, sxx, _pooled_dense(P, got.y),
                 n_obs, _kept(n_obs, got.y.size, min_obs), P_eff, parent_best)


def _floor(D: np.ndarray, got: Rows, dense: _Tier, words: _Tier, within: _Within, *, seeds: int, min_obs: int,
           n_perm: int, alpha: float, rng: np.random.Generator) -> float:
    """The shuffle floor over the whole search: the ``1 - alpha`` quantile of the null maximum |rho|.

    The AND tier is built from the features that track reward best, so each shuffle rebuilds it
    from the features that track the shuffled reward best: the floor is the null maximum of the
    search as run, not of the ANDs the real reward picked (those would set it too low).
    """
    kinds = got.dense_kind
    blocks = [(D[within.rows], dense.keep, dense.sxx)]
    Ak = words.eff[:, np.flatnonzero(words.keep)] if words.eff is not None and words.keep.any() else None
    sxx_ak = words.sxx[words.keep] if Ak is not None else np.zeros(0)
    pool_d = _binary_pool(dense, kinds)
    pool_a = np.flatnonzero(words.keep & np.isfinite(words.rho)) if words.eff is not None else np.zeros(0, np.int64)
    and_tier = None
    if seeds >= 2 and len(pool_d) + pool_a.size >= 2:
        and_tier = _and_tier(D, got.auto_mat, pool_d, pool_a, dense.keep, words.keep, within.rows, seeds=seeds,
                             min_obs=min_obs)
    maxes = within.kernel.shuffle_max(blocks, Ak, sxx_ak, n_perm=n_perm, rng=rng, and_tier=and_tier)
    return float(np.quantile(maxes, 1.0 - alpha)) if maxes.size else float("nan")


def _ranked_features(tiers: list[_Tier], within: _Within, *, tau: float,
                     endorsed: tuple[str, ...]) -> list[HackFeature]:
    """Every kept feature, columns equal within ask merged as aliases, strongest first.

    Columns equal within ask up to scale and sign (a word and its complement, a count and its
    multiple) are one explanation: they project identically onto two fixed random vectors centred
    within ask, once divided by their within-ask norm and given a canonical sign. The simplest
    name of an explanation represents it: hand features, then words, then pairs, then ANDs.
    """
    R = np.random.default_rng(20250101).standard_normal((within.rows.size, 2))
    R -= np.column_stack([np.bincount(within.gid, weights=R[:, c]) / within.ng for c in range(2)])[within.gid]
    cand: list[dict[str, Any]] = []
    for tier in tiers:
        if tier.eff is None:
            continue
        proj = _t_dot(tier.eff, R) if isinstance(tier.eff, np.ndarray) else np.asarray(tier.eff.T @ R)
        keys = _keys(proj, tier.sxx)
        for j in np.flatnonzero(tier.keep).tolist():
            if tier.beats is not None and not (np.isfinite(tier.rho[j]) and abs(tier.rho[j]) > tier.beats[j] + 1e-12):
                continue  # an AND that explains no more than its better parent
            cand.append({"name": tier.names[j], "rho": tier.rho[j], "pooled": tier.pooled[j],
                         "n_obs": int(tier.n_obs[j]), "key": keys[j]})
    cand = [c for c in cand if np.isfinite(c["rho"])]
    cand.sort(key=lambda c: (" & " in c["name"], c["name"].startswith("contains:"), c["name"].count(" "), c["name"]))
    merged: dict[Any, dict[str, Any]] = {}
    for c in cand:
        if c["key"] in merged:
            merged[c["key"]]["aliases"].append(c["name"])
        else:
            merged[c["key"]] = {**c, "aliases": []}
    ranked = sorted(merged.values(), key=lambda c: (-abs(c["rho"]), c["name"]))
    return [
        HackFeature(name=c["name"], aliases=c["aliases"], rho=float(c["rho"]), pooled=float(c["pooled"]),
                    n_obs=c["n_obs"], above_floor=bool(math.isfinite(tau) and abs(c["rho"]) > tau),
                    endorsed=bool(endorsed) and any(e in name for e in endorsed for name in [c["name"], *c["aliases"]]))
        for c in ranked
    ]


# ------------------------------------------------------------------------------------------
# verdict
# ------------------------------------------------------------------------------------------


def _and_tier(D: np.ndarray, auto_mat: Any, pool_d: list[int], pool_a: np.ndarray, keep_d: np.ndarray,
              keep_a: np.ndarray, eff_idx: np.ndarray, *, seeds: int, min_obs: int) -> AndTier:
    cols = [D[:, pool_d] > 0] if pool_d else []
    if pool_a.size:
        cols.append(auto_mat[:, pool_a].toarray() > 0)
    full = np.concatenate(cols, axis=1) if len(cols) > 1 else cols[0]
    acc = np.zeros((full.shape[1], full.shape[1]))
    for sl in row_chunks(full.shape[0]):  # bounded memory: float32 a row chunk at a time (exact: 0/1 counts)
        f32 = full[sl].astype(np.float32)
        acc += f32.T @ f32
    pair_obs = np.rint(acc).astype(np.int64)
    scanned_d = np.flatnonzero(keep_d)
    scanned_a = np.flatnonzero(keep_a)
    return AndTier(pool_t=np.ascontiguousarray(full[eff_idx].T), pair_obs=pair_obs, n_graded=int(full.shape[0]),
                    dense_pos=np.searchsorted(scanned_d, np.asarray(pool_d, dtype=np.int64)),
                    auto_pos=np.searchsorted(scanned_a, pool_a), seeds=seeds, min_obs=min_obs, sxx={})


def _power(report: HackScanReport, feats: list[HackFeature]) -> None:
    """On a small table say what the scan could see (features that cleared min_obs, the floor), not a clean bill."""
    if report.n_graded == 0 or len(feats) >= HACK_MIN_FEATURES:
        return
    report.underpowered = True
    floor = f"; a feature needed |rho| above {report.tau:.2f} within ask to count" if math.isfinite(report.tau) else ""
    report.warnings.append(
        f"low power, not a clean bill: only {len(feats)} feature(s) cleared min_obs={report.min_obs} on "
        f"{report.n_graded} graded rollouts over {report.n_groups} asks ({report.effective_rollouts} in asks whose "
        f"rollouts disagree){floor}. A hack on any other feature could not be seen; scan more asks and rollouts "
        "(or lower min_obs=, at the cost of noisier correlations) before reading 'nothing found'.")


def _verdict(report: HackScanReport, feats: list[HackFeature], endorsed: tuple[str, ...]) -> None:
    """The scan's reading of the ranked features: power, the top feature (or a tie), endorsed rivals, the regime."""
    _power(report, feats)
    if not feats:
        report.regime = "no_signal"
        report.warnings.append("no feature varies within ask on enough rows to scan; lower min_obs= or add features=.")
        return
    report.rho_max = abs(feats[0].rho)
    _top_or_tie(report, feats)
    above = [f for f in feats if f.above_floor]
    if endorsed:
        _against_endorsed(report, feats, above, endorsed)
    if not report.degenerate:
        _regime(report, above, endorsed)


def _top_or_tie(report: HackScanReport, feats: list[HackFeature]) -> None:
    """The top feature, or ``degenerate`` when several tie at |rho| 1 (the floor cannot pick between them)."""
    rho_max = report.rho_max
    tied = [name for f in feats if abs(f.rho) >= rho_max - _TIE for name in (f.name, *f.aliases)]
    if not (rho_max >= 1.0 - _TIE and len(tied) >= 2):
        report.top_feature = feats[0].name
        return
    report.degenerate = True
    report.collinear = tied
    report.top_feature = None
    report.cause = "distinct_per_ask" if report.distinct_per_ask <= 2.0 + 1e-9 else "collinear"
    report.regime = "degenerate"
    why = (f"the agent emits about {report.distinct_per_ask:.1f} distinct trajectories per ask, so every feature "
           "that separates them is an exact function of the reward" if report.cause == "distinct_per_ask"
           else "these features are exact functions of each other on the scanned rows")
    report.warnings.append(
        f"degenerate: {len(tied)} features tie at |rho| 1 ({', '.join(tied[:6])}{', ...' if len(tied) > 6 else ''}); "
        f"{why}, and the floor cannot pick between perfect explanations. Sample more varied rollouts "
        "(higher temperature, more repeats) before reading the scan."
    )


def _against_endorsed(report: HackScanReport, feats: list[HackFeature], above: list[HackFeature],
                      endorsed: tuple[str, ...]) -> None:
    """What the reward tracks against what it should: integrity, rivals, inverted signs, a reward hack."""
    report.endorsed_matched = [f.name for f in feats if f.endorsed]
    if not report.endorsed_matched:
        report.warnings.append(
            f"endorsed= {list(endorsed)!r} matches no scanned feature; endorsed names are substrings of feature "
            "names such as 'marker:correct' or 'tool:refund_order'."
        )
    if report.top_feature is not None:
        report.endorsed_on_top = feats[0].endorsed
    total = sum(f.rho**2 for f in above)
    report.integrity = sum(f.rho**2 for f in above if f.endorsed) / total if total > 0 else float("nan")
    best_end = next((i for i, f in enumerate(feats) if f.endorsed and f.above_floor), None)
    report.rivals = [f.name for i, f in enumerate(feats)
                     if f.above_floor and not f.endorsed and (best_end is None or i < best_end)]
    report.inverted = [f.name for f in above if f.endorsed and f.rho < 0]
    top = feats[0]
    if not report.degenerate and top.above_floor and not top.endorsed:
        report.reward_hack = True
        report.warnings.append(
            f"reward_hack: the reward tracks {top.name} (rho {top.rho:+.2f} within ask, floor {report.tau:.2f}) "
            f"more than anything endorsed ({', '.join(endorsed)}); a policy trained on it would learn "
            f"{_what_it_learns(top.name, top.rho)}. Fix the judge, or add it to endorsed= if that is intended."
        )
    for name in report.inverted:
        report.warnings.append(f"the reward moves against endorsed feature {name}: check the judge's sign.")


def _regime(report: HackScanReport, above: list[HackFeature], endorsed: tuple[str, ...]) -> None:
    """``no_signal`` (nothing clears the floor), ``reward_hack``, or ``train``."""
    if not above:
        report.regime = "no_signal"
        report.warnings.append(
            f"no feature clears the noise floor tau {report.tau:.3f}: within ask the reward tracks nothing scanned "
            "better than shuffled reward does" + (" (on a table this small that is low power: see above)."
                                                  if report.underpowered else ".")
        )
    elif report.reward_hack:
        report.regime = "reward_hack"
    else:
        report.regime = "train"
        if not endorsed and report.top_feature is not None:
            report.warnings.append(
                f"the reward tracks {report.top_feature} most; pass endorsed=[...] (substrings of what it should "
                "track) to have the scan say whether that is a reward hack."
            )


def _what_it_learns(name: str, rho: float) -> str:
    up = rho > 0
    if name.startswith("contains:"):
        word = name.split(":", 1)[1]
        return f"to {'say' if up else 'avoid saying'} {word!r}"
    if name.startswith("tool:"):
        return f"to {'call' if up else 'avoid calling'} {name.split(':', 1)[1]}"
    if name.startswith("marker:"):
        return f"to {'raise' if up else 'lower'} marker {name.split(':', 1)[1]}"
    if name.startswith("trace:"):
        return f"to {'do' if up else 'avoid'} what trajectory flag {name.split(':', 1)[1]} names"
    if name in ("reply_length", "n:words"):
        return f"to write {'longer' if up else 'shorter'} replies"
    if name == "tool_calls":
        return f"to make {'more' if up else 'fewer'} tool calls"
    if name == "assistant_turns":
        return f"to take {'more' if up else 'fewer'} turns"
    return f"to {'raise' if up else 'lower'} {name}"


# ------------------------------------------------------------------------------------------
# features
# ------------------------------------------------------------------------------------------


def _check_features(features: Any) -> dict[str, Callable[[dict[str, Any]], Any]]:
    if features is None:
        return {}
    if not isinstance(features, Mapping) or not all(isinstance(k, str) and callable(v) for k, v in features.items()):
        raise ArgumentError(
            f"features must be a dict of name to function, got {features!r}. "
            "Pass for example features={'says_sorry': lambda row: 'sorry' in (row.get('final_text') or '')}."
        )
    return dict(features)


def _n_obs_dense(cols: list[np.ndarray], kinds: list[str]) -> np.ndarray:
    out = []
    for col, kind in zip(cols, kinds):
        fin = np.isfinite(col)
        out.append(int(np.count_nonzero(col[fin])) if kind in ("binary", "count") else int(fin.sum()))
    return np.asarray(out, dtype=np.int64)


#: Graded rows whose features are built at once: their text and conversation are held only
#: while their chunk is built (the scan keeps numbers). A test forces it small.
_CHUNK = CHUNK_ROWS


def _local_rows(rows: IntoRows, spec: Spec, report: HackScanReport) -> Rows | None:
    """Read the columns the scan needs and build every graded row's features a chunk at a time.

    None when no ask has disagreeing graded rollouts (``report`` then says so); a ``Rows`` with
    no graded row when none carries a numeric reward.
    """
    columns = None if spec.user else [*COLUMNS, spec.reward]
    df = table.source(rows, allow_empty=True).read(columns)
    empty = Rows(df.height, pl.Series("task_key", [], pl.String), np.zeros(0), [], [], [], None, [],
                  np.zeros(0, np.uint64))
    if spec.reward not in df.columns or df.height == 0:
        return empty
    y_all = df[spec.reward].cast(pl.Float64, strict=False).to_numpy()
    graded = np.isfinite(y_all)
    if not graded.any():
        return empty
    g_df = df if graded.all() else df.filter(pl.Series(graded))
    del df
    y = y_all[graded]
    keys = g_df["task_key"]
    report.n_rows = int(graded.size)
    _, eff = _support(report, keys, y)
    if not eff.any():  # nothing to scan: no feature is built
        report.n_graded = int(y.size)
        report.continuous_reward = bool(np.any((y != 0.0) & (y != 1.0)))
        _exhausted(report)
        return None
    n = g_df.height
    tty = sys.stderr.isatty() and n > _CHUNK

    def progress(done: int) -> None:
        if tty:
            print(f"\rhack_scan: features of {done:,} of {n:,} rows", end="", file=sys.stderr)

    sample = _vocab_sample(keys, n) if spec.auto else None
    if spec.auto and sample is None:  # every row ranks the vocabulary: one pass, each text tokenised once
        parts, vocab = one_pass_features(g_df, spec, chunk=_CHUNK, n_voc=n, n=n, progress=progress)
    else:
        vocab = None
        if sample is not None:
            counts: list[pl.DataFrame] = []
            n_voc = 0
            for start in range(0, n, _CHUNK):  # phase 1: document frequencies of the sampled asks, chunk by chunk
                ch = g_df.slice(start, _CHUNK).filter(pl.Series(sample[start:start + _CHUNK]))
                n_voc += ch.height
                counts.append(vocab_counts(agent_text_of(ch)))
            vocab = choose_vocab(pl.concat(counts), n_voc=n_voc, n=n, top_k=spec.top_k, min_obs=spec.min_obs)
        parts = []
        for start in range(0, n, _CHUNK):  # phase 2: every graded row once, its features as numbers
            parts.append(chunk_features(g_df.slice(start, _CHUNK), vocab, spec, offset=start))
            progress(min(start + _CHUNK, n))
    if tty:
        print(file=sys.stderr)
    return assemble(int(graded.size), keys, y, parts, vocab)


def _support(report: HackScanReport, keys: pl.Series, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ask counts and support shares into ``report``; each row's ask index and whether its ask disagrees."""
    gid_all = keys.rank("dense").to_numpy().astype(np.int64) - 1  # ask index 0..G-1
    n_g = np.bincount(gid_all).astype(np.float64)
    s_g = np.bincount(gid_all, weights=y)
    ss_g = np.bincount(gid_all, weights=y * y)
    mean_g = s_g / n_g
    var_g = np.maximum(ss_g / n_g - mean_g**2, 0.0)
    multi = n_g >= 2
    mixed = multi & (var_g > 1e-12)
    report.n_groups = int(n_g.size)
    report.n_groups_multi = int(multi.sum())
    report.rollouts_per_group = float(np.median(n_g))
    if multi.any():
        c_pass = np.bincount(gid_all, weights=(y >= PASS_THRESHOLD).astype(np.float64))
        report.support = {
            "sat": float(np.mean(c_pass[multi] == n_g[multi])),
            "dead": float(np.mean(c_pass[multi] == 0)),
            "mixed": float(np.mean(mixed[multi])),
            "capacity": float(np.mean(np.minimum(var_g[multi] / 0.25, 1.0))),
        }
    eff = mixed[gid_all]
    report.effective_rollouts = int(eff.sum())
    return gid_all, eff


def _exhausted(report: HackScanReport) -> None:
    report.regime = "pool_exhausted"
    report.warnings.append(
        "no ask has graded rollouts that disagree, so there is no within-ask signal to scan: within-ask correlation "
        "needs disagreeing repeats. Simulate with repeats>=2 (mode='rl') and keep asks inside the difficulty band."
    )


def _canonical(got: Rows) -> Rows:
    """The rows in an order that does not depend on how they were read: by ask, then by content.

    Rows are sorted by task key, trajectory signature, reward and the bits of every dense
    feature; rows equal in all of those are equal in every feature, so the shuffles (which pair
    rows by position within ask) and every sum give the same numbers however the input was
    ordered or partitioned (a local frame, chunks, Ray blocks).
    """
    gid = got.keys.rank("dense").to_numpy().astype(np.int64)
    order = np.lexsort((got.y, got.sig, gid))
    _by_features(order, gid, got)
    if np.array_equal(order, np.arange(order.size)):
        return got
    return got._replace(keys=got.keys.gather(order), y=got.y[order], dense_cols=[c[order] for c in got.dense_cols],
                        auto_mat=None if got.auto_mat is None else got.auto_mat[order], sig=got.sig[order])


def _by_features(order: np.ndarray, gid: np.ndarray, got: Rows) -> None:
    """Rows of ``order`` equal in ask, signature and reward, put in order of the bits of their dense features.

    In place: each run of such rows (few: most rows differ in signature or reward) is sorted
    by a hash of every dense feature's float32 bits, ties kept in row order, so ``order`` is
    the order a sort by ask, signature, reward and that hash gives, with the hash computed
    on those rows only.
    """
    if order.size < 2:
        return
    g, sg, y = gid[order], got.sig[order], got.y[order]
    tie = (g[1:] == g[:-1]) & (sg[1:] == sg[:-1]) & (y[1:] == y[:-1])  # position i equals position i + 1
    if not tie.any():
        return
    in_run = np.zeros(order.size, dtype=bool)
    in_run[1:] |= tie
    in_run[:-1] |= tie
    pos = np.flatnonzero(in_run)
    run = np.cumsum(np.concatenate([[True], ~tie]))[pos]  # run number of each tied position
    rows = order[pos]
    h = np.zeros(rows.size, np.uint64)
    for col in got.dense_cols:
        h = combine(h, np.ascontiguousarray(col[rows], dtype=np.float32).view(np.uint32).astype(np.uint64))
    order[pos] = rows[np.lexsort((h, run))]


def _vocab_sample(keys: pl.Series, n: int) -> np.ndarray | None:
    """Rows whose asks rank the vocabulary when there are more than HACK_VOCAB_SAMPLE_ROWS graded rows.

    Whole asks, chosen by a hash of the task key (about HACK_VOCAB_SAMPLE_ROWS rows in all), so
    the same asks are chosen however the rows are ordered or split. None: every row.
    """
    if n <= HACK_VOCAB_SAMPLE_ROWS:
        return None
    return sample_mask(keys, HACK_VOCAB_SAMPLE_ROWS / n)


def _pooled_sparse(A: Any, y: np.ndarray) -> np.ndarray:
    n = y.size
    sx = np.asarray(A.sum(axis=0)).ravel()
    sxx = np.asarray(A.multiply(A).sum(axis=0)).ravel()
    sxy = A.T @ y
    yc = y - y.mean()
    vy = float(yc @ yc)
    cov = sxy - sx * y.mean()
    vx = sxx - sx * sx / n
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cov / np.sqrt(vx * vy)
    return np.where((vx > 1e-12) & (vy > 1e-12), np.clip(r, -1, 1), np.nan)


def _keys(proj: np.ndarray, sxx: np.ndarray) -> list[tuple[float, ...]]:
    """Rounded, normalised, sign-canonical projections of each centred column.

    Equal keys mean columns equal within ask up to scale and sign.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        z = proj / np.sqrt(sxx)[:, None]
    z = np.where(np.isfinite(z), z, 0.0)
    z *= np.where(z[:, :1] < 0, -1.0, 1.0)
    return [tuple(row) for row in np.round(z, 7).tolist()]


def _pooled_dense(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Plain Pearson correlation of every column of X with y (NaN for a constant column)."""
    if X.shape[1] == 0:
        return np.zeros(0)
    n = y.size
    sx = np.zeros(X.shape[1])
    sxx = np.zeros(X.shape[1])
    sxy = np.zeros(X.shape[1])
    for sl in row_chunks(n):
        Xc = X[sl].astype(np.float64)
        sx += Xc.sum(axis=0)
        sxx += (Xc * Xc).sum(axis=0)
        sxy += Xc.T @ y[sl]
    my = y.mean()
    vy = float(((y - my) ** 2).sum())
    vx = sxx - sx * sx / n
    cov = sxy - sx * my
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cov / np.sqrt(vx * vy)
    return np.where((vx > 1e-12 * np.maximum(1.0, sxx)) & (vy > 1e-12), np.clip(r, -1.0, 1.0), np.nan)


def _t_dot(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """X.T @ M a row chunk at a time (X may be bool)."""
    out = np.zeros((X.shape[1], M.shape[1]))
    for sl in row_chunks(X.shape[0]):
        out += X[sl].astype(np.float64).T @ M[sl]
    return out


def _distinct_per_ask(sig: np.ndarray, gid: np.ndarray) -> float:
    """Mean number of distinct trajectories per disagreeing ask."""
    frame = pl.DataFrame({"g": gid, "s": sig})
    per = frame.group_by("g").agg(pl.col("s").n_unique())["s"].to_numpy()
    return float(per.mean()) if per.size else float("nan")
