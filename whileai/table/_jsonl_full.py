"""A batch of JSONL lines read whole, conversation included, columnar, for the row shapes we know.

Two shapes, told by the batch's first row:

- rows with ``messages``: pyarrow's JSON reader parses the batch. OpenAI chat rows (``{"id",
  "type", "function": {"name", "arguments"}}`` tool calls, or the flat ``{"id", "name",
  "arguments"}`` calls with ``extra`` and explicit nulls that Polars' ``write_ndjson`` writes) are
  read with the conversation's dtype given, which is strict, and the canonical messages are
  assembled from the flat message and call columns. Any other conversation (whileai 0.131's
  id-less calls with object arguments, extra message keys) is read message by message: DuckDB's
  JSON functions give each message's JSON text, each distinct message is normalised once, as the
  per-row reader normalises it, and calls and results are linked by order as it links them.
  Free-form JSON columns (``steps`` beside ``messages``, ``lineage``, ``privileged``...) come from
  DuckDB's JSON text of each cell, canonicalised once per distinct value;
- whileai 0.131 rows (``prompt``, ``steps`` of ``{tool, arguments, result}``, ``final_text``):
  Polars parses the batch with ``steps`` as JSON text; each distinct ``steps`` text is decoded
  once, in Python, into its turns (exactly as ``normalize.messages_from_steps`` builds them) and
  its canonical JSON, and the conversations are cut from those turns by offsets.

Each reader returns None at any doubt (a field it does not know, calls with and without ids in
one conversation, a message standing for several, a number or a backslash inside ``steps``, whose JSON text
Polars may have rewritten, a content alias, a row with nothing to build a conversation from): the per-row
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
from whileai.table._jsonl_engine import json_cells
from whileai.table.schema import COLUMN_BY_NAME, COLUMNS, MESSAGE, TOOL_CALL, alias_map

__all__ = ["read_batch", "steps_conversation"]

_MESSAGES_DTYPE = pl.List(MESSAGE)
_JSON_NAMES = tuple(c.name for c in COLUMNS if c.kind == "json")
_CONTENT = ("prompt", "final_text", "system_prompt", "messages", "steps")
# A number outside a string in Polars' JSON text of a value: Polars writes 1.0 as 1 and 1e20 as
# digits, so such text is not the file's; a number inside a string only costs the per-row read.
_NUMBER_IN_JSON = r"[\[:,]\s*-?[0-9]"
_STRING_STEPS = rb'"steps"\s*:\s*"'
# Text Polars may have typed so from a number, a flag, an object or a list in another row.
_NOT_PLAIN_TEXT = r"^[\[{]|^(?:-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false)$"


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


def _later_fields(data: bytes, columns: list[str], head: list[str]) -> list[str] | None:
    """The fields no first-row key names, in the order the per-row reader first meets them.

    That reader orders columns by the first row holding each field, then by the field's place in
    that row; DuckDB's ``json_keys`` gives each line's top-level keys in order. None when DuckDB
    cannot read the batch or a field is no line's top-level key.
    """
    later = [c for c in columns if c not in head]
    if len(later) <= 1:
        return later
    found = _on_lines(data, "SELECT k, min(i * 4294967296 + p) AS at FROM (SELECT i, unnest(keys) AS k, "
                            "generate_subscripts(keys, 1) AS p FROM (SELECT i, json_keys(line) AS keys FROM batch)) "
                            "GROUP BY k")
    if found is None:
        return None
    at = dict(zip(found["k"].to_pylist(), found["at"].to_pylist()))
    if any(name not in at for name in later):
        return None
    return sorted(later, key=lambda name: at[name])


# ------------------------------------------------------------------------------------------
# rows with messages
# ------------------------------------------------------------------------------------------

_CALL = pa.struct([("id", pa.string()), ("type", pa.string()),
                   ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
                   ("name", pa.string()), ("arguments", pa.string())])
_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string()), ("name", pa.string()),
                      ("tool_call_id", pa.string()), ("tool_calls", pa.list_(_CALL)), ("extra", pa.string())])


def _messages_batch(data: bytes, head: list[str]) -> pl.DataFrame | None:
    """A batch of rows with ``messages``, read columnar, or None.

    OpenAI-shaped conversations are typed by pyarrow; any other is read message by message
    (``_distinct_messages``).
    """
    typed = _arrow_rows(data, head, [("messages", pa.list_(_MESSAGE))])
    df = typed if typed is not None else _arrow_rows(data, head, [], skip="messages")
    if df is None:
        df = _engine_rows(data, head)
    if df is None or df.height == 0:
        return None
    df, kinds = _seeded_lists(df)
    if not _plain_types(df.schema):
        return None
    messages = None
    if typed is not None:
        if df["messages"].null_count():
            return None  # a row without a conversation is built from its other fields, row by row
        messages = _canonical_messages(df["messages"])
    names = [n for n in _JSON_NAMES if n in df.columns and df[n].null_count() < df.height]
    texts = _json_texts(data, names, df.height, split="messages" if messages is None else None)
    if texts is None:
        return None
    df = df.with_columns(json_cells(text, name) for name, text in zip(names, texts))
    if messages is None:
        messages = _distinct_messages(texts[-1])
        if messages is None:
            return None
        if "messages" not in df.columns:
            at = sum(1 for n in head[:head.index("messages")] if n in df.columns)
            df = df.insert_column(at, messages)
    if any(name in df.columns and name not in head for name in ("prompt", "final_text", "system_prompt")):
        return None
    filled = _fill_from_messages(df.with_columns(messages), head)
    return None if filled is None else _with_kinds(filled, kinds, head, df.columns)


def _engine_rows(data: bytes, head: list[str]) -> pl.DataFrame | None:
    """The batch's fields but ``messages``, each from DuckDB's JSON text of it, where pyarrow refuses the batch.

    pyarrow types every field, free-form ones too, and refuses a batch where a value changes type
    from row to row inside one (whileai 0.131's step results: text in one step, an object in the
    next). Here the free-form JSON columns stay JSON text (canonicalised after, as pyarrow's are)
    and every other field is decoded to one dtype (``_jsonl_engine._typed``); None when a field
    holds values of several kinds, or an object (or a list of them) outside the known columns,
    for the per-row reader to say what each value is.
    """
    from whileai.table._jsonl_engine import _typed

    found = _on_lines(data, "SELECT list_distinct(flatten(list(json_keys(line)))) AS keys, count(*) AS n FROM batch")
    if found is None:
        return None
    height = int(found["n"][0].as_py())
    names = sorted(str(k) for k in (found["keys"][0].as_py() or []) if k != "messages")
    texts = _json_texts(data, names, height)
    if texts is None:
        return None
    columns: list[pl.Series] = []
    for name, text in zip(names, texts):
        spec = COLUMN_BY_NAME.get(name)
        if spec is not None and spec.kind == "json":
            columns.append(text)
            continue
        column = _typed(text)
        if column is None:
            return None
        dtype = column.dtype
        if dtype.is_nested() and not (spec is not None and spec.kind == "struct") and not (
                isinstance(dtype, pl.List) and not dtype.inner.is_nested()):
            return None  # an object outside the known columns: the per-row reader says how it is held
        columns.append(column.alias(name))
    df = pl.DataFrame(columns, height=height)
    later = _later_fields(data, [*df.columns, "messages"], head)
    if later is None:
        return None
    return df.select([n for n in head if n in df.columns] + [n for n in later if n in df.columns])


def _seeded_lists(df: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series | None]:
    """The ``seeded`` of whileai 0.131 rows (the list of seeded fault kinds) as the per-row reader reads it.

    A list becomes its truth (``seeded``) and, where the row has no ``seeded_kinds``, that column
    (returned apart: it goes after the row's other fields). Left as is (the type check then hands
    the batch on) when the list holds other than text or a ``seeded_kinds`` field is also given.
    """
    dtype = df.schema.get("seeded")
    if not isinstance(dtype, pl.List) or dtype.inner not in (pl.String, pl.Null) or "seeded_kinds" in df.columns:
        return df, None
    seeded = df["seeded"]
    kinds = seeded.cast(pl.List(pl.String)).alias("seeded_kinds")
    return df.with_columns((seeded.list.len() > 0).alias("seeded")), kinds


def _with_kinds(df: pl.DataFrame, kinds: pl.Series | None, head: list[str], before: list[str]) -> pl.DataFrame | None:
    """``seeded_kinds`` placed where the per-row reader's first-seen order puts it, or None.

    The first row's seeded list gives it after that row's own fields and the conversation's
    fields that row gets (``_fill_from_messages`` puts them right after the first row's), before
    the fields first seen in later rows. None when the first row has no seeded list, or a field
    taken from the conversation is null in the first row (whether that row got it is not known).
    """
    if kinds is None or kinds.null_count() == kinds.len():
        return df
    added = [c for c in df.columns if c not in before]
    if kinds[0] is None or any(df[c][0] is None for c in added):
        return None
    at = sum(1 for c in df.columns if c in head) + len(added)
    return df.insert_column(at, kinds)


def _distinct_messages(texts: pl.Series) -> pl.Series | None:
    """Each row's conversation from its messages' JSON texts, ``normalize.normalize_messages``'s result.

    Each distinct message is normalised once (``normalize.normalize_message``); tool calls and
    results are then linked as ``normalize._link_tool_calls`` links them (``_columnar.link``).
    None (the per-row reader reads the batch) when a row holds no list of messages, a message
    stands for several (Anthropic tool results), has no role, or is refused.
    """
    from whileai.table._columnar import link_calls

    if texts.null_count():
        return None
    flat = texts.explode(empty_as_null=False, keep_nulls=False)
    uniq = flat.unique(maintain_order=True)
    loads = json.loads
    try:
        normalized = [nz.normalize_message(loads(t)) for t in uniq.to_list()]
    except (nz.BadMessageError, ValueError, TypeError):
        return None
    if any(m["role"] is None for m in normalized):
        return None  # the per-row reader refuses it, naming the row
    distinct = pl.DataFrame(normalized, schema=MESSAGE.to_schema())
    index = flat.replace_strict(uniq, pl.Series(np.arange(uniq.len(), dtype=np.int64)), return_dtype=pl.Int64)
    frame = distinct[index.to_numpy()]
    msg_offsets = np.zeros(texts.len() + 1, dtype=np.int64)
    np.cumsum(texts.list.len().to_numpy(), out=msg_offsets[1:])
    linked = link_calls(frame, msg_offsets)
    if linked is None:
        return None
    return list_series("messages", linked.to_struct("m").cast(MESSAGE), msg_offsets).cast(_MESSAGES_DTYPE)


def _with_json_cells(df: pl.DataFrame, data: bytes, skip: str | None = None) -> pl.DataFrame | None:
    """The free-form JSON columns (``tools``, ``judge_meta``...) replaced by their cells decoded from the lines.

    pyarrow typed them as it found them; the per-row reader keeps each cell's canonical JSON text
    (``normalize.json_cell``), which only the line itself gives.
    """
    names = [n for n in _JSON_NAMES if n != skip and n in df.columns and df[n].null_count() < df.height]
    if not names:
        return df
    texts = _json_texts(data, names, df.height)
    if texts is None:
        return None
    return df.with_columns(json_cells(text, name) for name, text in zip(names, texts))


def _lines(data: bytes) -> pa.Array | None:
    """The batch's non-blank lines as one Arrow string array over its bytes (no copy); None when not UTF-8."""
    import pyarrow.compute as pc

    view = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(view == 10)
    if not data.endswith(b"\n"):
        ends = np.append(ends, len(data))
    offsets = np.concatenate([[0], ends + 1]).astype(np.int64)
    offsets[-1] = min(int(offsets[-1]), len(data))
    lines = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        lines.validate(full=True)
    except pa.ArrowInvalid:  # not UTF-8: the per-row reader names the line
        return None
    return lines.filter(pc.invert(pc.match_substring_regex(lines, r"^\s*$")))


def _on_lines(data: bytes, query: str) -> pa.Table | None:
    """``query`` run by DuckDB on the batch's lines, or None.

    The query reads a relation ``batch`` of ``i`` (the line's position) and ``line``. None when
    the lines are not UTF-8 or DuckDB refuses one (NaN, a lone surrogate, a broken line), for
    the per-row reader to read the batch and name the line.
    """
    import duckdb

    lines = _lines(data)
    if lines is None:
        return None
    con = duckdb.connect()
    try:
        con.execute("SET enable_progress_bar = false")
        rel = con.from_arrow(pa.table({"i": np.arange(len(lines), dtype=np.int64), "line": lines}))
        result = rel.query("batch", query)
        return None if result is None else result.to_arrow_table()
    except duckdb.Error:
        return None
    finally:
        con.close()


def _json_texts(data: bytes, names: list[str], height: int, split: str | None = None) -> list[pl.Series] | None:
    """The JSON text of fields ``names`` in each line of a batch, as DuckDB's JSON functions give it.

    The lines are one Arrow string array over the batch's bytes (no copy); DuckDB's
    ``json_extract`` with a list of paths (https://duckdb.org/docs/data/json/json_functions)
    parses each line once and returns each value's JSON text, minified, keys in the file's order,
    numbers as the file writes them, so decoding it gives the value Python's decoder gives for
    the line (a field a line lacks, or holds as null, is null: one cell either way). None when
    DuckDB refuses a line (NaN, a lone surrogate) or the batch does not hold ``height`` lines
    (pyarrow's reader, which read the batch first, takes only JSON objects): the per-row reader
    then reads the batch and names any bad line. Field ``split``, when given, comes last, as the
    JSON text of each element of its list (null where a row holds no list).
    """
    fields = [*names, *([split] if split else [])]
    paths = "[" + ", ".join(f"'$.\"{name}\"'" for name in fields) + "]"
    last = f"cells[{len(fields)}]"
    items = f", CASE WHEN json_type({last}) = 'ARRAY' THEN from_json({last}, '[\"JSON\"]') END AS items" if split else ""
    cells = _on_lines(data, f"SELECT cells{items} FROM (SELECT json_extract(line, {paths}) AS cells FROM batch)")
    if cells is None or cells.num_rows != height:
        return None
    frame = pl.from_arrow(cells)
    assert isinstance(frame, pl.DataFrame)
    out = [frame["cells"].list.get(i).alias(name) for i, name in enumerate(names)]
    return [*out, frame["items"].alias(split)] if split else out


def _arrow_rows(data: bytes, head: list[str], typed: list[tuple[str, pa.DataType]],
                skip: str | None = None) -> pl.DataFrame | None:
    """The batch through pyarrow's JSON reader, columns in first-seen order.

    pyarrow is strict (a field of two types refuses the batch); ``typed`` fields get the types
    given, and field ``skip`` is dropped.
    """
    import pyarrow.json as pj

    schema = pa.schema(typed)
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
    if skip is not None and skip in table.schema.names:
        table = table.drop_columns([skip])
    if any(table.schema.field(name).type != dtype for name, dtype in typed) or any(
            _has_timestamp(f.type) for f in table.schema):
        return None  # a message or call key outside the known shapes, a date inside a nested value
    df = pl.from_arrow(table)
    assert isinstance(df, pl.DataFrame)
    later = _later_fields(data, df.columns, head)
    return None if later is None else df.select([n for n in head if n in df.columns] + later)


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


def _fill_from_messages(df: pl.DataFrame, head: list[str]) -> pl.DataFrame | None:
    """prompt, final_text and system_prompt taken from the conversation where the row has none.

    As the per-row reader does: a null cell is filled; a column no row has is added where that
    reader's first-seen order puts it (after the first row's fields when the first row gets it,
    at the end when no field appears after the first row); None when that place is not known.
    """
    msgs = pl.col("messages")
    first, last = msgs.list.first(), msgs.list.last()
    rules = {  # (the value, the rows that get the field when the source has no such field)
        "prompt": (msgs.list.eval(pl.element().filter(pl.element().struct.field("role") == "user")
                                  .struct.field("content")).list.first(), msgs.list.len() > 0),
        "final_text": (pl.when((last.struct.field("role") == "assistant")
                               & (last.struct.field("tool_calls").list.len() == 0)).then(last.struct.field("content")),
                       (last.struct.field("role") == "assistant") & (last.struct.field("tool_calls").list.len() == 0)),
        "system_prompt": (pl.when(first.struct.field("role") == "system").then(first.struct.field("content")),
                          first.struct.field("role") == "system"),
    }
    fills = [pl.coalesce(pl.col(name).cast(pl.String), value).alias(name)
             for name, (value, _) in rules.items() if name in df.columns and df[name].null_count()]
    if fills:
        df = df.with_columns(fills)
    absent = [name for name in rules if name not in df.columns]
    if not absent:
        return df
    gets = df.select([rules[name][1].fill_null(False).arg_true().first().alias(name) for name in absent]).row(0)
    added = sorted((row, i, name) for i, (name, row) in enumerate(zip(absent, gets)) if row is not None)
    if not added:
        return df
    later = [c for c in df.columns if c not in head]
    if later and any(row > 0 for row, _, _ in added):
        return None  # the field lands among fields first seen in later rows: the per-row reader places it
    df = df.with_columns([rules[name][0].alias(name) for _, _, name in added])
    first_row = [c for c in df.columns if c in head]
    return df.select([*first_row, *(name for _, _, name in added), *later])


# ------------------------------------------------------------------------------------------
# whileai 0.131 rows
# ------------------------------------------------------------------------------------------


def _steps_batch(data: bytes, head: list[str]) -> pl.DataFrame | None:
    if "prompt" not in head or "final_text" not in head:
        return None  # a reply or prompt the per-row reader derives and places itself
    import re

    if re.search(_STRING_STEPS, data):
        return None  # steps given as text: kept verbatim and never turned into turns
    df = _steps_rows(data, head)
    if df is None or df.height == 0 or "messages" in df.columns or not _plain_types(df.schema):
        return None
    df = _with_json_cells(df, data, skip="steps")
    if df is None:
        return None
    steps = df["steps"].cast(pl.String) if "steps" in df.columns else pl.Series("steps", [None] * df.height, pl.String)
    distinct = _distinct_steps(data, steps)
    if distinct is None:
        return None
    built = _steps_messages(df, *distinct)
    if built is None:
        return None
    messages, canonical = built
    later = _later_fields(data, df.columns, head)
    if later is None:
        return None
    columns = [*(n for n in head if n in df.columns), "messages", *later]
    df = df.with_columns(messages)
    if "steps" in df.columns:
        df = df.with_columns(canonical)
    return _fill_from_messages(df.select(columns), [*head, "messages"])


def _plain_types(schema: Any) -> bool:
    """Whether every table column was read with the type the per-row reader gives it as is.

    Text columns must be text (that reader writes ``True`` where a cast writes ``true``), whole
    numbers whole, markers numbers; free-form and ``as_read`` columns are checked elsewhere.
    """
    for name, dtype in schema.items():
        spec = COLUMN_BY_NAME.get(name)
        if spec is None or dtype == pl.Null or spec.kind in ("json", "as_read", "messages"):
            continue
        if spec.kind == "struct":
            if not isinstance(dtype, pl.Struct) or (name == "markers" and not all(
                    f.dtype.is_numeric() or f.dtype in (pl.Boolean, pl.Null) for f in dtype.fields)):
                return False
        elif not (dtype == spec.dtype or (spec.dtype == pl.Float64 and dtype == pl.Int64)
                  or (name in ("reward", "gold_reward") and dtype == pl.Boolean)):
            return False
    return True


def _steps_rows(data: bytes, head: list[str]) -> pl.DataFrame | None:
    """A batch of 0.131 rows: each field typed strictly by pyarrow, ``steps`` as Polars' JSON text.

    When pyarrow refuses the batch (steps whose values differ in type from row to row, say) Polars
    reads it all, which types a field holding text in one row and a number in another as text:
    then any text that could have been a number, a flag or an object hands the batch on.
    """
    df = _arrow_rows(data, head, [], skip="steps")
    if df is not None:
        try:
            steps = pl.read_ndjson(io.BytesIO(data), schema={"steps": pl.String})["steps"]
        except Exception:  # a value Polars cannot give as text
            return None
        if steps.len() != df.height:
            return None
        before = [c for c in df.columns if c in head[:head.index("steps")]]
        return df.with_columns(steps).select([*before, "steps", *(c for c in df.columns if c not in before)])
    df = _polars_rows(data)
    if df is None:
        return None
    others = [n for n in df.columns if n != "steps"]
    if any(df.schema[n].is_nested() and n != "markers" for n in others):
        return None
    text = [n for n in others if df.schema[n] == pl.String]
    if text and df.select(pl.any_horizontal(pl.col(text).str.contains(_NOT_PLAIN_TEXT)).any()).item():
        return None
    return df


def _polars_rows(data: bytes) -> pl.DataFrame | None:
    """The batch through Polars' JSONL reader, ``steps`` as Polars' JSON text of each value."""
    try:
        return pl.read_ndjson(io.BytesIO(data), infer_schema_length=None, schema_overrides={"steps": pl.String})
    except Exception:  # a broken line, a value Polars cannot type: the per-row reader says
        return None


def _distinct_steps(data: bytes, steps: pl.Series) -> tuple[list[list[Any]], list[str], np.ndarray] | None:
    """Each distinct ``steps`` value, its canonical JSON, and which one each row holds (-1: none).

    Polars' JSON text of a value is the file's up to layout when no text in the batch holds a
    quote or a backslash (Polars escapes neither in keys, nor a backslash in values) and the
    value holds no number (Polars writes 1.0 as 1): then each distinct text is decoded once.
    Otherwise each line is decoded in Python, exactly. None when a value is not a list.
    """
    if b'\\"' not in data and b"\\\\" not in data and not steps.str.contains(_NUMBER_IN_JSON).any():
        uniq = steps.drop_nulls().unique(maintain_order=True)
        loads = json.JSONDecoder(strict=False).decode  # Polars writes a tab or other control character as is
        try:
            values = [loads(text) for text in uniq.to_list()]
        except ValueError:
            return None
        index = (steps.replace_strict(uniq, pl.Series(np.arange(uniq.len(), dtype=np.int64)), default=-1,
                                      return_dtype=pl.Int64).fill_null(-1).to_numpy())
        if not all(isinstance(v, list) for v in values):
            return None
        return values, [nz.dumps(v) for v in values], index
    rows = []
    for line in data.split(b"\n"):
        if line.strip():
            try:
                rows.append(json.loads(line).get("steps"))
            except (ValueError, AttributeError):
                return None
    if len(rows) != steps.len() or not all(v is None or isinstance(v, list) for v in rows):
        return None
    text = pl.Series([None if v is None else nz.dumps(v) for v in rows], dtype=pl.String)
    first = text.arg_unique().filter(text.gather(text.arg_unique()).is_not_null())
    uniq = text.gather(first)
    index = (text.replace_strict(uniq, pl.Series(np.arange(uniq.len(), dtype=np.int64)), default=-1,
                                 return_dtype=pl.Int64).fill_null(-1).to_numpy())
    return [rows[i] for i in first.to_list()], uniq.to_list(), index


def steps_conversation(df: pl.DataFrame) -> pl.Series:
    """The conversations of 0.131 rows held in a frame, ``steps`` as canonical JSON text.

    Each distinct ``steps`` text is decoded once and its turns cut by offsets, as for a JSONL
    batch; a row with nothing to build from (no prompt, steps or reply) keeps no conversation,
    and the rows are then built one by one (``normalize.messages_from_steps``).
    """
    steps = df["steps"]
    uniq = steps.drop_nulls().unique(maintain_order=True)
    values = [json.loads(text) for text in uniq.to_list()]
    index = (steps.replace_strict(uniq, pl.Series(np.arange(uniq.len(), dtype=np.int64)), default=-1,
                                  return_dtype=pl.Int64).fill_null(-1).to_numpy())
    built = _steps_messages(df, values, uniq.to_list(), index)
    if built is not None:
        return built[0]
    n = df.height
    cells = {name: df[name].to_list() if name in df.columns else [None] * n
             for name in ("prompt", "final_text", "system_prompt")}
    rows = [None if p is None and i < 0 and f is None else nz.messages_from_steps(p, values[i] if i >= 0 else None, f, s)
            for p, i, f, s in zip(cells["prompt"], index.tolist(), cells["final_text"], cells["system_prompt"])]
    return pl.Series("messages", rows, dtype=_MESSAGES_DTYPE)


def _steps_messages(df: pl.DataFrame, values: list[list[Any]], canonical: list[str],
                    index: np.ndarray) -> tuple[pl.Series, pl.Series] | None:
    """The conversations of 0.131 rows, and the canonical JSON of each ``steps``; None at any doubt."""
    n = df.height
    none = pl.Series([None] * n, dtype=pl.String)
    prompt = df["prompt"].cast(pl.String) if "prompt" in df.columns else none
    final = df["final_text"].cast(pl.String) if "final_text" in df.columns else none
    system = df["system_prompt"].cast(pl.String) if "system_prompt" in df.columns else none
    if (prompt.is_null() & pl.Series(index < 0) & final.is_null()).any():
        return None  # a row with nothing to build a conversation from keeps none, row by row
    turns = _Turns()
    for value in values:
        turns.add(value)
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
    # one gather from [system turns, prompt turns, distinct step turns, final turns]
    pieces = [
        _text_turns("system", system.filter(pl.Series(has_system))),
        _text_turns("user", prompt.filter(pl.Series(has_prompt))),
        turns.table(),
        _text_turns("assistant", final.filter(pl.Series(has_final))),
    ]
    base = np.cumsum([0, *(p.height for p in pieces)])
    order = np.empty(int(offsets[-1]), dtype=np.int64)
    order[offsets[:-1][has_system]] = np.arange(base[0], base[1])
    order[(offsets[:-1] + has_system)[has_prompt]] = np.arange(base[1], base[2])
    order[step_at] = base[2] + step_src
    order[(offsets[1:] - 1)[has_final]] = np.arange(base[3], base[4])
    flat = pl.concat(pieces, how="vertical", rechunk=True)[order]
    messages = list_series("messages", flat.to_struct("m").cast(MESSAGE), offsets).cast(_MESSAGES_DTYPE)
    canonical_steps = pl.Series("steps", [*canonical, None], dtype=pl.String)[index]  # -1 takes the null
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


_CALL_IDS = tuple(f"call_{i:04d}" for i in range(64))


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
        text, parts = (content, None) if content is None or type(content) is str else nz._content_text(content)
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
        dumps, arguments_text = nz.dumps, nz.canonical_arguments
        for step in steps:
            if type(step) is not dict:
                continue  # json gives plain dicts only; anything else is skipped, as row by row
            if "tool" in step:
                call_id = _CALL_IDS[n_call] if n_call < len(_CALL_IDS) else f"call_{n_call:04d}"
                n_call += 1
                tool = step["tool"]
                text = step.get("text")
                arguments = step.get("arguments")
                result = step.get("result")
                if (text is None or type(text) is str) and type(tool) is str:  # the common step, inline
                    self.role += ("assistant", "tool")
                    self.content += (text, result if type(result) is str else dumps(result))
                    self.name += (None, tool)
                    self.call_id += (None, call_id)
                    self.extra += (None, None)
                    self.has_call += (True, False)
                    self.call_ids.append(call_id)
                    self.call_name.append(tool)
                    self.call_args.append(dumps(arguments) if type(arguments) is dict else arguments_text(arguments))
                    continue
                self._turn("assistant", text, call=(call_id, tool, arguments))
                self._turn("tool", result if isinstance(result, str) else dumps(result), name=tool, call_id=call_id)
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
