"""Column expressions that write JSON text natively: one message, one tool call, one field.

Every training row is assembled as JSON text by Polars string expressions, so a million rows are
encoded in Rust without a Python dict per row. A string is JSON-escaped by encoding a one-field
struct (``{"v":...}``) and stripping the wrapper; canonical JSON columns (tool arguments, tools,
faults) are spliced in raw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl
import pyarrow as pa

__all__ = ["Encoding", "call_json", "enc", "field_piece", "json_arguments", "large_to_small", "message_json", "valid_object"]

#: How tool-call arguments are written: a JSON string (OpenAI wire) or a JSON object (TRL).
Encoding = Literal["json_string", "dict"]


def enc(expr: pl.Expr) -> pl.Expr:
    """The value of ``expr`` as JSON text (strings quoted and escaped, structs as objects)."""
    return pl.struct(expr.alias("v")).struct.json_encode().str.strip_prefix('{"v":').str.strip_suffix("}")


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
    extra_inner = extra.str.strip_chars().str.strip_prefix("{").str.strip_suffix("}")
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
