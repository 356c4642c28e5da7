"""Preference pairs: a passing and a failing rollout of the same ask, length-matched."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import polars as pl
from pydantic import Field

from whileai import table
from whileai.defaults import PAIR_MIN_MARGIN
from whileai.errors import ArgumentError
from whileai.report import NanFloat, Part, Report, fmt_num
from whileai.selection._args import check_positive_int
from whileai.selection._rows import eval_sourced, has, reply_chars_expr, require_graded
from whileai.selection._scans import eval_sourced_warning
from whileai.stats import length_confound
from whileai.table import IntoRows
from whileai.table.schema import MESSAGE

__all__ = ["PAIR_COLUMNS", "PairLengths", "PairsReport", "PreferencePairs", "build_preference_pairs"]

#: The columns of ``PreferencePairs.df`` (``tools`` and ``system_prompt`` follow when the rows had them).
PAIR_COLUMNS = ("task_key", "prompt", "chosen", "rejected", "chosen_reward", "rejected_reward", "margin")

_MARGIN_TOL = 1e-9


class PairLengths(Part):
    """The length check over the pairs: chosen minus rejected reply length (Lambert 2025, chapter Direct Alignment)."""

    median_delta: float | None = None
    """Median of chosen minus rejected reply chars (None with no pair)."""
    chosen_longer: int = 0
    """Pairs whose chosen reply is the longer one."""
    chosen_longer_frac: float | None = None
    """``chosen_longer`` over the pairs, to 4 places (None with no pair)."""


class PairsReport(Report):
    """What ``build_preference_pairs`` made, and why the asks without a pair have none."""

    pairs: int = 0
    """Pairs made."""
    prompts_seen: int = 0
    """Asks (task and prompt) with at least one graded rollout."""
    prompts_with_contrast: int = 0
    """Asks that gave at least one pair."""
    skipped: dict[str, int] = Field(default_factory=dict)
    """Asks with no pair, by reason: ``single`` (one graded rollout), ``unanimous`` (every
    rollout has one reward), ``below_margin`` (rewards differ by less than ``min_margin``)."""
    rows_unusable: int = 0
    """Rows with no reward or a judge_status other than ok (never paired)."""
    min_margin: float = PAIR_MIN_MARGIN
    """The reward gap a pair needs."""
    mean_margin: NanFloat = math.nan
    """Mean reward gap over the pairs."""
    partial_score_pairs: int = 0
    """Pairs with a side scored strictly between 0 and 1."""
    length_match: bool = True
    """Whether each pair took the rejected rollout closest in reply length to the chosen one."""
    length: PairLengths = Field(default_factory=PairLengths)
    """``median_delta`` (chosen minus rejected reply chars), ``chosen_longer``, ``chosen_longer_frac``."""
    chosen_longer_frac: NanFloat = math.nan
    """Share of pairs whose chosen reply is the longer one (a length confound above about 0.6)."""
    first_turn_identical: int = 0
    """Pairs whose first assistant turn is the same on both sides (they diverge later)."""
    same_policy_pairs: int = 0
    """Pairs whose two sides carry the same policy_version."""
    mixed_policy_pairs: int = 0
    """Pairs whose sides come from different policies (off-policy for one side)."""
    eval_sourced: int = 0
    """Pairs with a side whose reward came from evaluate() (``lineage.source == "eval"``)."""

    def render(self) -> str:
        """A few lines: pairs made, asks skipped and why, the length check."""
        skipped = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in self.skipped.items())
        lines = [
            f"preference pairs: {self.pairs} from {self.prompts_with_contrast} of {self.prompts_seen} asks "
            f"(min margin {self.min_margin:g}, mean margin {fmt_num(self.mean_margin)})",
            f"  asks skipped: {sum(self.skipped.values())} ({skipped or 'none'})",
            f"  chosen longer in {self.length.chosen_longer} of {self.pairs} pairs "
            f"({fmt_num(self.chosen_longer_frac)}); median length delta {fmt_num(self.length.median_delta, 0)} chars"
            + ("" if self.length_match else " (length_match off)"),
        ]
        if self.first_turn_identical:
            lines.append(f"  first assistant turn identical on both sides: {self.first_turn_identical}")
        lines.extend(f"  warning: {w}" for w in self.warnings)
        return "\n".join(lines)


class PreferencePairs:
    """Preference pairs: a DataFrame in ``.df`` and a :class:`PairsReport` in ``.report``.

    ``.df`` has ``task_key, prompt, chosen, rejected, chosen_reward, rejected_reward, margin``
    (+ ``tools``, ``system_prompt`` when the rows had them); ``chosen`` and ``rejected`` are full
    conversations (List(MESSAGE)). ``export_preference`` reads ``.df`` as is; the fluent
    layer's ``whileai.data.PreferencePairs`` (what ``wai.build_preference_pairs`` returns) adds
    ``.export``, since the select step never imports the export step below it.
    """

    def __init__(self, df: pl.DataFrame, *, report: PairsReport | None = None,
                 meta: dict[str, Any] | None = None) -> None:
        self.df = df
        self.report = report if report is not None else PairsReport()
        self.meta: dict[str, Any] = dict(meta or {})

    def __len__(self) -> int:
        return self.df.height

    def rows(self) -> list[dict[str, Any]]:
        """The pairs as dicts, conversations as OpenAI chat messages."""
        return list(self)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for row in self.df.iter_rows(named=True):
            out = {k: v for k, v in row.items() if v is not None}
            for side in ("chosen", "rejected"):
                out[side] = [table.message_out(m) for m in row[side] or []]
            yield out

    def __repr__(self) -> str:
        return f"PreferencePairs(pairs={self.df.height})"

    def __str__(self) -> str:
        return str(self.report)


def build_preference_pairs(
    rows: IntoRows,
    /,
    *,
    max_pairs_per_prompt: int = 1,
    min_margin: float = PAIR_MIN_MARGIN,
    length_match: bool = True,
) -> PreferencePairs:
    """Pair a higher- and a lower-reward rollout of the same ask for preference training (DPO).

    Rollouts pair within one task and one phrasing of its ask (``task_key`` and the exact prompt
    text), so both sides share their prompt and a trainer can mask it. Each round
    takes the highest reward left in the ask as chosen and a rollout at least ``min_margin``
    lower as rejected; with ``length_match`` the pair is the (chosen, rejected) combination
    closest in reply length, because DPO exploits a length gap faster than it learns the
    behaviour (Lambert 2025, chapter Direct Alignment); without it, the lowest reward.
    A rollout is used once; an ask gives at most ``max_pairs_per_prompt`` pairs. Rows without a
    reward or with a judge_status other than ok never pair.

    Args:
        rows: A graded rollout table or anything ``table.frame`` reads.
        max_pairs_per_prompt: Most pairs one ask may give.
        min_margin: The reward gap a pair needs (1.0 pairs a pass with a fail; 0.5 admits
            partial credit).
        length_match: Choose the pair closest in reply length.

    Returns:
        :class:`PreferencePairs` (``.df`` and ``.report``; ties broken by row order).

    Raises:
        ArgumentError: ``min_margin`` not positive, or ``max_pairs_per_prompt`` < 1.
        TrainingSelectionError: No row is graded.
    """
    if isinstance(min_margin, bool) or not isinstance(min_margin, (int, float)) or not float(min_margin) > 0:
        raise ArgumentError(f"min_margin must be a positive number, got {min_margin!r}: equal rewards carry no "
                            "preference. Pass for example min_margin=1.0 (0.5 for partial credit).", argument="min_margin")
    max_pairs = check_positive_int("max_pairs_per_prompt", max_pairs_per_prompt)
    assert max_pairs is not None
    margin = float(min_margin)

    df = table.frame(rows)
    require_graded(df, "build_preference_pairs")
    usable = pl.col("reward").is_not_null()
    if has(df, "judge_status"):
        usable = usable & (pl.col("judge_status").is_null() | (pl.col("judge_status") == "ok"))
    prompt_key = pl.col("prompt").fill_null("") if has(df, "prompt") else pl.lit("")
    # the pairing runs on a narrow frame; conversations are read for the paired rows only
    work = df.lazy().select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_pos"),
        pl.struct(pl.col("task_key"), prompt_key.alias("p")).hash(29).alias("_g"),
        pl.col("reward").cast(pl.Float64),
        reply_chars_expr(df).alias("_len"),
        usable.alias("_usable"),
    ).collect()
    n_unusable = int(work.height - work["_usable"].sum())
    pool = work.filter(pl.col("_usable")).select("_g", "_pos", "reward", "_len")

    summary = (
        pool.group_by("_g")
        .agg(pl.len().alias("n"), pl.col("reward").min().alias("lo"), pl.col("reward").max().alias("hi"))
    )
    picked: list[pl.DataFrame] = []
    for round_i in range(max_pairs):
        best = pool.group_by("_g").agg(pl.col("reward").max().alias("_best"))
        pool_b = pool.join(best, on="_g")
        chosen_c = pool_b.filter(pl.col("reward") == pl.col("_best")).drop("_best")
        rejected_c = pool_b.filter(pl.col("reward") <= pl.col("_best") - margin + _MARGIN_TOL).drop("_best")
        if rejected_c.height == 0:
            break
        cand = chosen_c.join(rejected_c, on="_g", suffix="_r")
        if length_match:
            cand = cand.with_columns((pl.col("_len") - pl.col("_len_r")).abs().alias("_gap"))
            cand = cand.sort("_g", "_gap", "_pos", "_pos_r")
        else:
            cand = cand.sort("_g", "reward_r", "_pos", "_pos_r")
        pick = cand.unique("_g", keep="first", maintain_order=True).select(
            "_g", pl.col("_pos").alias("_c"), pl.col("_pos_r").alias("_r"), pl.lit(round_i).alias("_round"))
        picked.append(pick)
        used = pl.concat([pick["_c"], pick["_r"]])
        pool = pool.filter(~pl.col("_pos").is_in(used.implode()))

    pairs_idx = pl.concat(picked) if picked else pl.DataFrame(
        schema={"_g": pl.UInt64, "_c": pl.Int64, "_r": pl.Int64, "_round": pl.Int32})
    out = _assemble(df, pairs_idx)
    report = _report(out, pairs_idx, summary, n_unusable, margin, length_match)
    out = out.drop("_delta", "_same", "_eval", "_ident")
    return PreferencePairs(out, report=report, meta=dict(getattr(rows, "meta", {}) or {}))


def _assemble(df: pl.DataFrame, pairs_idx: pl.DataFrame) -> pl.DataFrame:
    """One row per pair, in first-seen ask order then round, with the PAIR_COLUMNS."""
    used = pl.concat([pairs_idx["_c"], pairs_idx["_r"]]).sort()
    rows = table.take_rows(df, used).with_columns(used.alias("_pos"))
    messages = pl.col("messages") if has(rows, "messages") else pl.lit(None, pl.List(MESSAGE))
    side_cols = [
        pl.col("_pos"), pl.col("task_key"),
        (pl.col("prompt") if has(rows, "prompt") else pl.lit(None, pl.String)).alias("prompt"),
        messages.cast(pl.List(MESSAGE)).alias("m"), pl.col("reward").cast(pl.Float64),
        reply_chars_expr(rows).alias("_len"),
        (pl.col("policy_version") if has(rows, "policy_version") else pl.lit(None, pl.String)).alias("policy"),
        eval_sourced(rows).alias("_eval"),
        _first_turn_hash(rows).alias("_first"),
    ]
    extras = [c for c in ("tools", "system_prompt") if has(rows, c)]
    side_cols += [pl.col(c) for c in extras]
    sides = rows.select(side_cols)
    chosen = pairs_idx.join(sides, left_on="_c", right_on="_pos", how="left")
    rejected = sides.select(pl.all().name.suffix("_r"))
    both = (chosen.join(rejected, left_on="_r", right_on="_pos_r", how="left")
            .sort(pl.min_horizontal("_c", "_r").min().over("_g"), "_round"))
    return both.select(
        "task_key", "prompt",
        pl.col("m").alias("chosen"), pl.col("m_r").alias("rejected"),
        pl.col("reward").alias("chosen_reward"), pl.col("reward_r").alias("rejected_reward"),
        (pl.col("reward") - pl.col("reward_r")).alias("margin"),
        *extras,
        # bookkeeping for the report, dropped by the caller
        table.pair_length_delta("m", "m_r").alias("_delta"),
        (pl.col("policy") == pl.col("policy_r")).alias("_same"),
        (pl.col("_eval") | pl.col("_eval_r")).alias("_eval"),
        (pl.col("_first") == pl.col("_first_r")).alias("_ident"),
    )


def _first_turn_hash(work: pl.DataFrame) -> pl.Expr:
    """A hash of the first assistant turn: its text and its tool calls (names and arguments)."""
    if not has(work, "messages"):
        return pl.lit(0, pl.UInt64)
    first = pl.col("messages").list.eval(pl.element().filter(pl.element().struct.field("role") == "assistant")).list.first()
    calls = first.struct.field("tool_calls")
    return pl.struct(
        first.struct.field("content").fill_null("").alias("c"),
        calls.list.eval(pl.element().struct.field("name")).alias("n"),
        calls.list.eval(pl.element().struct.field("arguments")).alias("a"),
    ).hash(31)


def _report(out: pl.DataFrame, pairs_idx: pl.DataFrame, summary: pl.DataFrame,
            n_unusable: int, margin: float, length_match: bool) -> PairsReport:
    n = out.height
    with_pair = pairs_idx["_g"].unique()
    rest = summary.filter(~pl.col("_g").is_in(with_pair.implode()))
    skipped = rest.select(
        (pl.col("n") < 2).sum().alias("single"),
        ((pl.col("n") >= 2) & (pl.col("lo") == pl.col("hi"))).sum().alias("unanimous"),
        ((pl.col("n") >= 2) & (pl.col("lo") < pl.col("hi"))).sum().alias("below_margin"),
    ).row(0, named=True)
    warnings: list[str] = []
    stats = PairLengths(median_delta=None, chosen_longer=0, chosen_longer_frac=None)
    frac = math.nan
    if n:
        longer = int((out["_delta"] > 0).sum())
        frac = longer / n
        stats = PairLengths(median_delta=float(out["_delta"].median()), chosen_longer=longer,  # type: ignore[arg-type]
                            chosen_longer_frac=round(frac, 4))
        if length_confound(longer, n):
            warnings.append(f"chosen is the longer reply in {longer} of {n} pairs ({frac:.0%}); a preference trainer "
                            "learns length before behaviour (Lambert 2025, chapter Direct Alignment). Keep "
                            "length_match=True and look at why passing replies run longer.")
    else:
        warnings.append(f"no pair: no ask has two graded rollouts whose rewards differ by at least {margin:g}. "
                        "Grade more rollouts per ask (repeats >= 4) so asks mix, or lower min_margin= for partial credit.")
    partial = out.select(((pl.col("chosen_reward") > 0) & (pl.col("chosen_reward") < 1)
                          | (pl.col("rejected_reward") > 0) & (pl.col("rejected_reward") < 1)).sum()).item() if n else 0
    n_eval = int(out["_eval"].sum()) if n else 0
    if n_eval:
        warnings.append(eval_sourced_warning(n_eval, "pair(s)"))
    same = int(out["_same"].fill_null(False).sum()) if n else 0
    mixed = int((~out["_same"]).fill_null(False).sum()) if n else 0
    if mixed:
        warnings.append(f"{mixed} of {n} pairs mix policies (chosen and rejected from different policy versions); "
                        "on-policy pairs train better (Lambert 2025, chapter Preference Data)")
    ident = int(out["_ident"].fill_null(False).sum()) if n else 0
    return PairsReport(
        pairs=n,
        prompts_seen=summary.height,
        prompts_with_contrast=with_pair.len(),
        skipped={k: int(v) for k, v in skipped.items()},
        rows_unusable=n_unusable,
        min_margin=margin,
        mean_margin=float(out["margin"].mean()) if n else math.nan,  # type: ignore[arg-type]
        partial_score_pairs=int(partial),
        length_match=length_match,
        length=stats,
        chosen_longer_frac=frac,
        first_turn_identical=ident,
        same_policy_pairs=same,
        mixed_policy_pairs=mixed,
        eval_sourced=n_eval,
        warnings=warnings,
    )
