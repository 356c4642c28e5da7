r"""Nested columns to their canonical cells with Polars expressions, without a Python pass per row.

The row-level rules (``normalize.normalize_messages``, ``normalize.dumps``, ``_rowdicts.drop_none``)
define the cells; this module gives the same cells, byte for byte, for the column types it
supports, and declines (returns None) for any other, decided from the dtype and a few vectorised
counts, never by trying and catching. The caller then runs the row path. What it supports:

- :func:`canonical_json`: a column of structs, lists and scalars (String, Boolean, integers,
  floats, Null) as canonical JSON text (``normalize.CANONICAL_JSON``): struct fields re-packed in
  sorted order, strings escaped as Python's ``json`` escapes them with ``ensure_ascii=False``
  (``"``, ``\\``, the C0 controls; nothing else), integers as their digits, floats as Python
  writes them (each distinct value formatted once by ``normalize.dumps``, then mapped by value;
  ``-0.0``, ``NaN`` and the infinities by expression). With ``drop_none`` a null struct field is
  left out at every level, as ``drop_none`` leaves it out. Declined: temporal, decimal, binary,
  categorical, array and object leaves (``default=str`` would write those).
- :func:`messages`: a conversation column of OpenAI or whileai 0.131 shaped messages (a list of
  structs with a text ``role``, text or null ``content``, ``name`` and ``tool_call_id``; tool
  calls as ``{id?, name|tool, arguments|args}`` or ``{id?, function: {name, arguments}}``,
  arguments a struct, a list, a scalar or JSON text) as :data:`schema.MESSAGE` lists. Tool-call
  ids are linked as ``normalize._link_tool_calls`` links them when no call has an id and no tool
  message names one (``call_0000``... in order; the k-th answered tool message takes the oldest
  pending call, counted with a running minimum), or left as given when every call has an id and
  every tool message names one. Declined: content given as parts, ShareGPT or Anthropic shapes,
  null messages or calls, tool calls as JSON text, non-text ids or names, and any mix of given
  and missing ids.

JSON text arguments are decoded by ``normalize.canonical_arguments`` once per distinct text (a
decoder's rules are Python's ``json``; a Polars decode would need a dtype and lose key order).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import polars as pl

from whileai.table import normalize as nz
from whileai.table._arrow import list_series
from whileai.table.schema import MESSAGE, ROLE_ALIASES, TOOL_CALL

__all__ = ["canonical_json", "link_calls", "messages"]

_MESSAGES_DTYPE = pl.List(MESSAGE)

#: What Python's ``json`` (``ensure_ascii=False``) writes for each character it escapes.
_ESCAPED = ["\\", '"', *(chr(i) for i in range(0x20))]
_ESCAPES = [json.dumps(c, ensure_ascii=False)[1:-1] for c in _ESCAPED]

_MESSAGE_KEYS = ("role", "content", "name", "tool_call_id", "tool_calls")
_TEXT = (pl.String, pl.Null)


# ------------------------------------------------------------------------------------------
# canonical JSON
# ------------------------------------------------------------------------------------------


def _supported(dtype: Any) -> bool:
    """Whether every leaf of ``dtype`` is one whose JSON text this module writes as Python does."""
    if isinstance(dtype, pl.Struct):
        return all(_supported(f.dtype) for f in dtype.fields)
    if isinstance(dtype, pl.List):
        return _supported(dtype.inner)
    return dtype in (pl.String, pl.Boolean, pl.Null) or dtype.is_integer() or dtype in (pl.Float32, pl.Float64)


def _has_float(dtype: Any) -> bool:
    if isinstance(dtype, pl.Struct):
        return any(_has_float(f.dtype) for f in dtype.fields)
    if isinstance(dtype, pl.List):
        return _has_float(dtype.inner)
    return dtype in (pl.Float32, pl.Float64)


def _float_leaves(series: pl.Series) -> list[pl.Series]:
    """Every float value anywhere inside ``series``, as flat Float64 Series."""
    dtype = series.dtype
    if isinstance(dtype, pl.Struct):
        frame = series.struct.unnest()
        return [leaf for i, f in enumerate(dtype.fields) if _has_float(f.dtype) for leaf in _float_leaves(frame[:, i])]
    if isinstance(dtype, pl.List):
        return _float_leaves(series.explode(empty_as_null=False, keep_nulls=False)) if _has_float(dtype.inner) else []
    if dtype in (pl.Float32, pl.Float64):
        return [series.cast(pl.Float64).drop_nulls()]
    return []


class _Floats:
    """The JSON text of each distinct finite float of a column, from ``normalize.dumps`` itself."""

    def __init__(self, leaves: list[pl.Series]) -> None:
        values = pl.concat(leaves) if leaves else pl.Series([], dtype=pl.Float64)
        finite = values.filter(values.is_finite() & (values != 0)).unique()  # a key 0.0 would match -0.0
        self.keys = finite
        self.texts = pl.Series([nz.dumps(v) for v in finite.to_list()], dtype=pl.String)

    def expr(self, x: pl.Expr) -> pl.Expr:
        x = x.cast(pl.Float64)
        # zeros, NaN and the infinities are no keys: -0.0 equals 0.0 as a key (1/-0.0 is -inf)
        return (pl.when(x.is_nan()).then(pl.lit("NaN"))
                .when(x == math.inf).then(pl.lit("Infinity"))
                .when(x == -math.inf).then(pl.lit("-Infinity"))
                .when(x == 0).then(pl.when((1.0 / x) < 0).then(pl.lit("-0.0")).otherwise(pl.lit("0.0")))
                .otherwise(x.replace_strict(self.keys, self.texts, default=None, return_dtype=pl.String)))


def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False) + ":"


def _text(x: pl.Expr) -> pl.Expr:
    return pl.concat_str([pl.lit('"'), x.str.replace_many(_ESCAPED, _ESCAPES), pl.lit('"')])


def _encode(x: pl.Expr, dtype: Any, floats: _Floats | None, drop_none: bool) -> pl.Expr:
    """JSON text of each non-null value of ``x`` (null where ``x`` is null); ``dtype`` is ``_supported``."""
    if dtype == pl.Null:
        return pl.lit(None, pl.String)
    if dtype == pl.String:
        return _text(x)
    if dtype == pl.Boolean:
        return pl.when(x).then(pl.lit("true")).when(~x).then(pl.lit("false"))
    if dtype.is_integer():
        return x.cast(pl.String)
    if dtype in (pl.Float32, pl.Float64):
        assert floats is not None
        return floats.expr(x)
    if isinstance(dtype, pl.List):
        inner = _encode(pl.element(), dtype.inner, floats, drop_none).fill_null(pl.lit("null"))
        return pl.concat_str([pl.lit("["), x.list.eval(inner).list.join(","), pl.lit("]")])
    assert isinstance(dtype, pl.Struct)
    # fields by position: a name such as "*" or "^a$" would be expanded as a pattern
    x = x.struct.rename_fields([f"f{i}" for i in range(len(dtype.fields))])
    pieces = []
    for i, f in sorted(enumerate(dtype.fields), key=lambda item: item[1].name):
        value = _encode(x.struct.field(f"f{i}"), f.dtype, floats, drop_none)
        pieces.append(pl.concat_str([pl.lit(_key(f.name)), value if drop_none else value.fill_null(pl.lit("null"))]))
    body = pl.concat_str(pieces, separator=",", ignore_nulls=True) if pieces else pl.lit("")
    return pl.when(x.is_not_null()).then(pl.concat_str([pl.lit("{"), body, pl.lit("}")]))


def canonical_json(series: pl.Series, *, drop_none: bool = False) -> pl.Series | None:
    """Each cell as ``normalize.dumps`` of its Python value (``drop_none``'d first with ``drop_none``).

    A null cell stays null. None when the column holds a type whose text could differ.
    """
    if not _supported(series.dtype):
        return None
    if series.dtype == pl.Null:
        return pl.Series(series.name, [None] * series.len(), dtype=pl.String)
    floats = _Floats(_float_leaves(series)) if _has_float(series.dtype) else None
    out = pl.select(_encode(pl.lit(series), series.dtype, floats, drop_none).alias(series.name)).to_series()
    return out.cast(pl.String)


# ------------------------------------------------------------------------------------------
# messages
# ------------------------------------------------------------------------------------------


def _fields(dtype: Any) -> dict[str, Any]:
    return {f.name: f.dtype for f in dtype.fields}


def _arguments(calls: pl.DataFrame, column: str, dtype: Any) -> pl.Series | None:
    """``normalize.canonical_arguments`` of a flat column of tool-call arguments."""
    values = calls[column]
    if dtype == pl.Null:
        return pl.Series(column, ["{}"] * calls.height, dtype=pl.String)
    if dtype == pl.String:
        distinct = values.drop_nulls().unique()
        texts = pl.Series([nz.canonical_arguments(v) for v in distinct.to_list()], dtype=pl.String)
        return values.replace_strict(distinct, texts, default=None, return_dtype=pl.String).fill_null("{}")
    encoded = canonical_json(values)
    return None if encoded is None else encoded.fill_null("{}")


def _call_part(fields: dict[str, Any], first: str, second: str) -> str | None:
    """``call.get(first, call.get(second))`` at the dtype level: the field read, or None for null."""
    return first if first in fields else second if second in fields else None


def _tool_calls(flat: pl.Series) -> pl.DataFrame | None:
    """id, name and arguments of each tool call in ``flat`` (one struct per call, none null)."""
    fields = _fields(flat.dtype)
    if fields.get("id", pl.Null) not in _TEXT:
        return None
    frame = flat.struct.unnest() if fields else pl.DataFrame(height=flat.len())
    out = pl.DataFrame({"id": frame["id"].cast(pl.String) if "id" in fields else pl.Series([None] * flat.len(),
                                                                                             dtype=pl.String)})
    name_at, args_at = _call_part(fields, "name", "tool"), _call_part(fields, "arguments", "args")
    if name_at is not None and fields[name_at] not in _TEXT:
        return None
    name = frame[name_at].cast(pl.String) if name_at else pl.Series([None] * flat.len(), dtype=pl.String)
    args = _arguments(frame, args_at, fields[args_at]) if args_at else pl.Series(["{}"] * flat.len(), dtype=pl.String)
    if args is None:
        return None
    function = fields.get("function")
    if function is not None:
        if not isinstance(function, pl.Struct):
            return None
        fn_fields = _fields(function)
        fn = frame["function"]
        fn_frame = fn.struct.unnest()
        if fn_fields.get("name", pl.Null) not in _TEXT:
            return None
        fn_name = fn_frame["name"].cast(pl.String) if "name" in fn_fields else pl.Series([None] * flat.len(),
                                                                                           dtype=pl.String)
        fn_args = (_arguments(fn_frame, "arguments", fn_fields["arguments"]) if "arguments" in fn_fields
                   else pl.Series(["{}"] * flat.len(), dtype=pl.String))
        if fn_args is None:
            return None
        given = fn.is_not_null()
        name = pl.select(pl.when(pl.lit(given)).then(pl.lit(fn_name)).otherwise(pl.lit(name))).to_series()
        args = pl.select(pl.when(pl.lit(given)).then(pl.lit(fn_args)).otherwise(pl.lit(args))).to_series()
    return out.with_columns(name.alias("name"), args.alias("arguments"))


def _offsets(lengths: pl.Series) -> np.ndarray:
    counts = lengths.fill_null(0).cast(pl.Int64).to_numpy()
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def messages(series: pl.Series) -> pl.Series | None:
    """``normalize.normalize_messages`` of each cell, as a ``List(MESSAGE)`` column; None to decline.

    See the module docstring for the shapes it reads; any other goes to the row path.
    """
    dtype = series.dtype
    if not (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)):
        return None
    fields = _fields(dtype.inner)
    if fields.get("role") != pl.String or any(fields.get(k, pl.Null) not in _TEXT
                                              for k in ("content", "name", "tool_call_id")):
        return None
    calls_dtype = fields.get("tool_calls", pl.Null)
    if calls_dtype != pl.Null and not (isinstance(calls_dtype, pl.List) and isinstance(calls_dtype.inner, pl.Struct)):
        return None
    extra_names = sorted(k for k in fields if k not in _MESSAGE_KEYS)
    if not all(_supported(fields[k]) for k in extra_names):
        return None
    flat = series.explode(empty_as_null=False, keep_nulls=False)
    if flat.null_count():
        return None  # a null message reads as an empty user turn row by row
    msg_offsets = _offsets(series.list.len())
    frame = flat.struct.unnest()

    def text(name: str) -> pl.Series:
        return (frame[name] if name in fields else pl.Series(name, [None] * flat.len())).cast(pl.String).alias(name)

    role = frame["role"].replace(ROLE_ALIASES)
    tool_call_id = text("tool_call_id")
    if calls_dtype == pl.Null:
        call_lists = pl.Series("tool_calls", [None] * flat.len(), dtype=pl.List(TOOL_CALL))
        calls = pl.DataFrame(schema=TOOL_CALL.to_schema())
    else:
        call_lists = frame["tool_calls"]
        flat_calls = call_lists.explode(empty_as_null=False, keep_nulls=False)
        if flat_calls.null_count():
            return None  # a null call reads as a call named "None" row by row
        found = _tool_calls(flat_calls)
        if found is None:
            return None
        calls = found
    call_offsets = _offsets(call_lists.list.len())
    linked = _linked(msg_offsets, call_offsets, calls, role, tool_call_id)
    if linked is None:
        return None
    calls, tool_call_id = linked
    extra = _extra(frame, {k: fields[k] for k in extra_names})
    tool_calls = list_series("tool_calls", calls.select("id", "name", "arguments").to_struct("c"), call_offsets)
    out = pl.DataFrame([role.alias("role"), text("content"), text("name"), tool_call_id.alias("tool_call_id"),
                        tool_calls.cast(pl.List(TOOL_CALL)), extra.alias("extra")]).to_struct("m").cast(MESSAGE)
    return list_series(series.name, out, msg_offsets, null=series.is_null().to_numpy()).cast(_MESSAGES_DTYPE)


def _linked(msg_offsets: np.ndarray, call_offsets: np.ndarray, calls: pl.DataFrame, role: pl.Series,
            tool_call_id: pl.Series) -> tuple[pl.DataFrame, pl.Series] | None:
    """Calls and tool results linked as ``normalize._link_tool_calls`` links them; None to decline.

    Nothing changes when every call has an id and every tool result names one; ids are given
    (``_link``) when none has; a mix is left to the row path's id search.
    """
    if not int(call_offsets[-1]):
        return calls, tool_call_id
    tool = (role == "tool").fill_null(False)
    given = calls["id"].is_not_null()
    if not given.any() and not (tool & tool_call_id.is_not_null()).any():
        return _link(msg_offsets, call_offsets, calls, tool, tool_call_id)
    if not (given.all() and not (tool & tool_call_id.is_null()).any()):
        return None  # given ids beside missing ones: the row path's id search
    return calls, tool_call_id


def link_calls(frame: pl.DataFrame, msg_offsets: np.ndarray) -> pl.DataFrame | None:
    """Normalised messages with their tool calls and results linked as the row path links them.

    ``frame`` holds ``MESSAGE``'s fields, one row per message, its conversations cut by
    ``msg_offsets``. None when a conversation mixes calls with and without ids.
    """
    call_lists = frame["tool_calls"]
    call_offsets = _offsets(call_lists.list.len())
    calls = call_lists.explode(empty_as_null=False, keep_nulls=False).struct.unnest()
    linked = _linked(msg_offsets, call_offsets, calls, frame["role"], frame["tool_call_id"])
    if linked is None:
        return None
    calls, tool_call_id = linked
    tool_calls = list_series("tool_calls", calls.select("id", "name", "arguments").to_struct("c"), call_offsets)
    return frame.with_columns(tool_calls.cast(pl.List(TOOL_CALL)), tool_call_id.alias("tool_call_id"))


def _extra(frame: pl.DataFrame, fields: dict[str, Any]) -> pl.Series:
    """Each message's other non-null keys as canonical JSON (``normalize._normalize_one``), null when none."""
    fields = {k: dtype for k, dtype in fields.items() if dtype != pl.Null}  # always None: never kept
    if not fields:
        return pl.Series("extra", [None] * frame.height, dtype=pl.String)
    safe = pl.DataFrame({f"f{i}": frame[k] for i, k in enumerate(fields)})  # a name may read as a pattern
    body = pl.concat_str([pl.concat_str([pl.lit(_key(k)), _encode(pl.col(f"f{i}"), dtype, _float_map(frame[k]), False)])
                          for i, (k, dtype) in enumerate(fields.items())], separator=",", ignore_nulls=True)
    return safe.select(pl.when(body != "").then(pl.concat_str([pl.lit("{"), body, pl.lit("}")])).alias("extra")
                        ).to_series()


def _float_map(series: pl.Series) -> _Floats | None:
    return _Floats(_float_leaves(series)) if _has_float(series.dtype) else None


def _link(msg_offsets: np.ndarray, call_offsets: np.ndarray, calls: pl.DataFrame, tool: pl.Series,
          tool_call_id: pl.Series) -> tuple[pl.DataFrame, pl.Series]:
    """``normalize._link_tool_calls`` where no call has an id and no tool message names one.

    The k-th call of a conversation is ``call_{k:04d}``. A tool message takes the oldest pending
    call when one is pending: with ``A`` the calls so far and ``D`` the tool messages so far (this
    message's calls come first), the pending queue is ``Q = X - min(0, min X)`` for ``X = A - D``
    (Lindley's recursion for a queue that drops a request it cannot serve), the calls answered so
    far ``c = A - Q``, and a tool message is answered, by call ``c`` before it, when ``c`` grew.
    """
    n_msgs = len(call_offsets) - 1
    conv_of_msg = np.repeat(np.arange(len(msg_offsets) - 1), np.diff(msg_offsets))
    per_msg = np.diff(call_offsets)
    conv_of_call = np.repeat(conv_of_msg, per_msg)
    first_call = call_offsets[msg_offsets[:-1]]  # each conversation's first call
    k = np.arange(len(conv_of_call), dtype=np.int64) - first_call[conv_of_call]
    ids = pl.Series(k).cast(pl.String).str.zfill(4)
    calls = calls.with_columns(pl.concat_str([pl.lit("call_"), pl.lit(ids)]).alias("id"))
    if not n_msgs:
        return calls, tool_call_id
    a = per_msg.astype(np.int64)
    d = tool.cast(pl.Int64).to_numpy()
    first_msg = msg_offsets[:-1][conv_of_msg]  # each message's conversation's first message

    def running(v: np.ndarray) -> np.ndarray:  # a sum within each conversation
        total = np.cumsum(v)
        return total - (total[first_msg] - v[first_msg])

    calls_so_far = running(a)
    x = calls_so_far - running(d)
    # a running minimum within each conversation: each conversation sits below all earlier ones
    drop = 2 * (n_msgs + len(conv_of_call)) + 1
    low = np.minimum.accumulate(x - conv_of_msg * drop) + conv_of_msg * drop
    answered = calls_so_far - (x - np.minimum(low, 0))
    before = np.zeros(n_msgs, dtype=np.int64)
    before[1:] = answered[:-1]
    before[first_msg == np.arange(n_msgs)] = 0
    linked = (d == 1) & (answered > before)
    ids = pl.Series(before).cast(pl.String).str.zfill(4)
    out = pl.select(pl.when(pl.lit(pl.Series(linked))).then(pl.concat_str([pl.lit("call_"), pl.lit(ids)]))
                    .otherwise(pl.lit(tool_call_id)).alias("tool_call_id")).to_series()
    return calls, out
