"""Duplicate rollouts within an ask, counted the way ``select(mode="rl")`` drops them.

The publish gate reports them, never applies them: the drop lives in ``select(mode="rl")``.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from whileai.select._common import trajectory_hash

__all__ = ["duplicate_report"]


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
