"""A projected JSONL read through DuckDB's JSON reader: only the fields a step decides on.

``read(path, columns, source)`` parses a JSONL or JSONL.gz file with DuckDB's ``read_json``
(``format='newline_delimited'``) and a declared projection: every wanted field is declared as
``JSON``, so DuckDB hands back each field's JSON text and skips every other field of the line
(a conversation, ``steps``, nested results) without building it, and no row is refused for a
nested or unexpected value. Each column is then typed once, columnar, by Polars
(``str.json_decode``) after checking that the column holds one kind of JSON value (text,
number, flag, object or list): Polars alone would read a field of two kinds as text without a
word. The prompt, reply and system prompt a row leaves out are taken from its ``messages`` in
the same DuckDB query (the first user turn, the last assistant turn without tool calls, an
opening system turn), as ``frame`` derives them, so a measure's column list never needs the
conversation itself.

A column of several kinds, a conversation in another shape than plain OpenAI turns where a
field must be taken from it, or a conversation asked for is read by the row normaliser
(``_row_reader._from_dicts``) on the projected fields only. A line DuckDB cannot parse is named
by the line-by-line parser (``iter_jsonl``: ``file 'x.jsonl': line 7 is not valid JSON``).

DuckDB was measured against Polars' ``scan_ndjson`` with a schema on 100k rows of both shapes
(whileai 0.131 rows and OpenAI chat rows, 2.7 kB a row): the same projection took 1.0-1.3 CPU s
and 350-440 MiB peak through DuckDB against 1.6-3.2 CPU s and 500-880 MiB through Polars.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from whileai.defaults import JSONL_MAX_LINE_BYTES, JSONL_SCHEMA_HEAD_LINES
from whileai.errors import SchemaError
from whileai.table import normalize as nz
from whileai.table.schema import COLUMNS, ROLES, alias_map

__all__ = ["json_cells", "read"]

# The texts a row may leave out that ``frame`` takes from the conversation (``_row_reader._normalize_row``).
_FILLS = ("prompt", "final_text", "system_prompt")
_CONVERSATIONS = frozenset({"messages", "steps"})
_JSON_COLUMNS = frozenset(c.name for c in COLUMNS if c.kind == "json")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def head_keys(path: Path) -> list[str]:
    """The field names of the file's first ``JSONL_SCHEMA_HEAD_LINES`` rows, in order of appearance.

    Lines that are not JSON objects are skipped here: the read names them.
    """
    import gzip

    opener: Any = gzip.open if path.name.lower().endswith(".gz") else open
    keys: dict[str, None] = {}
    with opener(path, "rb") as handle:
        for line in itertools.islice(handle, JSONL_SCHEMA_HEAD_LINES):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                keys.update(dict.fromkeys(str(k) for k in row))
    return list(keys)


# The turns of a conversation as DuckDB structs: the role as text, content and tool calls as JSON.
_TURNS = """'[{"role": "VARCHAR", "content": "JSON", "tool_calls": "JSON"}]'"""


def _plain_conversation(m: str, t: str) -> str:
    """SQL: the conversation ``m`` (its turns ``t``) is a list of OpenAI turns (a known role, text content, a list of tool calls)."""
    roles = ", ".join(_literal(r) for r in ROLES)
    return (f"(json_type({m}) = 'ARRAY' AND coalesce(list_bool_and(list_transform({t}, "
            f"lambda x: x.role IN ({roles}) "
            "AND coalesce(json_type(x.content), 'NULL') IN ('VARCHAR', 'NULL') "
            "AND coalesce(json_type(x.tool_calls), 'NULL') IN ('ARRAY', 'NULL'))), true))")


def _derived(t: str) -> dict[str, str]:
    """SQL: what ``frame`` takes from a plain conversation's turns ``t`` for a row that leaves it out."""
    return {
        "prompt": f"list_filter({t}, lambda x: x.role = 'user')[1].content ->> '$'",
        "final_text": (f"CASE WHEN {t}[-1].role = 'assistant' AND coalesce(json_array_length({t}[-1].tool_calls), 0) = 0 "
                       f"THEN {t}[-1].content ->> '$' END"),
        "system_prompt": f"CASE WHEN {t}[1].role = 'system' THEN {t}[1].content ->> '$' END",
    }


def json_cells(text: pl.Series, name: str) -> pl.Series:
    """A column of JSON texts as the row reader holds a free-form JSON column (``privileged``...): canonical text.

    Each distinct text is decoded and written once (``normalize.json_cell``); a null stays null.
    """
    loads, cell = json.loads, nz.json_cell
    uniq = text.drop_nulls().unique().to_list()
    mapping = {t: cell(name, loads(t)) for t in uniq}
    return text.replace_strict(mapping, default=None, return_dtype=pl.String).alias(text.name)


def _kinds(text: pl.Series) -> set[str]:
    """The kinds of JSON value a column of JSON texts holds (nulls left out)."""
    first = text.drop_nulls().str.slice(0, 1).unique().to_list()
    out = set()
    for c in first:
        out.add({'"': "text", "{": "object", "[": "list", "t": "flag", "f": "flag", "n": "null"}.get(c, "number"))
    return out - {"null"}


def _typed(text: pl.Series) -> pl.Series | None:
    """A column of JSON texts decoded to one dtype, or None when it holds several kinds of value."""
    kinds = _kinds(text)
    if not kinds:
        return pl.Series(text.name, [None] * text.len(), dtype=pl.Null)
    if len(kinds) > 1:
        return None
    kind = kinds.pop()
    try:
        if kind == "text":
            return text.str.json_decode(pl.String)
        if kind == "flag":
            return text.str.json_decode(pl.Boolean)
        return text.str.json_decode(infer_schema_length=None)
    except (pl.exceptions.PolarsError, ValueError):
        return None


def read(path: Path, columns: Sequence[str], source: str, expand: Any, rows: Any) -> pl.DataFrame | None:
    """The fields ``columns`` need of every row of a JSONL (or .jsonl.gz) file, untyped by the normaliser.

    Args:
        path: The file.
        columns: The columns the step asked for.
        source: How errors name the file.
        expand: ``_project._expand_columns`` (the wanted columns given the file's fields).
        rows: ``_row_reader._from_dicts``-like callable for the row-normaliser path
            (``rows(dicts, source)``).

    Returns:
        A frame of the wanted fields the file has (a field no row holds is left out), before
        ``frame``'s columnar normalisation; None when DuckDB cannot parse the file (a broken
        line or stream, a line past ``JSONL_MAX_LINE_BYTES``), for the line reader to name the
        line or read it.
    """
    import duckdb

    have = head_keys(path)
    aliases = alias_map()
    wanted = expand(columns, have)
    canonical = {n: aliases.get(n, n) for n in wanted}
    conversation_wanted = any(c in _CONVERSATIONS for c in canonical.values())
    sources = sorted(n for n, c in alias_map().items() if c in _CONVERSATIONS) + sorted(_CONVERSATIONS)
    fills = [n for n in wanted if canonical[n] in _FILLS]
    names = sorted(wanted if conversation_wanted else wanted - set(sources))
    declared = {n: "JSON" for n in names}
    extra: list[str] = []
    inner: list[str] = []
    if fills and not conversation_wanted:
        for n in sources:
            declared[n] = "JSON"
        conv = "coalesce(" + ", ".join(_quote(n) for n in sources) + ")"
        extra.append(f"{conv} IS NOT NULL AS __conv")
        # messages (or an alias of it) is the conversation the texts come from
        m = "coalesce(" + ", ".join(_quote(n) for n in sources if aliases.get(n, n) == "messages") + ")"
        inner.append(f"{m} AS __m")
        inner.append(f"json_transform({m}, {_TURNS}) AS __t")  # the turns parsed once
        extra.append("__m IS NOT NULL AS __msgs")
        extra.append(f"(__m IS NOT NULL AND {_plain_conversation('__m', '__t')}) AS __plain")
        extra.extend(f"{sql} AS {_quote('__' + name)}" for name, sql in _derived("__t").items())
    struct = "{" + ", ".join(f"{_literal(n)}: 'JSON'" for n in declared) + "}"
    select = ", ".join([*(_quote(n) for n in names), *extra]) or "1 AS __one"
    try:
        with _plain_name(path) as target:
            scan = (f"read_json({_literal(str(target))}, format='newline_delimited', "
                    f"columns={struct}, maximum_object_size={JSONL_MAX_LINE_BYTES})")
            query = f"SELECT {select} FROM (SELECT {', '.join(['*', *inner])} FROM {scan})"
            con = duckdb.connect()
            con.execute("SET enable_progress_bar = false")  # DuckDB draws one on stderr for a read past 2 s
            try:
                raw = pl.from_arrow(con.sql(query).to_arrow_table())
            finally:
                con.close()
    except duckdb.Error:  # a broken line or stream, a row past JSONL_MAX_LINE_BYTES: the line reader says which
        return None
    assert isinstance(raw, pl.DataFrame)
    if conversation_wanted:
        return _by_rows(raw, names, have, source, rows)
    typed: list[pl.Series] = []
    for n in names:
        column = json_cells(raw[n], aliases.get(n, n)) if aliases.get(n, n) in _JSON_COLUMNS else _typed(raw[n])
        if column is None:  # a field of several kinds: the row normaliser says what each value is
            if "__conv" in raw.columns:
                return _row_path(path, [*names, *_conversation_names()], have, source, rows, keep=names)
            return _by_rows(raw, names, have, source, rows, keep=names)
        if n in have or column.null_count() < column.len():
            typed.append(column)
    out = pl.DataFrame(typed, height=raw.height)
    if "__conv" in raw.columns:
        out = _fill(out, raw, fills, path, names, have, source, rows)
    return out


def _fill(out: pl.DataFrame, raw: pl.DataFrame, fills: list[str], path: Path, names: list[str],
          have: list[str], source: str, rows: Any) -> pl.DataFrame:
    """Give a row without its prompt, reply or system prompt the conversation's, as the row reader does."""
    aliases = alias_map()
    if not raw["__conv"].any():
        return out
    targets = {aliases.get(n, n) for n in fills}
    given = {aliases.get(n, n): n for n in out.columns if aliases.get(n, n) in targets}
    # a system prompt comes from ``messages`` only (0.131 ``steps`` hold none); prompt and reply from either
    need = pl.Series([False] * raw.height)
    for target in targets:
        has = raw["__msgs"] if target == "system_prompt" else raw["__conv"]
        need = need | (has & (out[given[target]].is_null() if target in given else True))
    if (need & ~raw["__plain"].fill_null(False)).any():
        return _row_path(path, [*names, *_conversation_names()], have, source, rows, keep=names)
    additions: list[pl.Series | pl.Expr] = []
    for target in sorted(targets):
        derived = raw[f"__{target}"]
        if target in given:
            name = given[target]
            if out.schema[name] not in (pl.String, pl.Null):
                continue  # a nested value there: the normaliser refuses it, naming the row
            additions.append(pl.coalesce(out[name].cast(pl.String), derived).alias(name))
        elif target != "system_prompt" or derived.null_count() < derived.len():
            additions.append(derived.alias(target))
    return out.with_columns(additions) if additions else out


@contextlib.contextmanager
def _plain_name(path: Path) -> Iterator[Path]:
    """The file under a name DuckDB reads as one file: a name with glob characters is linked from a plain one."""
    path = path.resolve()
    if not set(str(path)) & set("*?[]{}"):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="whileai-jsonl-") as folder:
        link = Path(folder) / ("rows.jsonl.gz" if path.name.lower().endswith(".gz") else "rows.jsonl")
        os.symlink(path, link)
        yield link


def _conversation_names() -> list[str]:
    aliases = alias_map()
    return sorted({*_CONVERSATIONS, *(n for n, c in aliases.items() if c in _CONVERSATIONS)})


def _by_rows(raw: pl.DataFrame, names: list[str], have: list[str], source: str, rows: Any,
             keep: list[str] | None = None) -> pl.DataFrame:
    """The projected fields through the row normaliser (each field's JSON text decoded in Python)."""
    loads = json.loads
    texts = [raw[n].to_list() for n in names]
    dicts = [{n: (None if t is None else loads(t)) for n, t in zip(names, values)
              if t is not None or n in have} for values in zip(*texts)]
    return _kept(rows(dicts, source), keep) if dicts else pl.DataFrame()


def _kept(df: pl.DataFrame, keep: list[str] | None) -> pl.DataFrame:
    """Only the columns read for ``keep`` (the normaliser adds a conversation built from the texts)."""
    if keep is None:
        return df
    aliases = alias_map()
    kept = {aliases.get(n, n) for n in keep} | set(keep)
    return df.select([c for c in df.columns if c in kept])


def _row_path(path: Path, names: list[str], have: list[str], source: str, rows: Any,
              keep: list[str] | None = None) -> pl.DataFrame:
    """Every line parsed in Python, only ``names`` kept, through the row normaliser."""
    wanted = set(names)
    dicts = [{k: v for k, v in row.items() if k in wanted} for row in _lines(path, source)]
    if not dicts:
        return pl.DataFrame()
    return _kept(rows(dicts, source), keep)


def _lines(path: Path, source: str) -> Iterator[dict[str, Any]]:
    import gzip

    opener: Any = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        yield from iter_jsonl(handle, source)


def iter_jsonl(handle: Any, source: str, *, first_line: int = 1) -> Iterator[dict[str, Any]]:
    """Each line of a JSONL handle as a dict (a leading JSON array read whole), naming a bad line by its number."""
    first = first_line == 1
    loads = json.loads
    for lineno, line in enumerate(handle, start=first_line):
        if lineno == 1 and line.startswith("\ufeff"):  # a byte-order mark, as Excel and PowerShell write UTF-8
            line = line[1:]
        if not line.strip():
            continue
        if first and line.lstrip().startswith("["):
            rest = line + handle.read()
            try:
                data = loads(rest)
            except ValueError as exc:
                raise SchemaError(f"{source}: line {lineno} is not valid JSON ({exc.args[0]}). Fix or remove that line.",
                                  line=lineno) from exc
            if not isinstance(data, list):
                data = [data]
            yield from (_as_row(item, source, i + 1) for i, item in enumerate(data))
            return
        first = False
        try:
            item = loads(line)
        except ValueError as exc:
            raise SchemaError(
                f"{source}: line {lineno} is not valid JSON ({exc.args[0] if exc.args else exc}). "
                "Fix or remove that line; every line must be one JSON object.",
                line=lineno,
            ) from exc
        yield _as_row(item, source, lineno)


def _as_row(item: Any, source: str, lineno: int) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise SchemaError(
            f"{source}: line {lineno} is a JSON {type(item).__name__}, not an object. Every line must be one row object.",
            line=lineno,
        )
    return item
