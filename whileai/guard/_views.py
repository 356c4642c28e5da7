"""Long views of the conversation: the agent's text, messages, tool calls, JSON string leaves.

One row per message or per tool call, and every keyed string inside JSON text, built with Polars
expressions (no per-row Python), for the guards that read what the agent said and did.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from whileai import table

__all__ = ["agent_text", "agent_text_of", "calls_long", "json_strings", "messages_long"]


def agent_text(sep: str = "\n") -> pl.Expr:
    """Everything the agent wrote: the content of its assistant turns, joined (``""`` if none)."""
    return (
        pl.col("messages")
        .list.eval(
            pl.element().filter(pl.element().struct.field("role") == "assistant").struct.field("content").drop_nulls()
        )
        .list.join(sep)
        .fill_null("")
    )


def agent_text_of(df: pl.DataFrame, sep: str = "\n") -> pl.Series:
    """The agent's text per row, from ``messages`` (else ``final_text``, else empty)."""
    if "messages" in df.columns:
        out = df.select(agent_text(sep).alias("agent_text"))["agent_text"]
        if "final_text" in df.columns:
            # rows with no conversation but a reply
            out = df.select(
                pl.when(pl.col("messages").is_null()).then(pl.col("final_text").fill_null("")).otherwise(out).alias("agent_text")
            )["agent_text"]
        return out
    if "final_text" in df.columns:
        return df["final_text"].fill_null("").alias("agent_text")
    return pl.Series("agent_text", [""] * df.height, dtype=pl.String)


def _rank_in_row(rows: pl.Series) -> pl.Series:
    """0, 1, 2... within each run of one row index (``rows`` sorted, as an explode leaves them).

    ``int_range(len).over(row)`` for grouped rows, without the window's group-by.
    """
    r = rows.to_numpy()
    m = r.size
    if m == 0:
        return pl.Series(rows.name, [], dtype=pl.UInt32)
    start = np.flatnonzero(np.concatenate([[True], r[1:] != r[:-1]]))
    first = np.repeat(start, np.diff(np.append(start, m)))
    return pl.Series(rows.name, (np.arange(m) - first).astype(np.uint32))


def messages_long(df: pl.DataFrame) -> pl.DataFrame:
    """One row per message.

    Columns ``_row`` (row index), ``_pos`` (position in the conversation), role, content, name,
    tool_call_id, tool_calls. Empty (with those columns) when there are no messages.
    """
    if "messages" not in df.columns:
        return pl.DataFrame(schema={"_row": pl.UInt32, "_pos": pl.UInt32, "role": pl.String, "content": pl.String,
                                    "name": pl.String, "tool_call_id": pl.String,
                                    "tool_calls": pl.List(table.TOOL_CALL)})
    long = df.select(pl.col("messages")).with_row_index("_row").explode("messages").filter(pl.col("messages").is_not_null())
    return (
        long.with_columns(_rank_in_row(long["_row"]).alias("_pos"))
        .select(
            "_row",
            "_pos",
            pl.col("messages").struct.field("role"),
            pl.col("messages").struct.field("content"),
            pl.col("messages").struct.field("name"),
            pl.col("messages").struct.field("tool_call_id"),
            pl.col("messages").struct.field("tool_calls"),
        )
    )


def calls_long(msgs: pl.DataFrame) -> pl.DataFrame:
    """One row per tool call the agent made.

    Columns ``_row``, ``_pos``, ``_call`` (order within the row), call_id, tool, arguments
    (canonical JSON text), and the tool's result text (``result``, null when no tool message
    answered it).
    """
    calls = (
        msgs.filter(pl.col("role") == "assistant")
        .select("_row", "_pos", "tool_calls")
        .explode("tool_calls")
        .filter(pl.col("tool_calls").is_not_null())
        .select(
            "_row",
            "_pos",
            pl.col("tool_calls").struct.field("id").alias("call_id"),
            pl.col("tool_calls").struct.field("name").fill_null("").alias("tool"),
            pl.col("tool_calls").struct.field("arguments").fill_null("{}").alias("arguments"),
        )
    )
    calls = calls.with_columns(_rank_in_row(calls["_row"]).alias("_call"))
    results = (
        msgs.filter((pl.col("role") == "tool") & pl.col("tool_call_id").is_not_null())
        .select("_row", pl.col("tool_call_id").alias("call_id"), pl.col("content").fill_null("").alias("result"),
                pl.col("_pos").alias("_result_pos"))
        .unique(["_row", "call_id"], keep="first", maintain_order=True)
    )
    return calls.join(results, on=["_row", "call_id"], how="left", maintain_order="left")


_JSTR = r'"((?:[^"\\]|\\.)*)"'


_KEY_STR = _JSTR + r"\s*:\s*" + _JSTR


_KEY_LIST = _JSTR + r"\s*:\s*\[([^\[\]]*)\]"


def json_strings(frame: pl.DataFrame, column: str, *, keep: Sequence[str] = ()) -> pl.DataFrame:
    """Every keyed string value inside a JSON text column, long: ``keep`` columns, key, value.

    Matches ``"key": "value"`` at any depth and the string items of ``"key": ["a", "b"]``,
    unescaped; done with Polars regular expressions, no JSON parsing per row.
    """
    col = pl.col(column).fill_null("")
    pairs = (
        frame.select(*keep, col.str.extract_all(_KEY_STR).alias("_m"))
        .explode("_m").drop_nulls("_m")
        .select(*keep, pl.col("_m").str.extract(_KEY_STR, 1).alias("key"), pl.col("_m").str.extract(_KEY_STR, 2).alias("value"))
    )
    lists = (
        frame.select(*keep, col.str.extract_all(_KEY_LIST).alias("_m"))
        .explode("_m").drop_nulls("_m")
        .select(*keep, pl.col("_m").str.extract(_KEY_LIST, 1).alias("key"),
                pl.col("_m").str.extract(_KEY_LIST, 2).str.extract_all(_JSTR).alias("_items"))
        .explode("_items").drop_nulls("_items")
        .select(*keep, "key", pl.col("_items").str.extract(_JSTR, 1).alias("value"))
    )
    out = pl.concat([pairs, lists], how="vertical_relaxed")
    return out.with_columns(
        pl.col("value").str.replace_all(r'\\"', '"').str.replace_all(r"\\n", "\n").str.replace_all(r"\\/", "/")
        .str.replace_all(r"\\\\", "\\")
    )
