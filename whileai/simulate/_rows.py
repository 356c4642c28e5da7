"""Rollouts to the rollout table in batches: flat Python lists to Arrow arrays, no per-row frames.

A batch of finished rollouts is flattened once (one list per column, one list per message field,
offsets for the nested lists) and turned into Arrow arrays with ``ListArray.from_arrays``; batches
are concatenated at the end. The conversation column comes out as ``List(MESSAGE)`` exactly, so
``table.frame`` has nothing to convert.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa

from whileai.simulate._util import canonical
from whileai.simulate._writer import Situation
from whileai.table import MESSAGE
from whileai.table._normalize import normalize_message

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


class RowBuffer:
    """Collects rollouts column by column and hands back Polars frames in batches."""

    def __init__(self) -> None:
        self._frames: list[pl.DataFrame] = []
        self._reset()

    def _reset(self) -> None:
        self.scenario_id: list[str] = []
        self.rollout_index: list[int] = []
        self.rollout_id: list[str] = []
        self.prompt: list[str] = []
        self.final_text: list[str | None] = []
        self.dims: list[str] = []
        self.world_state: list[str | None] = []
        self.stance: list[str | None] = []
        self.ask_family: list[str | None] = []
        self.tier: list[str | None] = []
        self.fault_kind: list[str | None] = []
        self.faults: list[str] = []
        self.seeded: list[bool] = []
        self.seeded_kinds: list[list[str]] = []
        self.truncated: list[bool] = []
        self.finish_reason: list[str] = []
        self.privileged: list[str] = []
        self.eval_run: list[int | None] = []
        self.usage: list[dict[str, float] | None] = []
        # messages, flattened
        self.msg_offsets: list[int] = [0]
        self.role: list[str] = []
        self.content: list[str | None] = []
        self.name: list[str | None] = []
        self.tool_call_id: list[str | None] = []
        self.extra: list[str | None] = []
        self.call_offsets: list[int] = [0]
        self.call_id: list[str | None] = []
        self.call_name: list[str | None] = []
        self.call_args: list[str] = []

    def __len__(self) -> int:
        return len(self.scenario_id)

    def add(self, task: Situation, rollout_index: int, eval_run: int | None, rollout_id: str, out: Outcome) -> None:
        """Append one landed rollout."""
        self.scenario_id.append(task.scenario_id)
        self.rollout_index.append(rollout_index)
        self.rollout_id.append(rollout_id)
        self.prompt.append(task.prompt)
        self.final_text.append(out.final_text)
        self.dims.append(task.dimensions_json)
        self.world_state.append(task.world_state)
        self.stance.append(task.stance)
        self.ask_family.append(task.ask_family)
        self.tier.append(task.tier)
        self.fault_kind.append(out.faults[0]["kind"] if out.faults else None)
        self.faults.append(canonical(out.faults) if out.faults else "[]")
        self.seeded.append(bool(out.seeded_kinds))
        self.seeded_kinds.append(out.seeded_kinds)
        self.truncated.append(out.truncated)
        self.finish_reason.append(out.finish_reason)
        self.privileged.append(task.privileged_json)
        self.eval_run.append(eval_run)
        self.usage.append(out.usage)
        role, content, name, tcid, extra = self.role, self.content, self.name, self.tool_call_id, self.extra
        call_offsets, call_id, call_name, call_args = self.call_offsets, self.call_id, self.call_name, self.call_args
        for message in out.messages:
            c = message.get("content")
            if (c is None or isinstance(c, str)) and _FAST_KEYS.issuperset(message):
                role.append(message.get("role") or "user")
                content.append(c)
                name.append(message.get("name"))
                tcid.append(message.get("tool_call_id"))
                extra.append(None)
                for call in message.get("tool_calls") or ():
                    fn = call["function"]
                    call_id.append(call.get("id"))
                    call_name.append(fn["name"])
                    call_args.append(fn["arguments"])
            else:
                m = normalize_message(message)
                role.append(m["role"])
                content.append(m["content"])
                name.append(m["name"])
                tcid.append(m["tool_call_id"])
                extra.append(m["extra"])
                for call in m["tool_calls"]:
                    call_id.append(call["id"])
                    call_name.append(call["name"])
                    call_args.append(call["arguments"])
            call_offsets.append(len(call_id))
        self.msg_offsets.append(len(role))

    def flush(self) -> None:
        """Turn the collected rollouts into one Arrow-backed frame and start a new batch."""
        if not self.scenario_id:
            return
        calls = pa.StructArray.from_arrays(
            [_s(self.call_id), _s(self.call_name), _s(self.call_args)], names=["id", "name", "arguments"],
        )
        call_lists = pa.ListArray.from_arrays(_offsets(self.call_offsets), calls)
        messages = pa.StructArray.from_arrays(
            [_s(self.role), _s(self.content), _s(self.name), _s(self.tool_call_id), call_lists, _s(self.extra)],
            names=["role", "content", "name", "tool_call_id", "tool_calls", "extra"],
        )
        conversation = pa.ListArray.from_arrays(_offsets(self.msg_offsets), messages)
        columns: dict[str, Any] = {
            "scenario_id": pl.Series(self.scenario_id, dtype=pl.String),
            "rollout_index": pl.Series(self.rollout_index, dtype=pl.Int64),
            "rollout_id": pl.Series(self.rollout_id, dtype=pl.String),
            "prompt": pl.Series(self.prompt, dtype=pl.String),
            "messages": pl.Series("messages", conversation).cast(pl.List(MESSAGE)),
            "final_text": pl.Series(self.final_text, dtype=pl.String),
            "scenario_dimensions": pl.Series(self.dims, dtype=pl.String),
            "world_state": pl.Series(self.world_state, dtype=pl.String),
            "stance": pl.Series(self.stance, dtype=pl.String),
            "ask_family": pl.Series(self.ask_family, dtype=pl.String),
            "tier": pl.Series(self.tier, dtype=pl.String),
            "fault_kind": pl.Series(self.fault_kind, dtype=pl.String),
            "faults": pl.Series(self.faults, dtype=pl.String),
            "seeded": pl.Series(self.seeded, dtype=pl.Boolean),
            "seeded_kinds": pl.Series(self.seeded_kinds, dtype=pl.List(pl.String)),
            "truncated": pl.Series(self.truncated, dtype=pl.Boolean),
            "finish_reason": pl.Series(self.finish_reason, dtype=pl.String),
            "privileged": pl.Series(self.privileged, dtype=pl.String),
            "_eval_run": pl.Series(self.eval_run, dtype=pl.Int64),
        }
        if any(u is not None for u in self.usage):
            columns["usage"] = pl.Series([_usage(u) for u in self.usage],
                                         dtype=pl.Struct({"prompt_tokens": pl.Int64, "completion_tokens": pl.Int64}))
        self._frames.append(pl.DataFrame(columns))
        self._reset()

    def frame(self) -> pl.DataFrame | None:
        """Every batch so far, concatenated (None when nothing landed)."""
        self.flush()
        if not self._frames:
            return None
        return pl.concat(self._frames, how="diagonal_relaxed") if len(self._frames) > 1 else self._frames[0]


def _usage(usage: Mapping[str, Any] | None) -> dict[str, int | None] | None:
    if not usage:
        return None
    def grab(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return int(value)
        return None
    return {"prompt_tokens": grab("prompt_tokens", "input_tokens"),
            "completion_tokens": grab("completion_tokens", "output_tokens")}
