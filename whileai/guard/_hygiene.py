"""Hygiene checks on an RL-shaped set.

Pooled reward correlations, duplicate trajectories within an ask, near-duplicate asks, and
reply-length spread (whileai 0.131 score.hygiene names).
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai._checks import check_fraction, check_number
from whileai.defaults import GUARD_EXAMPLES, HACK_THRESHOLD, LENGTH_MAX_SPREAD, NEAR_DUP_JACCARD
from whileai.guard._markers import graded_mask
from whileai.guard._tokens import tokenize
from whileai.report import ROWS_GIVEN, NanFloat, Part, Report, fmt_num
from whileai.stats import pearson
from whileai.stats.minhash import band_keys, minhash_signatures
from whileai.table import IntoRows, like_input

__all__ = [
    "CorrelationReport",
    "DedupeReport",
    "Deduped",
    "LengthReport",
    "NearDuplicatePair",
    "NearDuplicateReport",
    "dedupe_groups",
    "length_report",
    "near_duplicate_prompts",
    "reward_correlations",
    "trajectory_signature",
    "truncated_flag",
]

_MINHASH_K = 64  # hash functions; 16 bands of 4 rows
_BANDS = 16
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


def feature_correlations(reward: np.ndarray, features: pl.DataFrame) -> dict[str, float | None]:
    """Pearson correlation of ``reward`` with each column of ``features``, in column order.

    The one pooled kernel behind :func:`reward_correlations` and the selectors' correlation check
    (``whileai.stats.correlation.pearson``: pairs with a non-finite side are left out); ``None``
    where it is undefined (a constant side, or fewer than 2 pairs).
    """
    out: dict[str, float | None] = {}
    for name in features.columns:
        value = pearson(features[name].cast(pl.Float64).to_numpy(), reward)
        out[name] = None if np.isnan(value) else value
    return out


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
    for name, value in feature_correlations(y, feats).items():
        report.correlations[name] = value
        if value is None:
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

    n_rows: int = Field(0, validation_alias=ROWS_GIVEN)
    """Rows given."""
    renamed: ClassVar[dict[str, str]] = {"n": "n_rows"}

    @property
    def n(self) -> int:
        """``n_rows`` under its old name (rows given), kept so code written with it still reads."""
        return self.n_rows

    n_kept: int = 0
    """Rows kept (the first of each trajectory within its ask)."""
    n_dropped: int = 0
    """Rows dropped as repeats of a trajectory already kept for the same ask."""
    groups_affected: int = 0
    """Asks that lost at least one row."""
    duplicate_rate: float = 0.0
    """n_dropped / n_rows."""
    conflicting_rewards: int = 0
    """Trajectories that appear more than once in an ask with different rewards (a noisy judge)."""

    def render(self) -> str:
        """One line."""
        line = (f"kept {self.n_kept} of {self.n_rows} rows: {self.n_dropped} duplicate trajectories dropped in "
                f"{self.groups_affected} asks ({self.duplicate_rate:.1%}); conflicting rewards {self.conflicting_rewards}")
        return "\n".join([line, *(f"! {w}" for w in self.warnings)])


class Deduped(NamedTuple):
    """What :func:`dedupe_groups` returns: the kept rows and the report (unpacks as a pair)."""

    rows: Any
    report: DedupeReport


def dedupe_groups(rows: IntoRows, /) -> Deduped:
    """Drop repeated trajectories within an ask, keeping the first of each.

    The same trajectory twice adds nothing to a group-relative advantage (docs/select.md, the RL
    prune). A trajectory is the tool calls with their arguments, in order, and the final reply
    (:func:`trajectory_signature`: call ids and tool output are not read); two rollouts of one
    ask with equal trajectories are duplicates, as ``select(mode="rl")`` drops them.

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
    report = DedupeReport(n_rows=df.height)
    if df.height == 0:
        return Deduped(like_input(rows, df, report), report)
    work = df.with_columns(trajectory_signature(df).alias("_sig")).with_row_index("_i")
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


def trajectory_signature(df: pl.DataFrame) -> pl.Expr:
    """A 64-bit hash of (task, tool calls with their arguments in order, final reply), per row.

    What a grouped update sees of a rollout is its actions and its answer: two rollouts of one ask
    that make the same calls with the same arguments and end on the same text are the same
    trajectory, whatever call ids the runtime gave them and whatever the tool returned (results
    and ids are not read). ``dedupe_groups``, the publish gate's duplicate count and
    ``select(mode="rl")``'s prune all use this signature. Collision odds among a million
    rollouts are about 3e-8 (birthday bound on 64 bits).
    """
    present = {c for c in df.columns if df.schema[c] != pl.Null}
    reply = pl.col("final_text").fill_null("") if "final_text" in present else pl.lit("", pl.String)
    parts = [pl.col("task_key").hash(11).alias("t"), reply.hash(13).alias("r")]
    if "messages" in present:
        call = pl.element().struct
        calls = pl.col("messages").list.eval(pl.element().struct.field("tool_calls").explode().drop_nulls())
        parts.append(calls.list.eval(pl.struct(call.field("name"), call.field("arguments"))).hash(17).alias("c"))
    return pl.struct(parts).hash(23)


# ------------------------------------------------------------------------------------------
# near_duplicate_prompts
# ------------------------------------------------------------------------------------------


class NearDuplicatePair(Part):
    """Two near-duplicate asks and their word-set Jaccard.

    ``near_duplicate_prompts`` names the prompts; the publish gate, which compares one prompt per
    task, names the two tasks too.
    """

    task_a: str | None = None
    """The first ask's task (the publish gate's pairs)."""
    task_b: str | None = None
    """The second ask's task (the publish gate's pairs)."""
    a: str = ""
    """The first prompt."""
    b: str = ""
    """The second prompt."""
    jaccard: float = 0.0
    """Their word-set Jaccard, to 4 places."""


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
    examples: list[NearDuplicatePair] = Field(default_factory=list)
    """The closest pairs: ``{a, b, jaccard}``."""

    def render(self) -> str:
        """Summary line and examples."""
        lines = [f"{self.n_pairs} near-duplicate prompt pairs (Jaccard >= {self.threshold:.2f}) among "
                 f"{self.n_prompts} prompts; {self.n_prompts_involved} prompts involved"]
        for ex in self.examples:
            lines.append(f"  {ex.jaccard:.3f}  {ex.a[:60]!r} ~ {ex.b[:60]!r}")
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
    ids, sig = minhash_signatures(pairs_rh["r"].to_numpy(), pairs_rh["h"].to_numpy().astype(np.uint64),
                                  n_hashes=_MINHASH_K)
    keys = band_keys(sig, _BANDS)
    # 16 bands: a loop over bands, each a vectorised self-join
    cand_parts = [_bucket_pairs(ids.astype(np.int64), keys[:, b]) for b in range(_BANDS)]
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
        report.examples.append(NearDuplicatePair(a=prompts[i], b=prompts[j], jaccard=round(float(jac), 4)))
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


# ------------------------------------------------------------------------------------------
# length_report
# ------------------------------------------------------------------------------------------


class LengthReport(Report):
    """Reply lengths and their spread within asks."""

    n_rows: int = Field(0, validation_alias=ROWS_GIVEN)
    """Rows given."""
    renamed: ClassVar[dict[str, str]] = {"n": "n_rows"}

    @property
    def n(self) -> int:
        """``n_rows`` under its old name (rows given), kept so code written with it still reads."""
        return self.n_rows

    median_chars: NanFloat = float("nan")
    """Median reply length in characters."""
    max_chars: int = 0
    """Longest reply."""
    n_truncated: int = 0
    """Rows marked truncated."""
    n_groups_multi: int = 0
    """Asks with at least two rollouts."""
    n_groups_wide_spread: int = 0
    """Asks whose longest reply is more than max_spread times the ask's median reply."""
    max_spread: float = LENGTH_MAX_SPREAD
    """The spread ratio that counts as wide."""

    def render(self) -> str:
        """One line."""
        line = (f"{self.n_rows} replies: median {fmt_num(self.median_chars, 0)} chars, max {self.max_chars}; "
                f"truncated {self.n_truncated}; {self.n_groups_wide_spread} of {self.n_groups_multi} asks spread "
                f"over {self.max_spread:g}x")
        return "\n".join([line, *(f"! {w}" for w in self.warnings)])


def truncated_flag(df: pl.DataFrame) -> pl.Expr:
    """A rollout that hit a limit: ``truncated`` is true or ``finish_reason == "length"``."""
    parts: list[pl.Expr] = []
    if "truncated" in df.columns and df.schema["truncated"] != pl.Null:
        parts.append(pl.col("truncated").cast(pl.Boolean).fill_null(False))
    if "finish_reason" in df.columns and df.schema["finish_reason"] != pl.Null:
        parts.append((pl.col("finish_reason") == "length").fill_null(False))
    return pl.any_horizontal(parts) if parts else pl.lit(False)


def length_report(rows: IntoRows, /, *, max_spread: float = LENGTH_MAX_SPREAD) -> LengthReport:
    """Reply length in characters: median, maximum, truncations, and asks with a wide spread.

    An ask spreads wide when its longest reply is more than ``max_spread`` times the ask's median
    reply (whileai 0.131: "a reply more than 4x the ask's median length"). The median, not the
    shortest reply, is the yardstick, so one empty or one-word reply does not flag an ask; an ask
    whose median reply is empty is not flagged. A wide spread inside one ask is where a
    length-biased reward has room to act; a grouped update then learns length. The publish gate
    reports this same measure.

    Args:
        rows: Rollouts (any input ``table.frame`` reads).
        max_spread: Ratio of an ask's longest reply to its median that counts as wide (> 1).

    Returns:
        A :class:`LengthReport`.

    Examples:
        >>> r = length_report([{"scenario_id": "a", "final_text": "x"}, {"scenario_id": "a", "final_text": "x" * 2},
        ...                    {"scenario_id": "a", "final_text": "x" * 9}])
        >>> r["median_chars"], r["n_groups_wide_spread"]
        (2.0, 1)
    """
    max_spread = check_number("max_spread", max_spread, low=1.0, open_low=True,
                              fix="Pass for example max_spread=4.0.")
    df = table.frame(rows, allow_empty=True)
    report = LengthReport(n_rows=df.height, max_spread=float(max_spread))
    if df.height == 0:
        return report
    reply = table.reply_chars() if "final_text" in df.columns else pl.lit(0, pl.Int64)
    chars = df.select("task_key", reply.alias("c"), truncated_flag(df).alias("t"))
    report.median_chars = float(chars.select(pl.col("c").median().cast(pl.Float64)).item())
    report.max_chars = int(chars.select(pl.col("c").max().cast(pl.Int64)).item())
    report.n_truncated = int(chars["t"].sum())
    per = chars.group_by("task_key").agg(pl.len().alias("n"), pl.col("c").median().alias("med"),
                                        pl.col("c").max().alias("hi"))
    multi = per.filter(pl.col("n") >= 2)
    report.n_groups_multi = multi.height
    report.n_groups_wide_spread = multi.filter((pl.col("med") > 0) & (pl.col("hi") > max_spread * pl.col("med"))).height
    if report.n_groups_wide_spread:
        report.warnings.append(
            f"{report.n_groups_wide_spread} asks have a reply more than {max_spread:g}x the ask's median length: "
            "check hack_scan for reply_length before training."
        )
    return report
