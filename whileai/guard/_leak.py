"""``leak_report``: replies that quote their own privileged context.

The grader's context (the columns ``table.PRIVILEGED_COLUMNS`` names: ``privileged``, the
expected-outcome reference, the hidden world state, a principle or rubric) is scrubbed from
exported rows, but a reply that quotes it is not: training on such rows teaches the model to say
what only the grader was told (docs/guard.md, "Style, refusal, leaks"). Every string of at least
``min_len`` characters in a row's privileged context is looked for in that row's assistant turns
(their text and their tool calls: name, arguments as written and their string values unescaped),
ignoring case and runs of whitespace, except a string the agent saw in the visible conversation
(a fault name in a tool result, the user's own words): repeating what it was shown is not a leak.
One join and one literal ``contains``; no Python runs per row.

This is the one detector: the export's ``validate`` and the select step's leak drop call it.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from pydantic import Field

from whileai import table
from whileai._checks import check_int
from whileai.defaults import CHUNK_ROWS, LEAK_MIN_CHARS
from whileai.guard._views import agent_text_of, calls_long, json_strings, messages_long
from whileai.report import Part, Report
from whileai.table import IntoRows

__all__ = ["LEAK_COLUMNS", "LeakReport", "LeakedRow", "leak_report", "leaking_rows", "leaks_in"]

#: What the detector reads: the privileged context, the turns it is looked for in and the turns the
#: agent was shown (``messages``, or ``prompt``, ``system_prompt`` and ``final_text`` without one),
#: and the ids a leak is named by.
LEAK_COLUMNS: tuple[str, ...] = (*table.PRIVILEGED_COLUMNS, "messages", "prompt", "system_prompt", "final_text",
                                 "scenario_id", "rollout_index")

_EMPTY = pl.DataFrame(schema={"_row": pl.UInt32, "key": pl.String, "value": pl.String})


def _norm(expr: pl.Expr) -> pl.Expr:
    r"""Lower case, every run of whitespace one space, ends stripped (the match rule).

    The pattern leaves a lone space alone (most of any text) and rewrites only a run of two or
    more, or whitespace other than a space: the same text as replacing every ``\\s+``, with a
    fraction of the replacements.
    """
    return expr.str.to_lowercase().str.replace_all(r"[^\S ]\s*| \s+", " ").str.strip_chars()


# A needle's longest words, lower-cased, are looked for in the row's raw agent turns first: each
# must appear there for the needle to appear in the normalised text. Only words that JSON text
# holds as they are (printable ASCII without a quote or backslash) are used so.
_PLAIN_WORD = r"^[!#-\[\]-~]+$"
_PREFILTER_WORDS = 3  # a cost knob: the same hits at any count (each word is a necessary condition)


def _candidates(df: pl.DataFrame, needles: pl.DataFrame) -> pl.DataFrame:
    """The needles whose longest words all appear in their row's raw agent turns, lower-cased.

    A cheap necessary condition of a hit: normalising only joins whitespace and lower-cases, so
    every word of a needle found in an agent turn (its text, a tool call's name or arguments,
    their values unescaped) is in the row's raw assistant text, tool-call names and arguments (JSON
    text holds a plain word as it is), or in its reply, without a conversation. The exact rule
    then runs on the needles left: the same hits.
    """
    needles = needles.with_row_index("_n")
    parts = []
    if "messages" in df.columns:
        turn = pl.element().filter(pl.element().struct.field("role") == "assistant")
        call = turn.struct.field("tool_calls").list.explode(keep_nulls=False, empty_as_null=False)
        said = pl.concat_str([call.struct.field("name").fill_null(""), call.struct.field("arguments").fill_null("")],
                             separator="\n")
        parts.append(pl.col("messages").list.eval(turn.struct.field("content").drop_nulls()).list.join("\n").fill_null(""))
        parts.append(pl.col("messages").list.eval(said).list.join("\n").fill_null(""))
    if "final_text" in df.columns and df.schema["final_text"] == pl.String:
        parts.append(pl.col("final_text").fill_null(""))
    if not parts:
        return needles.drop("_n")
    rows = needles["_row"].unique().sort()
    used = df.select(c for c in ("messages", "final_text") if c in df.columns)
    if rows.len() < df.height:  # only the rows with something to look for (every row is common: no copy)
        used = used[rows.to_numpy()]
    raw = (used.select(pl.concat_str(parts, separator="\n").str.to_lowercase().alias("_raw"))
           .with_columns(rows.alias("_row")))
    # each distinct needle's words once (a reference repeats on every rollout of its task)
    longest = needles.select(pl.col("_v").unique()).with_columns(
        pl.col("_v").str.extract_all(r"\S+").list.unique()
        .list.eval(pl.element().sort_by(pl.element().str.len_bytes(), descending=True, maintain_order=True))
        .list.head(_PREFILTER_WORDS).alias("_w"))
    words = (
        needles.select("_n", "_row", "_v").join(longest, on="_v", how="left").drop("_v")
        .explode("_w")
        .join(raw, on="_row", how="left")
        .group_by("_n").agg(
            (~pl.col("_w").fill_null("").str.contains(_PLAIN_WORD)
             | pl.col("_raw").fill_null("").str.contains(pl.col("_w"), literal=True)).all().alias("_keep"))
    )
    kept = words.filter("_keep")["_n"]
    return needles.filter(pl.col("_n").is_in(kept.implode())).drop("_n")


def _needles(df: pl.DataFrame) -> pl.DataFrame:
    """Every string leaf of each row's privileged context, long: ``_row``, key, value.

    A text column holds either plain text (the value itself, keyed by the column) or JSON (its
    keyed string values at any depth, read by regular expression); any other column (a struct,
    a list, a number) is JSON-encoded under its own name first.
    """
    parts = []
    for c in table.PRIVILEGED_COLUMNS:
        if c not in df.columns or df.schema[c] == pl.Null:
            continue
        if df.schema[c] == pl.String:
            src = df.select(pl.col(c).alias("_j")).with_row_index("_row")
            is_json = pl.col("_j").str.strip_chars_start().str.slice(0, 1).is_in(["{", "["])
            parts.append(src.filter(~is_json).drop_nulls("_j")
                         .select("_row", pl.lit(c).alias("key"), pl.col("_j").alias("value")))
            found = _per_text(src.filter(is_json))
            if c != "privileged":  # privileged's own keys (reference, hidden_state...) name themselves
                found = found.with_columns((pl.lit(f"{c}.") + pl.col("key")).alias("key"))
        else:
            src = df.select(pl.struct(pl.col(c)).struct.json_encode().alias("_j")).with_row_index("_row")
            found = _per_text(src).with_columns(
                pl.when(pl.col("key") == c).then(pl.col("key")).otherwise(pl.lit(f"{c}.") + pl.col("key")).alias("key"))
        parts.append(found)
    if not parts:
        return _EMPTY
    return pl.concat([p.cast({"_row": pl.UInt32}) for p in parts], how="vertical_relaxed")


def _per_text(src: pl.DataFrame) -> pl.DataFrame:
    """``json_strings`` of each distinct JSON text in ``_j`` once, joined back to each ``_row`` holding it.

    A task's privileged context repeats on every rollout of it, so the regular expressions run on
    a fraction of the rows; each row gets its text's strings in the order the text gives them.
    """
    distinct = src.select(pl.col("_j").unique(maintain_order=True))
    found = json_strings(distinct, "_j", keep=["_j"])
    return src.join(found, on="_j", how="inner", maintain_order="left_right").select("_row", "key", "value")


def _seen_text(df: pl.DataFrame) -> pl.Series:
    """What the agent was shown per row: every non-assistant turn (system, user, tool results).

    Without a conversation, the prompt and system prompt.
    """
    shown = [c for c in ("system_prompt", "prompt") if c in df.columns and df.schema[c] == pl.String]
    fallback = pl.concat_str([pl.col(c).fill_null("") for c in shown], separator="\n") if shown else pl.lit("")
    if "messages" not in df.columns:
        return df.select(fallback.alias("_s"))["_s"]
    turns = (
        pl.col("messages")
        .list.eval(pl.element().filter(pl.element().struct.field("role") != "assistant")
                   .struct.field("content").drop_nulls())
        .list.join("\n")
    )
    return df.select(pl.when(pl.col("messages").is_null()).then(fallback).otherwise(turns.fill_null("")).alias("_s"))["_s"]


def _agent_turns(df: pl.DataFrame) -> pl.Series:
    """What the agent wrote per row: its turns' text, then each tool call's name and arguments.

    The arguments count twice over: as written (JSON text, or whatever the model emitted when it
    does not parse) and as their string values unescaped (``json_strings``), so a quote inside
    them matches as the agent wrote it. A tool call is trained on like the reply beside it.
    """
    text = agent_text_of(df)
    if "messages" not in df.columns:
        return text
    calls = calls_long(messages_long(df))
    if calls.height == 0:
        return text
    values = json_strings(calls, "arguments", keep=["_row"]).select("_row", pl.col("value").alias("_c"))
    said = pl.concat([calls.select("_row", pl.concat_str(["tool", "arguments"], separator="\n").alias("_c")), values],
                     how="vertical_relaxed")
    per_row = said.group_by("_row").agg(pl.col("_c").str.join("\n"))
    return (
        pl.DataFrame({"_t": text}).with_row_index("_row")
        .join(per_row, on="_row", how="left", maintain_order="left")
        .select(pl.concat_str([pl.col("_t"), pl.col("_c").fill_null("")], separator="\n"))["_t"]
    )


def leaking_rows(df: pl.DataFrame, *, min_len: int = LEAK_MIN_CHARS) -> tuple[int, pl.DataFrame]:
    """The detector on a ``table.frame`` output: rows checked, and one row per leaking row.

    Returns:
        ``(n_checked, hits)`` with ``hits`` columns ``_row`` (row position), key (the privileged
        field) and value (the string quoted), sorted by row.
    """
    needles = _needles(df).with_columns(pl.col("value").str.strip_chars())
    n_checked = needles["_row"].n_unique() if needles.height else 0
    needles = needles.with_columns(_norm(pl.col("value")).alias("_v")).filter(pl.col("_v").str.len_chars() >= min_len)
    if needles.height == 0:
        return n_checked, _EMPTY
    needles = _candidates(df, needles)
    if needles.height == 0:
        return n_checked, _EMPTY
    rows = needles["_row"].unique().sort()
    part = df[rows.to_numpy()]  # only the rows with something to look for
    text = (
        pl.DataFrame({"_row": rows, "_t": _agent_turns(part), "_s": _seen_text(part)})
        .with_columns(_norm(pl.col("_t")), _norm(pl.col("_s")))
    )
    hits = (
        needles.join(text, on="_row", how="inner")
        .filter(pl.col("_t").str.contains(pl.col("_v"), literal=True)
                & ~pl.col("_s").str.contains(pl.col("_v"), literal=True))
        .group_by("_row", maintain_order=True).agg(pl.col("key").first(), pl.col("value").first())
        .sort("_row")
    )
    return n_checked, hits


class LeakedRow(Part):
    """One row whose reply quotes its own privileged context, and what it quoted."""

    index: int
    """The row's position in the rows given (drop it by this)."""
    scenario_id: str | None = None
    """The row's task (None when the rows carry no scenario_id)."""
    rollout_index: int | None = None
    """The row's rollout of that task (None when the rows carry none)."""
    field: str = ""
    """The privileged key quoted: reference, a hidden_state key, principle or rubric."""
    needle: str = ""
    """The privileged string the reply quotes."""


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
    leaked: list[LeakedRow] = Field(default_factory=list)
    """One entry per leaking row: index, scenario_id, rollout_index, field, needle."""
    summary: str = ""
    """The first printed line."""

    def render(self) -> str:
        """Summary, then one line per leak."""
        lines = [self.summary]
        for leak in self.leaked:
            who = f"{leak.scenario_id or ('row ' + str(leak.index))}"
            if leak.rollout_index is not None:
                who += f" r{leak.rollout_index}"
            lines.append(f"  {who}: {leak.field} = {leak.needle!r}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def leak_report(rows: IntoRows | table.Source, /, *, min_len: int = LEAK_MIN_CHARS) -> LeakReport:
    """Find replies that quote their own privileged context (reference, hidden state, principle, rubric).

    A string counts when an assistant turn contains it (case and runs of whitespace ignored; a
    turn's tool calls, name and arguments, are part of it) and no turn the agent was shown
    (system, user, tool result) does: a fault name the agent read in its own tool result is an
    honest report, not a leak.

    Args:
        rows: Rollouts (any input ``table.frame`` reads, or a ``table.source``) carrying a privileged column
            (``table.PRIVILEGED_COLUMNS``: ``privileged``, ``reference``, ``hidden_state``,
            ``principle``, ``rubric``).
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
    min_len = check_int("min_len", min_len)
    if isinstance(rows, table.Source):  # a step's own source (select): read through, left open
        return leaks_in(rows, rows.read(["scenario_id", "rollout_index"]).height, min_len=min_len)
    with table.source(rows, allow_empty=True) as src:
        return leaks_in(src, src.read(["scenario_id", "rollout_index"]).height, min_len=min_len)


def leaks_in(src: table.Source, n_rows: int, *, min_len: int = LEAK_MIN_CHARS) -> LeakReport:
    """``leak_report`` on the ``n_rows`` rows of a source, read ``CHUNK_ROWS`` rows at a time.

    The detector is row-local (a row's needles are looked for in that row's turns), so the chunks
    give the hits the whole table gives, in bounded memory: only ``LEAK_COLUMNS`` of one chunk are
    held at once. Select calls it on the source it decides from.
    """
    report = LeakReport(n_rows=n_rows)
    found: list[pl.DataFrame] = []
    for start in range(0, n_rows, CHUNK_ROWS):
        part = src.take(np.arange(start, min(start + CHUNK_ROWS, n_rows), dtype=np.int64), columns=LEAK_COLUMNS)
        n_checked, hits = leaking_rows(part, min_len=min_len)
        report.n_checked += n_checked
        if hits.height:
            ids = part.select(
                (pl.col(c) if c in part.columns else pl.lit(None)).alias(c) for c in ("scenario_id", "rollout_index")
            ).with_row_index("_row")
            found.append(
                hits.join(ids, on="_row", how="left", maintain_order="left")
                .select((pl.col("_row").cast(pl.Int64) + start).alias("index"), "scenario_id", "rollout_index",
                        pl.col("key").alias("field"), pl.col("value").alias("needle")))
        del part
    report.checked = report.n_checked > 0
    report.leaked = [LeakedRow(**row) for frame in found for row in frame.to_dicts()]
    report.n_leaked = len(report.leaked)
    report.rate = report.n_leaked / report.n_checked if report.n_checked else float("nan")
    df_height = n_rows
    if report.n_checked:
        report.summary = (f"checked {report.n_checked} of {df_height} rows: {report.n_leaked} quoted privileged context "
                          f"({report.rate:.0%})")
    else:
        report.summary = (f"checked 0 of {df_height} rows: none carried privileged context, so this says nothing "
                          "about leaks")
    if report.n_leaked:
        report.warnings.append(
            f"{report.n_leaked} replies quote their own privileged context; the export scrubs the key, not the reply. "
            "Drop the rows in leaked (by index) before training."
        )
    return report
