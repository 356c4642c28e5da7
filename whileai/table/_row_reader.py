"""The per-row reader: row dicts (JSONL lines, a list of dicts) normalised one by one into a frame.

Each row's aliases become the table's names, its conversation is built or normalised and the
texts a row leaves out are taken from it, its numbers and JSON cells are checked; the rows are
then built column by column (``_cells``). A bad row raises a ``SchemaError`` naming its index.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from whileai.errors import SchemaError
from whileai.table import _formats
from whileai.table import normalize as nz
from whileai.table._cells import _bad_message, _column
from whileai.table.schema import COLUMNS, alias_map


def _from_dicts(rows: list[Any], source: str, offset: int = 0) -> pl.DataFrame:
    aliases = alias_map()
    normalized: list[dict[str, Any]] = []
    for i, row in enumerate(rows, start=offset):
        if not isinstance(row, Mapping):
            raise SchemaError(f"{source}: row {i} is a {type(row).__name__}, not a dict. Pass one dict per rollout.", row=i)
        normalized.append(_normalize_row(row, aliases, source, i))
    order: dict[str, None] = {}
    for row in normalized:
        for key in row:
            order.setdefault(key, None)
    series = [_column(name, [row.get(name) for row in normalized], source) for name in order]
    return pl.DataFrame(series) if series else pl.DataFrame()


def _normalize_row(row: Mapping[str, Any], aliases: Mapping[str, str], source: str, index: int) -> dict[str, Any]:
    """One row dict in the table's names and cell types, as ``_from_dicts`` builds its columns from it."""
    out, held = _canonical_names(row, aliases)
    _trl_conversation(out)
    _check_texts(out, row, source, index)
    _build_conversation(out, source, index)
    _texts_from_conversation(out, held)
    _seeded_kinds(out)
    _check_rewards(out, source, index)
    _check_markers(out, source, index)
    _decode_json_cells(out)
    return out


def _canonical_names(row: Mapping[str, Any], aliases: Mapping[str, str]) -> tuple[dict[str, Any], set[str]]:
    """The row under the table's names, and the text columns held under their alias (not to be filled)."""
    out: dict[str, Any] = {}
    # a text column's alias holding an object or a list stays under its own name (a mapping may
    # read the text inside it; else the frame refuses it, ``_check_text_columns``), and the column
    # is not taken from the conversation either
    held: set[str] = set()
    for key, value in row.items():
        key = str(key)
        canonical = aliases.get(key)
        if canonical is not None and canonical not in row:
            if canonical in _TEXT_COLUMNS and isinstance(value, (dict, list)) and not _text_like(canonical, value):
                held.add(canonical)
            else:
                key = canonical
        out[key] = value
    return out, held


def _trl_conversation(out: dict[str, Any]) -> None:
    """TRL's prompt/completion fields as the table's, in place."""
    # TRL-style conversational prompt/completion rows: two message lists make one conversation;
    # in TRL's standard format (text prompt, text completion) the completion is the reply.
    prompt = out.get("prompt")
    if (isinstance(prompt, str) and isinstance(out.get("completion"), str) and out.get("final_text") is None
            and "messages" not in out):
        out["final_text"] = out.pop("completion")
    if isinstance(prompt, list) and "messages" not in out:
        completion = out.pop("completion", None)
        out["messages"] = list(prompt) + (completion if isinstance(completion, list) else
                                          [{"role": "assistant", "content": completion}] if completion is not None else [])
        out["prompt"] = None


def _check_texts(out: dict[str, Any], row: Mapping[str, Any], source: str, index: int) -> None:
    """A nested value under a text column is refused; a system prompt of text blocks is joined, in place."""
    for name in _TEXT_COLUMNS:
        value = out.get(name)
        if isinstance(value, (dict, list)) and not (name == "prompt" and _is_messages(value)):
            text = _system_blocks_text(value) if name == "system_prompt" else None
            if text is None:
                raise _nested_text(source, index, name, name, value, "custom_id" in row)
            out[name] = text


def _build_conversation(out: dict[str, Any], source: str, index: int) -> None:
    """The row's conversation normalised, or built from its prompt, 0.131 steps and reply, in place."""
    if "messages" in out and out["messages"] is not None:
        try:
            out["messages"] = nz.normalize_messages(out["messages"])
        except nz.BadMessageError as exc:
            raise _bad_message(source, index, str(exc)) from exc
    elif out.get("steps") is not None or out.get("prompt") is not None or out.get("final_text") is not None:
        out["messages"] = nz.messages_from_steps(out.get("prompt"), out.get("steps"), out.get("final_text"),
                                                 out.get("system_prompt"))


def _texts_from_conversation(out: dict[str, Any], held: set[str]) -> None:
    """A prompt, reply or system prompt the row leaves out, taken from its conversation, in place."""
    messages = out.get("messages")
    if messages:
        if out.get("prompt") is None and "prompt" not in held:
            out["prompt"] = next((m["content"] for m in messages if m["role"] == "user"), None)
        if out.get("final_text") is None and "final_text" not in held:
            last = messages[-1]
            if last["role"] == "assistant" and not last["tool_calls"]:
                out["final_text"] = last["content"]
        if out.get("system_prompt") is None and "system_prompt" not in held and messages[0]["role"] == "system":
            out["system_prompt"] = messages[0]["content"]


def _seeded_kinds(out: dict[str, Any]) -> None:
    """A 0.131 ``seeded`` list of planted behaviours as ``seeded`` and ``seeded_kinds``, in place."""
    seeded = out.get("seeded")
    if isinstance(seeded, (list, tuple)):
        out["seeded"] = bool(seeded)
        out.setdefault("seeded_kinds", [str(s) for s in seeded])


def _check_rewards(out: dict[str, Any], source: str, index: int) -> None:
    """``reward`` and ``gold_reward`` as floats; anything but a number or null is refused, in place."""
    for name in ("reward", "gold_reward"):
        if name in out:
            try:
                out[name] = nz.to_float(out[name])
            except (TypeError, ValueError) as exc:
                raise SchemaError(
                    f"{source}: row {index} has {name}={out[name]!r}, which is not a number. "
                    f"A {name} must be a number in [0, 1] or null.",
                    row=index, column=name,
                ) from exc


def _check_markers(out: dict[str, Any], source: str, index: int) -> None:
    """``markers`` (a dict, or its JSON text) as name to float; anything else is refused, in place."""
    markers = out.get("markers")
    if isinstance(markers, str):
        markers = nz.loads_or_raw(markers)
    if isinstance(markers, Mapping):
        try:
            out["markers"] = {str(k): nz.to_float(v) for k, v in markers.items()}
        except (TypeError, ValueError) as exc:
            raise SchemaError(
                f"{source}: row {index} has a non-numeric marker in {dict(markers)!r}. Marker values must be numbers.",
                row=index, column="markers",
            ) from exc
    elif markers is not None:
        raise SchemaError(f"{source}: row {index} has markers={markers!r}; markers must be a dict of name to number.",
                          row=index, column="markers")


def _decode_json_cells(out: dict[str, Any]) -> None:
    """``lineage`` and ``calibration`` given as JSON text decoded, and every JSON column's cell canonical, in place."""
    for name in ("lineage", "calibration"):
        value = out.get(name)
        if isinstance(value, str):
            out[name] = nz.loads_or_raw(value)
    for col in COLUMNS:
        if col.kind == "json" and col.name in out and out[col.name] is not None:
            out[col.name] = nz.json_cell(col.name, out[col.name])


#: The texts a conversation is built from and the task's identity: a nested value there is another
#: shape (an API envelope under ``response``), never a text to train on or a task, and is refused.
#: Any other text column (a ``world_state`` given as a dict) keeps a nested value as its JSON text.
_TEXT_COLUMNS = ("scenario_id", "task_id", "prompt", "final_text", "system_prompt")


def _text_like(name: str, value: Any) -> bool:
    """Whether a nested value is read under the text column ``name``: a prompt of messages, system text blocks."""
    return (name == "prompt" and (isinstance(value, list) or _is_messages(value))) or (
        name == "system_prompt" and _system_blocks_text(value) is not None)


def _is_messages(value: Any) -> bool:
    """A chat message (a dict with a role) or a list of them: a prompt given as the conversation's opening.

    Without a ``messages`` field a list of them is the conversation (TRL's conversational
    format); beside one, the prompt keeps their JSON text, as it always has.
    """
    if isinstance(value, Mapping):
        return "role" in value
    return isinstance(value, list) and bool(value) and all(isinstance(m, Mapping) and "role" in m for m in value)


def _system_blocks_text(value: Any) -> str | None:
    """A system prompt given as text blocks, joined; None when it is anything else.

    Anthropic's Messages API (https://docs.anthropic.com/en/api/messages) takes ``system`` as a
    string or as ``[{"type": "text", "text": ...}]`` blocks.
    """
    if not isinstance(value, list) or not value:
        return None
    texts = [b if isinstance(b, str) else b.get("text") if isinstance(b, Mapping) and b.get("type") == "text" else None
             for b in value]
    return "".join(texts) if all(isinstance(t, str) for t in texts) else None  # type: ignore[arg-type]


def _nested_text(source: str, row: int, name: str, field: str, value: Any, batch: bool) -> SchemaError:
    """The error for a JSON object or list where the table holds text (``field``: the name it was given under)."""
    kind = "object" if isinstance(value, dict) else "list"
    where = name if field == name else f"{name} (its field {field!r})"
    message = (f"{source}: row {row} has {where} holding a JSON {kind}, not text; {name} must be text. "
               f"Map the text inside it (--map {name}={field}.<field>, mapping={{{name!r}: '{field}.<field>'}}; "
               "a number reaches into a list: .0.) or give the field another name, which keeps it as an extra column.")
    if batch and field == "response" and isinstance(value, Mapping):
        message += " " + _formats.refusal("openai_batch", "This").message
    return SchemaError(message, row=row, column=name, source=source)
