"""The checks every selector reports beside its picks: privileged leaks, reward correlations, eval-sourced rewards.

Each is reported (a warning, a count, a typed block on the report); only a privileged leak also
drops rows.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai.defaults import HACK_THRESHOLD
from whileai.guard import LeakedRow, feature_correlations
from whileai.report import Part
from whileai.selection._rows import has, n_tool_calls_expr, n_turns_expr, reply_chars_expr

__all__ = [
    "CORRELATION_FEATURES",
    "Correlations",
    "LeakCheck",
    "correlation_warnings",
    "correlations",
    "eval_sourced_warning",
    "privileged_leaks",
]


def eval_sourced_warning(count: int, what: str) -> str:
    """The warning every selector adds when eval-sourced rewards are in its output."""
    return (
        f"{count} {what} carry a reward from evaluate() (lineage.source == 'eval'): a held-out score that "
        "becomes the training reward makes the scorer you report the one you optimised against. "
        "Grade the training set with run_judge or data.grade and keep evaluate for held-out rows."
    )


#: The pooled features ``correlations`` reads, in report order.
CORRELATION_FEATURES = ("reply_length", "tool_calls", "assistant_turns")


class Correlations(Part):
    """Pooled reward correlations over a selector's rows, and those past the flag threshold."""

    n_graded: int = 0
    """Graded rows the correlations are over."""
    threshold: float = HACK_THRESHOLD
    """``|r|`` at which a feature is flagged (``HACK_THRESHOLD``)."""
    correlations: dict[str, float | None] = Field(default_factory=dict)
    """Pearson r per feature, to 4 places (None: constant feature or fewer than 3 graded rows)."""
    flagged: dict[str, float] = Field(default_factory=dict)
    """The features with ``|r| >= threshold``."""


def correlations(df: pl.DataFrame, *, threshold: float = HACK_THRESHOLD) -> Correlations:
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
    return Correlations(n_graded=graded.height, threshold=threshold, correlations=out, flagged=flagged)


_FEATURE_WORDS = {"reply_length": "reply length", "tool_calls": "the number of tool calls", "assistant_turns": "the number of assistant turns"}


def correlation_warnings(report: Correlations) -> list[str]:
    """One sentence per flagged feature: what the reward tracks and what to do."""
    out = []
    for name, value in report.flagged.items():
        verb = "rewards" if value > 0 else "punishes"
        out.append(f"reward {verb} {_FEATURE_WORDS.get(name, name)} (corr {value:+.2f}, flag at |r| >= "
                   f"{report.threshold:.2f}); check the judge before training")
    return out


class LeakCheck(Part):
    """The privileged-leak check a selector ran (whileai 0.131's ``privileged_leaks`` block)."""

    checked: bool = False
    """Whether the check ran (the rows carry a privileged column)."""
    n_checked: int = 0
    """Rows carrying privileged context, i.e. the rows looked at."""
    n_dropped: int = 0
    """Rows dropped because their reply quotes their own privileged context."""
    leaked: list[LeakedRow] = Field(default_factory=list)
    """The first leaking rows (``whileai.guard.leak_report``'s entries: index, task, field, needle)."""


def privileged_leaks(rows: table.Source | pl.DataFrame, warnings: list[str]) -> tuple[pl.Series | None, LeakCheck]:
    """Rows whose reply quotes their own privileged context (an answer key the judge also read).

    A pass that recites the grader's reference is not a demonstration (README.md: leaked answer keys
    dropped). The check is ``whileai.guard.leak_report`` (one implementation in the library), on
    the step's source a chunk at a time (the conversations of one chunk held at once); it runs
    only when the rows carry a privileged column.

    Returns:
        A boolean mask of the leaking rows (None when nothing was checked) and the 0.131-shaped
        summary (:class:`LeakCheck`: ``checked``, ``n_checked``, ``n_dropped``, ``leaked``).
    """
    src = table.source(rows, allow_empty=True) if isinstance(rows, pl.DataFrame) else rows
    present = src.read(list(table.PRIVILEGED_COLUMNS))
    if not any(has(present, c) for c in table.PRIVILEGED_COLUMNS):
        return None, LeakCheck(checked=False, n_checked=0, n_dropped=0, leaked=[])
    from whileai.guard import leak_report

    report = leak_report(src)
    leaked = list(report.leaked)
    info = LeakCheck(checked=bool(report.checked), n_checked=int(report.n_checked), n_dropped=len(leaked),
                     leaked=leaked[:20])
    mask = np.zeros(present.height, dtype=bool)
    mask[[x.index for x in leaked]] = True
    return pl.Series("_leak", mask), info
