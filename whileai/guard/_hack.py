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
from pydantic import BaseModel, ConfigDict, Field

from whileai import table
from whileai.defaults import (
    CHUNK_ROWS,
    DEFAULT_SEED,
    HACK_ALPHA,
    HACK_AND_SEEDS,
    HACK_MIN_OBS,
    HACK_PERMUTATIONS,
    HACK_TOP_FEATURES,
    HACK_TOP_K,
    HACK_VOCAB_SAMPLE_ROWS,
    PASS_THRESHOLD,
)
from whileai.errors import ArgumentError
from whileai.guard._common import agent_text_of, check_fraction, check_positive_int, check_strings
from whileai.guard._tokens import WORD_PATTERN, byte_counts, combine, pair, tokenize
from whileai.report import ChartedReport, Tone, fmt_num
from whileai.stats.rng import check_rng
from whileai.table import IntoRows

__all__ = ["HackScanReport", "hack_scan"]

_TIE = 1e-9
_PERM_CELLS = 4_000_000  # rows x shuffles held at once


class HackFeature(BaseModel):
    """One scanned feature (indexes like a dict: ``feature["rho"]``)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

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
        rows: Graded rollouts (any input ``table.frame`` reads).
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
        seed: Seed of the shuffles (and of the vocabulary sample on very large inputs).
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
    top_k = check_positive_int("top_k", top_k, minimum=0)
    n_perm = check_positive_int("n_perm", n_perm)
    min_obs = check_positive_int("min_obs", min_obs)
    seeds = check_positive_int("seeds", seeds, minimum=0)
    alpha = check_fraction("alpha", alpha, open_low=True)
    top_features = check_positive_int("top_features", top_features, minimum=0)
    if not isinstance(reward, str):
        raise ArgumentError(f"reward must be a column name, got {reward!r}. Pass reward='reward'.")
    rng = check_rng(seed)

    df = table.frame(rows, allow_empty=True)
    report = HackScanReport(n_rows=df.height, endorsed=list(endorsed_t), n_perm=n_perm, alpha=alpha,
                            top_features=top_features)
    if reward not in df.columns or df.height == 0:
        report.warnings.append(f"no row carries a numeric {reward!r}; grade first (data.grade(judge=...)).")
        return report
    y_all = df[reward].cast(pl.Float64, strict=False).to_numpy()
    graded = np.isfinite(y_all)
    if not graded.any():
        report.warnings.append(f"no row carries a numeric {reward!r}; grade first (data.grade(judge=...)).")
        return report
    g_df = df if graded.all() else df.filter(pl.Series(graded))
    y = y_all[graded]
    report.n_graded = int(y.size)
    report.continuous_reward = bool(np.any((y != 0.0) & (y != 1.0)))

    keys = g_df["task_key"]
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
    if not eff.any():
        report.regime = "pool_exhausted"
        report.warnings.append(
            "no ask has graded rollouts that disagree, so there is no within-ask signal to scan: within-ask correlation "
            "needs disagreeing repeats. Simulate with repeats>=2 (mode='rl') and keep asks inside the difficulty band."
        )
        return report

    # ---- features on every graded row ----------------------------------------------------------
    texts = agent_text_of(g_df)
    auto_mat: Any = None
    auto_names: list[str] = []
    n_words: np.ndarray | None = None
    if auto and top_k > 0:
        auto_mat, auto_names, n_words = _auto_tier(texts, top_k=top_k, min_obs=min_obs, rng=rng)
    dense_names, dense_cols, dense_kind = _hand_features(g_df, texts, user_features, trace=trace, n_words=n_words)

    # ---- within-ask kernel over the disagreeing asks ------------------------------------------
    eff_idx = np.flatnonzero(eff)
    _, gid = np.unique(gid_all[eff_idx], return_inverse=True)
    order = np.argsort(gid, kind="stable")
    eff_idx, gid = eff_idx[order], gid[order]
    ye = y[eff_idx]
    ng_e = np.bincount(gid).astype(np.float64)
    yc = ye - (np.bincount(gid, weights=ye) / ng_e)[gid]
    syy = float(yc @ yc)
    kernel = _Kernel(gid, ng_e, yc, syy)

    # Held as float32 (counts and rates are exact or far inside its precision); kernels cast a row
    # chunk at a time to float64. A missing measured value is filled with its column mean (it then
    # adds nothing within ask).
    D = np.empty((y.size, len(dense_cols)), dtype=np.float32)
    for jc, col in enumerate(dense_cols):
        bad = ~np.isfinite(col)
        D[:, jc] = np.where(bad, float(col[~bad].mean()) if (~bad).any() else 0.0, col)
    n_obs_dense = _n_obs_dense(dense_cols, dense_kind)
    del dense_cols
    D_eff = D[eff_idx]
    rho_d, sxx_d = kernel.rho_dense(D_eff) if D.shape[1] else (np.zeros(0), np.zeros(0))
    pooled_d = _pooled_dense(D, y)

    if auto_mat is not None and auto_mat.shape[1]:
        A_eff = auto_mat[eff_idx]
        rho_a, sxx_a = kernel.rho_sparse(A_eff)
        n_obs_a = np.asarray(auto_mat.sum(axis=0)).ravel().astype(np.int64)
        pooled_a = _pooled_sparse(auto_mat, y)
    else:
        A_eff = None
        rho_a = sxx_a = pooled_a = np.zeros(0)
        n_obs_a = np.zeros(0, np.int64)

    # ---- which features are scanned --------------------------------------------------------------
    n_gr = y.size
    keep_d = np.array([
        (n_obs_dense[j] >= min_obs and (dense_kind[j] != "binary" or n_gr - n_obs_dense[j] >= min_obs))
        for j in range(len(dense_names))
    ], dtype=bool)
    keep_a = (n_obs_a >= min_obs) & (n_gr - n_obs_a >= min_obs)

    # ---- pairwise ANDs of the best binary features -------------------------------------------
    bin_cols: list[tuple[str, np.ndarray, float]] = []  # name, column over graded rows, |rho|
    pool_d: list[int] = []  # the binary features an AND can be built from: dense ones, then auto ones
    for jd, name in enumerate(dense_names):
        if dense_kind[jd] == "binary" and keep_d[jd] and np.isfinite(rho_d[jd]):
            bin_cols.append((name, D[:, jd] > 0, abs(rho_d[jd])))
            pool_d.append(jd)
    pool_a = np.flatnonzero(keep_a & np.isfinite(rho_a)) if A_eff is not None else np.zeros(0, np.int64)
    if A_eff is not None:
        best_a = np.flatnonzero(keep_a & np.isfinite(rho_a))
        best_a = best_a[np.argsort(-np.abs(rho_a[best_a]))][: max(seeds, 0)]
        if best_a.size:
            sub = auto_mat[:, best_a].toarray() > 0
            for i, ja in enumerate(best_a.tolist()):
                bin_cols.append((auto_names[ja], sub[:, i], abs(rho_a[ja])))
    bin_cols.sort(key=lambda t: -t[2])
    bin_cols = bin_cols[:seeds]
    and_names: list[str] = []
    P = np.zeros((n_gr, 0), dtype=bool)
    rho_p = sxx_p = pooled_p = np.zeros(0)
    keep_p = np.zeros(0, bool)
    parent_best = np.zeros(0)
    if len(bin_cols) >= 2:
        ia, ib = np.triu_indices(len(bin_cols), k=1)
        Bm = np.column_stack([c for _, c, _ in bin_cols])
        P = Bm[:, ia] & Bm[:, ib]  # bool; cast to float a row chunk at a time
        and_names = [f"{bin_cols[a][0]} & {bin_cols[b][0]}" for a, b in zip(ia, ib)]
        parent_best = np.maximum(np.array([bin_cols[a][2] for a in ia]), np.array([bin_cols[b][2] for b in ib]))
        rho_p, sxx_p = kernel.rho_dense(P[eff_idx])
        del Bm
        n_obs_p = P.sum(axis=0).astype(np.int64)
        keep_p = (n_obs_p >= min_obs) & (n_gr - n_obs_p >= min_obs)
        pooled_p = _pooled_dense(P, y)
    else:
        n_obs_p = np.zeros(0, np.int64)

    # ---- the shuffle floor over the whole search -----------------------------------------------
    # The AND tier is built from the features that track reward best, so each shuffle rebuilds
    # it from the features that track the shuffled reward best: the floor is the null maximum of
    # the search as run, not of the ANDs the real reward picked (those would set it too low).
    P_eff = P[eff_idx]
    blocks = [(D_eff, keep_d, sxx_d)]
    Ak = A_eff[:, np.flatnonzero(keep_a)] if A_eff is not None and keep_a.any() else None
    sxx_ak = sxx_a[keep_a] if Ak is not None else np.zeros(0)
    and_tier = None
    if seeds >= 2 and len(pool_d) + pool_a.size >= 2:
        and_tier = _and_tier(D, auto_mat, pool_d, pool_a, keep_d, keep_a, eff_idx, seeds=seeds, min_obs=min_obs)
    maxes = kernel.shuffle_max(blocks, Ak, sxx_ak, n_perm=n_perm, rng=rng, and_tier=and_tier)
    tau = float(np.quantile(maxes, 1.0 - alpha)) if maxes.size else float("nan")
    report.tau = tau

    # ---- assemble, merge identical columns as aliases -------------------------------------------
    # Columns equal within ask up to scale and sign (a word and its complement, a count and its
    # multiple) are one explanation: they project identically onto two fixed random vectors
    # centred within ask, once divided by their within-ask norm and given a canonical sign.
    R = np.random.default_rng(20250101).standard_normal((eff_idx.size, 2))
    R -= np.column_stack([np.bincount(gid, weights=R[:, c]) / ng_e for c in range(2)])[gid]
    key_d = _keys(_t_dot(D_eff, R), sxx_d) if D.shape[1] else []
    key_a = _keys(np.asarray(A_eff.T @ R), sxx_a) if A_eff is not None else []
    key_p = _keys(_t_dot(P_eff, R), sxx_p) if P.shape[1] else []
    cand: list[dict[str, Any]] = []
    for j in np.flatnonzero(keep_d).tolist():
        cand.append({"name": dense_names[j], "rho": rho_d[j], "pooled": pooled_d[j], "n_obs": int(n_obs_dense[j]),
                     "key": key_d[j]})
    for j in np.flatnonzero(keep_a).tolist():
        cand.append({"name": auto_names[j], "rho": rho_a[j], "pooled": pooled_a[j], "n_obs": int(n_obs_a[j]),
                     "key": key_a[j]})
    for j in np.flatnonzero(keep_p).tolist():
        if np.isfinite(rho_p[j]) and abs(rho_p[j]) > parent_best[j] + 1e-12:
            cand.append({"name": and_names[j], "rho": rho_p[j], "pooled": pooled_p[j], "n_obs": int(n_obs_p[j]),
                         "key": key_p[j]})
    cand = [c for c in cand if np.isfinite(c["rho"])]
    # the simplest name of an explanation represents it: hand features, then words, then pairs, then ANDs
    cand.sort(key=lambda c: (" & " in c["name"], c["name"].startswith("contains:"), c["name"].count(" "), c["name"]))
    merged: dict[Any, dict[str, Any]] = {}
    for c in cand:
        k = c["key"]
        if k in merged:
            merged[k]["aliases"].append(c["name"])
        else:
            merged[k] = {**c, "aliases": []}
    ranked = sorted(merged.values(), key=lambda c: (-abs(c["rho"]), c["name"]))

    def is_endorsed(c: dict[str, Any]) -> bool:
        return bool(endorsed_t) and any(e in name for e in endorsed_t for name in [c["name"], *c["aliases"]])

    feats = [
        HackFeature(name=c["name"], aliases=c["aliases"], rho=float(c["rho"]), pooled=float(c["pooled"]),
                    n_obs=c["n_obs"], above_floor=bool(math.isfinite(tau) and abs(c["rho"]) > tau),
                    endorsed=is_endorsed(c))
        for c in ranked
    ]
    report.features = feats
    report.n_features = len(feats)
    report.n_above_floor = sum(f.above_floor for f in feats)
    report.distinct_per_ask = _distinct_per_ask(g_df, texts, eff_idx, gid)
    _verdict(report, feats, endorsed_t)
    return report


# ------------------------------------------------------------------------------------------
# verdict
# ------------------------------------------------------------------------------------------


class _AndTier(NamedTuple):
    """What a shuffle needs to rebuild the AND tier: the binary pool and where its rho comes from."""

    pool: np.ndarray
    """Bool (disagreeing-ask rows x pool features): dense binary features, then auto ones."""
    pair_obs: np.ndarray
    """Rows (over every graded row) where both features of a pair are present."""
    n_graded: int
    dense_pos: np.ndarray
    """Positions of the dense pool features among the scanned dense columns."""
    auto_pos: np.ndarray
    """Positions of the auto pool features among the scanned auto columns."""
    seeds: int
    min_obs: int
    sxx: dict[int, float]
    """Cache: within-ask sum of squares of the AND of pool features a < b, keyed a * m + b."""


def _and_tier(D: np.ndarray, auto_mat: Any, pool_d: list[int], pool_a: np.ndarray, keep_d: np.ndarray,
              keep_a: np.ndarray, eff_idx: np.ndarray, *, seeds: int, min_obs: int) -> _AndTier:
    cols = [D[:, pool_d] > 0] if pool_d else []
    if pool_a.size:
        cols.append(auto_mat[:, pool_a].toarray() > 0)
    full = np.concatenate(cols, axis=1) if len(cols) > 1 else cols[0]
    f32 = full.astype(np.float32)
    pair_obs = np.rint(f32.T @ f32).astype(np.int64)
    scanned_d = np.flatnonzero(keep_d)
    scanned_a = np.flatnonzero(keep_a)
    return _AndTier(pool=full[eff_idx], pair_obs=pair_obs, n_graded=int(full.shape[0]),
                    dense_pos=np.searchsorted(scanned_d, np.asarray(pool_d, dtype=np.int64)),
                    auto_pos=np.searchsorted(scanned_a, pool_a), seeds=seeds, min_obs=min_obs, sxx={})


def _verdict(report: HackScanReport, feats: list[HackFeature], endorsed: tuple[str, ...]) -> None:
    if not feats:
        report.regime = "no_signal"
        report.warnings.append("no feature varies within ask on enough rows to scan; lower min_obs= or add features=.")
        return
    rho_max = abs(feats[0].rho)
    report.rho_max = rho_max
    tied = [name for f in feats if abs(f.rho) >= rho_max - _TIE for name in (f.name, *f.aliases)]
    if rho_max >= 1.0 - _TIE and len(tied) >= 2:
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
    else:
        report.top_feature = feats[0].name
    above = [f for f in feats if f.above_floor]
    if endorsed:
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
    if report.degenerate:
        return
    if not above:
        report.regime = "no_signal"
        report.warnings.append(
            f"no feature clears the noise floor tau {report.tau:.3f}: within ask the reward tracks nothing scanned "
            "better than shuffled reward does."
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


def _hand_features(df: pl.DataFrame, text: pl.Series, user: Mapping[str, Callable[[dict[str, Any]], Any]], *,
                   trace: bool = True, n_words: np.ndarray | None = None) -> tuple[list[str], list[np.ndarray], list[str]]:
    names: list[str] = []
    cols: list[np.ndarray] = []
    kinds: list[str] = []

    def add(name: str, values: Any, kind: str = "count") -> None:
        arr = np.asarray(values, dtype=np.float32)
        names.append(name)
        cols.append(arr)
        kinds.append(kind)

    exprs: list[pl.Expr] = []
    if "final_text" in df.columns:
        exprs.append(table.reply_chars().alias("reply_length"))
    if "messages" in df.columns:
        exprs += [table.n_tool_calls().alias("tool_calls"), table.n_turns().alias("assistant_turns")]
    if "truncated" in df.columns:
        exprs.append(pl.col("truncated").cast(pl.Float64).alias("truncated"))
    base = df.select(exprs) if exprs else pl.DataFrame()
    for name in base.columns:
        add(name, base[name].to_numpy(), "binary" if name == "truncated" else "count")
    if n_words is None:  # the auto tier already counted them when it ran
        n_words = pl.DataFrame({"t": text}).select(pl.col("t").str.count_matches(WORD_PATTERN))["t"].to_numpy()
    add("n:words", n_words)
    counts = byte_counts(text)  # ASCII punctuation, digits, upper case: numpy over the UTF-8 bytes
    add("n:punct", counts["punct"])
    add("n:digits", counts["digits"])
    with np.errstate(divide="ignore", invalid="ignore"):
        add("frac:upper", np.where(counts["chars"] > 0, counts["upper"] / counts["chars"], np.nan), "measure")
    if "messages" in df.columns:
        used = df.select(table.tools_used()).with_row_index("_r").explode("tools_used").drop_nulls("tools_used")
        if used.height:
            wide = used.with_columns(pl.lit(1.0).alias("_v")).pivot(on="tools_used", index="_r", values="_v",
                                                                    aggregate_function="first")
            full = pl.DataFrame({"_r": np.arange(df.height, dtype=np.uint32)}).join(wide, on="_r", how="left")
            for tool in sorted(c for c in full.columns if c != "_r"):
                add(f"tool:{tool}", full[tool].fill_null(0.0).to_numpy(), "binary")
    lp = _mean_logprob(df)
    if lp is not None:
        add("logprob:mean", lp, "measure")
    for name in table.markers_of(df):
        add(f"marker:{name}", df["markers"].struct.field(name).cast(pl.Float64).to_numpy(), "measure")
    if "trace_flags" in df.columns and isinstance(df.schema["trace_flags"], pl.Struct):
        for f in df.schema["trace_flags"].fields:
            add(f"trace:{f.name}", df["trace_flags"].struct.field(f.name).is_not_null().cast(pl.Float64).to_numpy(), "binary")
    elif trace and "messages" in df.columns:
        from whileai.guard._trace import FLAGS, _flag_frame

        flags = _flag_frame(df, {})
        for flag in FLAGS:
            add(f"trace:{flag}", flags[flag].is_not_null().cast(pl.Float64).to_numpy(), "binary")
    if user:
        values = {name: np.full(df.height, np.nan) for name in user}
        for i, row in enumerate(table.iter_rows(df)):  # user callbacks: one call per row by contract
            for name, fn in user.items():
                values[name][i] = _call_feature(name, fn, row, i)
        for name in user:
            vals = values[name]
            fin = vals[np.isfinite(vals)]
            add(name, vals, "binary" if fin.size and np.all((fin == 0) | (fin == 1)) else "measure")
    return names, cols, kinds


def _call_feature(name: str, fn: Callable[[dict[str, Any]], Any], row: dict[str, Any], index: int) -> float:
    try:
        value = fn(row)
    except Exception as exc:
        raise ArgumentError(
            f"feature {name!r} raised {type(exc).__name__}: {exc} on graded row {index} "
            f"(task {row.get('task_key') or row.get('scenario_id') or row.get('task_id')!r}). "
            "Make the function handle every row (return None for 'not measured'), or drop it from features=.",
            name=name, row=index,
        ) from exc
    if value is None:
        return float("nan")
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    raise ArgumentError(
        f"feature {name!r} must return a number, a bool or None, got {value!r} on graded row {index}. "
        "Return a number.", name=name, row=index,
    )


def _mean_logprob(df: pl.DataFrame) -> np.ndarray | None:
    cols = df.columns
    if "token_logprobs" in cols and isinstance(df.schema["token_logprobs"], pl.List):
        return df.select(pl.col("token_logprobs").list.mean().cast(pl.Float64))["token_logprobs"].to_numpy()
    if "mean_logprob" in cols and df.schema["mean_logprob"].is_numeric():
        return df["mean_logprob"].cast(pl.Float64).to_numpy()
    if "logprob" in cols and "n_tokens" in cols and df.schema["logprob"].is_numeric() and df.schema["n_tokens"].is_numeric():
        return df.select((pl.col("logprob").cast(pl.Float64) / pl.col("n_tokens").cast(pl.Float64)).alias("x"))["x"].to_numpy()
    return None


def _n_obs_dense(cols: list[np.ndarray], kinds: list[str]) -> np.ndarray:
    out = []
    for col, kind in zip(cols, kinds):
        fin = np.isfinite(col)
        out.append(int(np.count_nonzero(col[fin])) if kind in ("binary", "count") else int(fin.sum()))
    return np.asarray(out, dtype=np.int64)


def _auto_tier(texts: pl.Series, *, top_k: int, min_obs: int, rng: np.random.Generator
               ) -> tuple[Any, list[str], np.ndarray | None]:
    """Indicators of the ``top_k`` most common words and word pairs (by rows containing them).

    Rows are tokenised in chunks of CHUNK_ROWS. Up to HACK_VOCAB_SAMPLE_ROWS rows, each row is
    tokenised once: the distinct (row, token) pairs of every chunk are kept (the sparse
    document-term matrix before the top-k cut) and counted. Above it, the vocabulary is ranked on
    a seeded sample of that many rows, then every row is tokenised once against it.
    """
    import scipy.sparse as sp

    n = len(texts)
    sample = n > HACK_VOCAB_SAMPLE_ROWS
    voc_rows = np.sort(rng.choice(n, HACK_VOCAB_SAMPLE_ROWS, replace=False)) if sample else None
    voc_texts = texts.gather(voc_rows) if voc_rows is not None else texts
    n_voc = len(voc_texts)
    counts: list[pl.DataFrame] = []
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    lens: list[np.ndarray] = []
    for start in range(0, n_voc, CHUNK_ROWS):  # phase 1: document frequencies, chunk by chunk
        r, h, ln = _doc_pairs(voc_texts.slice(start, CHUNK_ROWS))
        lens.append(ln)
        r += start
        counts.append(pl.DataFrame({"h": h, "r": r}).group_by("h").agg(pl.len().alias("df"), pl.col("r").min()))
        if not sample:
            kept.append((r, h))
    n_words = None if sample else (np.concatenate(lens) if lens else np.zeros(0, np.int64))
    if not counts or sum(c.height for c in counts) == 0:
        return None, [], n_words
    total = pl.concat(counts).group_by("h").agg(pl.col("df").sum(), pl.col("r").min())
    lo = min_obs * n_voc / n
    chosen = (
        total.filter((pl.col("df") >= lo) & (pl.col("df") <= n_voc - lo))
        .sort(["df", "h"], descending=[True, False])
        .head(top_k)
        .sort("h")
    )
    if chosen.height == 0:
        return None, [], n_words
    vocab = chosen["h"].to_numpy().astype(np.uint64)
    names = _names(voc_texts, vocab, chosen["r"].to_numpy())
    parts = []
    if not sample:
        for r, h in kept:
            pos = np.minimum(np.searchsorted(vocab, h), vocab.size - 1)
            hit = vocab[pos] == h
            parts.append((r[hit], pos[hit]))
    else:
        lens2: list[np.ndarray] = []
        for start in range(0, n, CHUNK_ROWS):  # phase 2: every row once, against the vocabulary
            r, h, ln = _doc_pairs(texts.slice(start, CHUNK_ROWS), unique=False)
            lens2.append(ln)
            pos = np.minimum(np.searchsorted(vocab, h), vocab.size - 1)
            hit = vocab[pos] == h
            parts.append((r[hit] + start, pos[hit]))
            if sys.stderr.isatty():
                print(f"\rhack_scan: tokenised {min(start + CHUNK_ROWS, n):,} of {n:,} rows", end="", file=sys.stderr)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        n_words = np.concatenate(lens2)
    rows_m = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    cols_m = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    mat = sp.csr_matrix((np.ones(rows_m.size, dtype=np.float32), (rows_m, cols_m)), shape=(n, vocab.size))
    mat.sum_duplicates()
    mat.data[:] = 1.0
    return mat, [f"contains:{w}" for w in names], n_words


def _unigram_bigram(toks: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows and hashes of every word and adjacent word pair, and where each pair starts."""
    h, row = toks.hash, toks.row
    m = h.size
    same = row[:-1] == row[1:] if m > 1 else np.zeros(0, dtype=bool)
    bstart = np.flatnonzero(same)
    bh = pair(h[bstart], h[bstart + 1]) if bstart.size else np.zeros(0, np.uint64)
    return np.concatenate([row, row[bstart]]), np.concatenate([h, bh]), bstart


def _doc_pairs(texts: pl.Series, *, unique: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows and hashes of every word and word pair of a chunk, and words per row.

    The (row, hash) pairs are distinct per row when ``unique``.
    """
    toks = tokenize(texts)
    rows, ids, _ = _unigram_bigram(toks)
    if unique and ids.size:
        first = pl.Series(pair(rows.astype(np.uint64), ids)).is_first_distinct().to_numpy()
        rows, ids = rows[first], ids[first]
    return rows.astype(np.int64), ids, np.diff(toks.offsets)


def _names(texts: pl.Series, vocab: np.ndarray, first_rows: np.ndarray) -> list[str]:
    """The words behind the chosen hashes, read back from one row that holds each."""
    rows = np.unique(first_rows)
    toks = tokenize(texts.gather(rows))
    _, ids, bstart = _unigram_bigram(toks)
    m = toks.hash.size
    where: dict[int, str] = {}
    want = set(vocab.tolist())
    for i in np.flatnonzero(np.isin(ids, vocab)).tolist():  # at most a few hundred hits in a few hundred rows
        key = int(ids[i])
        if key in want and key not in where:
            where[key] = str(toks.words[i]) if i < m else f"{toks.words[int(bstart[i - m])]} {toks.words[int(bstart[i - m]) + 1]}"
    return [where.get(int(v), f"#{int(v):x}") for v in vocab.tolist()]


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
    for sl in _row_chunks(n):
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


def _row_chunks(n: int, size: int = CHUNK_ROWS) -> list[slice]:
    return [slice(i, min(i + size, n)) for i in range(0, n, size)] or [slice(0, 0)]


def _t_dot(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """X.T @ M a row chunk at a time (X may be bool)."""
    out = np.zeros((X.shape[1], M.shape[1]))
    for sl in _row_chunks(X.shape[0]):
        out += X[sl].astype(np.float64).T @ M[sl]
    return out


def _distinct_per_ask(df: pl.DataFrame, texts: pl.Series, eff_idx: np.ndarray, gid: np.ndarray) -> float:
    """Mean number of distinct trajectories (agent text plus tool calls) per disagreeing ask."""
    parts = [texts]
    if "messages" in df.columns:
        calls = df.select(
            pl.col("messages").list.eval(
                pl.element().struct.field("tool_calls").list.eval(
                    pl.concat_str([pl.element().struct.field("name"), pl.element().struct.field("arguments")],
                                  ignore_nulls=True)
                ).list.join("|")
            ).list.join("\n").alias("c")
        )["c"].fill_null("")
        parts.append(calls)
    sig = parts[0].hash().to_numpy()
    for p in parts[1:]:
        sig = combine(sig, p.hash().to_numpy())
    frame = pl.DataFrame({"g": gid, "s": sig[eff_idx]})
    per = frame.group_by("g").agg(pl.col("s").n_unique())["s"].to_numpy()
    return float(per.mean()) if per.size else float("nan")


class _Kernel:
    """Within-ask correlations of many feature columns with one centred reward, and shuffles."""

    def _and_max(self, tier: _AndTier, pool_rho: np.ndarray, Yp: np.ndarray) -> np.ndarray:
        """Per shuffle: the largest |rho| over the pairwise ANDs of its own best ``seeds`` pool features.

        An AND's within-ask sum of squares does not depend on the reward, so it is computed once
        per pair and cached; its cross product with a shuffle is one entry of ``X' (X * y)`` over
        the shuffle's chosen columns X (a seeds x seeds matrix product).
        """
        b = Yp.shape[1]
        out = np.zeros(b)
        take = min(tier.seeds, pool_rho.shape[0])
        if take < 2:
            return out
        ia, ib = np.triu_indices(take, k=1)
        ranked = np.argsort(-np.nan_to_num(pool_rho, nan=-1.0), axis=0, kind="stable")[:take]
        m = tier.pool.shape[1]
        for j in range(b):
            top = ranked[:, j]
            lo_i, hi_i = np.minimum(top[ia], top[ib]), np.maximum(top[ia], top[ib])
            both = tier.pair_obs[lo_i, hi_i]
            keep = (both >= tier.min_obs) & (tier.n_graded - both >= tier.min_obs)
            if not keep.any():
                continue
            codes = lo_i[keep] * m + hi_i[keep]
            self._and_sxx(tier, [c for c in codes.tolist() if c not in tier.sxx])
            sxx = np.array([tier.sxx[c] for c in codes.tolist()])
            X = tier.pool[:, top].astype(np.float32)
            S = X.T @ (X * Yp[:, j:j + 1])
            sxy = S[ia[keep], ib[keep]].astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(sxx > 1e-9, np.abs(sxy) / np.sqrt(sxx * self.syy), 0.0)
            out[j] = float(r.max(initial=0.0))
        return out

    def _and_sxx(self, tier: _AndTier, codes: list[int]) -> None:
        """Within-ask sums of squares of the ANDs named by ``codes`` (a * m + b), into the cache."""
        if not codes:
            return
        m = tier.pool.shape[1]
        left = np.array([c // m for c in codes])
        right = np.array([c % m for c in codes])
        sums = np.zeros((self.n_g.size, left.size))
        ones = np.zeros(left.size)
        for sl in _row_chunks(tier.pool.shape[0]):  # bounded memory: one row chunk of ANDs at a time
            Pf = (tier.pool[sl][:, left] & tier.pool[sl][:, right]).astype(np.float32)
            sums += np.asarray(self.G[sl].T @ Pf)
            ones += Pf.sum(axis=0)
        sxx = np.maximum(ones - (sums * sums / self.n_g[:, None]).sum(axis=0), 0.0)
        tier.sxx.update(zip(codes, sxx.tolist()))

    def __init__(self, gid: np.ndarray, n_g: np.ndarray, yc: np.ndarray, syy: float) -> None:
        import scipy.sparse as sp

        self.gid = gid
        self.n_g = n_g
        self.yc = yc
        self.syy = syy
        n = gid.size
        self.G = sp.csr_matrix((np.ones(n), (np.arange(n), gid)), shape=(n, n_g.size))

    def _rho(self, sxy: np.ndarray, sxx: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = sxy / np.sqrt(sxx * self.syy)
        return np.where(sxx > 1e-9 * np.maximum(1.0, np.abs(sxx).max(initial=0.0)), np.clip(r, -1.0, 1.0), np.nan)

    def rho_dense(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = X.shape[1]
        S = np.zeros((self.n_g.size, p))
        sq = np.zeros(p)
        sxy = np.zeros(p)
        for sl in _row_chunks(X.shape[0]):  # bounded memory: a row chunk at a time, cast to float there
            Xc = X[sl].astype(np.float64)
            S += np.asarray(self.G[sl].T @ Xc)
            sq += (Xc * Xc).sum(axis=0)
            sxy += Xc.T @ self.yc[sl]
        sxx = np.maximum(sq - (S * S / self.n_g[:, None]).sum(axis=0), 0.0)
        return self._rho(sxy, sxx), sxx

    def rho_sparse(self, A: Any) -> tuple[np.ndarray, np.ndarray]:
        S = (self.G.T @ A).tocsr()
        sq = np.asarray(A.multiply(A).sum(axis=0)).ravel()
        between = np.asarray(S.multiply(S).multiply(1.0 / self.n_g[:, None]).sum(axis=0)).ravel()
        sxx = np.maximum(sq - between, 0.0)
        return self._rho(np.asarray(A.T @ self.yc).ravel(), sxx), sxx

    def shuffle_max(self, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]], A: Any, sxx_a: np.ndarray, *,
                    n_perm: int, rng: np.random.Generator, and_tier: _AndTier | None = None) -> np.ndarray:
        """Largest |rho| over all features for each of ``n_perm`` within-ask shuffles of reward.

        ``blocks`` are dense feature matrices (float or bool) with the mask of scanned columns and
        their within-ask sums of squares; ``A`` is the sparse auto tier. With ``and_tier`` each
        shuffle also rebuilds the AND tier from its own best ``seeds`` binary features (the
        search redone under the null, Westfall and Young 1993, ch. 2) and counts its ANDs.
        """
        n = self.gid.size
        dense = [(X, np.flatnonzero(m), sxx[m]) for X, m, sxx in blocks[:1] if X.shape[1] and m.any()]
        if not dense and (A is None or A.shape[1] == 0):
            return np.zeros(0)
        block = max(1, min(n_perm, _PERM_CELLS // max(n, 1)))
        out = np.empty(n_perm)
        gidf = self.gid.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            invs = [np.where(sxx > 1e-12, 1.0 / np.sqrt(sxx * self.syy), 0.0) for _, _, sxx in dense]
            inv_a = np.where(sxx_a > 1e-12, 1.0 / np.sqrt(sxx_a * self.syy), 0.0) if A is not None else None
        sizes = self.n_g.astype(np.int64)
        equal = bool(sizes.size and np.all(sizes == sizes[0]))
        chunks = _row_chunks(n)
        for start in range(0, n_perm, block):  # blocks of shuffles, each a matrix product
            b = min(block, n_perm - start)
            # float32 for the shuffled products: the floor needs |rho| to about 1e-6, not 1e-15
            if equal:  # rows are sorted by ask: sort k random keys inside each ask, for b shuffles at once
                k = int(sizes[0])
                order = np.argsort(rng.random((b, sizes.size, k)), axis=2)
                Yp = np.take_along_axis(np.broadcast_to(self.yc.reshape(-1, k).astype(np.float32), (b, sizes.size, k)),
                                        order, axis=2)
                Yp = np.ascontiguousarray(Yp.reshape(b, n).T)
            else:
                keys = gidf[:, None] + rng.random((n, b))
                Yp = self.yc.astype(np.float32)[np.argsort(keys, axis=0)]
            best = np.zeros(b)
            rho_dense = np.zeros((0, b))
            rho_auto = np.zeros((0, b))
            for (X, cols, _), inv in zip(dense, invs):
                acc = np.zeros((cols.size, b))
                for sl in chunks:
                    acc += X[sl][:, cols].astype(np.float32).T @ Yp[sl]
                rho_dense = acc * inv[:, None]
                best = np.maximum(best, np.abs(rho_dense).max(axis=0))
            if A is not None and A.shape[1] and inv_a is not None:
                rho_auto = np.asarray(A.T @ Yp) * inv_a[:, None]
                best = np.maximum(best, np.abs(rho_auto).max(axis=0))
            if and_tier is not None:
                pool_rho = np.abs(np.concatenate([rho_dense[and_tier.dense_pos], rho_auto[and_tier.auto_pos]], axis=0))
                best = np.maximum(best, self._and_max(and_tier, pool_rho, Yp))
            out[start:start + b] = best
        return out
