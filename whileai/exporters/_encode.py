"""Column expressions that write JSON text natively: one message, one tool call, one field.

Every training row is assembled as JSON text by Polars string expressions, so a million rows are
encoded in Rust without a Python dict per row. A string is JSON-escaped by encoding a one-field
struct (``{"v":...}``) and stripping the wrapper; canonical JSON columns (tool arguments, tools,
faults) are spliced in raw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl
import pyarrow as pa

__all__ = ["Encoding", "call_json", "enc", "field_piece", "json_arguments", "large_to_small", "message_json", "message_texts",
           "valid_object"]

#: How tool-call arguments are written: a JSON string (OpenAI wire) or a JSON object (TRL).
Encoding = Literal["json_string", "dict"]


def enc(expr: pl.Expr) -> pl.Expr:
    """The value of ``expr`` as JSON text (strings quoted and escaped, structs as objects).

    The wrapper is cut by position (``{"v":`` is always the first five characters and ``}`` the
    last), which Polars does on string views without the search a ``strip_prefix`` makes.
    """
    return pl.struct(expr.alias("v")).struct.json_encode().str.slice(5).str.head(-1)


def valid_object(text: pl.Expr) -> pl.Expr:
    """True where ``text`` parses as a JSON object (what a chat template's ``| tojson`` needs)."""
    return text.str.json_path_match("$").is_not_null() & text.str.strip_chars_start().str.starts_with("{")


def call_json(call: pl.Expr, encoding: Encoding) -> pl.Expr:
    """One TOOL_CALL struct as an OpenAI tool call, arguments as a JSON string or an object.

    Arguments that do not parse as a JSON object are written as a JSON string under either
    encoding, so a broken call never breaks the line (the round-trip check counts them).
    """
    args = call.struct.field("arguments").fill_null("{}")
    if encoding == "dict":
        args_text = pl.when(valid_object(args)).then(args).otherwise(enc(args))
    else:
        args_text = enc(args)
    call_id = call.struct.field("id")
    return pl.concat_str(
        [
            pl.when(call_id.is_not_null()).then(pl.concat_str([pl.lit('{"id":'), enc(call_id), pl.lit(",")]))
            .otherwise(pl.lit("{")),
            pl.lit('"type":"function","function":{"name":'),
            enc(call.struct.field("name").fill_null("")),
            pl.lit(',"arguments":'),
            args_text,
            pl.lit("}}"),
        ]
    )


def message_json(encoding: Encoding) -> pl.Expr:
    """The flat message columns (role, content, name, tool_call_id, tool_calls, extra) as JSON.

    Null content is written as ``""`` (chat templates print ``None`` for a null), null name and
    tool_call_id are left out, and ``extra`` keys (``reasoning_content``...) are merged in. Role
    and content go through one struct ``json_encode``; name and tool_call_id are appended only
    where present (no pass over the encoded content to take a null key out again).
    """
    calls = pl.col("tool_calls")
    calls_text = calls.list.eval(call_json(pl.element(), encoding)).list.join(",")
    extra = pl.col("extra")
    # the object's members without its braces; blank when it has none (``{}``, ``" { } "``)
    extra_inner = extra.str.strip_chars().str.strip_prefix("{").str.strip_suffix("}").str.strip_chars()
    head = pl.struct(pl.col("role"), pl.col("content").fill_null("")).struct.json_encode().str.strip_suffix("}")
    return pl.concat_str(
        [
            head,
            _opt('"name"', pl.col("name")),
            _opt('"tool_call_id"', pl.col("tool_call_id")),
            pl.when(calls.list.len().fill_null(0) > 0)
            .then(pl.concat_str([pl.lit(',"tool_calls":['), calls_text, pl.lit("]")]))
            .otherwise(pl.lit("")),
            pl.when(extra.is_not_null() & (extra_inner.str.len_bytes() > 0) & extra.str.strip_chars().str.starts_with("{"))
            .then(pl.concat_str([pl.lit(","), extra_inner]))
            .otherwise(pl.lit("")),
            pl.lit("}"),
        ]
    )


def _has_extra() -> pl.Expr:
    """Where ``message_json`` merges ``extra`` keys into the message (a non-empty JSON object)."""
    extra = pl.col("extra").str.strip_chars()
    return (pl.col("extra").is_not_null() & extra.str.starts_with("{")
            & (extra.str.strip_prefix("{").str.strip_suffix("}").str.strip_chars().str.len_bytes() > 0))


def _openai_calls() -> pl.Expr:
    """The tool calls as structs in the OpenAI shape (``json_encode`` writes them as ``call_json`` does)."""
    call = pl.element()
    return pl.col("tool_calls").list.eval(
        pl.struct(
            call.struct.field("id").alias("id"),
            pl.lit("function").alias("type"),
            pl.struct(call.struct.field("name").fill_null("").alias("name"),
                      call.struct.field("arguments").fill_null("{}").alias("arguments")).alias("function"),
        )
    ).alias("tool_calls")


def message_texts(flat: pl.DataFrame, encoding: Encoding) -> tuple[pl.Series, np.ndarray]:
    """Each message of ``flat`` as the JSON text ``message_json`` writes, one ``json_encode`` per message.

    A message's keys depend on which of name, tool_call_id and tool_calls it has, so the messages
    are split by that shape and each shape is one struct of exactly its keys: ``json_encode``
    writes the whole message in one pass, with no key to take out and no piece to join. Messages
    whose text needs more than a struct can say (``extra`` keys merged in, a tool call without an
    id, TRL's arguments spliced in as objects) go through ``message_json`` itself.

    Returns:
        ``(texts, where)``: the text of message ``i`` (in ``flat``'s order) is ``texts[where[i]]``.
    """
    n = flat.height
    calls = pl.col("tool_calls").list.len().fill_null(0) > 0
    generic = calls & pl.col("tool_calls").list.eval(pl.element().struct.field("id").is_null()).list.any().fill_null(False)
    if flat["extra"].null_count() < n:
        generic = generic | _has_extra()
    shape = flat.select(
        pl.when(generic).then(pl.lit(8, pl.Int8)).otherwise(
            pl.col("name").is_not_null().cast(pl.Int8) + 2 * pl.col("tool_call_id").is_not_null().cast(pl.Int8)
            + 4 * calls.cast(pl.Int8)).alias("s")
    )["s"].to_numpy()
    kinds = np.unique(shape)
    flat = flat.select("role", "content", "name", "tool_call_id", "tool_calls", "extra").rechunk()  # gathers below
    texts: list[pl.Series] = []
    rows: list[np.ndarray] = []
    for kind in kinds.tolist():
        ix = np.flatnonzero(shape == kind) if len(kinds) > 1 else np.arange(n)
        part = flat[ix] if len(kinds) > 1 else flat
        if kind == 8:
            expr = message_json(encoding)
        else:
            keys = [pl.col("role"), pl.col("content").fill_null("")]
            keys += [pl.col("name")] if kind & 1 else []
            keys += [pl.col("tool_call_id")] if kind & 2 else []
            if kind & 4 and encoding == "dict":  # arguments spliced in as objects: the calls are text
                expr = pl.concat_str([pl.struct(keys).struct.json_encode().str.head(-1), pl.lit(',"tool_calls":['),
                                      pl.lit(_dict_calls(part["tool_calls"])), pl.lit("]}")])
            else:
                keys += [_openai_calls()] if kind & 4 else []
                expr = pl.struct(keys).struct.json_encode()
        texts.append(part.select(expr.alias("_m"))["_m"])
        rows.append(ix)
    where = np.empty(n, dtype=np.int64)
    if rows:
        where[np.concatenate(rows)] = np.arange(n)
    text = pl.concat(texts) if texts else pl.Series("_m", [], dtype=pl.String)
    return text, where


def _dict_calls(tool_calls: pl.Series) -> pl.Series:
    """Each message's tool calls (every one with an id) as ``call_json(..., "dict")`` writes them, joined by commas.

    All calls of the messages are written at once, flat: one ``json_encode`` of id, type and
    name, then the arguments spliced in (as the object itself where it parses as one, else as a
    JSON string), then cut back into one list per message and joined.
    """
    sizes = tool_calls.list.len().fill_null(0).to_numpy().astype(np.int64)
    calls = tool_calls.explode(empty_as_null=False, keep_nulls=False).struct.unnest()
    args = pl.col("arguments").fill_null("{}")
    head = pl.struct(pl.col("id"), pl.lit("function").alias("type"),
                     pl.struct(pl.col("name").fill_null("").alias("name")).alias("function")).struct.json_encode()
    text = calls.select(pl.concat_str([head.str.head(-2), pl.lit(',"arguments":'),
                                       pl.when(valid_object(args)).then(args).otherwise(enc(args)),
                                       pl.lit("}}")]).alias("c"))["c"].to_arrow()
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    lists = pa.LargeListArray.from_arrays(pa.Array.from_buffers(pa.int64(), len(offsets), [None, pa.py_buffer(offsets)]),
                                          text)
    return pl.Series(lists).list.join(",")


def _opt(key: str, value: pl.Expr) -> pl.Expr:
    return pl.when(value.is_not_null()).then(pl.concat_str([pl.lit(f",{key}:"), enc(value)])).otherwise(pl.lit(""))


def field_piece(name: str, value: pl.Expr, *, raw: bool = False, first: bool = False) -> pl.Expr:
    """``,"name":value`` (or ``""`` when the value is null): one key of a JSON row.

    Args:
        name: The key.
        value: The column expression.
        raw: The value is already JSON text (canonical JSON columns); splice it unquoted.
        first: Leave out the leading comma.
    """
    import json

    key = ("" if first else ",") + json.dumps(name) + ":"
    if not raw and isinstance(value, pl.Expr):
        value_text = enc(value)
    else:
        value_text = value
    return pl.when(value.is_not_null()).then(pl.concat_str([pl.lit(key), value_text])).otherwise(pl.lit(""))


def json_arguments(arrow: pa.Table, columns: Sequence[str] = ("messages", "prompt", "completion")) -> pa.Table:
    """Mark tool-call arguments in ``columns`` as Arrow's JSON type, so ``datasets`` reads them back as dicts."""

    def retype(dtype: pa.DataType, name: str) -> pa.DataType:
        if pa.types.is_struct(dtype):
            return pa.struct([pa.field(f.name, retype(f.type, f.name), f.nullable) for f in dtype])
        if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
            inner = retype(dtype.value_type, name)
            return pa.large_list(inner) if pa.types.is_large_list(dtype) else pa.list_(inner)
        if name == "arguments" and (pa.types.is_string(dtype) or pa.types.is_large_string(dtype)):
            return pa.json_()
        return dtype

    fields = []
    for f in arrow.schema:
        new = retype(f.type, f.name) if f.name in columns else f.type
        fields.append(pa.field(f.name, new, f.nullable))
    schema = pa.schema(fields, metadata=arrow.schema.metadata)
    if schema == arrow.schema:
        return arrow
    # Arrow casts string to its JSON extension type only at the leaf: rebuild the string columns first.
    arrow = arrow.cast(pa.schema([pa.field(f.name, large_to_small(f.type), f.nullable) for f in arrow.schema]))
    return arrow.cast(schema)


def large_to_small(dtype: pa.DataType) -> pa.DataType:
    if pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return pa.string()
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, large_to_small(f.type), f.nullable) for f in dtype])
    if pa.types.is_large_list(dtype) or pa.types.is_list(dtype):
        return pa.large_list(large_to_small(dtype.value_type))
    return dtype
