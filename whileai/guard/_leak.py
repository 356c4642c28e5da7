"""``leak_report``: replies that quote their own privileged context.

The grader's context (``privileged``: the expected-outcome reference, the hidden world state, a
principle or rubric) is scrubbed from exported rows, but a reply that quotes it is not: training
on such rows teaches the model to say what only the grader was told (docs/export.md, "Checks
that refuse"). Every string of at least ``min_len`` characters in a row's privileged context is looked
for, case-insensitively, in that row's assistant turns: one join and one literal ``contains``.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from pydantic import Field

from whileai import table
from whileai.defaults import LEAK_MIN_CHARS
from whileai.guard._common import agent_text_of, check_positive_int, json_strings
from whileai.report import Report
from whileai.table import IntoRows

__all__ = ["LeakReport", "leak_report"]

#: Columns holding teacher-only context (whileai 0.131 scrubs these at any depth on export).
PRIVILEGED_COLUMNS = ("privileged", "hidden_state", "principle", "rubric")


class LeakReport(Report):
    """Rows whose replies quote their own privileged context."""

    n_rows: int = 0
    """Rows given."""
    n_checked: int = 0
    """Rows that carried privileged context to check."""
    n_leaked: int = 0
    """Checked rows with an assistant turn quoting it."""
    rate: float = float("nan")
    """n_leaked / n_checked (NaN when nothing was checked)."""
    checked: bool = False
    """Any row carried privileged context."""
    leaked: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per leaking row: index, scenario_id, rollout_index, field, needle."""
    summary: str = ""
    """The first printed line."""

    def render(self) -> str:
        """Summary, then one line per leak."""
        lines = [self.summary]
        for leak in self.leaked:
            who = f"{leak.get('scenario_id') or ('row ' + str(leak['index']))}"
            if leak.get("rollout_index") is not None:
                who += f" r{leak['rollout_index']}"
            lines.append(f"  {who}: {leak['field']} = {leak['needle']!r}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def leak_report(rows: IntoRows, /, *, min_len: int = LEAK_MIN_CHARS) -> LeakReport:
    """Find replies that quote their own privileged context (reference, hidden state, principle, rubric).

    Args:
        rows: Rollouts (any input ``table.frame`` reads) carrying ``privileged`` (or
            ``hidden_state``, ``principle``, ``rubric``).
        min_len: Privileged strings shorter than this are not looked for (they match by accident).

    Returns:
        A :class:`LeakReport`; ``leaked[i]["index"]`` is the row's position, so the rows can be
        dropped before export.

    Examples:
        >>> rows = [{"scenario_id": "s1", "prompt": "p", "final_text": "Already done: say so and do not repeat it.",
        ...          "privileged": {"reference": "already done: say so and do not repeat the action"}},
        ...         {"scenario_id": "s2", "prompt": "q", "final_text": "Your order shipped.",
        ...          "privileged": {"reference": "the order shipped on monday morning"}}]
        >>> leak_report(rows, min_len=12)["n_leaked"]
        0
        >>> rows[0]["final_text"] = "Reference says: already done: say so and do not repeat the action."
        >>> print(leak_report(rows))
        checked 2 of 2 rows: 1 quoted privileged context (50%)
          s1: reference = 'already done: say so and do not repeat the action'
        ! 1 replies quote their own privileged context; ...
    """
    min_len = check_positive_int("min_len", min_len)
    df = table.frame(rows, allow_empty=True)
    report = LeakReport(n_rows=df.height)
    cols = [c for c in PRIVILEGED_COLUMNS if c in df.columns]
    if df.height == 0 or not cols:
        report.summary = (f"checked 0 of {df.height} rows: none carried privileged context, so this says nothing "
                          "about leaks")
        return report
    parts = []
    for c in cols:
        dtype = df.schema[c]
        if dtype == pl.String:
            src = df.select(pl.col(c).alias("_j")).with_row_index("_row")
            plain = src.filter(~pl.col("_j").str.strip_chars_start().str.starts_with("{")
                               & ~pl.col("_j").str.strip_chars_start().str.starts_with("["))
            parts.append(plain.select("_row", pl.lit(c).alias("key"), pl.col("_j").alias("value")).drop_nulls("value"))
            parts.append(json_strings(src, "_j", keep=["_row"]).with_columns(
                (pl.lit(f"{c}.") + pl.col("key")).alias("key") if c != "privileged" else pl.col("key")))
        else:
            enc = pl.col(c).struct.json_encode() if isinstance(dtype, pl.Struct) else pl.col(c).cast(pl.String)
            src = df.select(enc.alias("_j")).with_row_index("_row")
            parts.append(json_strings(src, "_j", keep=["_row"]).with_columns((pl.lit(f"{c}.") + pl.col("key")).alias("key")))
    needles = pl.concat(parts, how="vertical_relaxed").with_columns(pl.col("value").str.strip_chars())
    carried = needles["_row"].unique()
    report.n_checked = len(carried)
    report.checked = report.n_checked > 0
    needles = needles.filter(pl.col("value").str.len_chars() >= min_len).with_columns(
        pl.col("value").str.to_lowercase().alias("_v"))
    text = pl.DataFrame({"_t": agent_text_of(df).str.to_lowercase()}).with_row_index("_row")
    hits = (
        needles.join(text, on="_row", how="inner")
        .filter(pl.col("_t").str.contains(pl.col("_v"), literal=True))
        .group_by("_row", maintain_order=True).agg(pl.col("key").first(), pl.col("value").first())
        .sort("_row")
    )
    report.n_leaked = hits.height
    report.rate = report.n_leaked / report.n_checked if report.n_checked else float("nan")
    sid = df["scenario_id"] if "scenario_id" in df.columns else None
    ridx = df["rollout_index"] if "rollout_index" in df.columns else None
    for r, key, value in hits.iter_rows():
        report.leaked.append({
            "index": int(r),
            "scenario_id": sid[r] if sid is not None else None,
            "rollout_index": ridx[r] if ridx is not None else None,
            "field": key,
            "needle": value,
        })
    if report.n_checked:
        report.summary = (f"checked {report.n_checked} of {df.height} rows: {report.n_leaked} quoted privileged context "
                          f"({report.rate:.0%})")
    else:
        report.summary = (f"checked 0 of {df.height} rows: none carried privileged context, so this says nothing "
                          "about leaks")
    if report.n_leaked:
        report.warnings.append(
            f"{report.n_leaked} replies quote their own privileged context; the export scrubs the key, not the reply. "
            "Drop the rows in leaked (by index) before training."
        )
    return report
