"""Derived columns as Polars expressions, and ``task_key`` on one row dict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from whileai.table.normalize import prompt_hash

__all__ = [
    "final_reply",
    "markers_of",
    "n_tool_calls",
    "pair_length_delta",
    "n_turns",
    "reply_chars",
    "task_key",
    "task_key_expr",
    "tools_used",
]


def task_key(row: Mapping[str, Any]) -> str:
    """The task a row belongs to: scenario_id, else task_id, else a stable hash of the prompt.

    A task is a situation, not a string: repeats and rephrasings of one situation share a
    scenario_id and so count once in every report.

    Examples:
        >>> task_key({"task_id": "t1", "prompt": "x"})
        't1'
        >>> task_key({"prompt": "hello"})
        'p-2cf24dba5fb0a30e'
    """
    for name in ("scenario_id", "task_id"):
        value = row.get(name)
        if value is not None:
            return str(value)
    prompt = row.get("prompt")
    if prompt is None:
        messages = row.get("messages") or []
        prompt = next((m.get("content") for m in messages if isinstance(m, Mapping) and m.get("role") == "user"), None)
    if prompt is None:
        from whileai.errors import SchemaError

        raise SchemaError("row has neither scenario_id, task_id nor prompt. Add a scenario_id (or task_id) to the row.")
    return prompt_hash(str(prompt))


def task_key_expr() -> pl.Expr:
    """The ``task_key`` column ``frame`` adds (scenario_id, else task_id, else prompt hash)."""
    return pl.col("task_key")


def reply_chars() -> pl.Expr:
    """Characters in the agent's final reply (0 when there is none)."""
    return pl.col("final_text").str.len_chars().fill_null(0).cast(pl.Int64).alias("reply_chars")


def n_tool_calls() -> pl.Expr:
    """Tool calls the agent made across the conversation."""
    return (
        pl.col("messages")
        .list.eval(pl.element().struct.field("tool_calls").list.len())
        .list.sum()
        .fill_null(0)
        .cast(pl.Int64)
        .alias("n_tool_calls")
    )


def n_turns() -> pl.Expr:
    """Assistant turns in the conversation."""
    return (
        pl.col("messages")
        .list.eval((pl.element().struct.field("role") == "assistant").cast(pl.Int64))
        .list.sum()
        .fill_null(0)
        .cast(pl.Int64)
        .alias("n_turns")
    )


def final_reply(messages: pl.Expr | None = None) -> pl.Expr:
    """The agent's final reply in a conversation, or null.

    The last message when it is an assistant turn without tool calls (how ``frame`` derives
    ``final_text`` from ``messages``).

    Args:
        messages: A ``List(MESSAGE)`` expression (default: the ``messages`` column).
    """
    last = (pl.col("messages") if messages is None else messages).list.last()
    return (
        pl.when((last.struct.field("role") == "assistant")
                & (last.struct.field("tool_calls").list.len().fill_null(0) == 0))
        .then(last.struct.field("content"))
        .otherwise(None)
    )


def pair_length_delta(chosen: str = "chosen", rejected: str = "rejected") -> pl.Expr:
    """Characters of the chosen side's final reply minus the rejected side's, per preference pair.

    The one definition of "chosen is longer" (``> 0``): the pairs report and the preference
    export both count it on the two sides' conversations (``List(MESSAGE)`` columns), with
    :func:`final_reply` read as 0 characters when a side ends on no reply.
    """
    def chars(side: str) -> pl.Expr:
        return final_reply(pl.col(side)).str.len_chars().fill_null(0).cast(pl.Int64)

    return (chars(chosen) - chars(rejected)).alias("length_delta")


def tools_used() -> pl.Expr:
    """The distinct tool names the agent called, in first-call order."""
    return (
        pl.col("messages")
        .list.eval(pl.element().struct.field("tool_calls").explode().struct.field("name").drop_nulls().unique(maintain_order=True))
        .alias("tools_used")
    )


def markers_of(df: pl.DataFrame | pl.LazyFrame) -> list[str]:
    """The marker names the table carries (fields of the ``markers`` struct), or []."""
    schema = df.collect_schema() if isinstance(df, pl.LazyFrame) else df.schema
    dtype = schema.get("markers")
    if isinstance(dtype, pl.Struct):
        return [f.name for f in dtype.fields]
    return []
