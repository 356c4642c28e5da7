"""Argument grounding: does every string argument of every tool call come from somewhere?

docs/guard.md, "Argument grounding": a policy trained to call a tool learns to call it before it learns
when not to, and invents arguments (an order id on a prompt that gave none). A string argument is
grounded when it appears (case-insensitively) in the prompt, the user and system turns, or a tool
result that came before the call. No categories, any agent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, overload

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai._checks import check_int, check_strings
from whileai.defaults import GROUNDING_MIN_CHARS, GUARD_EXAMPLES
from whileai.errors import ArgumentError
from whileai.guard._markers import graded_mask, stamp_markers
from whileai.guard._views import calls_long, json_strings, messages_long
from whileai.report import Part, Report, fmt_ci
from whileai.stats import cluster_mean_ci, pearson
from whileai.table import FluentT, IntoRows, like_input

__all__ = ["GroundingReport", "InventedArgument", "grounding_report", "mark_grounding", "ungrounded_arguments"]

MARKER = "argument_grounding"


def _check(ignore_keys: Any, allow: Any, min_len: Any) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    return (check_strings("ignore_keys", ignore_keys), check_strings("allow", allow),
            check_int("min_len", min_len))


def _ungrounded(df: pl.DataFrame, ignore_keys: Sequence[str], allow: Sequence[str], min_len: int
                ) -> tuple[pl.DataFrame, np.ndarray]:
    """Ungrounded (row, tool, key, value) and whether each row made a tool call."""
    empty = pl.DataFrame(schema={"_row": pl.UInt32, "tool": pl.String, "key": pl.String, "value": pl.String})
    has_calls = np.zeros(df.height, dtype=bool)
    if df.height == 0 or "messages" not in df.columns:
        return empty, has_calls
    msgs = messages_long(df)
    calls = calls_long(msgs)
    if calls.height == 0:
        return empty, has_calls
    has_calls[calls["_row"].unique().to_numpy()] = True
    args = json_strings(calls.with_row_index("_c"), "arguments", keep=["_c", "_row", "_pos", "tool"])
    allow_l = [a.lower() for a in allow]
    args = args.filter(
        ~pl.col("key").is_in(list(ignore_keys))
        & (pl.col("value").str.strip_chars().str.len_chars() >= min_len)
        & ~pl.col("value").str.to_lowercase().is_in(allow_l)
    ).with_columns(pl.col("value").str.strip_chars().str.to_lowercase().alias("_v"))
    if args.height == 0:
        return empty, has_calls
    ctx = msgs.filter(pl.col("role").is_in(["system", "user", "tool", "developer"]) & pl.col("content").is_not_null()).select(
        "_row", pl.col("_pos").cast(pl.Int64).alias("_cpos"), pl.col("content").str.to_lowercase().alias("_t"))
    extra = [c for c in ("prompt", "system_prompt") if c in df.columns]
    if extra:
        side = df.select(extra).with_row_index("_row").unpivot(index="_row", on=extra, value_name="_t").drop_nulls("_t")
        ctx = pl.concat([ctx, side.select("_row", pl.lit(-1, pl.Int64).alias("_cpos"), pl.col("_t").str.to_lowercase())])
    uniq_args = args.select("_c", "_row", "_pos", "_v").unique()
    hits = (
        uniq_args.join(ctx, on="_row", how="inner")
        .filter((pl.col("_cpos") < pl.col("_pos").cast(pl.Int64)) & pl.col("_t").str.contains(pl.col("_v"), literal=True))
        .select("_c", "_v").unique()
    )
    bad = args.join(hits, on=["_c", "_v"], how="anti").select("_row", "tool", "key", "value").unique(maintain_order=True)
    return bad, has_calls


@overload
def mark_grounding(rows: FluentT, /, *, ignore_keys: Sequence[str] | str = (), allow: Sequence[str] | str = (),
                   min_len: int = GROUNDING_MIN_CHARS) -> FluentT: ...
@overload
def mark_grounding(rows: pl.DataFrame | pl.LazyFrame | str | os.PathLike[str], /, *, ignore_keys: Sequence[str] | str = (), allow: Sequence[str] | str = (),
                   min_len: int = GROUNDING_MIN_CHARS) -> pl.DataFrame: ...
@overload
def mark_grounding(rows: Iterable[Mapping[str, Any]], /, *, ignore_keys: Sequence[str] | str = (), allow: Sequence[str] | str = (),
                   min_len: int = GROUNDING_MIN_CHARS) -> list[dict[str, Any]]: ...
@overload
def mark_grounding(rows: IntoRows, /, *, ignore_keys: Sequence[str] | str = (), allow: Sequence[str] | str = (),
                   min_len: int = GROUNDING_MIN_CHARS) -> Any: ...
def mark_grounding(rows: IntoRows, /, *, ignore_keys: Sequence[str] | str = (), allow: Sequence[str] | str = (),
                   min_len: int = GROUNDING_MIN_CHARS) -> Any:
    """Stamp ``argument_grounding``: 1.0 when every string argument of every call is grounded.

    docs/guard.md, "Argument grounding": a string argument is grounded when it appears in the prompt,
    the user and system turns, or an earlier tool result; rows with no calls count as grounded.
    ``must_not_regress=["argument_grounding"]`` then fails the run that learned to invent.

    Args:
        rows: Rollouts (any input ``table.frame`` reads).
        ignore_keys: Argument keys to skip (free text such as ``message`` or ``body``).
        allow: Values that are always grounded (enums, defaults), compared case-insensitively.
        min_len: Values shorter than this are not checked ("ok", "1" appear anywhere).

    Returns:
        New rows of the input's kind with the marker merged into ``markers``.

    Examples:
        >>> row = {"prompt": "Where is my order?", "messages": [
        ...     {"role": "user", "content": "Where is my order?"},
        ...     {"role": "assistant", "content": None, "tool_calls": [
        ...         {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "ORD-77"}'}}]},
        ...     {"role": "tool", "tool_call_id": "c1", "content": "not found"},
        ...     {"role": "assistant", "content": "I could not find it."}]}
        >>> mark_grounding([row])[0]["markers"]
        {'argument_grounding': 0.0}
        >>> ungrounded_arguments(row)
        [{'tool': 'get_order', 'key': 'order_id', 'value': 'ORD-77'}]
    """
    ik, al, ml = _check(ignore_keys, allow, min_len)
    df = table.frame(rows, allow_empty=True)
    if df.height == 0:
        return like_input(rows, df)
    bad, _ = _ungrounded(df, ik, al, ml)
    flag = np.ones(df.height)
    if bad.height:
        flag[bad["_row"].unique().to_numpy()] = 0.0
    out = stamp_markers(df.with_columns(pl.Series("_g", flag)), {MARKER: pl.col("_g")}).drop("_g")
    return like_input(rows, out)


def ungrounded_arguments(row: Mapping[str, Any], /, *, ignore_keys: Sequence[str] | str = (),
                         allow: Sequence[str] | str = (), min_len: int = GROUNDING_MIN_CHARS) -> list[dict[str, str]]:
    """The string arguments of one row's tool calls that appear nowhere before the call.

    Args:
        row: One rollout as a dict (wire or engine shape).
        ignore_keys: Argument keys to skip.
        allow: Values that are always grounded.
        min_len: Values shorter than this are not checked.

    Returns:
        ``[{"tool", "key", "value"}]`` in call order; empty when every argument is grounded.
    """
    if not isinstance(row, Mapping):
        raise ArgumentError(f"row must be one row dict, got {type(row).__name__}. For many rows use grounding_report(rows).")
    ik, al, ml = _check(ignore_keys, allow, min_len)
    df = table.frame([row])
    bad, _ = _ungrounded(df, ik, al, ml)
    return [{"tool": t, "key": k, "value": v} for t, k, v in bad.select("tool", "key", "value").iter_rows()]


class InventedArgument(Part):
    """A tool argument whose value appears nowhere before the call, by ``tool.key``."""

    argument: str = ""
    """``tool.key``."""
    rows: int = 0
    """Rows that invented it."""
    example: str | None = None
    """One value it was given."""


class GroundingReport(Report):
    """How often tool-call arguments are grounded, and which ones are invented."""

    rows: int = 0
    """Rows checked."""
    rows_with_calls: int = 0
    """Rows that made at least one tool call."""
    grounded_rate: float = float("nan")
    """Mean of argument_grounding over all rows (rows without calls count as grounded)."""
    ci95: tuple[float, float] | None = None
    """Interval on grounded_rate over tasks (cluster-robust; None when constant)."""
    grounded_rate_with_calls: float = float("nan")
    """The same over rows that made a call."""
    reward_corr: float | None = None
    """Correlation of the marker with reward over graded rows (negative: the reward pays for inventing)."""
    invented: list[InventedArgument] = Field(default_factory=list)
    """Ungrounded arguments by tool.key: ``{argument, rows, example}``, most rows first."""

    def render(self) -> str:
        """Summary and the invented arguments."""
        lines = [f"argument grounding {self.grounded_rate:.3f} {fmt_ci(self.ci95, 3)} over {self.rows} rows "
                 f"({self.rows_with_calls} with calls)"]
        for inv in self.invented:
            lines.append(f"  {inv.argument:<32} invented on {inv.rows} rows, e.g. {inv.example!r}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def grounding_report(rows: IntoRows, /, *, ignore_keys: Sequence[str] | str = (), allow: Sequence[str] | str = (),
                     min_len: int = GROUNDING_MIN_CHARS, examples: int = GUARD_EXAMPLES * 4) -> GroundingReport:
    """Grounded share of rows, its interval over tasks, and the invented arguments by tool and key.

    Args:
        rows: Rollouts (any input ``table.frame`` reads).
        ignore_keys: Argument keys to skip.
        allow: Values that are always grounded.
        min_len: Values shorter than this are not checked.
        examples: tool.key entries listed.

    Returns:
        A :class:`GroundingReport`.

    Examples:
        >>> r = grounding_report([{"prompt": "hi", "final_text": "hello"}])
        >>> r["grounded_rate"], r["rows_with_calls"]
        (1.0, 0)
    """
    ik, al, ml = _check(ignore_keys, allow, min_len)
    examples = check_int("examples", examples, minimum=0)
    df = table.frame(rows, allow_empty=True)
    report = GroundingReport(rows=df.height)
    if df.height == 0:
        report.warnings.append("no rows, so grounding is undefined.")
        return report
    bad, has_calls = _ungrounded(df, ik, al, ml)
    flag = np.ones(df.height)
    if bad.height:
        flag[bad["_row"].unique().to_numpy()] = 0.0
    report.rows_with_calls = int(has_calls.sum())
    m, lo, hi = cluster_mean_ci(flag, df["task_key"].to_numpy())
    report.grounded_rate = m
    report.ci95 = None if np.isnan(lo) else (lo, hi)
    if has_calls.any():
        report.grounded_rate_with_calls = float(flag[has_calls].mean())
    graded = graded_mask(df)
    if graded.sum() >= 2:
        c = pearson(flag[graded], df["reward"].cast(pl.Float64).to_numpy()[graded])
        report.reward_corr = None if np.isnan(c) else c
    if bad.height:
        inv = (
            bad.with_columns(pl.concat_str([pl.col("tool"), pl.lit("."), pl.col("key")]).alias("argument"))
            .group_by("argument").agg(pl.col("_row").n_unique().alias("rows"), pl.col("value").first().alias("example"))
            .sort(["rows", "argument"], descending=[True, False]).head(examples)
        )
        report.invented = [InventedArgument(**entry) for entry in inv.to_dicts()]
        report.warnings.append(
            f"{int((flag == 0).sum())} rows call a tool with an argument that appears nowhere before the call "
            f"(most: {report.invented[0].argument}); the agent may be inventing values. Use ignore_keys= for "
            "free-text arguments and allow= for enums."
        )
    if report.reward_corr is not None and report.reward_corr <= -0.3:
        report.warnings.append(
            f"the reward correlates {report.reward_corr:+.2f} with grounding: it pays for invented arguments."
        )
    return report
