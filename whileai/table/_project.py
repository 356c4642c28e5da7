"""Column projection: which source columns a read of some table columns needs, and the read of them.

A read of ``columns`` also reads their aliases and what ``task_key`` needs, and, where a row's
prompt, reply or system prompt would be filled from the conversation, the conversation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from whileai.table._frame_norm import _apply_aliases
from whileai.table.schema import alias_map


def _select(lf: pl.LazyFrame, columns: Sequence[str] | None) -> pl.LazyFrame:
    if not columns:
        return lf
    have = lf.collect_schema().names()
    wanted = _expand_columns(columns, have)
    return lf.select([c for c in have if c in wanted])


_CONVERSATION_PARTS = frozenset({"messages", "steps", "prompt", "completion", "system_prompt", "final_text"})


def _collect_projection(lf: pl.LazyFrame, columns: Sequence[str] | None) -> pl.DataFrame:
    """``_select`` collected; with the conversation too where a row leaves a field null that the full read fills from it.

    The full read gives a row without its prompt, reply or system prompt the conversation's
    (``_derive_content``): when a projection reads such a field with a null and the source has
    the conversation, it is read again with the conversation (and what it is built from).
    """
    df = _select(lf, columns).collect()
    if not columns:
        return df
    have = lf.collect_schema().names()
    filled = _filled_from_conversation(have, df.columns)
    if filled and not _CONVERSATION_FIELDS & set(_apply_aliases(df.head(0)).columns) and df.select(
            pl.any_horizontal(pl.col(filled).is_null()).any()).item():
        return _select(lf, [*columns, "messages"]).collect()
    return df


def _expand_columns(columns: Sequence[str], have: Sequence[str]) -> set[str]:
    """The requested columns plus what task_key needs (only as much identity as the source has)."""
    aliases = alias_map()
    present = {aliases.get(c, c) for c in have}
    # prompt too, since a row whose scenario_id is null falls back to the prompt hash
    wanted = set(columns) | {"scenario_id", "task_id", "prompt"}
    if "prompt" not in present and not {"scenario_id", "task_id"} & present:
        wanted |= {"messages", "steps"}
    if "messages" in wanted:
        # what the conversation is built from, and the fields the full read keeps as the row gives
        # them rather than taking them from the conversation
        wanted |= _CONVERSATION_PARTS
    if "final_text" in wanted:
        wanted.add("completion")  # TRL's standard format: a text completion is the reply
    for alias, canonical in aliases.items():
        if canonical in wanted:
            wanted.add(alias)
    return wanted


_CONVERSATION_FIELDS = frozenset({"messages", "steps"})


def _filled_from_conversation(have: Iterable[str], read: Sequence[str]) -> list[str]:
    """The fields among ``read`` that the full read fills from the conversation where a row leaves them null.

    A prompt (the first user turn) and a reply (the last assistant turn) come from either
    conversation, ``messages`` or 0.131 ``steps``; a system prompt only from ``messages`` (a
    0.131 row's system turn is its own ``system_prompt``). Empty when ``have`` holds no conversation.
    """
    aliases = alias_map()
    present = {aliases.get(n, n) for n in have}
    if not _CONVERSATION_FIELDS & present:
        return []
    fills = {"prompt", "final_text"} | ({"system_prompt"} if "messages" in present else set())
    return [n for n in read if aliases.get(n, n) in fills]
