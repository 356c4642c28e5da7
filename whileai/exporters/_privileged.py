"""Rows whose reply quotes their own privileged context (the grader's reference, hidden state)."""

from __future__ import annotations

import json
import re
from typing import Any

import polars as pl

from whileai.defaults import EXPORT_EXAMPLES, LEAK_MIN_CHARS

__all__ = ["PRIVILEGED_COLUMNS", "find_leaks"]

#: Columns that hold context only the grader was given.
PRIVILEGED_COLUMNS: tuple[str, ...] = ("privileged", "reference", "principle", "hidden_state")

_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def _strings(value: Any, out: list[str]) -> None:
    """Every string leaf of a (possibly JSON-encoded) nested value."""
    if value is None:
        return
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                _strings(json.loads(stripped), out)
                return
            except ValueError:
                pass
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings(item, out)


def find_leaks(df: pl.DataFrame) -> tuple[int, int, list[int]]:
    """Rows whose assistant turns contain one of their own privileged strings verbatim.

    A privileged string is any text leaf of the row's ``privileged``, ``reference``,
    ``principle`` or ``hidden_state`` fields at least ``LEAK_MIN_CHARS`` long; matching ignores
    case and runs of whitespace (whileai 0.131 ``leak_report`` rule). Only rows that carry
    privileged context are looked at, so a table without it costs one column check.

    Returns:
        (rows checked, rows leaking, the first ``EXPORT_EXAMPLES`` leaking row indices).
    """
    present = [c for c in PRIVILEGED_COLUMNS if c in df.columns and df.schema[c] != pl.Null]
    if not present or "messages" not in df.columns:
        return 0, 0, []
    has_any = pl.any_horizontal([pl.col(c).is_not_null() for c in present])
    reply = (
        pl.col("messages")
        .list.eval(pl.element().filter(pl.element().struct.field("role") == "assistant").struct.field("content"))
        .list.join("\n")
        .alias("_reply")
    )
    candidates = df.select(pl.int_range(pl.len(), dtype=pl.Int64).alias("_i"), has_any.alias("_has"), reply,
                           *present).filter(pl.col("_has"))
    leaked: list[int] = []
    n_leaked = 0
    for row in candidates.iter_rows(named=True):  # rows with privileged context only
        needles: list[str] = []
        for name in present:
            _strings(row[name], needles)
        text = _norm(row["_reply"] or "")
        if any(len(n) >= LEAK_MIN_CHARS and _norm(n) in text for n in needles if n.strip()):
            n_leaked += 1
            if len(leaked) < EXPORT_EXAMPLES:
                leaked.append(int(row["_i"]))
    return candidates.height, n_leaked, leaked
