"""Rollouts to the rollout table in batches: flat Python lists to Arrow arrays, no per-row frames.

A batch of finished rollouts is flattened once (one list per column, one list per message field,
offsets for the nested lists) and turned into Arrow arrays with ``ListArray.from_arrays``; batches
are concatenated at the end. The conversation column comes out as ``List(MESSAGE)`` exactly, so
``table.frame`` has nothing to convert.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

import polars as pl
import pyarrow as pa

from whileai.simulation._util import canonical
from whileai.simulation._writer import Situation
from whileai.table import MESSAGE
from whileai.table.normalize import normalize_message

__all__ = ["Outcome", "RowBuffer"]

_FAST_KEYS = frozenset({"role", "content", "name", "tool_call_id", "tool_calls"})


def _s(values: list[Any]) -> pa.Array:
    """A string column as Arrow, through Polars (``pa.array`` on a list would import pandas)."""
    return pl.Series(values, dtype=pl.String).to_arrow()


def _offsets(values: list[int]) -> pa.Array:
    return pl.Series(values, dtype=pl.Int32).to_arrow()


@dataclass
class Outcome:
    """One finished (or lost) rollout."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    final_text: str | None = None
    truncated: bool = False
    finish_reason: str = "stop"
    faults: list[dict[str, Any]] = field(default_factory=list)
    seeded_kinds: list[str] = field(default_factory=list)
    unknown_calls: list[str] = field(default_factory=list)
    usage: dict[str, float] | None = None
    lost_reason: str | None = None
    error: str | None = None
    user_turns: int = 0
    ended_on_ask: bool = False
    """The simulated user said DONE right after the agent asked it something."""


class RowBuffer:
    """Collects landed rollouts and turns each batch into a Polars frame, column by column."""

    def __init__(self, *, check_users: bool = False) -> None:
        self.check_users = check_users  # a simulated user was on: each row gets user_flags and user_faithful
        self._frames: list[pl.DataFrame] = []
        self._items: list[tuple[Situation, int, int | None, str, Outcome]] = []

    def __len__(self) -> int:
        return len(self._items)

    def add(self, task: Situation, rollout_index: int, eval_run: int | None, rollout_id: str, out: Outcome) -> None:
        """Append one landed rollout."""
        self._items.append((task, rollout_index, eval_run, rollout_id, out))

    def flush(self) -> None:
        """Turn the collected rollouts into one Arrow-backed frame and start a new batch."""
        items = self._items
        if not items:
            return
        self._items = []
        tasks = [i[0] for i in items]
        outs = [i[4] for i in items]
        msgs = [m if m.get("role") != "assistant" or _simple(m) else _canonical_message(m)
                for o in outs for m in o.messages]
        msg_offsets = [0, *accumulate(len(o.messages) for o in outs)]
        per_msg_calls = [m.get("tool_calls") or () for m in msgs]
        calls = [c for cs in per_msg_calls for c in cs]
        call_offsets = [0, *accumulate(len(cs) for cs in per_msg_calls)]
        fns = [c["function"] for c in calls]
        call_struct = pa.StructArray.from_arrays(
            [_s([c.get("id") for c in calls]), _s([f["name"] for f in fns]), _s([f["arguments"] for f in fns])],
            names=["id", "name", "arguments"],
        )
        messages = pa.StructArray.from_arrays(
            [_s([m.get("role") or "user" for m in msgs]), _s([m.get("content") for m in msgs]),
             _s([m.get("name") for m in msgs]), _s([m.get("tool_call_id") for m in msgs]),
             pa.ListArray.from_arrays(_offsets(call_offsets), call_struct), _s([m.get("_extra") for m in msgs])],
            names=["role", "content", "name", "tool_call_id", "tool_calls", "extra"],
        )
        conversation = pa.ListArray.from_arrays(_offsets(msg_offsets), messages)
        kinds = [o.seeded_kinds for o in outs]
        kind_offsets = [0, *accumulate(len(k) for k in kinds)]
        seeded_kinds = pa.ListArray.from_arrays(_offsets(kind_offsets), _s([k for ks in kinds for k in ks]))
        columns: dict[str, Any] = {
            "scenario_id": pl.Series([t.scenario_id for t in tasks], dtype=pl.String),
            "rollout_index": pl.Series([i[1] for i in items], dtype=pl.Int64),
            "rollout_id": pl.Series([i[3] for i in items], dtype=pl.String),
            "prompt": pl.Series([t.prompt for t in tasks], dtype=pl.String),
            "messages": pl.Series("messages", conversation).cast(pl.List(MESSAGE)),
            "final_text": pl.Series([o.final_text for o in outs], dtype=pl.String),
            "scenario_dimensions": pl.Series([t.dimensions_json for t in tasks], dtype=pl.String),
            "world_state": pl.Series([t.world_state for t in tasks], dtype=pl.String),
            "stance": pl.Series([t.stance for t in tasks], dtype=pl.String),
            "ask_family": pl.Series([t.ask_family for t in tasks], dtype=pl.String),
            "tier": pl.Series([t.tier for t in tasks], dtype=pl.String),
            "fault_kind": pl.Series([o.faults[0]["kind"] if o.faults else None for o in outs], dtype=pl.String),
            "faults": pl.Series([canonical(o.faults) if o.faults else "[]" for o in outs], dtype=pl.String),
            "seeded": pl.Series([bool(k) for k in kinds], dtype=pl.Boolean),
            "seeded_kinds": pl.Series("seeded_kinds", seeded_kinds).cast(pl.List(pl.String)),
            "truncated": pl.Series([o.truncated for o in outs], dtype=pl.Boolean),
            "finish_reason": pl.Series([o.finish_reason for o in outs], dtype=pl.String),
            "privileged": pl.Series([t.privileged_json for t in tasks], dtype=pl.String),
            "_eval_run": pl.Series([i[2] for i in items], dtype=pl.Int64),
        }
        if any(o.lost_reason is not None for o in outs):
            columns["lost_reason"] = pl.Series([o.lost_reason for o in outs], dtype=pl.String)
            columns["error"] = pl.Series([o.error for o in outs], dtype=pl.String)
        if any(t.fault == "injection" for t in tasks):
            from whileai.simulation._injection import private_values

            met = [next((f for f in o.faults if f.get("kind") == "injection"), None) for o in outs]
            for key in ("goal", "text", "target", "payload"):
                columns[f"injection_{key}"] = pl.Series([m.get(key) if m else None for m in met], dtype=pl.String)
            columns["private_values"] = pl.Series(
                [list(private_values(t.scenario_id).values()) if t.fault == "injection" else None for t in tasks],
                dtype=pl.List(pl.String))
        if self.check_users:
            from whileai.simulation._user_checks import (
                check_user_turns,
                context_of_situation,
                flag_columns,
            )

            contexts: dict[str, Any] = {}
            seen: dict[tuple[Any, ...], list[dict[str, str]]] = {}  # a scripted agent repeats whole conversations
            flags: list[list[dict[str, str]]] = []
            for t, o in zip(tasks, outs):
                if sum(1 for m in o.messages if m.get("role") == "user") < 2 and not o.ended_on_ask:
                    flags.append([])  # the simulator never spoke
                    continue
                # what the checks read: each message's role and content (and the context, by task)
                conv = (t.scenario_id, o.ended_on_ask, *((m.get("role"), str(m.get("content"))) for m in o.messages))
                hit = seen.get(conv)
                if hit is None:
                    ctx = contexts.get(t.scenario_id)
                    if ctx is None:
                        ctx = contexts[t.scenario_id] = context_of_situation(t)
                    hit = seen[conv] = check_user_turns(o.messages, ctx, ended_on_ask=o.ended_on_ask)
                flags.append(hit)
            made = flag_columns(flags)
            columns["user_flags"] = made["user_flags"]
            columns["markers"] = pl.DataFrame([made["user_faithful"]]).to_struct("markers")
        if any(o.usage is not None for o in outs):
            columns["usage"] = pl.Series([_usage(o.usage) for o in outs],
                                         dtype=pl.Struct({"input_tokens": pl.Int64, "output_tokens": pl.Int64}))
        self._frames.append(pl.DataFrame(columns))

    def frame(self) -> pl.DataFrame | None:
        """Every batch so far, concatenated (None when nothing landed)."""
        self.flush()
        if not self._frames:
            return None
        return pl.concat(self._frames, how="diagonal_relaxed") if len(self._frames) > 1 else self._frames[0]


def _simple(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return (content is None or isinstance(content, str)) and _FAST_KEYS.issuperset(message)


def _canonical_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message with extra keys or multi-part content, in the fast shape plus ``_extra``."""
    m = normalize_message(message)
    return {
        "role": m["role"], "content": m["content"], "name": m["name"], "tool_call_id": m["tool_call_id"],
        "tool_calls": [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                       for c in m["tool_calls"]],
        "_extra": m["extra"],
    }


def _usage(usage: Mapping[str, Any] | None) -> dict[str, int | None] | None:
    if not usage:
        return None
    def grab(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return int(value)
        return None
    return {"input_tokens": grab("prompt_tokens", "input_tokens"),
            "output_tokens": grab("completion_tokens", "output_tokens")}
