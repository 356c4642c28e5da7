"""Shared pieces of the select step: argument checks and the per-row expressions it filters on.

Every expression here works on a ``table.frame`` output and tolerates a missing column (a table
read from a bare prompt/reply file has no ``messages``, ``truncated`` or ``lineage``): a missing
column reads as "no information", never as an error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from whileai import table
from whileai._checks import check_choice as check_choice
from whileai._checks import check_fraction as check_fraction
from whileai._checks import check_int as check_positive_int
from whileai.defaults import HACK_THRESHOLD
from whileai.errors import ArgumentError, TrainingSelectionError
from whileai.guard._hygiene import feature_correlations
from whileai.guard._hygiene import truncated_flag as truncated_flag

__all__ = [
    "check_band",
    "check_choice",
    "check_fraction",
    "check_positive_int",
    "correlation_warnings",
    "correlations",
    "eval_sourced",
    "eval_sourced_warning",
    "has",
    "n_tool_calls_expr",
    "n_turns_expr",
    "reply_chars_expr",
    "reply_expr",
    "reply_without_text",
    "junk_flag",
    "junk_split",
    "privileged_leaks",
    "read_columns",
    "require_graded",
    "truncated_flag",
]


# ------------------------------------------------------------------------------------------
# arguments
# ------------------------------------------------------------------------------------------


def check_band(band: Any, name: str = "band") -> tuple[float, float]:
    """A ``(lo, hi)`` pass-rate band with 0 <= lo <= hi <= 1, else an ArgumentError."""
    try:
        lo, hi = (float(v) for v in band)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} must be a pair (lo, hi) of pass rates, got {band!r}. Pass for example {name}=(0.2, 0.8).",
                            argument=name, value=band) from None
    if not (0.0 <= lo <= hi <= 1.0) or math.isnan(lo) or math.isnan(hi):
        raise ArgumentError(f"{name} must satisfy 0 <= lo <= hi <= 1, got {band!r}. Pass for example {name}=(0.2, 0.8).",
                            argument=name, value=band)
    return lo, hi


# ------------------------------------------------------------------------------------------
# per-row expressions
# ------------------------------------------------------------------------------------------


def has(df: pl.DataFrame, name: str) -> bool:
    """Whether the table has a column that is not all-null typed ``Null``."""
    return name in df.columns and df.schema[name] != pl.Null


def n_tool_calls_expr(df: pl.DataFrame) -> pl.Expr:
    """``table.n_tool_calls()``, or 0 without a ``messages`` column."""
    return table.n_tool_calls() if has(df, "messages") else pl.lit(0, pl.Int64).alias("n_tool_calls")


def n_turns_expr(df: pl.DataFrame) -> pl.Expr:
    """``table.n_turns()`` (assistant turns), or 0 without a ``messages`` column."""
    return table.n_turns() if has(df, "messages") else pl.lit(0, pl.Int64).alias("n_turns")


def reply_expr(df: pl.DataFrame) -> pl.Expr:
    """The final reply, '' when absent."""
    return pl.col("final_text").fill_null("") if has(df, "final_text") else pl.lit("", pl.String)


def reply_chars_expr(df: pl.DataFrame) -> pl.Expr:
    """``table.reply_chars()``, or 0 without a ``final_text`` column."""
    return table.reply_chars() if has(df, "final_text") else pl.lit(0, pl.Int64).alias("reply_chars")


def junk_flag(df: pl.DataFrame) -> pl.Expr:
    """Junk rows: no tool call and no letter or digit in the reply (empty, whitespace, "...").

    A rollout that called a tool is never junk here, whatever its last message: it did something
    a trainer can learn from or against. Rewards are not read. One regex pass over the replies.
    """
    no_call = n_tool_calls_expr(df) == 0
    return no_call & reply_without_text(df)


def reply_without_text(df: pl.DataFrame) -> pl.Expr:
    """Rows whose reply has no letter or digit (empty, whitespace, "..."): junk unless they called a tool."""
    return ~reply_expr(df).str.contains(r"[\p{L}\p{N}]")


def junk_split(df: pl.DataFrame, junk: pl.Series) -> tuple[int, int]:
    """``(no_output, garbage)`` among the junk rows: a blank reply, or text with no letter or digit.

    Runs on the junk rows only (they are few), so the split costs nothing on clean data.
    """
    n = int(junk.sum())
    if n == 0:
        return 0, 0
    replies = df.select(reply_expr(df).alias("r")).filter(junk)["r"]
    blank = int((~replies.str.contains(r"\S")).sum())
    return blank, n - blank


# ------------------------------------------------------------------------------------------
# graded rows, eval-sourced rewards, correlations
# ------------------------------------------------------------------------------------------


def require_graded(df: pl.DataFrame, what: str) -> None:
    """Raise TrainingSelectionError when no row carries a reward."""
    if not has(df, "reward") or df["reward"].null_count() == df.height:
        raise TrainingSelectionError(
            f"{what} needs graded rows, but none of the {df.height} rows carries a reward. "
            "Grade first: scored = data.grade(judge=...) (or whileai.grade.run_judge), then select.",
            counts={"n_rows": df.height},
        )


def eval_sourced(df: pl.DataFrame) -> pl.Expr:
    """Rows whose reward came from evaluate(): ``lineage.source == "eval"``."""
    dtype = df.schema.get("lineage")
    if isinstance(dtype, pl.Struct) and "source" in {f.name for f in dtype.fields}:
        return (pl.col("lineage").struct.field("source") == "eval").fill_null(False)
    return pl.lit(False)


def eval_sourced_warning(count: int, what: str) -> str:
    """The warning every selector adds when eval-sourced rewards are in its output."""
    return (
        f"{count} {what} carry a reward from evaluate() (lineage.source == 'eval'): a held-out score that "
        "becomes the training reward makes the scorer you report the one you optimised against. "
        "Grade the training set with run_judge or data.grade and keep evaluate for held-out rows."
    )


#: The pooled features ``correlations`` reads, in report order.
CORRELATION_FEATURES = ("reply_length", "tool_calls", "assistant_turns")


def correlations(df: pl.DataFrame, *, threshold: float = HACK_THRESHOLD) -> dict[str, Any]:
    """Pooled Pearson correlation of reward with reply length, tool calls and assistant turns, in one pass.

    The features are keyed as ``whileai.guard.reward_correlations`` and ``hack_scan`` key them
    (``reply_length``, ``tool_calls``, ``assistant_turns``).

    A feature that is constant (or a table with fewer than 3 graded rows) has no correlation:
    ``None`` in ``correlations`` and nothing flagged. ``flagged`` holds those with
    ``|r| >= threshold`` (``HACK_THRESHOLD``, Gao et al. 2022). A reward that tracks a shortcut is a
    judge problem, so it is reported, never pruned.
    """
    graded = df.filter(pl.col("reward").is_not_null()) if has(df, "reward") else df.clear()
    feats = graded.select(
        pl.col("reward").cast(pl.Float64) if has(graded, "reward") else pl.lit(None, pl.Float64).alias("reward"),
        reply_chars_expr(graded).cast(pl.Float64).alias("reply_length"),
        n_tool_calls_expr(graded).cast(pl.Float64).alias("tool_calls"),
        n_turns_expr(graded).cast(pl.Float64).alias("assistant_turns"),
    )
    out: dict[str, float | None] = {}
    if feats.height >= 3:
        pooled = feature_correlations(feats["reward"].to_numpy(), feats.select(CORRELATION_FEATURES))
        out = {name: None if value is None else round(value, 4) for name, value in pooled.items()}
    else:
        out = dict.fromkeys(CORRELATION_FEATURES)
    flagged = {k: v for k, v in out.items() if v is not None and abs(v) >= threshold}
    return {"n_graded": graded.height, "threshold": threshold, "correlations": out, "flagged": flagged}


_FEATURE_WORDS = {"reply_length": "reply length", "tool_calls": "the number of tool calls", "assistant_turns": "the number of assistant turns"}


def correlation_warnings(report: dict[str, Any]) -> list[str]:
    """One sentence per flagged feature: what the reward tracks and what to do."""
    out = []
    for name, value in report.get("flagged", {}).items():
        verb = "rewards" if value > 0 else "punishes"
        out.append(f"reward {verb} {_FEATURE_WORDS.get(name, name)} (corr {value:+.2f}, flag at |r| >= "
                   f"{report['threshold']:.2f}); check the judge before training")
    return out


def read_columns(decide: tuple[str, ...]) -> list[str]:
    """What a selector reads to decide: its own columns, and the identity columns its report reads."""
    return list(dict.fromkeys((*decide, "prompt", "final_text", "scenario_id", "rollout_index", "rollout_id")))


def privileged_leaks(rows: table.Source | pl.DataFrame, warnings: list[str]) -> tuple[pl.Series | None, dict[str, Any]]:
    """Rows whose reply quotes their own privileged context (an answer key the judge also read).

    A pass that recites the grader's reference is not a demonstration (README.md: leaked answer keys
    dropped). The check is ``whileai.guard.leak_report`` (one implementation in the library), on
    the step's source a chunk at a time (the conversations of one chunk held at once); it runs
    only when the rows carry a privileged column.

    Returns:
        A boolean mask of the leaking rows (None when nothing was checked) and the 0.131-shaped
        summary ``{checked, n_checked, n_dropped, leaked}``.
    """
    src = table.source(rows, allow_empty=True) if isinstance(rows, pl.DataFrame) else rows
    info: dict[str, Any] = {"checked": False, "n_checked": 0, "n_dropped": 0, "leaked": []}
    present = src.read(list(table.PRIVILEGED_COLUMNS))
    if not any(has(present, c) for c in table.PRIVILEGED_COLUMNS):
        return None, info
    from whileai.guard import leak_report

    report = leak_report(src)
    leaked = list(report.leaked)
    info = {"checked": bool(report.checked), "n_checked": int(report.n_checked),
            "n_dropped": len(leaked), "leaked": leaked[:20]}
    mask = np.zeros(present.height, dtype=bool)
    mask[[int(x["index"]) for x in leaked]] = True
    return pl.Series("_leak", mask), info
