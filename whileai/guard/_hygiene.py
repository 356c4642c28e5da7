"""Hygiene checks on an RL-shaped set.

Pooled reward correlations, duplicate trajectories within an ask, near-duplicate asks, and
reply-length spread (whileai 0.131 score.hygiene names).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai.defaults import GUARD_EXAMPLES, HACK_THRESHOLD, LENGTH_MAX_SPREAD, NEAR_DUP_JACCARD
from whileai.guard._common import check_fraction, graded_mask, pearson
from whileai.guard._tokens import combine, tokenize
from whileai.report import Report, fmt_num
from whileai.table import IntoRows, like_input

__all__ = [
    "CorrelationReport",
    "DedupeReport",
    "Deduped",
    "LengthReport",
    "NearDuplicateReport",
    "dedupe_groups",
    "length_report",
    "near_duplicate_prompts",
    "reward_correlations",
]

_MINHASH_K = 64  # hash functions; 16 bands of 4 rows
_BANDS = 16
_MINHASH_CHUNK = 262_144
_BUCKET_ALL_PAIRS = 64  # a band bucket larger than this is paired as a star (linear, not quadratic)


# ------------------------------------------------------------------------------------------
# reward_correlations
# ------------------------------------------------------------------------------------------


class CorrelationReport(Report):
    """Pooled correlation of reward with reply length, tool calls and turns."""

    n_graded: int = 0
    """Rows with a numeric reward."""
    threshold: float = HACK_THRESHOLD
    """|corr| at or above which a feature is flagged."""
    correlations: dict[str, float | None] = Field(default_factory=dict)
    """Pearson correlation of reward with each feature (None when undefined: a constant side)."""
    flagged: dict[str, float] = Field(default_factory=dict)
    """The features at or above the threshold."""

    def render(self) -> str:
        """One line per feature, flagged ones starred."""
        lines = [f"reward correlations over {self.n_graded} graded rows (flag at |corr| >= {self.threshold:.2f})"]
        for name, value in self.correlations.items():
            star = "*" if name in self.flagged else " "
            lines.append(f"{star} {name:<18} {fmt_num(value, 3)}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def reward_correlations(rows: IntoRows, /, *, threshold: float = HACK_THRESHOLD) -> CorrelationReport:
    """Pooled Pearson correlation of reward with reply length, tool calls and assistant turns.

    The older, coarser check beside :func:`hack_scan`: pooled over every graded row, so it also
    picks up differences between asks. A feature at or above ``threshold`` (HACK_THRESHOLD, 0.3;
    Gao et al. 2022, reward model overoptimisation) is flagged: the reward may pay for it.

    Args:
        rows: Graded rollouts (any input ``table.frame`` reads).
        threshold: |corr| at or above which a feature is flagged.

    Returns:
        A :class:`CorrelationReport` (``n_graded``, ``threshold``, ``correlations``, ``flagged``).

    Examples:
        >>> r = reward_correlations([{"prompt": "p", "final_text": "x" * n, "reward": float(n > 2)} for n in range(1, 6)])
        >>> round(r["correlations"]["reply_length"], 3), list(r["flagged"])
        (0.866, ['reply_length'])
    """
    threshold = check_fraction("threshold", threshold)
    df = table.frame(rows, allow_empty=True)
    report = CorrelationReport(threshold=threshold)
    mask = graded_mask(df)
    report.n_graded = int(mask.sum())
    if report.n_graded == 0:
        report.warnings.append("no row carries a numeric reward, so no correlation is defined; grade first.")
        return report
    g = df.filter(pl.Series(mask))
    y = g["reward"].cast(pl.Float64).to_numpy()
    exprs = {}
    if "final_text" in g.columns:
        exprs["reply_length"] = table.reply_chars()
    if "messages" in g.columns:
        exprs["tool_calls"] = table.n_tool_calls()
        exprs["assistant_turns"] = table.n_turns()
    feats = g.select([e.alias(k) for k, e in exprs.items()]) if exprs else pl.DataFrame()
    undefined = []
    for name in feats.columns:
        value = pearson(feats[name].cast(pl.Float64).to_numpy(), y)
        report.correlations[name] = None if np.isnan(value) else value
        if np.isnan(value):
            undefined.append(name)
        elif abs(value) >= threshold:
            report.flagged[name] = value
    if undefined:
        report.warnings.append(
            f"correlation undefined for {', '.join(undefined)}: the feature or the reward is the same on every graded row."
        )
    for name, value in report.flagged.items():
        report.warnings.append(f"reward correlates with {name} at {value:+.2f} (pooled): the judge may pay for it; "
                               "run hack_scan(rows, endorsed=[...]) to see it within ask.")
    return report


# ------------------------------------------------------------------------------------------
# dedupe_groups
# ------------------------------------------------------------------------------------------


class DedupeReport(Report):
    """Duplicate trajectories within an ask."""

    n: int = 0
    """Rows given."""
    n_kept: int = 0
    """Rows kept (the first of each trajectory within its ask)."""
    n_dropped: int = 0
    """Rows dropped as repeats of a trajectory already kept for the same ask."""
    groups_affected: int = 0
    """Asks that lost at least one row."""
    duplicate_rate: float = 0.0
    """n_dropped / n."""
    conflicting_rewards: int = 0
    """Trajectories that appear more than once in an ask with different rewards (a noisy judge)."""

    def render(self) -> str:
        """One line."""
        line = (f"kept {self.n_kept} of {self.n} rows: {self.n_dropped} duplicate trajectories dropped in "
                f"{self.groups_affected} asks ({self.duplicate_rate:.1%}); conflicting rewards {self.conflicting_rewards}")
        return "\n".join([line, *(f"! {w}" for w in self.warnings)])


class Deduped(NamedTuple):
    """What :func:`dedupe_groups` returns: the kept rows and the report (unpacks as a pair)."""

    rows: Any
    report: DedupeReport


def dedupe_groups(rows: IntoRows, /) -> Deduped:
    """Drop repeated trajectories within an ask, keeping the first of each.

    The same trajectory twice adds nothing to a group-relative advantage (docs/select.md,
    "the difficulty band"). A trajectory is the whole conversation (every message, tool call and result) and
    the final reply; two rollouts of one ask with equal trajectories are duplicates.

    Args:
        rows: Rollouts (any input ``table.frame`` reads).

    Returns:
        ``(kept, report)``: the kept rows in the kind they came in, and a :class:`DedupeReport`.

    Examples:
        >>> kept, r = dedupe_groups([{"scenario_id": "a", "final_text": "x", "reward": 1},
        ...                          {"scenario_id": "a", "final_text": "x", "reward": 0},
        ...                          {"scenario_id": "a", "final_text": "y", "reward": 0}])
        >>> len(kept), r["n_dropped"], r["conflicting_rewards"]
        (2, 1, 1)
    """
    df = table.frame(rows, allow_empty=True)
    report = DedupeReport(n=df.height)
    if df.height == 0:
        return Deduped(like_input(rows, df, report), report)
    sig = _signature(df)
    work = df.with_columns(sig.alias("_sig")).with_row_index("_i")
    first = work.group_by(["task_key", "_sig"], maintain_order=True).agg(pl.col("_i").first())
    keep = np.zeros(df.height, dtype=bool)
    keep[first["_i"].to_numpy()] = True
    kept = df.filter(pl.Series(keep))
    report.n_kept = kept.height
    report.n_dropped = df.height - kept.height
    report.duplicate_rate = report.n_dropped / df.height
    report.groups_affected = int(work.filter(~pl.Series(keep))["task_key"].n_unique())
    if "reward" in df.columns:
        conflicts = (
            work.filter(pl.col("reward").is_not_null())
            .group_by(["task_key", "_sig"]).agg(pl.col("reward").n_unique().alias("k"))
            .filter(pl.col("k") > 1).height
        )
        report.conflicting_rewards = int(conflicts)
        if conflicts:
            report.warnings.append(
                f"{conflicts} trajectories got different rewards on repeats within one ask: the judge is not "
                "deterministic on identical input; check it with judge_trust before training."
            )
    return Deduped(like_input(rows, kept, report), report)


def _signature(df: pl.DataFrame) -> pl.Expr:
    parts = [pl.col(c).hash() for c in ("messages", "final_text") if c in df.columns]
    if not parts:
        return pl.lit(0, pl.UInt64)
    out = parts[0]
    for p in parts[1:]:
        out = out.hash() ^ p
    return out


# ------------------------------------------------------------------------------------------
# near_duplicate_prompts
# ------------------------------------------------------------------------------------------


class NearDuplicateReport(Report):
    """Distinct prompts whose word sets nearly coincide."""

    n_prompts: int = 0
    """Distinct prompts compared."""
    n_pairs: int = 0
    """Pairs of distinct prompts at or above the Jaccard threshold."""
    n_prompts_involved: int = 0
    """Prompts in at least one such pair."""
    threshold: float = NEAR_DUP_JACCARD
    """Word-set Jaccard at or above which two prompts are near duplicates."""
    examples: list[dict[str, Any]] = Field(default_factory=list)
    """The closest pairs: ``{a, b, jaccard}``."""

    def render(self) -> str:
        """Summary line and examples."""
        lines = [f"{self.n_pairs} near-duplicate prompt pairs (Jaccard >= {self.threshold:.2f}) among "
                 f"{self.n_prompts} prompts; {self.n_prompts_involved} prompts involved"]
        for ex in self.examples:
            lines.append(f"  {ex['jaccard']:.3f}  {ex['a'][:60]!r} ~ {ex['b'][:60]!r}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def near_duplicate_prompts(rows: IntoRows, /, *, threshold: float = NEAR_DUP_JACCARD,
                           examples: int = GUARD_EXAMPLES) -> NearDuplicateReport:
    """Pairs of distinct prompts whose word sets have Jaccard similarity at or above ``threshold``.

    Candidates come from MinHash with banded locality-sensitive hashing (Broder 1997; 64 hashes
    in 16 bands of 4, so a pair at Jaccard 0.8 is a candidate with probability 0.9998) and every
    candidate is then checked exactly, so no reported pair is an estimate. Near-duplicate asks
    are one situation counted twice: they inflate the task count and leak across a split.

    Args:
        rows: Rollouts (any input ``table.frame`` reads); their distinct prompts are compared.
        threshold: Jaccard at or above which two prompts are near duplicates.
        examples: Pairs listed on the report.

    Returns:
        A :class:`NearDuplicateReport`.

    Examples:
        >>> r = near_duplicate_prompts([{"prompt": "cancel order 12 for me please now"},
        ...                             {"prompt": "please cancel order 12 for me now"},
        ...                             {"prompt": "what is the weather in paris"}])
        >>> r["n_pairs"], r["examples"][0]["jaccard"]
        (1, 1.0)
    """
    threshold = check_fraction("threshold", threshold, open_low=True)
    df = table.frame(rows, allow_empty=True)
    report = NearDuplicateReport(threshold=threshold)
    if df.height == 0 or "prompt" not in df.columns:
        return report
    prompts = df["prompt"].drop_nulls().unique(maintain_order=True)
    report.n_prompts = len(prompts)
    if len(prompts) < 2:
        return report
    toks = tokenize(prompts)
    pairs_rh = pl.DataFrame({"r": toks.row, "h": toks.hash}).unique().sort(["r", "h"])
    sizes = np.bincount(pairs_rh["r"].to_numpy(), minlength=len(prompts))
    sig = _minhash(pairs_rh["r"].to_numpy(), pairs_rh["h"].to_numpy().astype(np.uint64), len(prompts))
    has = sizes > 0
    rows_per_band = _MINHASH_K // _BANDS
    cand_parts = []
    ids = np.flatnonzero(has)
    for b in range(_BANDS):  # 16 bands: a loop over bands, each a vectorised self-join
        cols = sig[ids, b * rows_per_band:(b + 1) * rows_per_band]
        key = cols[:, 0]
        for c in range(1, rows_per_band):
            key = combine(key, cols[:, c])
        cand_parts.append(_bucket_pairs(ids.astype(np.int64), key))
    cand = pl.concat(cand_parts).unique()
    if cand.height == 0:
        return report
    inter = (
        cand.join(pairs_rh.rename({"r": "i"}), on="i")
        .join(pairs_rh.rename({"r": "i_b"}), on=["i_b", "h"], how="semi")
        .group_by(["i", "i_b"]).len("inter")
    )
    sz = pl.DataFrame({"i": np.arange(len(prompts), dtype=np.int64), "sa": sizes.astype(np.int64)})
    inter = (
        inter.join(sz, on="i").join(sz.rename({"i": "i_b", "sa": "sb"}), on="i_b")
        .with_columns((pl.col("inter") / (pl.col("sa") + pl.col("sb") - pl.col("inter"))).alias("jaccard"))
    ).filter(pl.col("jaccard") >= threshold - 1e-12).sort(["jaccard", "i", "i_b"], descending=[True, False, False])
    report.n_pairs = inter.height
    report.n_prompts_involved = int(pl.concat([inter["i"], inter["i_b"]]).n_unique()) if inter.height else 0
    for i, j, jac in inter.head(examples).select("i", "i_b", "jaccard").iter_rows():
        report.examples.append({"a": prompts[i], "b": prompts[j], "jaccard": round(float(jac), 4)})
    if report.n_pairs:
        report.warnings.append(
            f"{report.n_prompts_involved} prompts have a near duplicate: one situation counted as several asks. "
            "Give them one scenario_id, or drop the copies before splitting train and eval."
        )
    return report


def _bucket_pairs(ids: np.ndarray, key: np.ndarray) -> pl.DataFrame:
    """Candidate pairs (i < i_b) of ids that share a band bucket.

    Every pair within a bucket of up to ``_BUCKET_ALL_PAIRS`` members; in a larger bucket (thousands
    of template-made prompts can share one) each member is paired with the bucket's first member
    only (a star), so the candidates stay linear in the number of prompts instead of quadratic.
    """
    f = pl.DataFrame({"k": key, "i": ids})
    size = f.group_by("k").len("n")
    f = f.join(size, on="k")
    small = f.filter(pl.col("n") <= _BUCKET_ALL_PAIRS).select("k", "i")
    pairs = small.join(small, on="k", suffix="_b").filter(pl.col("i") < pl.col("i_b")).select("i", "i_b")
    big = f.filter(pl.col("n") > _BUCKET_ALL_PAIRS)
    if big.height:
        star = star_pairs(big["i"].to_numpy(), big["k"].to_numpy())
        pairs = pl.concat([pairs, pl.DataFrame({"i": star[:, 0], "i_b": star[:, 1]})])
    return pairs


def star_pairs(ids: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Candidate (a, b) pairs, a < b: each id paired with the first id of its bucket (by ``key``)."""
    order = np.argsort(key, kind="stable")
    k_sorted = key[order]
    ids_sorted = ids[order]
    new_run = np.r_[True, k_sorted[1:] != k_sorted[:-1]]
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(k_sorted.size), 0))
    follower = ~new_run
    return np.sort(np.stack([ids_sorted[run_start[follower]], ids_sorted[follower]], axis=1), axis=1)


def _minhash(rows: np.ndarray, hashes: np.ndarray, n: int) -> np.ndarray:
    """MinHash signatures (n x 64) from sorted (row, hash) pairs; rows without words stay max."""
    seeds = np.random.default_rng(1997).integers(1, 2**63 - 1, size=_MINHASH_K, dtype=np.int64).astype(np.uint64)
    sig = np.full((n, _MINHASH_K), np.iinfo(np.uint64).max, dtype=np.uint64)
    for start in range(0, rows.size, _MINHASH_CHUNK):  # bounded memory: chunks of pairs
        r = rows[start:start + _MINHASH_CHUNK]
        h = hashes[start:start + _MINHASH_CHUNK]
        mixed = combine(h[:, None], seeds[None, :])
        starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
        mins = np.minimum.reduceat(mixed, starts, axis=0)
        urows = r[starts]
        sig[urows] = np.minimum(sig[urows], mins)
    return sig


# ------------------------------------------------------------------------------------------
# length_report
# ------------------------------------------------------------------------------------------


class LengthReport(Report):
    """Reply lengths and their spread within asks."""

    n: int = 0
    """Rows."""
    median_chars: float = float("nan")
    """Median reply length in characters."""
    max_chars: int = 0
    """Longest reply."""
    n_truncated: int = 0
    """Rows marked truncated."""
    n_groups_multi: int = 0
    """Asks with at least two rollouts."""
    n_groups_wide_spread: int = 0
    """Asks whose longest reply is more than max_spread times their shortest."""
    max_spread: float = LENGTH_MAX_SPREAD
    """The spread ratio that counts as wide."""

    def render(self) -> str:
        """One line."""
        line = (f"{self.n} replies: median {fmt_num(self.median_chars, 0)} chars, max {self.max_chars}; "
                f"truncated {self.n_truncated}; {self.n_groups_wide_spread} of {self.n_groups_multi} asks spread "
                f"over {self.max_spread:g}x")
        return "\n".join([line, *(f"! {w}" for w in self.warnings)])


def length_report(rows: IntoRows, /, *, max_spread: float = LENGTH_MAX_SPREAD) -> LengthReport:
    """Reply length in characters: median, maximum, truncations, and asks with a wide spread.

    A wide spread inside one ask (longest reply over ``max_spread`` times the shortest) is where a
    length-biased reward has room to act; a grouped update then learns length.

    Args:
        rows: Rollouts (any input ``table.frame`` reads).
        max_spread: Ratio of longest to shortest reply in an ask that counts as wide (> 1).

    Returns:
        A :class:`LengthReport`.

    Examples:
        >>> r = length_report([{"scenario_id": "a", "final_text": "x"}, {"scenario_id": "a", "final_text": "x" * 9}])
        >>> r["median_chars"], r["n_groups_wide_spread"]
        (5.0, 1)
    """
    if not isinstance(max_spread, (int, float)) or isinstance(max_spread, bool) or not max_spread > 1:
        from whileai.errors import ArgumentError

        raise ArgumentError(f"max_spread must be a number > 1, got {max_spread!r}. Pass for example max_spread=4.0.")
    df = table.frame(rows, allow_empty=True)
    report = LengthReport(n=df.height, max_spread=float(max_spread))
    if df.height == 0:
        return report
    chars = df.select("task_key", (table.reply_chars() if "final_text" in df.columns else pl.lit(0)).alias("c"))
    report.median_chars = float(chars.select(pl.col("c").median().cast(pl.Float64)).item())
    report.max_chars = int(chars.select(pl.col("c").max().cast(pl.Int64)).item())
    if "truncated" in df.columns:
        report.n_truncated = int(df["truncated"].fill_null(False).sum())
    per = chars.group_by("task_key").agg(pl.len().alias("n"), pl.col("c").min().alias("lo"), pl.col("c").max().alias("hi"))
    multi = per.filter(pl.col("n") >= 2)
    report.n_groups_multi = multi.height
    report.n_groups_wide_spread = multi.filter(pl.col("hi") > max_spread * pl.max_horizontal(pl.col("lo"), 1)).height
    if report.n_groups_wide_spread:
        report.warnings.append(
            f"{report.n_groups_wide_spread} asks have replies more than {max_spread:g}x apart in length: "
            "check hack_scan for reply_length before training."
        )
    return report
