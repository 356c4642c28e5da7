"""The rollout table's schema, as data.

One row per rollout. Each column is a :class:`Column` with its name, dtype, group, whether it is
required, its default, the other names readers accept for it, and its *kind*:

- ``plain``: a scalar Polars dtype (String, Float64, Int64, Boolean).
- ``messages``: the conversation, a list of :data:`MESSAGE` structs.
- ``struct``: a struct whose fields vary by run (``markers``, ``lineage``, ``calibration``); built
  by Polars from the values, markers cast to Float64.
- ``json``: free-form nested data (``tools``, ``steps``, ``judge_meta``...) held as canonical JSON
  text (sorted keys, compact) so heterogeneous values fit one Arrow column; decoded on
  ``rows()`` and on JSONL write, so a round trip gives back what was written.
- ``as_read``: kept as the reader found it (no cast), like an extra column; for teacher-only
  fields whose type varies by source (a reference may be a sentence, a number or a dict).

A column flagged ``privileged`` holds context only the grader was given (the reference answer,
the hidden world state, a principle or rubric): graders read it, exports never write it, and
``whileai.guard.leak_report`` looks for it in the agent's replies. :data:`PRIVILEGED_COLUMNS` is
the one list of them.

Adding a column is one line in :data:`COLUMNS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

__all__ = [
    "COLUMNS",
    "COLUMN_BY_NAME",
    "DERIVED_COLUMNS",
    "MESSAGE",
    "PRIVILEGED_COLUMNS",
    "TOOL_CALL",
    "Column",
    "alias_map",
]

Kind = Literal["plain", "messages", "struct", "json", "as_read"]

#: A tool call inside an assistant message. ``arguments`` is canonical JSON text (sorted keys,
#: compact separators) whatever the source wrote: a JSON string or a dict.
TOOL_CALL = pl.Struct({"id": pl.String, "name": pl.String, "arguments": pl.String})

#: One message of a conversation, OpenAI chat shape. ``extra`` holds any other keys the source
#: message carried (``reasoning_content``, ``refusal``, multi-part content...) as JSON text.
#: The roles a message may have (the OpenAI chat format's four); any other role is refused on read.
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")

#: Roles read as one of ``ROLES``: OpenAI's ``developer`` message is the system message of its
#: o-series and newer models (OpenAI API reference, Chat Completions, "Developer message"), and
#: the chat templates a trainer renders know ``system``.
ROLE_ALIASES: dict[str, str] = {"developer": "system"}

MESSAGE = pl.Struct(
    {
        "role": pl.String,
        "content": pl.String,
        "name": pl.String,
        "tool_call_id": pl.String,
        "tool_calls": pl.List(TOOL_CALL),
        "extra": pl.String,
    }
)


@dataclass(frozen=True)
class Column:
    """One column of the rollout table.

    Attributes:
        name: The canonical column name.
        dtype: The Polars dtype (for ``struct`` columns, ``pl.Struct`` with fields decided by data; None
            for ``as_read`` columns, whose type is the source's).
        group: identity, content, situation, grading or bookkeeping (docs/table.md, "The columns").
        kind: How values are held: plain, messages, struct, json or as_read (module docstring).
        required: Whether a row must carry it (after aliases and derivations).
        default: The value a missing cell gets (``None`` leaves it null).
        aliases: Other names readers map onto this column (first match wins).
        doc: What the column means.
        privileged: Teacher-only context: never exported, and a reply quoting it is a leak.
    """

    name: str
    dtype: Any
    group: str
    kind: Kind = "plain"
    required: bool = False
    default: Any = None
    aliases: tuple[str, ...] = field(default_factory=tuple)
    doc: str = ""
    privileged: bool = False


COLUMNS: tuple[Column, ...] = (
    # identity
    Column("scenario_id", pl.String, "identity", doc="The task: a situation, a cell of the coverage grid."),
    Column("task_id", pl.String, "identity", doc="A task id from another tool; task_key falls back to it."),
    Column("rollout_index", pl.Int64, "identity", aliases=("epoch", "repeat_index"), doc="0..k-1 within the task."),
    Column("rollout_id", pl.String, "identity", doc="A unique id for the rollout (labels key on it)."),
    # content
    Column("prompt", pl.String, "content", aliases=("question", "input", "instruction"), doc="The opening user message."),
    Column("system_prompt", pl.String, "content", aliases=("system",), doc="The policy the agent ran under."),
    Column("messages", pl.List(MESSAGE), "content", kind="messages", aliases=("conversation", "conversations"), doc="The conversation."),
    Column("final_text", pl.String, "content", aliases=("response", "reply"), doc="The agent's final reply."),
    Column("tools", pl.String, "content", kind="json", doc="Tool schemas in the OpenAI tools shape."),
    Column("steps", pl.String, "content", kind="json", doc="The trajectory as steps (whileai 0.131 rows)."),
    # situation
    Column("scenario_dimensions", pl.String, "situation", kind="json", doc="The covering-array cell."),
    Column("world_state", pl.String, "situation", doc="found, not_found, ambiguous, partial..."),
    Column("stance", pl.String, "situation", doc="cooperative, vague, impatient, adversarial, off_topic."),
    Column("ask_family", pl.String, "situation", doc="The family of ask (lookup, write, policy clause...)."),
    Column("tier", pl.String, "situation", doc="ordinary, ambiguous, boundary, adversarial."),
    Column("fault_kind", pl.String, "situation", doc="The first tool fault the rollout met, or null."),
    Column("faults", pl.String, "situation", kind="json", doc="Every fault the rollout met (or its fault plan)."),
    Column("seeded", pl.Boolean, "situation", doc="A misbehaviour was planted on purpose (seeded_agent)."),
    Column("seeded_kinds", pl.List(pl.String), "situation", doc="Which misbehaviours were planted."),
    Column("user_flags", pl.List(pl.Struct({"flag": pl.String, "fragment": pl.String})), "situation",
           doc="The simulated user's own errors (user.off_script, user.leaked, ...), each with the fragment that raised it."),
    Column("injection_goal", pl.String, "situation", doc="A planted instruction's goal: exfiltrate, destroy, reveal_prompt."),
    Column("injection_text", pl.String, "situation", doc="The instruction a tool result carried (fault kind injection)."),
    Column("injection_target", pl.String, "situation", doc="The tool the injection asked the agent to call."),
    Column("injection_payload", pl.String, "situation", doc="The outside address or the record the injection named."),
    # grading
    Column("reward", pl.Float64, "grading", aliases=("score",), doc="In [0, 1]; null = not graded or judge failed."),
    Column("judge_status", pl.String, "grading", doc="ok, missing_reward, invalid_result, error, timeout; agent_error: the rollout itself failed."),
    Column("judge_name", pl.String, "grading", doc="The judge that wrote the reward."),
    Column("reason", pl.String, "grading", doc="The judge's reason."),
    Column("judge_meta", pl.String, "grading", kind="json", doc="Whatever else the judge returned; trust summary."),
    Column("markers", pl.Struct, "grading", kind="struct", doc="Named behaviour measurements; 1.0 is the good outcome."),
    Column("gold_reward", pl.Float64, "grading", doc="The label a person (or program) gave: 0 or 1."),
    Column("gold_kind", pl.String, "grading", doc="human, program, model or unknown."),
    Column("privileged", pl.String, "grading", kind="json", privileged=True,
           doc="Teacher-only context (reference answer, hidden state); graders read it, exports never write it."),
    # teacher-only fields some sources write at the top level instead of inside ``privileged``
    # (whileai 0.131 scrubs all of them at any depth on export)
    Column("reference", None, "grading", kind="as_read", privileged=True,
           doc="The expected outcome or answer a verifier compares with."),
    Column("hidden_state", None, "grading", kind="as_read", privileged=True,
           doc="The world state behind the tools (entity, fault plan) the agent never saw whole."),
    Column("principle", None, "grading", kind="as_read", privileged=True,
           doc="The constitution principle the grader scored against."),
    Column("rubric", None, "grading", kind="as_read", privileged=True,
           doc="The grader's rubric."),
    Column("private_values", pl.List(pl.String), "grading", privileged=True,
           doc="The owner's private fields in the world (account number, address, note): never exported."),
    # bookkeeping
    Column("truncated", pl.Boolean, "bookkeeping", doc="The rollout hit the turn or token limit."),
    Column("finish_reason", pl.String, "bookkeeping", doc="stop, length, tool, error."),
    Column("policy_version", pl.String, "bookkeeping", doc="The policy (agent and system prompt) that produced the row."),
    Column("model_version", pl.String, "bookkeeping", doc="The agent or model name."),
    Column("lineage", pl.Struct, "bookkeeping", kind="struct", doc="source, parent, run id, eval_run, stage, judge..."),
    Column("calibration", pl.Struct, "bookkeeping", kind="struct", doc="Pass rate of the row's task, its interval, k, policy."),
    Column("schema_version", pl.String, "bookkeeping", doc="The row layout version."),
)

COLUMN_BY_NAME: dict[str, Column] = {c.name: c for c in COLUMNS}

#: The columns flagged ``privileged`` (teacher-only context), in schema order.
PRIVILEGED_COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMNS if c.privileged)

#: Columns computed by ``frame`` and never written back out.
DERIVED_COLUMNS: tuple[str, ...] = ("task_key",)


def alias_map() -> dict[str, str]:
    """Map every accepted alias to its canonical column name."""
    out: dict[str, str] = {}
    for col in COLUMNS:
        for alias in col.aliases:
            out.setdefault(alias, col.name)
    return out
