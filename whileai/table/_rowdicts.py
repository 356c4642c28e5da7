"""Row dicts built column by column (what ``table.rows`` returns).

A judge takes one row as a dict, so grading has to hand a million dicts to user code. Polars'
own ``iter_rows``/``to_list`` on a list-of-struct column (the conversation) costs tens of
microseconds per row; here every column becomes a flat Python list first (the conversation is
flattened with Arrow-style offsets: one ``to_list`` per message field, not per message), and the
dicts are zipped from those lists. The result is exactly ``table.rows(df)``: the wire shape,
None dropped, JSON columns decoded, messages in the OpenAI shape (tested against it).

The grade step's lazy rows (``whileai.grade._rows``) reuse the column converters here.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any

import polars as pl

from whileai.table import normalize as nz
from whileai.table.schema import COLUMN_BY_NAME, DERIVED_COLUMNS, MESSAGE

__all__ = ["JSON_COLUMNS", "column_values", "drop_none", "message_out", "no_gc", "row_dicts"]

_JSON = frozenset(c.name for c in COLUMN_BY_NAME.values() if c.kind == "json")
_MESSAGES = pl.List(MESSAGE)


def drop_none(value: Any) -> Any:
    """Drop None values inside nested dicts (struct fields a row did not have; a unified struct adds them)."""
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value]
    return value


def message_out(message: dict[str, Any], *, arguments: str = "json_string") -> dict[str, Any]:
    """One MESSAGE struct as an OpenAI chat message (tool-call arguments as a JSON string or dict)."""
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
    if message.get("name") is not None:
        out["name"] = message["name"]
    if message.get("tool_call_id") is not None:
        out["tool_call_id"] = message["tool_call_id"]
    calls = message.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {
                **({"id": c["id"]} if c.get("id") is not None else {}),
                "type": "function",
                "function": {
                    "name": c.get("name"),
                    "arguments": c.get("arguments") if arguments == "json_string" else nz.loads_or_raw(c.get("arguments")),
                },
            }
            for c in calls
        ]
    extra = message.get("extra")
    if extra:
        decoded = nz.loads_or_raw(extra)
        if isinstance(decoded, dict):
            parts = decoded.pop("content_parts", None)
            if parts is not None:
                out["content"] = parts
            for key, value in decoded.items():
                out.setdefault(key, value)
    return out


def _row_out(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        if value is None or key in DERIVED_COLUMNS:
            continue
        if key == "messages":
            out[key] = [message_out(m) for m in value]
        elif key in _JSON:
            out[key] = nz.loads_or_raw(value)
        else:
            out[key] = drop_none(value)
    return out


def _flat(series: pl.Series) -> tuple[list[int | None], pl.Series]:
    """Lengths per row (None for a null list) and the concatenated values of a list column."""
    lengths = series.list.len().to_list()
    values = series.filter(series.list.len().fill_null(0) > 0).explode()
    return lengths, values


def _tool_calls(series: pl.Series) -> list[list[dict[str, Any]] | None]:
    lengths, values = _flat(series)
    if not values.len():
        return [None] * len(lengths)
    fields = values.struct.unnest()
    calls = [
        {"id": i, "type": "function", "function": {"name": n, "arguments": a}} if i is not None
        else {"type": "function", "function": {"name": n, "arguments": a}}
        for i, n, a in zip(fields["id"].to_list(), fields["name"].to_list(), fields["arguments"].to_list())
    ]
    return _split(calls, lengths, empty=None)


def _split(values: list[Any], lengths: list[int | None], *, empty: Any) -> list[Any]:
    """Cut a flat list into per-row lists; a null row gives None, an empty one ``empty``."""
    out: list[Any] = []
    append = out.append
    pos = 0
    for n in lengths:
        if n is None:
            append(None)
        elif n == 0:
            append(empty() if callable(empty) else empty)
        else:
            append(values[pos:pos + n])
            pos += n
    return out


def _message(role: Any, content: Any, name: Any, call_id: Any, calls: Any, extra: Any) -> dict[str, Any]:
    if extra:
        return message_out({"role": role, "content": content, "name": name, "tool_call_id": call_id,
                            "tool_calls": [{"id": c.get("id"), **c["function"]} for c in calls or []],
                            "extra": extra})
    msg: dict[str, Any] = {"role": role, "content": content}
    if name is not None:
        msg["name"] = name
    if call_id is not None:
        msg["tool_call_id"] = call_id
    if calls:
        msg["tool_calls"] = calls
    return msg


def _messages(series: pl.Series) -> list[list[dict[str, Any]] | None]:
    lengths, values = _flat(series)
    if not values.len():
        return _split([], lengths, empty=list)
    fields = values.struct.unnest()
    roles, contents = fields["role"].to_list(), fields["content"].to_list()
    names, call_ids = fields["name"].to_list(), fields["tool_call_id"].to_list()
    extras = fields["extra"].to_list()
    calls = _tool_calls(fields["tool_calls"])
    messages = [
        {"role": r, "content": c} if n is None and i is None and k is None and e is None
        else _message(r, c, n, i, k, e)
        for r, c, n, i, k, e in zip(roles, contents, names, call_ids, calls, extras)
    ]
    return _split(messages, lengths, empty=list)


def _struct(series: pl.Series) -> list[Any]:
    dtype = series.dtype
    assert isinstance(dtype, pl.Struct)
    if not dtype.fields:
        return [None if null else {} for null in series.is_null().to_list()]
    fields = series.struct.unnest()
    names = fields.columns
    columns = [_column(fields[name]) for name in names]
    nulls = series.is_null().to_list()
    return [None if null else dict(zip(names, vals)) if None not in vals else
            {k: v for k, v in zip(names, vals) if v is not None}
            for null, vals in zip(nulls, zip(*columns))]


def _column(series: pl.Series) -> list[Any]:
    """One column as the Python values ``row_dicts`` puts in each row (messages and structs as dicts)."""
    dtype = series.dtype
    if series.name == "messages" and dtype == _MESSAGES:
        return _messages(series)
    if isinstance(dtype, pl.Struct):
        return _struct(series)
    values = series.to_list()
    if series.name in _JSON and dtype == pl.String:
        loads = nz.loads_or_raw
        return [None if v is None else loads(v) for v in values]
    if dtype.is_nested():
        return [drop_none(v) for v in values]
    return values


def row_dicts(df: pl.DataFrame) -> list[dict[str, Any]]:
    """The table's rows as wire dicts, the same as ``table.rows(df)``, built column-wise.

    Examples:
        >>> import polars as pl
        >>> row_dicts(pl.DataFrame({"prompt": ["hi"], "reward": [None], "task_key": ["t"]}))
        [{'prompt': 'hi'}]
    """
    names = [c for c in df.columns if c not in DERIVED_COLUMNS]
    if not names or not df.height:
        return [{} for _ in range(df.height)]
    with _no_gc():
        columns = [_column(df[name]) for name in names]
        return [dict(zip(names, vals)) if None not in vals else {k: v for k, v in zip(names, vals) if v is not None}
                for vals in zip(*columns)]


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic collector while building many small containers (none form cycles)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()




column_values = _column
no_gc = _no_gc
JSON_COLUMNS = _JSON
"""The columns held as canonical JSON text (decoded on the way out)."""
