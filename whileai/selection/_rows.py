"""The per-row expressions the selectors filter on, and the columns they read.

Every expression here works on a ``table.frame`` output and tolerates a missing column (a table
read from a bare prompt/reply file has no ``messages``, ``truncated`` or ``lineage``): a missing
column reads as "no information", never as an error.
"""

from __future__ import annotations

from typing import NoReturn

import polars as pl

from whileai import table
from whileai.errors import TrainingSelectionError
from whileai.guard import truncated_flag as truncated_flag

__all__ = [
    "eval_sourced",
    "has",
    "junk_flag",
    "junk_split",
    "n_tool_calls_expr",
    "n_turns_expr",
    "read_columns",
    "refuse_ungraded",
    "reply_chars_expr",
    "reply_expr",
    "reply_without_text",
    "require_graded",
    "truncated_flag",
]


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


def require_graded(df: pl.DataFrame, what: str) -> None:
    """Raise TrainingSelectionError when no row carries a reward."""
    if not has(df, "reward") or df["reward"].null_count() == df.height:
        refuse_ungraded(df.height, what)


def refuse_ungraded(n_rows: int, what: str) -> NoReturn:
    """The refusal of a selector given ``n_rows`` rows and none graded (either engine counts them)."""
    raise TrainingSelectionError(
        f"{what} needs graded rows, but none of the {n_rows} rows carries a reward. "
        "Grade first: scored = data.grade(judge=...) (or whileai.grade.run_judge), then select.",
        counts={"n_rows": n_rows},
    )


def eval_sourced(df: pl.DataFrame) -> pl.Expr:
    """Rows whose reward came from evaluate(): ``lineage.source == "eval"``."""
    dtype = df.schema.get("lineage")
    if isinstance(dtype, pl.Struct) and "source" in {f.name for f in dtype.fields}:
        return (pl.col("lineage").struct.field("source") == "eval").fill_null(False)
    return pl.lit(False)


def read_columns(decide: tuple[str, ...]) -> list[str]:
    """What a selector reads to decide: its own columns, and the identity columns its report reads."""
    return list(dict.fromkeys((*decide, "prompt", "final_text", "scenario_id", "rollout_index", "rollout_id")))

