"""Training samples from a rollout table, columnar: system turn, unroll, masks, cuts, JSON text.

One chunk of rows goes through three frames:

1. *samples*: one row per training sample (a conversation, or one unrolled prefix of it) with the
   message list, the position of the last trained assistant turn and the carried columns;
2. *flat*: one row per message (``explode``), where think blocks are stripped, tool output is
   cut, the loss mask is set and each message is written as JSON text (one ``json_encode`` per
   message shape, ``_encode.message_texts``) or an Arrow struct;
3. *joined back* per sample: the JSON line is a gather of pieces (head, messages, commas, the
   sample's loss mask, the row keys) written back to back; a Parquet row cuts the flat messages
   into lists at the samples' offsets.

No Python runs per row (the privileged-leak check before them is ``whileai.guard.leak_report``,
columnar too).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl
import pyarrow as pa

from whileai.defaults import (
    EXPORT_EXAMPLES,
    EXPORT_GROUP_ID_HEX,
    EXPORT_MASK_BITS,
    EXPORT_MASK_KINDS,
    EXPORT_NULL_SHAPES,
    SCHEMA_VERSION,
    TOOL_OUTPUT_TRUNCATION_MARKER,
)
from whileai.exporters._encode import Encoding, enc, field_piece, message_texts, valid_object
from whileai.measure import group_stats as measure_group_stats
from whileai.table import canonical_json, list_series
from whileai.table.schema import COLUMN_BY_NAME, PRIVILEGED_COLUMNS

__all__ = ["CARRIED", "FORBIDDEN_KEYS", "Counts", "LeakCounts", "Options", "build_chunk", "group_stats", "line_bytes", "prepare_frame",
           "with_group_json", "leak_counts"]

Format = Literal["openai", "trl"]
MaskMode = Literal["assistant", "final"]

#: Row keys carried onto a training row, in the order they are written (whileai 0.131 training
#: row order; ``task_id`` and ``fault_kind`` are ours). Everything else stays behind: markers,
#: gold labels, steps, calibration, rollout ids, and never a privileged field.
CARRIED: tuple[str, ...] = (
    "scenario_id", "task_id", "world_state", "faults", "fault_kind", "judge_status", "judge_name", "lineage",
    "policy_version", "writer_model", "tier", "ask_family", "ask", "stance", "texture", "length",
    "intent_known", "tool_known",
)

#: Keys never written, at any depth of a carried struct or of carried JSON text (the grader's
#: context, not the policy's). ``vector`` (an embedding) is not teacher context, so no leak, but
#: never a training field either.
FORBIDDEN_KEYS: frozenset[str] = frozenset({*PRIVILEGED_COLUMNS, "vector"})

#: A message's reasoning fields, dropped from assistant turns with ``strip_think`` (the reasoning
#: their chat templates render as ``<think>...</think>``): ``reasoning_content`` (DeepSeek API,
#: vLLM and SGLang reasoning parsers, Qwen3 templates; ``table`` folds reasoning content parts
#: into it), ``reasoning`` and ``reasoning_details`` (OpenRouter, vLLM's newer field).
REASONING_KEYS: frozenset[str] = frozenset({"reasoning_content", "reasoning", "reasoning_details"})

_GROUP_COLUMNS = ("group_id", "k", "n0", "n1", "reward_mean", "reward_std")
_JSON_KINDS = frozenset(c.name for c in COLUMN_BY_NAME.values() if c.kind == "json")
_THINK = r"(?s)<think>.*?</think>\s*"


@dataclass(frozen=True)
class Options:
    """The export options after validation."""

    format: Format
    mask_mode: MaskMode
    unroll: bool
    max_tool_output_chars: int | None
    strip_think: bool
    parquet: bool

    @property
    def encoding(self) -> Encoding:
        """Tool-call arguments: a JSON string for OpenAI, an object for TRL."""
        return "dict" if self.format == "trl" else "json_string"

    @property
    def prompt_completion(self) -> bool:
        """TRL rows written as prompt/completion (one trained turn) rather than messages."""
        return self.format == "trl" and (self.mask_mode == "final" or self.unroll)

    @property
    def last_only(self) -> bool:
        """Loss on the last assistant turn only."""
        return self.mask_mode == "final" or self.unroll


@dataclass
class Counts:
    """Running totals across chunks, turned into the report at the end."""

    n_written: int = 0
    with_system: int = 0
    with_tools: int = 0
    trained: int = 0
    masked: int = 0
    truncated_messages: int = 0
    truncated_rows: int = 0
    chars_cut: int = 0
    calls_checked: int = 0
    calls_invalid: int = 0
    invalid_rows: list[int] = field(default_factory=list)
    no_assistant: int = 0

    def merge(self, other: Counts) -> None:
        """Add another chunk's counts (in chunk order, so the listed rows stay in order)."""
        for name in ("n_written", "with_system", "with_tools", "trained", "masked", "truncated_messages",
                     "truncated_rows", "chars_cut", "calls_checked", "calls_invalid", "no_assistant"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.invalid_rows.extend(other.invalid_rows)
        del self.invalid_rows[EXPORT_EXAMPLES:]


@dataclass
class LeakCounts:
    """The privileged-leak check's running totals across chunks: rows checked, rows leaking, the first leaking rows."""

    n_checked: int = 0
    n_leaked: int = 0
    rows: list[int] = field(default_factory=list)

    def merge(self, other: LeakCounts, *, offset: int = 0) -> None:
        """Add another chunk's check (in chunk order), its row indices moved by ``offset``."""
        self.n_checked += other.n_checked
        self.n_leaked += other.n_leaked
        self.rows.extend(offset + r for r in other.rows[: max(0, EXPORT_EXAMPLES - len(self.rows))])


def leak_counts(part: pl.DataFrame, start: int = 0) -> LeakCounts:
    """The privileged-leak check on one chunk of the source, its rows numbered from ``start``.

    ``whileai.guard.leaking_rows``, the one vectorised detector ``leak_report`` runs; either engine
    checks each chunk (or block) with it and merges the counts in row order.
    """
    if not part.height:
        return LeakCounts()
    from whileai.guard import leaking_rows

    n_checked, hits = leaking_rows(part)
    return LeakCounts(n_checked, hits.height, [start + int(i) for i in hits["_row"].head(EXPORT_EXAMPLES).to_list()])


# ------------------------------------------------------------------------------------------
# whole-frame preparation
# ------------------------------------------------------------------------------------------


def group_stats(df: pl.DataFrame) -> pl.DataFrame:
    """Per task: group_id (12 hex of FNV-1a) beside ``whileai.measure.group_stats``.

    The counts and spread are the measure step's (the one place pass counts come from): ``k``
    graded rollouts, ``n0``/``n1`` fails and passes (split at ``PASS_THRESHOLD``), the reward mean
    and population standard deviation.
    """
    return _with_group_id(measure_group_stats(df))


def _with_group_id(stats: pl.DataFrame) -> pl.DataFrame:
    ids = _fnv1a64(stats["task_key"].cast(pl.String).fill_null(""))
    group_id = _hex_prefix(ids, EXPORT_GROUP_ID_HEX).alias("group_id")
    return stats.with_columns(group_id).select("task_key", "group_id", "k", "n0", "n1", "reward_mean", "reward_std")


def _hex_prefix(values: np.ndarray, digits: int) -> pl.Series:
    """The first ``digits`` lower-case hex digits of each uint64 (``f"{v:016x}"[:digits]``), vectorised.

    Each digit is one nibble looked up in ``0-9a-f``; the digits of all rows lie back to back in
    one buffer that becomes an Arrow string array (no Python string per row).
    """
    shifts = np.arange(60, 60 - 4 * digits, -4, dtype=np.uint64)
    nibbles = (values.astype(np.uint64)[:, None] >> shifts) & np.uint64(0xF)
    chars = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)[nibbles.astype(np.intp)]
    offsets = np.arange(len(values) + 1, dtype=np.int64) * digits
    array = pa.LargeStringArray.from_buffers(len(values), pa.py_buffer(offsets),
                                             pa.py_buffer(np.ascontiguousarray(chars).tobytes()))
    return pl.Series(array)


def _fnv1a64(keys: pl.Series) -> np.ndarray:
    """64-bit FNV-1a of each string's UTF-8 bytes, vectorised over rows (one pass per byte position).

    A stable, documented hash (Fowler, Noll, Vo; the same on every machine and version), unlike
    Polars' ``hash``; with numpy it costs milliseconds for a million task keys.
    """
    arrow = keys.to_arrow()
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    if arrow.type != pa.large_string():  # Array.cast imports pyarrow.compute (a quarter second)
        arrow = arrow.cast(pa.large_string())
    offsets = np.frombuffer(arrow.buffers()[1], dtype=np.int64)[arrow.offset: arrow.offset + len(arrow) + 1]
    data = np.frombuffer(arrow.buffers()[2], dtype=np.uint8) if arrow.buffers()[2] is not None else np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    h = np.full(len(arrow), np.uint64(0xCBF29CE484222325), dtype=np.uint64)
    prime = np.uint64(0x100000001B3)
    with np.errstate(over="ignore"):
        for pos in range(int(lengths.max()) if len(lengths) else 0):
            live = lengths > pos
            byte = data[starts[live] + pos].astype(np.uint64)
            h[live] = (h[live] ^ byte) * prime
    return h


def prepare_frame(df: pl.DataFrame, *, system_prompt: str | None, tools_json: str | None,
                  with_groups: bool, stats: pl.DataFrame | None = None, row_offset: int = 0,
                  row_stats: pl.DataFrame | None = None) -> pl.DataFrame:
    """The columns an export reads: messages, the system prompt and tools resolved, carried keys.

    Adds ``_sys`` (the system prompt to put first when the conversation has none), ``_tools``
    (tools as canonical JSON text), ``_row`` (the source row index, from ``row_offset``) and the
    group stats (``stats``, :func:`group_stats` of the whole table, when ``df`` is one chunk of it;
    or ``row_stats``, the stats already joined onto each row of ``df``, in its order).
    """
    cols = set(df.columns)
    exprs: list[pl.Expr] = [(pl.int_range(pl.len(), dtype=pl.Int64) + row_offset).alias("_row"), pl.col("messages"),
                            pl.col("task_key")]
    if system_prompt is not None:
        exprs.append(pl.lit(system_prompt, pl.String).alias("_sys"))
    elif "system_prompt" in cols:
        exprs.append(pl.col("system_prompt").cast(pl.String).alias("_sys"))
    else:
        exprs.append(pl.lit(None, pl.String).alias("_sys"))
    if tools_json is not None:
        exprs.append(pl.lit(tools_json, pl.String).alias("_tools"))
    elif "tools" in cols:
        exprs.append(pl.col("tools").cast(pl.String).alias("_tools"))
    else:
        exprs.append(pl.lit(None, pl.String).alias("_tools"))
    exprs.append((pl.col("reward").cast(pl.Float64) if "reward" in cols else pl.lit(None, pl.Float64)).alias("reward"))
    exprs.append((pl.col("prompt").cast(pl.String) if "prompt" in cols else pl.lit(None, pl.String)).alias("prompt"))
    for name in CARRIED:
        if name in cols and df.schema[name] != pl.Null:
            exprs.append(_scrub(pl.col(name), df.schema[name]).alias(name))
    out = df.select(exprs)
    texts = [name for name in CARRIED if name in cols and out.schema[name] == pl.String]
    if texts:  # JSON text (world_state, faults given as dicts) holds keys the struct scrub never sees
        out = out.with_columns(_drop_json_keys(out[name], FORBIDDEN_KEYS) for name in texts)
    if with_groups and row_stats is not None:
        return out.with_columns(row_stats.drop("task_key", strict=False))
    if with_groups:  # join only the key, then add the columns: the messages are not copied
        per_row = df.select("task_key").join(group_stats(df) if stats is None else stats, on="task_key", how="left",
                                             maintain_order="left")
        out = out.with_columns(per_row.drop("task_key"))
    return out


def _scrub(expr: pl.Expr, dtype: Any) -> pl.Expr:
    """Drop forbidden fields from a struct column (at any depth of nested structs)."""
    if not isinstance(dtype, pl.Struct):
        return expr
    fields = [f for f in dtype.fields if f.name not in FORBIDDEN_KEYS]
    if len(fields) == len(dtype.fields) and not any(isinstance(f.dtype, pl.Struct) for f in fields):
        return expr
    if not fields:
        return pl.lit(None, pl.Struct({}))
    return pl.struct([_scrub(expr.struct.field(f.name), f.dtype).alias(f.name) for f in fields])


def _key_pattern(keys: frozenset[str]) -> str:
    """A regular expression for a JSON member named in ``keys``: ``"key":`` (space allowed before the colon)."""
    return '"(?:' + "|".join(re.escape(k) for k in sorted(keys)) + r')"\s*:'


def _without(value: Any, keys: frozenset[str]) -> Any:
    """A decoded JSON value with every member named in ``keys`` removed, at any depth."""
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def _drop_json_keys(values: pl.Series, keys: frozenset[str]) -> pl.Series:
    """``values`` (text, some of it JSON) with every member named in ``keys`` removed at any depth.

    Only texts that name a key (one regular-expression ``contains`` in Polars) are decoded, once
    per distinct text, and written back as canonical JSON (``table.canonical_json``); a column with
    no such text costs that one pass. Text that does not decode as JSON is left as it was.
    """
    hit = values.str.contains(_key_pattern(keys)).fill_null(False)
    if not hit.any():
        return values
    old = values.filter(hit).unique()
    new: list[str | None] = []
    for text in old.to_list():
        try:
            decoded = json.loads(text)
        except ValueError:
            new.append(text)
            continue
        new.append(canonical_json(_without(decoded, keys)))
    return values.replace(old, pl.Series(new, dtype=pl.String))


# ------------------------------------------------------------------------------------------
# one chunk
# ------------------------------------------------------------------------------------------


def _samples(chunk: pl.DataFrame, opts: Options, counts: Counts) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The chunk's rows with at least one agent turn, and one row per training sample.

    Returns ``(rows, samples)``: ``rows`` has ``_r`` (row in chunk), ``_need_sys`` and the
    messages; ``samples`` has ``_s`` (sample), ``_r``, ``_last`` (position of the last trained
    turn) and, with ``unroll``, ``_turn``/``_turns``.
    """
    # the roles of every message, flat (no per-row list.eval): where the agent's turns are, in numpy
    lengths = chunk["messages"].list.len().fill_null(0).to_numpy().astype(np.int64)
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    roles = chunk["messages"].explode(empty_as_null=False, keep_nulls=False).struct.field("role")
    turn_at = np.flatnonzero((roles == "assistant").fill_null(False).to_numpy())
    row_of_turn = np.searchsorted(starts, turn_at, side="right") - 1
    n_turns = np.bincount(row_of_turn, minlength=len(lengths)).astype(np.int64)
    opens_system = np.zeros(len(lengths), dtype=bool)
    nonempty = lengths > 0
    opens_system[nonempty] = (roles.gather(starts[:-1][nonempty]) == "system").fill_null(False).to_numpy()
    has_turn = n_turns > 0
    counts.no_assistant += int(len(lengths) - has_turn.sum())
    rows = chunk.with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_r"),
        (pl.col("_sys").is_not_null() & pl.Series(~opens_system)).alias("_need_sys"),
    ).filter(pl.Series(has_turn))
    position = turn_at - starts[row_of_turn]  # of each agent turn in its conversation
    if opts.unroll:
        first = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(n_turns, out=first[1:])
        samples = pl.DataFrame({
            "_r": row_of_turn,
            "_turn": np.arange(len(turn_at), dtype=np.int64) - first[row_of_turn] + 1,
            "_turns": n_turns[row_of_turn],
            "_last": position,
        }, schema={"_r": pl.Int64, "_turn": pl.Int64, "_turns": pl.Int64, "_last": pl.Int64})
    else:
        last = np.r_[row_of_turn[1:] != row_of_turn[:-1], True] if len(turn_at) else np.zeros(0, dtype=bool)
        samples = pl.DataFrame({"_r": row_of_turn[last], "_last": position[last]},
                               schema={"_r": pl.Int64, "_last": pl.Int64})
    samples = samples.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("_s"))
    return rows, samples


def _flat(rows: pl.DataFrame, samples: pl.DataFrame, opts: Options) -> pl.DataFrame:
    """One row per message of each sample, in (sample, position) order, with its mask and cut.

    The system prompt is not a row here: ``build_chunk`` slots it in front of each sample's
    messages. Unrolled samples are the prefix of their row's messages up to the sample's turn,
    taken with one numpy gather (no join, no sort).
    """
    flat = (
        rows.select("_r", "messages", pl.int_ranges(0, pl.col("messages").list.len(), dtype=pl.Int64).alias("_pos"))
        .explode(["messages", "_pos"])
        .filter(pl.col("_pos").is_not_null())
        .unnest("messages")
    )
    last = samples["_last"].to_numpy()
    if opts.unroll:
        lengths = rows["messages"].list.len().to_numpy().astype(np.int64)
        row_start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        row_of_sample = np.searchsorted(rows["_r"].to_numpy(), samples["_r"].to_numpy())
        sizes = last + 1
        sample_ix = np.repeat(np.arange(len(last)), sizes)
        within = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        flat = flat[row_start[row_of_sample][sample_ix] + within]
    else:  # one sample per row, in row order
        lengths = rows["messages"].list.len().to_numpy().astype(np.int64)
        sample_ix = np.repeat(np.arange(len(last)), lengths)
    flat = flat.with_columns(pl.Series("_s", sample_ix, dtype=pl.Int64), pl.Series("_last", last[sample_ix], dtype=pl.Int64))
    if opts.prompt_completion and not opts.unroll:
        flat = flat.filter(pl.col("_pos") <= pl.col("_last"))
    role, content = pl.col("role"), pl.col("content")
    if opts.strip_think:
        flat = flat.with_columns(
            pl.when((role == "assistant") & content.str.contains("<think>", literal=True))
            .then(content.str.replace_all(_THINK, ""))
            .otherwise(content)
            .alias("content"),
            _without_reasoning(flat["extra"], flat["role"]),
        )
    cap = opts.max_tool_output_chars
    if cap is not None:
        before, _, after = TOOL_OUTPUT_TRUNCATION_MARKER.partition("{n}")
        over = (pl.col("content").str.len_chars().cast(pl.Int64) - cap).clip(lower_bound=0)
        flat = flat.with_columns(pl.when(role == "tool").then(over).otherwise(0).fill_null(0).cast(pl.Int64).alias("_cut"))
        flat = flat.with_columns(
            pl.when(pl.col("_cut") > 0)
            .then(pl.concat_str([pl.col("content").str.slice(0, cap), pl.lit(before),
                                 pl.col("_cut").cast(pl.String), pl.lit(after)]))
            .otherwise(pl.col("content"))
            .alias("content")
        )
    else:
        flat = flat.with_columns(pl.lit(0, pl.Int64).alias("_cut"))
    mask = (pl.col("_pos") == pl.col("_last")) if opts.last_only else (role == "assistant")
    # OpenAI's fine-tuning format: an assistant message with "weight": 0 is not trained on
    # (OpenAI fine-tuning guide, "Multi-turn chat examples"); the key rides in the message's extra
    weight = pl.col("extra").str.json_path_match("$.weight").cast(pl.Float64, strict=False)
    mask = mask & (weight != 0.0).fill_null(True)
    # the round-trip check on every call at once (flat, not a list.eval per message), summed per message
    n_calls = flat["tool_calls"].list.len().fill_null(0).cast(pl.Int64)
    calls = flat["tool_calls"].explode(empty_as_null=False, keep_nulls=False)
    bad = (calls.struct.field("arguments").fill_null("{}").to_frame("a")
           .select((~valid_object(pl.col("a"))).cast(pl.Int64))["a"].to_numpy())
    owner = np.repeat(np.arange(flat.height), n_calls.to_numpy())
    flat = flat.with_columns(
        mask.cast(pl.Int64).alias("_mask"),
        n_calls.alias("_calls"),
        pl.Series("_bad", np.bincount(owner, weights=bad, minlength=flat.height).astype(np.int64), dtype=pl.Int64),
    )
    if opts.parquet:
        return flat.with_columns(_message_struct(opts.encoding).alias("_m"))
    return flat  # JSON text: build_chunk encodes the messages shape by shape (message_texts)


_JSON_STRING = r'"(?:[^"\\]|\\.)*"'


def _without_reasoning(extra: pl.Series, role: pl.Series) -> pl.Series:
    """The messages' extra keys with ``REASONING_KEYS`` dropped from assistant turns (``strip_think``).

    A member whose value is a string (``reasoning_content`` as every reader writes it) is cut by
    regular expression, in Polars: a bare ``"`` never occurs inside a JSON string, so ``{"key":``
    and ``,"key":`` only match a member. What is left naming a key (a list of
    ``reasoning_details``) goes through ``_drop_json_keys``, once per distinct text.
    """
    names = _key_pattern(REASONING_KEYS)
    hit = ((role == "assistant") & extra.str.contains(names)).fill_null(False)
    if not hit.any():
        return extra
    member = names + r"\s*" + _JSON_STRING
    cut = (pl.when(pl.Series(hit)).then(pl.col("extra").str.replace_all("," + member, "")
                                         .str.replace_all(r"\{" + member + ",?", "{"))
           .otherwise(pl.col("extra")))
    out = extra.to_frame("extra").select(cut)["extra"]
    rest = pl.Series(hit) & out.str.contains(names).fill_null(False)
    if rest.any():
        out = out.scatter(rest.arg_true(), _drop_json_keys(out.filter(rest), REASONING_KEYS))
    return out


def _message_struct(encoding: Encoding) -> pl.Expr:
    """A message as an Arrow-friendly struct in the OpenAI shape (Parquet output)."""
    call = pl.element()
    calls = pl.col("tool_calls").list.eval(
        pl.struct(
            call.struct.field("id").alias("id"),
            pl.lit("function").alias("type"),
            pl.struct(call.struct.field("name").alias("name"),
                      call.struct.field("arguments").fill_null("{}").alias("arguments")).alias("function"),
        )
    )
    return pl.struct(
        pl.col("role"),
        pl.col("content").fill_null(""),
        pl.col("name"),
        pl.col("tool_call_id"),
        pl.when(pl.col("tool_calls").list.len().fill_null(0) > 0).then(calls).otherwise(None).alias("tool_calls"),
    )


def _system_message(opts: Options) -> pl.Expr:
    """The system message built from ``_sys``, as JSON text or as a struct (Parquet)."""
    if opts.parquet:
        return pl.struct(
            pl.lit("system").alias("role"), pl.col("_sys").alias("content"), pl.lit(None, pl.String).alias("name"),
            pl.lit(None, pl.String).alias("tool_call_id"),
            pl.lit(None, pl.List(pl.Struct({"id": pl.String, "type": pl.String,
                                            "function": pl.Struct({"name": pl.String, "arguments": pl.String})})))
            .alias("tool_calls"),
        )
    return pl.concat_str([pl.lit('{"role":"system","content":'), enc(pl.col("_sys")), pl.lit("}")])


def build_chunk(chunk: pl.DataFrame, opts: Options, counts: Counts, *, row_offset: int) -> pl.DataFrame:
    """Turn one chunk of prepared rows into written rows (updates ``counts``).

    Returns a ``line`` column of JSON text, or the Parquet columns.
    """
    rows, samples = _samples(chunk, opts, counts)
    if samples.height == 0:
        return pl.DataFrame()
    flat = _flat(rows, samples, opts)
    n = samples.height
    row_of_sample = np.searchsorted(rows["_r"].to_numpy(), samples["_r"].to_numpy()) if opts.unroll else np.arange(n)
    carried = rows.drop("messages", "_r")
    if opts.unroll:  # rows repeat once per turn
        carried = carried[row_of_sample]
    need_sys = carried["_need_sys"].to_numpy().astype(bool)
    sizes = np.bincount(flat["_s"].to_numpy(), minlength=n).astype(np.int64)
    flat_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=flat_offsets[1:])
    starts = flat_offsets[:-1]

    def total(values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values, starts) if len(values) else np.zeros(n, np.int64)

    cut = flat["_cut"].to_numpy()
    stats = {
        "_trained": total(flat["_mask"].to_numpy()),
        "_n_msgs": sizes + need_sys,
        "_cut_n": total((cut > 0).astype(np.int64)),
        "_cut_chars": total(cut),
        "_n_calls": total(flat["_calls"].to_numpy()),
        "_n_bad": total(flat["_bad"].to_numpy()),
        "_has_system": need_sys | (flat["role"].gather(starts) == "system").fill_null(False).to_numpy(),
    }
    out = pl.concat([samples, carried], how="horizontal").with_columns([pl.Series(k, v) for k, v in stats.items()])
    # slot the system message in front of the samples that need one: one gather, no sort
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes + need_sys, out=offsets[1:])
    slots = int(offsets[-1])
    is_sys = np.zeros(slots, dtype=bool)
    is_sys[offsets[:-1][need_sys]] = True
    order = np.empty(slots, dtype=np.int64)
    order[~is_sys] = np.arange(len(flat))
    order[is_sys] = len(flat) + np.arange(int(need_sys.sum()))
    system = out.filter(pl.Series(need_sys)).select(_system_message(opts).alias("_m"))["_m"]
    mask: np.ndarray | None = None
    if opts.format == "openai" and not opts.prompt_completion:
        mask = np.concatenate([flat["_mask"].to_numpy(), np.zeros(int(need_sys.sum()), np.int64)])[order]
        if opts.parquet:
            out = out.with_columns(list_series("_loss_mask", pl.Series(mask), offsets))
    _count(out, opts, counts, row_offset)
    if not opts.parquet:
        texts, where = message_texts(flat, opts.encoding)
        # the slots index the messages in flat's order, then the system messages: point them at the texts
        at = np.concatenate([where, len(texts) + np.arange(len(system), dtype=np.int64)])
        return _stream_json(out, opts, pl.concat([texts, system.cast(pl.String)]), at[order], offsets, mask)
    pool = pl.concat([flat["_m"], system.cast(flat["_m"].dtype)]).rechunk()
    message = pool.gather(order)
    if opts.prompt_completion:
        # the completion is each sample's last message; the prompt is everything before it
        last_ix = offsets[1:] - 1
        keep = np.ones(slots, dtype=bool)
        keep[last_ix] = False
        prompt = list_series("_prompt_msgs", message.filter(pl.Series(keep)), offsets - np.arange(n + 1))
        completion = list_series("_completion_msgs", message.gather(last_ix), np.arange(n + 1, dtype=np.int64))
        out = out.with_columns(prompt, completion)
    else:
        out = out.with_columns(list_series("_messages", message, offsets))
    return _assemble_parquet(out, opts)


def _stream_json(out: pl.DataFrame, opts: Options, pool: pl.Series, order: np.ndarray, offsets: np.ndarray,
                 mask: np.ndarray | None) -> pl.DataFrame:
    """The chunk's JSON lines as a sequence of pieces written back to back (column ``piece``).

    A sample is ``head, m0, ",", m1, ..., mid, ..., tail``: the message pieces are the JSON texts
    already built per message; for OpenAI rows ``mid`` is the sample's whole ``],"loss_mask":[0,1,...``
    (written by numpy into one buffer for the chunk); for prompt/completion rows ``mid`` closes the
    prompt and the last message follows as the completion; the tail holds every other key and the
    newline. One gather puts the pieces in order, so no message text is copied into a per-row list
    or line.
    """
    n = out.height
    tails = _tail_json(out, opts)
    head, mid = ('{"prompt":[', '],"completion":[') if opts.prompt_completion else ('{"messages":[', "")
    n_msgs = offsets[1:] - offsets[:-1]
    base_tail = len(pool)
    comma, head_ix, mid_ix = (base_tail + n + i for i in range(3))
    constants = [",", head, mid]
    extra = [] if mask is None else [_mask_texts(mask, offsets)]
    # one chunk: a gather from a series of several chunks costs ten times one from a single chunk
    pieces = pl.concat([pool, tails, pl.Series(constants, dtype=pool.dtype), *extra]).rechunk()
    sample_of_slot = np.repeat(np.arange(n), n_msgs)
    j = np.arange(int(offsets[-1])) - offsets[:-1][sample_of_slot]
    p = n_msgs - 1 if opts.prompt_completion else n_msgs  # messages before ``mid``
    after = np.ones(n, np.int64) if opts.prompt_completion else np.zeros(n, np.int64)
    length = 1 + np.maximum(2 * p - 1, 0) + (1 if mid or opts.prompt_completion or mask is not None else 0) + after + 1
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(length[:-1], out=starts[1:])
    seq = np.empty(int(length.sum()), dtype=np.int64)
    seq[starts] = head_ix
    seq[starts + length - 1] = base_tail + np.arange(n)
    in_prompt = j < p[sample_of_slot]
    pos = starts[sample_of_slot] + 1 + 2 * j
    seq[pos[in_prompt]] = order[in_prompt]
    has_comma = in_prompt & (j < p[sample_of_slot] - 1)
    seq[pos[has_comma] + 1] = comma
    mid_pos = starts + 1 + np.maximum(2 * p - 1, 0)
    if opts.prompt_completion:
        seq[mid_pos] = mid_ix
        seq[mid_pos + 1] = order[offsets[1:] - 1]
    elif mask is not None:
        seq[mid_pos] = mid_ix + 1 + np.arange(n)  # the sample's loss_mask text
    return pl.DataFrame({"piece": pieces.gather(seq)})


_LOSS_MASK_KEY = np.frombuffer(b'],"loss_mask":[', dtype=np.uint8)


def _mask_texts(mask: np.ndarray, offsets: np.ndarray) -> pl.Series:
    """Each sample's ``],"loss_mask":[0,1,...`` (its slots' 0/1 digits between commas): one piece per sample.

    Conversations repeat a handful of masks, so each distinct mask (its bits and length as one
    integer) is written once and gathered for its samples; past ``EXPORT_MASK_KINDS`` distinct masks (or
    conversations longer than ``EXPORT_MASK_BITS``), the digits of every slot and the commas between a
    sample's digits are written by numpy into one byte array that becomes an Arrow string array.
    No Python runs per row either way.
    """
    n = len(offsets) - 1
    sizes = offsets[1:] - offsets[:-1]
    sample = np.repeat(np.arange(n), sizes)
    j = np.arange(len(mask)) - offsets[:-1][sample]
    if n and int(sizes.max()) <= EXPORT_MASK_BITS:  # few distinct masks: build each once, gather the rest
        bits = np.bincount(sample, weights=(mask.astype(np.int64) << j).astype(np.float64), minlength=n).astype(np.int64)
        kinds, inverse = np.unique(bits * (EXPORT_MASK_BITS + 1) + sizes, return_inverse=True)
        if len(kinds) <= EXPORT_MASK_KINDS:
            texts = []
            for kind in kinds.tolist():
                code, size = divmod(kind, EXPORT_MASK_BITS + 1)
                texts.append('],"loss_mask":[' + ",".join(str(code >> i & 1) for i in range(size)))
            return pl.Series(texts, dtype=pl.String).gather(inverse.ravel())
    key = len(_LOSS_MASK_KEY)
    length = key + np.maximum(2 * sizes - 1, 0)
    bounds = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(length, out=bounds[1:])
    buf = np.full(int(bounds[-1]), ord(","), dtype=np.uint8)
    buf[(bounds[:-1, None] + np.arange(key)).ravel()] = np.tile(_LOSS_MASK_KEY, n)
    buf[bounds[:-1][sample] + key + 2 * j] = ord("0") + mask.astype(np.uint8)
    array = pa.LargeStringArray.from_buffers(n, pa.py_buffer(bounds), pa.py_buffer(buf))
    return pl.Series(array).cast(pl.String)


def line_bytes(out: pl.DataFrame) -> memoryview:
    """A chunk's JSON lines as one buffer: its ``piece`` column's texts back to back, UTF-8.

    Arrow's large string array holds its values contiguously, in order, so the lines are the
    slice of its data buffer between the first and the last offset: one copy out of Polars' string
    views and one ``write``, whatever the number of pieces.
    """
    arrow = out["piece"].to_arrow()
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    data = arrow.buffers()[2]
    if data is None or len(arrow) == 0:
        return memoryview(b"")
    width = 8 if pa.types.is_large_string(arrow.type) else 4
    offsets = np.frombuffer(arrow.buffers()[1], dtype=np.int64 if width == 8 else np.int32,
                            count=len(arrow) + 1, offset=width * arrow.offset)
    return memoryview(data)[int(offsets[0]):int(offsets[-1])]


def _count(out: pl.DataFrame, opts: Options, counts: Counts, row_offset: int) -> None:
    totals = out.select(
        pl.len().alias("n"),
        pl.col("_has_system").sum().alias("sys"),
        pl.col("_tools").is_not_null().sum().alias("tools"),
        pl.col("_trained").sum().alias("trained"),
        (pl.col("_n_msgs") - pl.col("_trained")).sum().alias("masked"),
        pl.col("_cut_n").sum().alias("cut_n"),
        (pl.col("_cut_n") > 0).sum().alias("cut_rows"),
        pl.col("_cut_chars").sum().alias("cut_chars"),
        pl.col("_n_calls").sum().alias("calls"),
        pl.col("_n_bad").sum().alias("bad"),
    ).row(0, named=True)
    counts.n_written += int(totals["n"])
    counts.with_system += int(totals["sys"] or 0)
    counts.with_tools += int(totals["tools"] or 0)
    counts.trained += int(totals["trained"] or 0)
    counts.masked += int(totals["masked"] or 0)
    counts.truncated_messages += int(totals["cut_n"] or 0)
    counts.truncated_rows += int(totals["cut_rows"] or 0)
    counts.chars_cut += int(totals["cut_chars"] or 0)
    counts.calls_checked += int(totals["calls"] or 0)
    counts.calls_invalid += int(totals["bad"] or 0)
    if totals["bad"] and len(counts.invalid_rows) < EXPORT_EXAMPLES:
        bad = out.filter(pl.col("_n_bad") > 0)["_row"].unique(maintain_order=True).head(EXPORT_EXAMPLES)
        counts.invalid_rows.extend(int(r) + row_offset for r in bad.to_list())
        del counts.invalid_rows[EXPORT_EXAMPLES:]


def _carried_names(out: pl.DataFrame) -> list[str]:
    return [name for name in CARRIED if name in out.columns]


_NULL_FIELD = r',"[^"\\]*":null'


def _tail_json(out: pl.DataFrame, opts: Options) -> pl.Series:
    """Everything after a sample's messages: ``],"loss_mask":[...],"tools":...,...}`` and a newline.

    The scalar and struct keys go through ``json_encode`` of a struct, one per pattern of null keys
    (``_objects``), so a null key is never written; where a nested value holds a null, one struct
    for all rows with the null keys removed afterwards (a ``,"`` never occurs inside a JSON string,
    so the pattern cannot touch text). The group keys come from the task's ``_group_json`` when the
    stats carry it (``with_group_json``). JSON columns (tools, faults) are spliced in raw.
    """
    pieces: list[pl.Expr] = [pl.lit("]")]  # closes messages, completion or loss_mask
    if out["_tools"].null_count() < out.height:  # a key only where a row has tools
        if opts.format == "openai":
            pieces.append(field_piece("tools", pl.col("_tools"), raw=True))
        else:  # TRL's SFTTrainer json.loads a string tools column; a string keeps schemas intact
            pieces.append(field_piece("tools", pl.col("_tools")))
    for name in _carried_names(out):
        if name in _JSON_KINDS:
            pieces.append(field_piece(name, pl.col(name), raw=True))
    fields: list[pl.Expr] = [
        pl.lit(SCHEMA_VERSION).alias("schema_version"),
        pl.col("reward").fill_nan(None),
        pl.col("prompt").alias("prompt" if opts.format == "openai" else "prompt_text"),
    ]
    fields += [pl.col(name) for name in _carried_names(out) if name not in _JSON_KINDS]
    if opts.unroll:
        fields.append(pl.struct(pl.col("_turn").alias("turn"), pl.col("_turns").alias("turns")).alias("unroll"))
    # the group keys close the row unless truncation counts follow them; then each task's are written once
    per_task = "_group_json" in out.columns and not opts.unroll and opts.max_tool_output_chars is None
    if not opts.unroll and "group_id" in out.columns and not per_task:
        fields += _group_fields(out.schema)
    if opts.max_tool_output_chars is not None:
        fields += [pl.when(pl.col("_cut_n") > 0).then(pl.col("_cut_n")).alias("tool_output_truncated"),
                   pl.when(pl.col("_cut_n") > 0).then(pl.col("_cut_chars")).alias("tool_output_chars_cut")]
    values = out.select(fields).rechunk()
    body = _objects(values)
    if body is None:
        tail = pl.struct(fields).struct.json_encode()
        # a null key is there only where a value is null, a null first key only inside a nested object
        # (the row's own first key, schema_version, is never null): run each pass only where it can match
        tail = tail.str.replace_all(_NULL_FIELD, "")  # every null key that follows another key
        tail = (tail.str.replace_all(r'\{"[^"\\]*":null,', "{")  # then a null first key of a nested object
                .str.replace_all(r'\{"[^"\\]*":null\}', "{}"))
    else:
        tail = pl.lit(body)
    if per_task:  # the row's object, then its task's group keys
        group = pl.col("_group_json")
        joined = pl.concat_str([tail.str.head(-1), pl.lit(","), group.str.slice(1)])
        tail = pl.when(group.is_null()).then(tail).otherwise(joined) if out["_group_json"].null_count() else joined
    pieces += [pl.lit(","), tail.str.slice(1), pl.lit("\n")]  # the object's keys, without its "{"
    return out.select(pl.concat_str(pieces).alias("piece"))["piece"]


def _group_fields(schema: Any) -> list[pl.Expr]:
    return [pl.col(c).fill_nan(None) if schema[c] == pl.Float64 else pl.col(c) for c in _GROUP_COLUMNS]


def with_group_json(stats: pl.DataFrame) -> pl.DataFrame:
    """``stats`` (:func:`group_stats`) with ``_group_json``: each task's group keys as one JSON object.

    A JSON export joins it onto its rows instead of encoding the same six keys for each of a
    task's rollouts (the bytes are the same: the same ``json_encode``, null keys left out).
    """
    text = _objects(stats.select(_group_fields(stats.schema)))
    return stats if text is None else stats.with_columns(text.alias("_group_json"))


def _null_like(series: pl.Series) -> pl.Series:
    """Where ``json_encode`` writes a scalar as ``null``: a null, or a float that is not finite."""
    if series.dtype.is_float():
        return ~series.is_finite().fill_null(False)
    return series.is_null()


def _inner_nulls(series: pl.Series) -> bool:
    """Whether a value of ``series`` is null, or holds a null at any depth (lists are not looked into)."""
    if isinstance(series.dtype, pl.Struct):
        return bool(series.null_count()) or any(_inner_nulls(f) for f in series.struct.unnest().iter_columns())
    if isinstance(series.dtype, (pl.List, pl.Array, pl.Object)):
        return True
    return bool(_null_like(series).any())


def _objects(values: pl.DataFrame) -> pl.Series | None:
    """Each row of ``values`` as a JSON object without its null keys, or None where a nested value holds a null.

    Rows are split by which keys are null and each split is one ``json_encode`` of a struct of its
    other keys, so no null key is written and none is taken out again; a nested null (a key inside
    a struct column) is left to the caller's pattern passes, as are chunks with more null patterns
    than ``EXPORT_NULL_SHAPES``.
    """
    cols = values.get_columns()
    nested = [c for c in cols if isinstance(c.dtype, (pl.Struct, pl.List, pl.Array, pl.Object))]
    if any(_inner_nulls(c) for c in nested):
        return None
    gaps = [(i, _null_like(c).to_numpy()) for i, c in enumerate(cols) if not isinstance(c.dtype, pl.Struct)]
    gaps = [(i, g) for i, g in gaps if g.any()]
    if not gaps:
        return values.select(pl.struct(pl.all()).struct.json_encode().alias("_o"))["_o"]
    if len(gaps) > 62:
        return None
    code = np.zeros(values.height, dtype=np.int64)
    for bit, (_, g) in enumerate(gaps):
        code |= g.astype(np.int64) << bit
    kinds = np.unique(code)
    if len(kinds) > EXPORT_NULL_SHAPES:
        return None
    texts: list[pl.Series] = []
    rows: list[np.ndarray] = []
    for kind in kinds.tolist():
        skip = {i for bit, (i, _) in enumerate(gaps) if kind >> bit & 1}
        ix = np.flatnonzero(code == kind)
        keep = [c for i, c in enumerate(values.columns) if i not in skip]
        texts.append(values[ix].select(pl.struct(keep).struct.json_encode().alias("_o"))["_o"])
        rows.append(ix)
    where = np.empty(values.height, dtype=np.int64)
    where[np.concatenate(rows)] = np.arange(values.height)
    return pl.concat(texts).rechunk().gather(where)


def _assemble_parquet(out: pl.DataFrame, opts: Options) -> pl.DataFrame:
    cols: list[pl.Expr | str] = []
    if opts.prompt_completion:
        cols += [pl.col("_prompt_msgs").alias("prompt"), pl.col("_completion_msgs").alias("completion")]
    else:
        cols.append(pl.col("_messages").alias("messages"))
        if opts.format == "openai":
            cols.append(pl.col("_loss_mask").alias("loss_mask"))
    cols.append(pl.col("_tools").alias("tools"))
    cols.append(pl.col("reward").fill_nan(None))
    cols.append(pl.col("prompt").alias("prompt_text") if opts.format == "trl" else pl.col("prompt"))
    cols += _carried_names(out)
    cols.append(pl.lit(SCHEMA_VERSION).alias("schema_version"))
    if opts.unroll:
        cols.append(pl.struct(pl.col("_turn").alias("turn"), pl.col("_turns").alias("turns")).alias("unroll"))
    elif "group_id" in out.columns:
        cols += [pl.col(c).fill_nan(None) if out.schema[c] == pl.Float64 else pl.col(c) for c in _GROUP_COLUMNS]
    if opts.max_tool_output_chars is not None:
        cols += [pl.col("_cut_n").alias("tool_output_truncated"), pl.col("_cut_chars").alias("tool_output_chars_cut")]
    return out.select(cols)
