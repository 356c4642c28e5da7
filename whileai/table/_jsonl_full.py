"""A batch of JSONL lines read whole, conversation included, columnar, for the row shapes we know.

Two shapes, told by the batch's first row:

- rows with ``messages`` (OpenAI chat rows with ``{"id", "type", "function": {"name",
  "arguments"}}`` tool calls, or the flat ``{"id", "name", "arguments"}`` calls with ``extra``
  and explicit nulls that Polars' ``write_ndjson`` of a table writes): pyarrow's JSON reader
  parses the batch with the conversation's dtype given, which is strict (a number or an object
  where text is expected refuses the batch), and the canonical messages are assembled from the
  flat message and call columns;
- whileai 0.131 rows (``prompt``, ``steps`` of ``{tool, arguments, result}``, ``final_text``):
  Polars parses the batch with ``steps`` as JSON text; each distinct ``steps`` text is decoded
  once, in Python, into its turns (exactly as ``normalize.messages_from_steps`` builds them) and
  its canonical JSON, and the conversations are cut from those turns by offsets.

Each reader returns None at any doubt (a field it does not know, a tool call without an id, a
tool result without its call's id, a number inside ``steps`` whose JSON text Polars may have
rewritten, a content alias, a row with nothing to build a conversation from): the per-row
reader then takes the batch and names any bad line. Tests check both give the same frame.
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from whileai.table import normalize as nz
from whileai.table._arrow import list_series
from whileai.table.schema import COLUMNS, MESSAGE, TOOL_CALL, alias_map

__all__ = ["read_batch"]

_MESSAGES_DTYPE = pl.List(MESSAGE)
_JSON_NAMES = tuple(c.name for c in COLUMNS if c.kind == "json")
_CONTENT = ("prompt", "final_text", "system_prompt", "messages", "steps")
# A number outside a string in Polars' JSON text of a value: Polars writes 1.0 as 1 and 1e20 as
# digits, so such text is not the file's; a number inside a string only costs the per-row read.
_NUMBER_IN_JSON = r"[\[:,]\s*-?[0-9]"
_STRING_STEPS = rb'"steps"\s*:\s*"'


def read_batch(data: bytes) -> pl.DataFrame | None:
    """One batch of JSONL lines as the per-row reader builds it (before frame normalisation), or None."""
    head = _first_row(data)
    if head is None:
        return None
    aliases = alias_map()
    if any(aliases.get(key) in _CONTENT for key in head):
        return None  # an alias of a content column: the per-row reader resolves it row by row
    if "messages" in head:
        return _messages_batch(data, list(head))
    if "steps" in head:
        return _steps_batch(data, list(head))
    return None


def _first_row(data: bytes) -> dict[str, Any] | None:
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line, start = data[start:end], end + 1
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError:
                return None
            return row if isinstance(row, dict) else None
    return None


# ------------------------------------------------------------------------------------------
# rows with messages
# ------------------------------------------------------------------------------------------

_CALL = pa.struct([("id", pa.string()), ("type", pa.string()),
                   ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
                   ("name", pa.string()), ("arguments", pa.string())])
_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string()), ("name", pa.string()),
                      ("tool_call_id", pa.string()), ("tool_calls", pa.list_(_CALL)), ("extra", pa.string())])


def _messages_batch(data: bytes, head: list[str]) -> pl.DataFrame | None:
    df = _arrow_rows(data, head)
    if df is None or df.height == 0 or any(n in df.columns and df[n].null_count() < df.height for n in _JSON_NAMES):
        return None  # free-form JSON columns: the per-row reader writes their canonical text
    if "steps" in df.columns or df["messages"].null_count():
        return None  # a row without a conversation is built from its other fields, row by row
    for name in ("prompt", "final_text", "system_prompt"):
        if name in df.columns and (name not in head or df.schema[name] not in (pl.String, pl.Null)):
            return None
    messages = _canonical_messages(df["messages"])
    if messages is None:
        return None
    return _fill_from_messages(df.with_columns(messages))


def _arrow_rows(data: bytes, head: list[str]) -> pl.DataFrame | None:
    """The batch through pyarrow's JSON reader, ``messages`` typed; columns in first-seen order."""
    import pyarrow.json as pj

    schema = pa.schema([("messages", pa.list_(_MESSAGE))])
    # blocks parsed in parallel; a line longer than a block refuses the batch
    read = pj.ReadOptions(block_size=max(1 << 24, min(len(data) // 4 + 1, 1 << 30)))
    try:
        for _ in range(2):
            table = pj.read_json(pa.BufferReader(data), read_options=read, parse_options=pj.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="infer"))
            stamps = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
            if not stamps:
                break
            # text that looks like a date is text to the per-row reader
            schema = pa.schema([*schema, *((name, pa.string()) for name in stamps)])
        else:
            return None
    except (pa.ArrowException, ValueError):  # a value of another type, a broken line
        return None
    if table.schema.field("messages").type != pa.list_(_MESSAGE) or any(_has_timestamp(f.type) for f in table.schema):
        return None  # a message or call key outside the known shapes, a date inside a nested value
    df = pl.from_arrow(table)
    assert isinstance(df, pl.DataFrame)
    order = [n for n in head if n in df.columns] + [n for n in df.columns if n not in head]
    return df.select(order)


def _has_timestamp(dtype: pa.DataType) -> bool:
    if pa.types.is_timestamp(dtype):
        return True
    if pa.types.is_struct(dtype):
        return any(_has_timestamp(dtype.field(i).type) for i in range(dtype.num_fields))
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _has_timestamp(dtype.value_type)
    return False


def _canonical_messages(series: pl.Series) -> pl.Series | None:
    """MESSAGE structs from the typed messages column, or None when a row needs the per-row reader."""
    lengths = series.list.len().to_numpy()
    flat = series.explode(empty_as_null=False, keep_nulls=False).struct.unnest()
    if flat["role"].null_count():
        return None  # a message without a role (or a null message): the per-row reader refuses it
    if flat.filter((pl.col("role") == "tool") & pl.col("tool_call_id").is_null()).height:
        return None  # a tool result linked to its call by order: the per-row reader links it
    call_lengths = flat["tool_calls"].list.len().fill_null(0).to_numpy()
    calls = flat["tool_calls"].explode(empty_as_null=False, keep_nulls=False).struct.unnest()
    if calls["id"].null_count():
        return None  # a null call, or one without an id: the per-row reader names it and gives ids
    fn = pl.col("function")
    calls = calls.select(
        pl.col("id"),
        pl.when(fn.is_not_null()).then(fn.struct.field("name")).otherwise(pl.col("name")).alias("name"),
        pl.when(fn.is_not_null()).then(fn.struct.field("arguments")).otherwise(pl.col("arguments")).alias("arguments"),
    )
    calls = calls.with_columns(_mapped(calls["arguments"], nz.canonical_arguments).fill_null("{}"))
    call_offsets = np.zeros(flat.height + 1, dtype=np.int64)
    np.cumsum(call_lengths, out=call_offsets[1:])
    tool_calls = list_series("tool_calls", calls.to_struct("c").cast(TOOL_CALL), call_offsets).cast(pl.List(TOOL_CALL))
    extra = flat["extra"]
    if extra.null_count() < extra.len():  # a source message's own key "extra", kept as the per-row reader keeps it
        extra = _mapped(extra, lambda v: nz.dumps({"extra": v}))
    out = pl.DataFrame([flat["role"], flat["content"], flat["name"], flat["tool_call_id"], tool_calls,
                        extra.alias("extra")])
    offsets = np.zeros(series.len() + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return list_series("messages", out.to_struct("m").cast(MESSAGE), offsets).cast(_MESSAGES_DTYPE)


def _mapped(values: pl.Series, fn: Any) -> pl.Series:
    """``fn`` applied to each distinct non-null value (a null stays null)."""
    uniq = values.drop_nulls().unique().to_list()
    mapping = dict(zip(uniq, (fn(v) for v in uniq)))
    return values.replace_strict(mapping, default=None, return_dtype=pl.String)


def _fill_from_messages(df: pl.DataFrame) -> pl.DataFrame:
    """A null prompt, final_text or system_prompt taken from the conversation, as the per-row reader does."""
    msgs = pl.col("messages")
    first, last = msgs.list.first(), msgs.list.last()
    fills = {
        "prompt": msgs.list.eval(pl.element().filter(pl.element().struct.field("role") == "user")
                                 .struct.field("content")).list.first(),
        "final_text": pl.when((last.struct.field("role") == "assistant")
                              & (last.struct.field("tool_calls").list.len() == 0)).then(last.struct.field("content")),
        "system_prompt": pl.when(first.struct.field("role") == "system").then(first.struct.field("content")),
    }
    exprs = [pl.coalesce(pl.col(name).cast(pl.String), fill).alias(name)
             for name, fill in fills.items() if name in df.columns and df[name].null_count()]
    return df.with_columns(exprs) if exprs else df


# ------------------------------------------------------------------------------------------
# whileai 0.131 rows
# ------------------------------------------------------------------------------------------


def _steps_batch(data: bytes, head: list[str]) -> pl.DataFrame | None:
    if "prompt" not in head or "final_text" not in head:
        return None  # a reply or prompt the per-row reader derives and places itself
    import re

    if re.search(_STRING_STEPS, data):
        return None  # steps given as text: kept verbatim and never turned into turns
    df = _polars_rows(data)
    if df is None or df.height == 0 or "messages" in df.columns:
        return None
    for name in ("prompt", "final_text", "system_prompt"):
        if name in df.columns and df.schema[name] not in (pl.String, pl.Null):
            return None
    json_cols = [n for n in _JSON_NAMES if n in df.columns and df.schema[n] == pl.String and df[n].null_count() < df.height]
    if any(df[n].str.contains(_NUMBER_IN_JSON).any() for n in json_cols):
        return None
    if any(n != "steps" for n in json_cols):
        return None  # other free-form JSON columns: the per-row reader writes their canonical text
    steps = df["steps"].cast(pl.String) if "steps" in df.columns else pl.Series("steps", [None] * df.height, pl.String)
    built = _steps_messages(df, steps)
    if built is None:
        return None
    messages, canonical = built
    at = len([n for n in head if n in df.columns])
    columns = [*df.columns[:at], "messages", *df.columns[at:]]
    df = df.with_columns(messages)
    if "steps" in df.columns:
        df = df.with_columns(canonical)
    return _fill_from_messages(df.select(columns))


def _polars_rows(data: bytes) -> pl.DataFrame | None:
    """The batch through Polars' JSONL reader, free-form JSON columns as text (Polars' rendering)."""
    # a name also met as a nested key is dropped from the overrides when the reader says no column has it
    overrides = {name: pl.String for name in _JSON_NAMES if f'"{name}"'.encode() in data}
    for _ in range(len(overrides) + 1):
        try:
            return pl.read_ndjson(io.BytesIO(data), infer_schema_length=None, schema_overrides=overrides)
        except pl.exceptions.SchemaFieldNotFoundError as exc:
            missing = next((n for n in overrides if n in str(exc)), None)
            if missing is None:
                return None
            overrides.pop(missing)
        except Exception:  # a broken line, a value Polars cannot type: the per-row reader says
            return None
    return None


def _steps_messages(df: pl.DataFrame, steps: pl.Series) -> tuple[pl.Series, pl.Series] | None:
    """The conversations of 0.131 rows, and the canonical JSON of each ``steps``; None at any doubt."""
    n = df.height
    none = pl.Series([None] * n, dtype=pl.String)
    prompt = df["prompt"].cast(pl.String) if "prompt" in df.columns else none
    final = df["final_text"].cast(pl.String) if "final_text" in df.columns else none
    system = df["system_prompt"].cast(pl.String) if "system_prompt" in df.columns else none
    if (prompt.is_null() & steps.is_null() & final.is_null()).any():
        return None  # a row with nothing to build a conversation from keeps none, row by row
    uniq = steps.drop_nulls().unique(maintain_order=True)
    turns = _Turns()
    canonical: list[str] = []
    for text in uniq.to_list():
        value = json.loads(text)
        if not isinstance(value, list):
            return None
        canonical.append(nz.dumps(value))
        turns.add(value)
    index = (steps.replace_strict(uniq, pl.Series(np.arange(uniq.len(), dtype=np.int64)), default=-1,
                                  return_dtype=pl.Int64).fill_null(-1).to_numpy())
    counts = np.append(np.asarray(turns.counts, dtype=np.int64), 0)[index]  # -1 (no steps) takes the 0
    starts = np.append(np.asarray(turns.starts, dtype=np.int64), 0)[index]
    has_system = (system.is_not_null() & (system != "")).fill_null(False).to_numpy()
    has_prompt = prompt.is_not_null().to_numpy()
    has_final = final.is_not_null().to_numpy()
    per_row = has_system.astype(np.int64) + has_prompt + counts + has_final
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_row, out=offsets[1:])
    # where each piece lands in the flat message array
    step_total = int(counts.sum())
    step_rows = np.repeat(np.arange(n), counts)
    within = np.arange(step_total) - np.repeat(np.cumsum(counts) - counts, counts)
    step_at = offsets[:-1][step_rows] + has_system[step_rows] + has_prompt[step_rows] + within
    step_src = starts[step_rows] + within
    table = turns.table()
    pieces = [
        _text_turns("system", system.filter(pl.Series(has_system))),
        _text_turns("user", prompt.filter(pl.Series(has_prompt))),
        table[step_src] if step_total else table.clear(),
        _text_turns("assistant", final.filter(pl.Series(has_final))),
    ]
    positions = np.concatenate([offsets[:-1][has_system], (offsets[:-1] + has_system)[has_prompt], step_at,
                                (offsets[1:] - 1)[has_final]])
    order = np.empty(int(offsets[-1]), dtype=np.int64)
    order[positions] = np.arange(positions.size)
    flat = pl.concat(pieces, how="vertical")[order]
    messages = list_series("messages", flat.to_struct("m").cast(MESSAGE), offsets).cast(_MESSAGES_DTYPE)
    step_text = pl.Series("steps", canonical, dtype=pl.String)
    canonical_steps = steps.replace_strict(uniq, step_text, default=None, return_dtype=pl.String).alias("steps")
    return messages, canonical_steps


def _text_turns(role: str, content: pl.Series) -> pl.DataFrame:
    """Plain turns of one role with the given contents (no name, call or extra)."""
    n = content.len()
    return pl.DataFrame({
        "role": pl.Series([role], dtype=pl.String).gather(np.zeros(n, dtype=np.int64)),
        "content": content.cast(pl.String), "name": pl.Series([None] * n, dtype=pl.String),
        "tool_call_id": pl.Series([None] * n, dtype=pl.String),
        "tool_calls": list_series("tool_calls", pl.Series([], dtype=TOOL_CALL), np.zeros(n + 1, dtype=np.int64))
        .cast(pl.List(TOOL_CALL)),
        "extra": pl.Series([None] * n, dtype=pl.String),
    })


class _Turns:
    """The turns of each distinct ``steps`` value, flat, as ``normalize.messages_from_steps`` makes them."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.counts: list[int] = []
        self.role: list[str] = []
        self.content: list[str | None] = []
        self.name: list[str | None] = []
        self.call_id: list[str | None] = []
        self.extra: list[str | None] = []
        self.call_ids: list[str] = []
        self.call_name: list[str | None] = []
        self.call_args: list[str] = []
        self.has_call: list[bool] = []

    def _turn(self, role: str, content: Any, name: Any = None, call_id: str | None = None,
              call: tuple[str, Any, Any] | None = None) -> None:
        text, parts = nz._content_text(content)
        self.role.append(role)
        self.content.append(text)
        self.name.append(None if name is None else str(name))
        self.call_id.append(call_id)
        self.extra.append(None if parts is None else nz.dumps({"content_parts": parts}))
        self.has_call.append(call is not None)
        if call is not None:
            self.call_ids.append(call[0])
            self.call_name.append(None if call[1] is None else str(call[1]))
            self.call_args.append(nz.canonical_arguments(call[2]))

    def add(self, steps: list[Any]) -> None:
        self.starts.append(len(self.role))
        n_call = 0
        for step in steps:
            if not isinstance(step, dict):
                continue
            if "tool" in step:
                call_id = f"call_{n_call:04d}"
                n_call += 1
                tool = step["tool"]
                self._turn("assistant", step.get("text"), call=(call_id, tool, step.get("arguments")))
                result = step.get("result")
                self._turn("tool", result if isinstance(result, str) else nz.dumps(result), name=tool,
                           call_id=call_id)
            elif "user" in step:
                self._turn("user", step["user"])
            elif "text" in step:
                self._turn("assistant", step["text"])
        self.counts.append(len(self.role) - self.starts[-1])

    def table(self) -> pl.DataFrame:
        has_call = np.asarray(self.has_call, dtype=bool)
        call_offsets = np.zeros(has_call.size + 1, dtype=np.int64)
        np.cumsum(has_call, out=call_offsets[1:])
        calls = pl.DataFrame({"id": pl.Series(self.call_ids, dtype=pl.String),
                              "name": pl.Series(self.call_name, dtype=pl.String),
                              "arguments": pl.Series(self.call_args, dtype=pl.String)})
        tool_calls = list_series("tool_calls", calls.to_struct("c").cast(TOOL_CALL), call_offsets)
        return pl.DataFrame({
            "role": pl.Series(self.role, dtype=pl.String),
            "content": pl.Series(self.content, dtype=pl.String),
            "name": pl.Series(self.name, dtype=pl.String),
            "tool_call_id": pl.Series(self.call_id, dtype=pl.String),
            "tool_calls": tool_calls.cast(pl.List(TOOL_CALL)),
            "extra": pl.Series(self.extra, dtype=pl.String),
        })
