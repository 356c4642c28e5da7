"""Data-hygiene scans the publish gate reports: duplicate rollouts, near-duplicate asks, length spread.

All three are reported, never applied: the drops live in ``select(mode="rl")``. Duplicates are
counted with the prune's own trajectory signature, so the gate's count is the count the prune
would drop. Near-duplicate asks are compared one prompt per task with a linear-work MinHash
(``whileai.guard.near_duplicate_prompts`` compares every distinct prompt, phrasings included).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from whileai.defaults import LENGTH_MAX_SPREAD, NEAR_DUP_JACCARD
from whileai.guard._hygiene import star_pairs
from whileai.selection._common import has, reply_chars_expr, trajectory_hash, truncated_flag

__all__ = ["duplicate_report", "length_report", "near_duplicate_asks"]

# MinHash LSH shape: 64 hashes in 16 bands of 4 put the candidate threshold at (1/16)^(1/4) = 0.5,
# so a pair at Jaccard 0.8 becomes a candidate with probability 1 - (1 - 0.8^4)^16 > 0.9999
# (Leskovec, Rajaraman, Ullman, Mining of Massive Datasets, section 3.4.3).
_BANDS = 16
_ROWS = 4
_EXAMPLES = 5  # near-duplicate pairs listed on the report (convention)


def duplicate_report(df: pl.DataFrame) -> dict[str, Any]:
    """Duplicate rollouts within an ask (same tool calls and arguments, same final text).

    The same signature ``select(mode="rl")`` dedupes on, so the count the gate reports is the
    count the prune would drop.
    """
    if df.height == 0:
        return {"n": 0, "n_kept": 0, "n_dropped": 0, "groups_affected": 0, "duplicate_rate": 0.0}
    h = trajectory_hash(df)
    first = h.is_first_distinct()
    n_dup = int((~first).sum())
    groups = df.filter(~first)["task_key"].n_unique() if n_dup else 0
    return {"n": df.height, "n_kept": df.height - n_dup, "n_dropped": n_dup, "groups_affected": int(groups),
            "duplicate_rate": round(n_dup / df.height, 4)}


def length_report(df: pl.DataFrame, *, max_spread: float = LENGTH_MAX_SPREAD) -> dict[str, Any]:
    """Reply-length spread: asks whose longest reply is more than ``max_spread`` times their median.

    The median, not the shortest reply, is the yardstick (whileai 0.131's wording: "a reply more
    than 4x the ask's median length"), so one empty reply does not flag an ask.
    """
    if df.height == 0:
        return {"n": 0, "median_chars": None, "max_chars": None, "n_truncated": 0, "n_groups_multi": 0,
                "n_groups_wide_spread": 0, "max_spread": max_spread}
    work = df.select("task_key", reply_chars_expr(df).alias("_len"), truncated_flag(df).alias("_trunc"))
    per = work.group_by("task_key").agg(pl.len().alias("n"), pl.col("_len").median().alias("med"),
                                        pl.col("_len").max().alias("mx"))
    multi = per.filter(pl.col("n") >= 2)
    wide = multi.filter((pl.col("med") > 0) & (pl.col("mx") > max_spread * pl.col("med"))).height
    return {
        "n": df.height,
        "median_chars": float(work["_len"].median()),  # type: ignore[arg-type]
        "max_chars": int(work["_len"].max()),  # type: ignore[arg-type]
        "n_truncated": int(work["_trunc"].sum()),
        "n_groups_multi": multi.height,
        "n_groups_wide_spread": wide,
        "max_spread": max_spread,
    }


def _fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser: a bijection on uint64 that mixes every bit."""
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> np.uint64(33))


def near_duplicate_asks(df: pl.DataFrame, *, threshold: float = NEAR_DUP_JACCARD) -> dict[str, Any]:
    """Pairs of different tasks whose asks share most of their words (Jaccard >= ``threshold``).

    One prompt per task (the first seen) is compared on its set of lower-cased words; phrasings
    of one task are never compared with each other (they are meant to be alike). Candidates come
    from MinHash LSH in ``_BANDS`` bands of ``_ROWS`` (Broder 1997; Leskovec et al., Mining of
    Massive Datasets, 3.4). Within a band bucket every ask is compared with the bucket's first
    ask only (a star), so the work stays linear in the number of tasks even when thousands of
    template-made asks share a bucket; ``n_pairs`` counts the verified pairs found that way (a
    cluster of m near-copies reports about m - 1). Every candidate is checked with the exact
    Jaccard, so nothing reported is not a near duplicate.
    """
    empty: dict[str, Any] = {"n_prompts": 0, "n_pairs": 0, "n_prompts_involved": 0, "threshold": threshold,
                             "examples": []}
    if df.height == 0 or not has(df, "prompt"):
        return empty
    asks = (df.lazy().select("task_key", "prompt").filter(pl.col("prompt").is_not_null())
            .unique("task_key", keep="first", maintain_order=True).collect().with_row_index("_t"))
    empty["n_prompts"] = asks.height
    if asks.height < 2:
        return empty
    words = (
        asks.select(pl.col("_t").cast(pl.Int64), pl.col("prompt").str.to_lowercase().str.extract_all(r"\w+").alias("w"))
        .explode("w").drop_nulls("w")
        .with_columns(pl.col("w").hash(37).alias("h"))
        .unique(["_t", "h"]).sort("_t")
    )
    if words.height == 0:
        return empty
    t = words["_t"].to_numpy()
    h = words["h"].to_numpy()
    starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
    task_ids = t[starts]
    seeds = _fmix64(np.arange(1, _BANDS * _ROWS + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    cand = []
    for b in range(_BANDS):  # a loop over 16 bands; each band is vectorised over every task
        key = np.zeros(task_ids.size, dtype=np.uint64)
        for r in range(_ROWS):
            key = _fmix64(key ^ np.minimum.reduceat(_fmix64(h ^ seeds[b * _ROWS + r]), starts))
        cand.append(star_pairs(task_ids, key))
    pairs = np.unique(np.concatenate(cand), axis=0)
    if pairs.size == 0:
        return empty
    sizes = pl.DataFrame({"_t": task_ids, "_n": np.diff(np.r_[starts, t.size])})
    w = words.select("_t", "h")
    hits = (
        pl.DataFrame({"a": pairs[:, 0], "b": pairs[:, 1]})
        .join(w, left_on="a", right_on="_t")
        .join(w, left_on=["b", "h"], right_on=["_t", "h"], how="semi")
        .group_by("a", "b").len("inter")
        .join(sizes.rename({"_t": "a", "_n": "na"}), on="a")
        .join(sizes.rename({"_t": "b", "_n": "nb"}), on="b")
        .with_columns((pl.col("inter") / (pl.col("na") + pl.col("nb") - pl.col("inter"))).alias("jaccard"))
        .filter(pl.col("jaccard") >= threshold - 1e-12)
        .sort("jaccard", "a", "b", descending=[True, False, False])
    )
    if hits.height == 0:
        return empty
    prompts = asks.select(pl.col("_t").cast(pl.Int64), "task_key", "prompt")
    examples = (
        hits.head(_EXAMPLES)
        .join(prompts, left_on="a", right_on="_t", how="left")
        .join(prompts, left_on="b", right_on="_t", how="left", suffix="_b")
        .select(pl.col("task_key").alias("task_a"), pl.col("task_key_b").alias("task_b"),
                pl.col("prompt").alias("a"), pl.col("prompt_b").alias("b"), pl.col("jaccard").round(4))
    )
    involved = pl.concat([hits["a"], hits["b"]]).n_unique()
    return {"n_prompts": asks.height, "n_pairs": hits.height, "n_prompts_involved": int(involved),
            "threshold": threshold, "examples": examples.to_dicts()}
