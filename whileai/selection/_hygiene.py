"""Data-hygiene scans the publish gate reports: duplicate rollouts, near-duplicate asks, length spread.

All three are reported, never applied: the drops live in ``select(mode="rl")``. Duplicates and
length spread are guard's ``dedupe_groups`` and ``length_report``; the prune dedupes on the same
trajectory signature, so the gate's count is the count the prune would drop. Near-duplicate asks are compared one prompt per task with a linear-work MinHash
(``whileai.guard.near_duplicate_prompts`` compares every distinct prompt, phrasings included).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import polars as pl

from whileai.defaults import LENGTH_MAX_SPREAD, NEAR_DUP_JACCARD
from whileai.guard import (
    DedupeReport,
    LengthReport,
    NearDuplicatePair,
    NearDuplicateReport,
    dedupe_groups,
    star_pairs,
)
from whileai.guard import length_report as guard_length_report
from whileai.report import Part
from whileai.selection._rows import has
from whileai.stats.minhash import band_keys, minhash_signatures

__all__ = ["Duplicates", "LengthSpread", "NearDuplicateAsks", "duplicate_report", "length_report", "near_duplicate_asks"]

# MinHash LSH shape: 64 hashes in 16 bands of 4 put the candidate threshold at (1/16)^(1/4) = 0.5,
# so a pair at Jaccard 0.8 becomes a candidate with probability 1 - (1 - 0.8^4)^16 > 0.9999
# (Leskovec, Rajaraman, Ullman, Mining of Massive Datasets, section 3.4.3).
_BANDS = 16
_ROWS = 4
_EXAMPLES = 5  # near-duplicate pairs listed on the report (convention)


class Duplicates(Part, DedupeReport):
    """Duplicate rollouts within an ask (the same tool calls, arguments and final text).

    ``whileai.guard.dedupe_groups``'s report as a block of the gate's and the RL selection's
    reports: its fields without its warnings.
    """

    renamed: ClassVar[dict[str, str]] = DedupeReport.renamed


class LengthSpread(Part, LengthReport):
    """Reply-length spread per ask: ``whileai.guard.length_report``'s fields, without its warnings."""

    renamed: ClassVar[dict[str, str]] = LengthReport.renamed


class NearDuplicateAsks(Part, NearDuplicateReport):
    """Different tasks whose asks share most of their words (``near_duplicate_asks``).

    ``whileai.guard.near_duplicate_prompts``'s fields, without its warnings; each pair names its
    two tasks (``task_a``, ``task_b``).
    """


def duplicate_report(df: pl.DataFrame) -> Duplicates:
    """Duplicate rollouts within an ask: ``whileai.guard.dedupe_groups``'s report, as a block.

    Its signature (tool calls and arguments, final text) is the one ``select(mode="rl")`` dedupes
    on, so the count the gate reports is the count the prune would drop.
    """
    return Duplicates.model_validate(dedupe_groups(df).report.model_dump(exclude={"warnings"}))


def length_report(df: pl.DataFrame, *, max_spread: float = LENGTH_MAX_SPREAD) -> LengthSpread:
    """Reply-length spread per ask: ``whileai.guard.length_report``'s report, as a block.

    An ask spreads wide when its longest reply is more than ``max_spread`` times the ask's median.
    """
    return LengthSpread.model_validate(guard_length_report(df, max_spread=max_spread).model_dump(exclude={"warnings"}))


def near_duplicate_asks(df: pl.DataFrame, *, threshold: float = NEAR_DUP_JACCARD) -> NearDuplicateAsks:
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
    empty = NearDuplicateAsks(n_prompts=0, n_pairs=0, n_prompts_involved=0, threshold=threshold, examples=[])
    if df.height == 0 or not has(df, "prompt"):
        return empty
    asks = (df.lazy().select("task_key", "prompt").filter(pl.col("prompt").is_not_null())
            .unique("task_key", keep="first", maintain_order=True).collect().with_row_index("_t"))
    empty.n_prompts = asks.height
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
    task_ids, sig = minhash_signatures(words["_t"].to_numpy(), words["h"].to_numpy().astype(np.uint64),
                                       n_hashes=_BANDS * _ROWS)
    keys = band_keys(sig, _BANDS)
    cand = [star_pairs(task_ids, keys[:, b]) for b in range(_BANDS)]  # 16 bands, each vectorised over tasks
    pairs = np.unique(np.concatenate(cand), axis=0)
    if pairs.size == 0:
        return empty
    sizes = words.group_by("_t").len("_n")
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
    return NearDuplicateAsks(n_prompts=asks.height, n_pairs=hits.height, n_prompts_involved=int(involved),
                             threshold=threshold, examples=[NearDuplicatePair(**pair) for pair in examples.to_dicts()])
