"""Frame-level normalisation, columnar: any loaded frame becomes the canonical rollout table.

Cheap when the source already has the table's dtypes: text columns checked, aliases renamed,
TRL prompt/completion and 0.131 ``steps`` conversations built, each schema column cast to its
dtype (``_cells``), roles checked, prompt/reply/system prompt and the conversation derived from
one another, and ``task_key`` added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from whileai.errors import SchemaError
from whileai.table import _formats
from whileai.table import normalize as nz
from whileai.table._arrow import list_series
from whileai.table._cells import (
    _MESSAGES_DTYPE,
    _arrow_messages,
    _arrow_series,
    _cast_plain,
    _struct_column,
    json_column,
    messages_column,
)
from whileai.table._row_reader import _TEXT_COLUMNS, _nested_text, _system_blocks_text
from whileai.table.derive import final_reply
from whileai.table.schema import (
    COLUMN_BY_NAME,
    COLUMNS,
    MESSAGE,
    ROLE_ALIASES,
    ROLES,
    TOOL_CALL,
    Column,
    alias_map,
)

__all__ = ["no_identity_error"]


def _normalize_frame(df: pl.DataFrame, source: str, *, build_messages: bool = True) -> pl.DataFrame:
    """The loaded frame as the rollout table: its shape read, its columns cast, its texts derived, ``task_key`` added."""
    df = _check_text_columns(df, source)
    df = _apply_aliases(df)
    df = _conversational_prompt(df)
    df = _steps_conversation(df, build_messages=build_messages)
    df = _seeded_kinds(df)
    df = _cast_columns(df, source)
    df = _check_roles(df, source)
    df = _derive_content(df, build_messages=build_messages)
    if df.height and not ({"scenario_id", "task_id", "prompt"} & set(df.columns)):
        raise no_identity_error(source, df.columns)
    return _add_task_key(df, source)


def _seeded_kinds(df: pl.DataFrame) -> pl.DataFrame:
    """A ``seeded`` list column kept as ``seeded_kinds`` (cast to bool with the other columns)."""
    if "seeded" in df.columns and isinstance(df.schema["seeded"], pl.List) and "seeded_kinds" not in df.columns:
        # whileai 0.131 wrote seeded as the list of planted behaviours: keep them as seeded_kinds
        df = df.with_columns(pl.col("seeded").cast(pl.List(pl.String)).alias("seeded_kinds"))
    return df


def _cast_columns(df: pl.DataFrame, source: str) -> pl.DataFrame:
    """Every schema column the frame has in the schema's type; one already in it is left as it is."""
    fixes: list[pl.Series] = []
    for col in COLUMNS:
        if col.name not in df.columns:
            continue
        fix = _cast_column(df, col, source)
        if fix is not None:
            fixes.append(fix)
    if fixes:
        df = df.with_columns(fixes)
    return df


def _cast_column(df: pl.DataFrame, col: Column, source: str) -> pl.Series | None:
    """The column ``col`` in the schema's type by its kind, or None when it already is."""
    current = df.schema[col.name]
    if col.kind == "plain" and current != col.dtype:
        return _cast_plain(df[col.name], col.dtype, source)
    if col.kind == "json" and current != pl.String:
        return json_column(df[col.name])
    if col.kind == "messages" and current != _MESSAGES_DTYPE:
        return messages_column(df[col.name], source)
    if col.kind == "struct" and not isinstance(current, pl.Struct):
        values = [nz.loads_or_raw(v) for v in df[col.name].to_list()]
        return _struct_column(col.name, values, source)
    if col.name == "markers" and isinstance(current, pl.Struct) and any(f.dtype != pl.Float64 for f in current.fields):
        return df[col.name].cast(pl.Struct({f.name: pl.Float64 for f in current.fields}))
    return None


def no_identity_error(source: str, have: Sequence[str]) -> SchemaError:
    """Rows with no task identity: the error names the columns the source has and the mapping that fixes it."""
    return SchemaError(
        f"{source} has no scenario_id, task_id or prompt (columns: {', '.join(list(have)[:20]) or 'none'}), so rows "
        "cannot be grouped into tasks. Name the column that identifies the task with --map task=COLUMN "
        "(mapping={'task': 'COLUMN'} in Python), or add a scenario_id (or task_id) field, or a prompt / user message.",
        source=source, reason="no_task_identity")


def _check_text_columns(df: pl.DataFrame, source: str) -> pl.DataFrame:
    """A nested column (struct or list) under a text column or its alias is refused, naming its first row.

    Two exceptions, read as the row reader reads them: TRL's conversational ``prompt`` (a list of
    messages, without a ``messages`` column) and a system prompt of text blocks (joined).
    """
    names = _column_sources(df)
    fixes: list[pl.Series] = []
    for name in _TEXT_COLUMNS:
        fix = _text_column_fix(df, name, names, source)
        if fix is not None:
            fixes.append(fix)
    return df.with_columns(fixes) if fixes else df


def _column_sources(df: pl.DataFrame) -> dict[str, str]:
    """Each table column the frame holds, to the column it is read from (itself or an alias)."""
    aliases = alias_map()
    names: dict[str, str] = {}  # canonical -> the column it is read from, as ``_apply_aliases`` renames
    for column in df.columns:
        if column in COLUMN_BY_NAME:
            names[column] = column
    for alias, canonical in aliases.items():
        if alias in df.columns and canonical not in names:
            names[canonical] = alias
    return names


def _text_column_fix(df: pl.DataFrame, name: str, names: Mapping[str, str], source: str) -> pl.Series | None:
    """The text column ``name``'s source column as text where it is nested (None where it is not); a nested cell raises."""
    found = names.get(name)
    if found is None or not df.schema[found].is_nested():
        return None
    column = found
    if name == "prompt" and ((isinstance(df.schema[column], pl.List) and "messages" not in names)
                             or _messages_dtype(df.schema[column])):
        return None  # TRL's conversational prompt (_conversational_prompt builds the conversation), or messages
    bad = df[column].is_not_null()
    if name == "system_prompt":  # text blocks are joined (a system prompt per row: a short Python pass)
        joined = pl.Series(column, [None if v is None else _system_blocks_text(v) for v in df[column].to_list()],
                           dtype=pl.String)
        bad = bad & joined.is_null()
        if not bad.any():
            return joined.alias(column)
    if bad.any():
        index = int(bad.arg_true()[0])
        raise _nested_text(source, index, name, column, df[column][index], "custom_id" in df.columns)
    return pl.Series(column, [None] * df.height, dtype=pl.String)


def _messages_dtype(dtype: Any) -> bool:
    """A column type that holds chat messages: a struct with a ``role`` field, or a list of them."""
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    return isinstance(inner, pl.Struct) and "role" in {f.name for f in inner.fields}


def _check_roles(df: pl.DataFrame, source: str) -> pl.DataFrame:
    """Every message's role must be one of ``ROLES``: a null or unknown role names its row (columnar).

    A role of ``ROLE_ALIASES`` (OpenAI's ``developer``) is read as its alias; the frame is returned.
    """
    if "messages" not in df.columns or df.height == 0 or df.schema["messages"] != _MESSAGES_DTYPE:
        return df
    # one role per message: an empty or null conversation gives none (on every Polars version)
    flat = df["messages"].list.eval(pl.element().struct.field("role")).explode(empty_as_null=False, keep_nulls=False)
    if flat.null_count() == 0 and bool(flat.is_in(ROLES).all()):
        return df
    if bool(flat.is_in(list(ROLE_ALIASES)).any()):
        role = pl.field("role")
        df = df.with_columns(pl.col("messages").list.eval(pl.element().struct.with_fields(
            role.replace(ROLE_ALIASES).alias("role"))))
        return _check_roles(df, source)
    roles = (df.select(pl.int_range(pl.len()).alias("_row"), pl.col("messages"))
             .explode("messages", empty_as_null=False, keep_nulls=False)
             .select("_row", pl.col("messages").struct.field("role").alias("_role"),
                     pl.col("messages").struct.field("extra").alias("_extra")))
    bad = roles.filter(pl.col("_role").is_null() | ~pl.col("_role").is_in(ROLES)).head(1)
    if bad.height:
        row, role = bad["_row"][0], bad["_role"][0]
        extra = nz.loads_or_raw(bad["_extra"][0])
        if role is None and isinstance(extra, Mapping) and extra.get("type") in _formats.RESPONSES_ITEM_TYPES:
            raise _formats.refusal("openai_responses", f"{source}: row {row}", row=row)
        raise SchemaError(
            f"{source}: row {row} has a message with role {role!r}; role must be one of {', '.join(ROLES)}. "
            "Fix that row's messages (a missing role is not guessed).", row=row, column="messages", value=role)
    return df


def _conversational_prompt(df: pl.DataFrame) -> pl.DataFrame:
    """TRL prompt/completion columns become the table's.

    Lists of messages make one conversation; a text completion beside a text prompt (TRL's
    standard, not conversational, format; vf-eval's completion mode) is the reply, ``final_text``.
    """
    if ("completion" in df.columns and df.schema["completion"] == pl.String and "final_text" not in df.columns
            and "messages" not in df.columns and df.schema.get("prompt") == pl.String):
        return df.rename({"completion": "final_text"})
    if "messages" in df.columns or "prompt" not in df.columns or not isinstance(df.schema["prompt"], pl.List):
        return df
    prompts = df["prompt"].to_list()
    completions = df["completion"].to_list() if "completion" in df.columns else [None] * df.height
    conversations = []
    for prompt, completion in zip(prompts, completions):
        turns = list(prompt or [])
        if isinstance(completion, list):
            turns.extend(completion)
        elif completion is not None:
            turns.append({"role": "assistant", "content": completion})
        conversations.append(nz.normalize_messages(turns))
    messages = _arrow_series("messages", conversations, _arrow_messages())
    return df.drop([c for c in ("prompt", "completion") if c in df.columns]).with_columns(messages)


def _steps_conversation(df: pl.DataFrame, *, build_messages: bool) -> pl.DataFrame:
    """Rows of whileai 0.131 whose ``steps`` is a list column (a Parquet file or a DataFrame of them).

    ``steps`` becomes its canonical JSON text and, without a ``messages`` column, the
    conversation is rebuilt from it as the JSONL readers rebuild it (``_jsonl_full``). A list
    column gives every step every field any step has, the absent ones null: those nulls are
    dropped (a JSONL line that writes a step's field as an explicit null reads with it).
    """
    if "steps" not in df.columns or not df.schema["steps"].is_nested():
        return df
    df = df.with_columns(json_column(df["steps"], drop_none=True))
    # a projection builds it too where a row's prompt or reply is to come from it (``_collect_projection``)
    fills = [name for name in ("prompt", "final_text") if name in df.columns and df[name].null_count()]
    if "messages" in df.columns or not (build_messages or fills):
        return df
    from whileai.table import _jsonl_full  # loads pyarrow, which the other frames never need

    return df.with_columns(_jsonl_full.steps_conversation(df))


def _apply_aliases(df: pl.DataFrame) -> pl.DataFrame:
    renames: dict[str, str] = {}
    for alias, canonical in alias_map().items():
        if alias in df.columns and canonical not in df.columns and canonical not in renames.values():
            renames[alias] = canonical
    return df.rename(renames) if renames else df


def _derive_content(df: pl.DataFrame, *, build_messages: bool = True) -> pl.DataFrame:
    """Fill messages from prompt/final_text and prompt/final_text from messages, columnar.

    A column the frame lacks is derived from the conversation, and a null cell of one it has is
    filled from it (as the JSONL row reader, ``_normalize_row``, fills a row): from a file, a list
    of rows or a table in memory alike.
    """
    cols = set(df.columns)
    if build_messages and "messages" not in cols and ("prompt" in cols or "final_text" in cols):
        parts = [(role, name) for role, name in (("system", "system_prompt"), ("user", "prompt"),
                                                 ("assistant", "final_text")) if name in cols]
        df = df.with_columns(_messages_from_parts(df, parts))
        cols.add("messages")
    if "messages" in cols:
        df = _texts_from_messages(df, cols)
    return df


def _texts_from_messages(df: pl.DataFrame, cols: set[str]) -> pl.DataFrame:
    """Prompt, system prompt and reply taken from the conversation where the frame lacks them or a row leaves them null."""
    msgs = pl.col("messages")
    first = msgs.list.first()
    derived = {
        "prompt": msgs.list.eval(pl.element().filter(pl.element().struct.field("role") == "user")
                                 .struct.field("content")).list.first(),
        "system_prompt": pl.when(first.struct.field("role") == "system").then(first.struct.field("content")),
        "final_text": final_reply(msgs),
    }
    additions = []
    for name, value in derived.items():
        if name not in cols:
            if name == "system_prompt":
                system = df.select(value.alias(name))[name]
                if system.null_count() < df.height:  # only when some conversation opens with a system turn
                    additions.append(pl.lit(system))
            else:
                additions.append(value.alias(name))
        elif df[name].null_count():  # a row without it gets the conversation's, as row by row
            additions.append(pl.coalesce(pl.col(name).cast(pl.String), value).alias(name))
    if additions:
        df = df.with_columns(additions)
    return df


def _messages_from_parts(df: pl.DataFrame, parts: list[tuple[str, str]]) -> pl.Series:
    """The conversation [system, user, assistant] from text columns, built with Arrow offsets.

    Null texts are skipped. Vectorised: every message lands at its offset by a numpy scatter, so
    1M rows take well under a second (a Polars ``concat_list`` of structs took about 20 s).
    """
    n = df.height
    # an empty system prompt opens no turn (as ``normalize.messages_from_steps`` builds it row by row)
    present = (np.column_stack([(df[name].is_not_null() & (df[name].cast(pl.String) != "").fill_null(True)
                                 if role == "system" else df[name].is_not_null()).to_numpy() for role, name in parts])
               if n else np.zeros((0, len(parts)), bool))
    counts = present.sum(axis=1)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    before = np.cumsum(present, axis=1) - present  # messages ahead of each part within its row
    roles: list[pl.Series] = []
    contents: list[pl.Series] = []
    positions: list[np.ndarray] = []
    for i, (role, name) in enumerate(parts):
        mask = present[:, i]
        contents.append(df[name].cast(pl.String).filter(pl.Series(mask)))
        roles.append(pl.Series([role], dtype=pl.String).gather(np.zeros(int(mask.sum()), dtype=np.int64)))
        positions.append((offsets[:-1] + before[:, i])[mask])
    total = int(offsets[-1])
    order = np.empty(total, dtype=np.int64)
    order[np.concatenate(positions) if positions else np.zeros(0, np.int64)] = np.arange(total)
    flat = pl.DataFrame({
        "role": pl.concat(roles) if roles else pl.Series([], dtype=pl.String),
        "content": pl.concat(contents) if contents else pl.Series([], dtype=pl.String),
    })[order].select(
        pl.col("role"), pl.col("content"),
        pl.lit(None, pl.String).alias("name"), pl.lit(None, pl.String).alias("tool_call_id"),
        pl.lit([], pl.List(TOOL_CALL)).alias("tool_calls"), pl.lit(None, pl.String).alias("extra"),
    )
    return list_series("messages", flat.to_struct("m").cast(MESSAGE), offsets).cast(_MESSAGES_DTYPE)


def _add_task_key(df: pl.DataFrame, source: str) -> pl.DataFrame:
    parts = [pl.col(c).cast(pl.String) for c in ("scenario_id", "task_id") if c in df.columns]
    key = pl.coalesce(parts) if parts else pl.lit(None, pl.String)
    df = df.with_columns(key.alias("task_key")) if parts else df.with_columns(pl.lit(None, pl.String).alias("task_key"))
    missing = df["task_key"].is_null()
    if missing.any():
        if "prompt" not in df.columns:
            raise _no_key_error(source, int(missing.arg_true()[0]))
        prompts = df.filter(missing)["prompt"]
        if prompts.null_count():
            index = int(df.with_row_index("_i").filter(missing & pl.col("prompt").is_null())["_i"][0])
            raise _no_key_error(source, index)
        uniq = prompts.unique()
        mapping = pl.DataFrame({"prompt": uniq, "_hash": [nz.prompt_hash(p) for p in uniq.to_list()]})
        df = (
            df.join(mapping, on="prompt", how="left", maintain_order="left")
            .with_columns(pl.coalesce("task_key", "_hash").alias("task_key"))
            .drop("_hash")
        )
    return df


def _no_key_error(source: str, index: int) -> SchemaError:
    return SchemaError(
        f"{source}: row {index} has neither scenario_id, task_id nor prompt, so it belongs to no task. "
        "Add a scenario_id (or task_id) to every row, or a prompt / user message.",
        row=index,
    )
