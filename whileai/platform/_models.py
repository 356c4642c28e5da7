"""The objects a tracked run is made of, shared by the client, the server and the pages.

Every object is a pydantic model that validates before it leaves the process (and again when the
server reads it), so a bad body is refused with the field named on either side. The caps are the
hosted API's (``defaults.py``, platform section; docs/platform.md, "What a row can hold").
"""

from __future__ import annotations

import json
import math
import re
import warnings
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from whileai.defaults import (
    BEHAVIOR_NAME_PATTERN,
    EXAMPLE_TEXT_MAX,
    EXAMPLE_WHY_MAX,
    EXAMPLES_MAX,
    EXPERIMENT_FIELD_MAX,
    FIGURE_DROPPED_LAYOUT,
    FIGURE_NAME_PATTERN,
    LOG_POINTS_PER_CALL,
    NOTE_MAX,
    ROW_TEXT_MAX,
    ROWS_PER_CALL,
    RUBRIC_MAX,
    TAG_KEY_MAX,
    TAG_VALUE_MAX,
    TAGS_MAX,
    TRANSCRIPT_MESSAGES_MAX,
)

#: The largest step the store keeps (DuckDB's BIGINT, a signed 64-bit integer).
INT64_MAX = 2**63 - 1

__all__ = [
    "AgentInfo", "AgentSpec", "Behavior", "CutWarning", "DatasetPush", "Example", "Experiment", "Figure", "FinishBody",
    "Harness", "LiveDay", "LogBody", "Message", "Promote", "RowsBody", "RunPatch", "RunRecord", "RunSpec", "ScoreBody",
    "ScoreRecord", "ToolCall", "TrainPoint", "check_behavior_name", "cut_middle", "harness_version", "non_finite",
]

_BEHAVIOR = re.compile(BEHAVIOR_NAME_PATTERN)
_FIGURE = re.compile(FIGURE_NAME_PATTERN)
_AGENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")

RunStatus = Literal["running", "done", "failed", "stopped"]

#: The eight checks the Evals table runs on a behavior, in the order a failed one is worth fixing
#: (a set nobody can fail first, then size, then the test set's name, then the judge; whileai 0.131
#: brief). The one list of their names: ``EVAL_CHECKS`` and ``EvalCheck.name`` derive from it.
EvalCheckName = Literal["can_fail", "size", "frozen", "judge", "noise_floor", "length_bias", "clean", "reward_not_judge"]
EVAL_CHECKS: tuple[EvalCheckName, ...] = get_args(EvalCheckName)
FinishStatus = Literal["done", "failed", "stopped"]


class CutWarning(UserWarning):
    """Text past a field's cap was cut in the middle (the marker says how much)."""


def cut_middle(text: str, cap: int) -> str:
    """``text`` at most ``cap`` characters: head and tail kept, ``[... N chars cut ...]`` between.

    The head keeps the approach and the tail the answer (docs/platform.md, "What a row can hold").

    Examples:
        >>> out = cut_middle("a" * 7877, 2000)
        >>> len(out), out[988:1012]
        (2000, '[... 5901 chars cut ...]')
    """
    if len(text) <= cap:
        return text
    width = len(f"[... {len(text)} chars cut ...]")
    room = max(cap - width, 0)
    head, tail = room - room // 2, room // 2
    marker = f"[... {len(text) - head - tail} chars cut ...]"
    head += width - len(marker)  # a count with fewer digits than the length leaves room for the head
    marker = f"[... {len(text) - head - tail} chars cut ...]"
    return text[:head] + marker + (text[len(text) - tail:] if tail else "")


def _cap(value: Any, cap: int, field: str) -> Any:
    if isinstance(value, str) and len(value) > cap:
        warnings.warn(f"{field} is {len(value):,} chars, over the cap of {cap:,}; the middle was cut "
                      "(shorten the text first to choose what is kept).", CutWarning, stacklevel=4)
        return cut_middle(value, cap)
    return value


def check_behavior_name(name: Any) -> str:
    """``name`` if it follows the platform's behavior-name rule, else an ArgumentError.

    Examples:
        >>> check_behavior_name("refund_policy")
        'refund_policy'
    """
    from whileai.errors import ArgumentError

    if not isinstance(name, str) or not _BEHAVIOR.match(name):
        suggestion = re.sub(r"[^a-z0-9_]+", "_", str(name).strip().lower()).strip("_") or "refund_policy"
        raise ArgumentError(
            f"behavior name must be lower-case letters, digits and '_' starting with a letter (at most 64), "
            f"got {name!r}. Use {suggestion!r}.", argument="behavior", value=name)
    return name


def harness_version(instructions: str | None, tools: Any, model: str | None) -> str:
    """A harness's fingerprint: ``h-`` and 12 hex of sha256 over its instructions, tools and model.

    The same hash the store puts on a run's rows (``whileai.store.harness_fingerprint``), so a
    prompt edit is a new version without anyone naming it.

    Examples:
        >>> harness_version("Be brief.", None, "m1")
        'h-009be4c61ae0'
    """
    from whileai.store import fingerprint
    from whileai.table import canonical_json

    tool_text = tools if tools is None or isinstance(tools, str) else canonical_json(tools)
    return fingerprint(instructions, tool_text, model)


def _name_error(value: str, what: str) -> str:
    return f"{what} must be 1-100 letters, digits, '.', '_' or '-' starting with a letter or digit, got {value!r}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Harness(_Model):
    """The instructions, tools and model name around the weights; its fingerprint is its version.

    A score is only comparable with its setup held constant (Lambert 2025, chapter Evaluation), so
    the run that used a harness carries the fingerprint in ``record.provenance.pins["harness"]``.
    """

    label: str | None = None
    """A short name a person reads, ``prompt@model`` in a sweep."""
    instructions: str | None = None
    """The system prompt."""
    tools: list[Any] = Field(default_factory=list)
    """Tool names or schemas."""
    model: str | None = None
    """The model name."""

    @property
    def version(self) -> str:
        """The content fingerprint (``h-`` and 12 hex)."""
        return harness_version(self.instructions, self.tools or None, self.model)


class Behavior(_Model):
    """One measured behavior: its frozen held-out test, its grader and how far to trust it.

    A behavior has its own frozen test set (``test_version``), a ``noise_floor`` measured by scoring
    the same model again (points), and either a judge checked against people (``agreement`` over
    ``human_n``, ``length_bias``) or a program (``graded_by="program"``: a verifier, execution
    match, a rule over tool calls), the strongest grader there is (Lambert 2025, chapter
    Evaluation, verifiable rewards). ``reward_is_judge`` is about the training reward, not the grader.
    """

    name: str
    """The platform identifier: ``refund_policy``, not ``refund policy``."""
    rubric: str | None = None
    """How the judge was set up, in the words it was given (at most 4000 chars; longer is cut)."""
    graded_by: Literal["judge", "program"] = "judge"
    """Who grades: a judge model, or a program."""
    test_version: str | None = None
    """The frozen held-out set's name and version (``refunds-holdout@1``)."""
    noise_floor: float | None = Field(default=None, ge=0)
    """Points a re-run of the same model moves on its own (``tracked.noise_floor``)."""
    agreement: float | None = Field(default=None, ge=0, le=1)
    """The judge's agreement with people, 0 to 1."""
    human_n: int | None = Field(default=None, ge=0)
    """Human labels behind ``agreement``."""
    kappa: float | None = Field(default=None, ge=-1, le=1)
    """Cohen's kappa of the judge against the same human labels (agreement beyond chance)."""
    length_bias: float | None = None
    """Judge pass-rate gap, long minus short replies within one human label (0 to 1)."""
    reward_is_judge: bool | None = None
    """Whether the training reward was this judge (then the eval scores what was optimised)."""
    contamination: int | None = Field(default=None, ge=0)
    """Test rows found in the training set (``wai.decontaminate``); None when not measured."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _BEHAVIOR.match(value):
            raise ValueError(f"behavior name must be lower-case letters, digits and '_' starting with a letter "
                             f"(at most 64), got {value!r}")
        return value

    @field_validator("rubric")
    @classmethod
    def _rubric(cls, value: str | None) -> str | None:
        return _cap(value, RUBRIC_MAX, "rubric")


class ToolCall(_Model):
    """One tool call an assistant turn made: id, tool name, arguments (JSON text, capped like row text)."""

    id: str | None = None
    """The call id a tool turn answers (``tool_call_id``)."""
    name: str = ""
    """The tool called."""
    arguments: str = ""
    """The arguments as JSON text (a dict is encoded)."""

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        fn = data.pop("function", None)  # the OpenAI wire shape {id, type, function: {name, arguments}}
        data.pop("type", None)
        if isinstance(fn, dict):
            data.setdefault("name", fn.get("name") or "")
            data.setdefault("arguments", fn.get("arguments"))
        args = data.get("arguments")
        if args is None:
            data["arguments"] = ""
        elif not isinstance(args, str):
            data["arguments"] = json.dumps(args, ensure_ascii=False, default=str)
        data["arguments"] = _cap(data["arguments"], ROW_TEXT_MAX, "tool call arguments")
        return data


class Message(_Model):
    """One turn of a graded row's conversation, as the rollout table holds it (role, content, tool calls).

    Content is capped at ``ROW_TEXT_MAX`` like the row's other texts (cut in the middle, one warning).
    """

    role: Literal["system", "user", "assistant", "tool"]
    """Who spoke: the tool turn carries a call's result."""
    content: str = ""
    """The text (a tool turn: the result)."""
    name: str | None = None
    """The tool's name on a tool turn."""
    tool_call_id: str | None = None
    """The call a tool turn answers."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The calls an assistant turn made."""

    @model_validator(mode="before")
    @classmethod
    def _caps(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if v is not None or k == "role"}
        content = data.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        data["content"] = _cap("" if content is None else str(content), ROW_TEXT_MAX, "message content")
        if data.get("tool_calls") is None:
            data.pop("tool_calls", None)
        return data


class Example(_Model):
    """One graded row: the ask, the reply, pass or fail and why, the gold answer, tags to break down by.

    Text past a cap is cut in the middle, one warning per field (``ROW_TEXT_MAX`` for prompt, reply,
    reference and detail, ``EXAMPLE_WHY_MAX`` for why; 8 tags, keys 32 and values 80 chars).
    """

    prompt: str = ""
    """The ask."""
    reply: str = ""
    """The agent's reply."""
    ok: bool
    """Passed or failed."""
    why: str | None = None
    """The grader's reason."""
    reference: str | None = None
    """The gold answer."""
    detail: str | None = None
    """Expected against got."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Up to 8 tags (``{"difficulty": "hard"}``) the rows page breaks the score down by."""
    task: str | None = Field(default=None, max_length=ROW_TEXT_MAX)
    """The task's key (``scenario_id``): two versions' rows pair on it (``tracked.diff``); a row
    without one pairs on its prompt."""
    messages: list[Message] | None = None
    """The conversation (roles, tool calls and results), as the rollout table holds it; each text is
    capped like the row's, and past ``TRANSCRIPT_MESSAGES_MAX`` turns the middle ones are dropped
    and counted in a system turn."""

    @model_validator(mode="before")
    @classmethod
    def _caps(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for field, cap in (("prompt", ROW_TEXT_MAX), ("reply", ROW_TEXT_MAX), ("reference", ROW_TEXT_MAX),
                           ("detail", ROW_TEXT_MAX), ("why", EXAMPLE_WHY_MAX)):
            if field in data:
                data[field] = _cap(data[field], cap, field)
        tags = data.get("tags")
        if isinstance(tags, dict):
            if len(tags) > TAGS_MAX:
                warnings.warn(f"tags has {len(tags)} entries, over the cap of {TAGS_MAX}; the first {TAGS_MAX} "
                              "are kept.", CutWarning, stacklevel=3)
                tags = dict(list(tags.items())[:TAGS_MAX])
            long_keys = [k for k in tags if len(str(k)) > TAG_KEY_MAX]
            long_values = [k for k, v in tags.items() if len(str(v)) > TAG_VALUE_MAX]
            if long_keys or long_values:
                warnings.warn(f"tags: keys over {TAG_KEY_MAX} or values over {TAG_VALUE_MAX} chars were cut "
                              f"({', '.join(map(str, long_keys + long_values))}).", CutWarning, stacklevel=3)
            data["tags"] = {cut_middle(str(k), TAG_KEY_MAX): cut_middle(str(v), TAG_VALUE_MAX) for k, v in tags.items()}
        msgs = data.get("messages")
        if isinstance(msgs, list) and len(msgs) > TRANSCRIPT_MESSAGES_MAX:
            head = TRANSCRIPT_MESSAGES_MAX // 2
            tail = TRANSCRIPT_MESSAGES_MAX - head - 1
            dropped = len(msgs) - head - tail
            warnings.warn(f"messages has {len(msgs)} turns, over the cap of {TRANSCRIPT_MESSAGES_MAX}; the middle "
                          f"{dropped} were dropped.", CutWarning, stacklevel=3)
            data["messages"] = [*msgs[:head], {"role": "system", "content": f"[... {dropped} turns cut ...]"},
                                *msgs[len(msgs) - tail:]]
        return data

    @property
    def key(self) -> str:
        """What two versions' rows pair on: the task, else the prompt."""
        return self.task if self.task else self.prompt

    def sample(self) -> Example:
        """This row as the score card shows it: prompt and reply at ``EXAMPLE_TEXT_MAX``."""
        return self.model_copy(update={"prompt": cut_middle(self.prompt, EXAMPLE_TEXT_MAX),
                                       "reply": cut_middle(self.reply, EXAMPLE_TEXT_MAX)})


class TrainPoint(BaseModel):
    """One logged training step: ``step``, ``loss``, ``lr`` and any other metric as a number.

    A NaN or infinite value is stored as null, in a store and on a server alike: JSON, the
    server's wire format, has no such numbers (RFC 8259, section 6), and a point that cannot be
    sent would hold back every point logged after it.
    """

    model_config = ConfigDict(extra="allow")

    step: int = Field(ge=0, le=INT64_MAX)
    """The optimizer step (a 64-bit integer, as the store keeps it)."""
    loss: float | None = None
    """Training loss."""
    lr: float | None = None
    """Learning rate."""

    @model_validator(mode="after")
    def _numbers(self) -> TrainPoint:
        for key, value in (self.model_extra or {}).items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValueError(f"metric {key!r} must be a number, got {type(value).__name__} {value!r}")
        for key in non_finite({"loss": self.loss, "lr": self.lr, **(self.model_extra or {})}):
            setattr(self, key, None)
        return self


def non_finite(metrics: dict[str, Any]) -> list[str]:
    """The names of the float values in ``metrics`` that are NaN or infinite."""
    return [k for k, v in metrics.items() if isinstance(v, float) and not math.isfinite(v)]


class AgentSpec(_Model):
    """What ``track`` records about an agent: its name, model, instructions and tools."""

    name: str
    """The agent's name (letters, digits, ``.``, ``_``, ``-``)."""
    model: str | None = None
    """The model it runs on."""
    instructions: str | None = None
    """Its system prompt (or a description written by hand)."""
    tools: list[str] = Field(default_factory=list)
    """Its tool names."""
    served: str | None = None
    """The version in production, the one a candidate must beat (default: the first version scored)."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _AGENT.match(value):
            raise ValueError(_name_error(value, "agent name"))
        return value


class RunSpec(_Model):
    """The body of ``POST /runs``: what a trainer says before step one."""

    id: str | None = None
    """The run id; a new one when absent. An id that exists is refused (409), never reset."""
    agent: str | None = None
    """The tracked agent the run belongs to."""
    version: str | None = Field(default=None, min_length=1)
    """What changed, as a colleague would say it (``longer-training``); settings go in ``record``."""
    name: str | None = None
    """A display name (0.131's ``name``); defaults to the version."""
    dataset_id: str | None = None
    """The training set."""
    base_model: str | None = None
    """The weights the run starts from."""
    total_steps: int | None = Field(default=None, ge=0)
    """Steps planned, for the progress bar."""
    harness: Harness | None = None
    """The harness the version runs under; its fingerprint lands in ``record.provenance.pins``."""
    record: dict[str, Any] | None = None
    """Anything the run should say about itself (optimizer settings, provenance)."""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        if value is not None and not _AGENT.match(value):
            raise ValueError(_name_error(value, "run id"))
        return value


class LogBody(_Model):
    """The body of ``POST /runs/{id}/log``: up to 500 points, with a batch id that makes a retry safe."""

    points: list[TrainPoint] = Field(min_length=1, max_length=LOG_POINTS_PER_CALL)
    """The points, oldest first."""
    batch_id: str | None = Field(default=None, max_length=64)
    """A client-chosen id; a batch already stored is acknowledged and not stored twice."""


class FinishBody(_Model):
    """The body of ``POST /runs/{id}/finish``."""

    status: FinishStatus = "done"
    """done, failed or stopped."""
    summary: dict[str, Any] | None = None
    """Numbers the run ends with; merged into the run's summary."""
    adapter: str | None = None
    """Where the trained weights are."""
    record: dict[str, Any] | None = None
    """The run record (optimizer settings, provenance); merged."""
    hours: float | None = Field(default=None, ge=0)
    """Wall-clock hours of training."""
    cost_usd: float | None = Field(default=None, ge=0)
    """The training bill, when known; else estimated from ``gpu`` and ``seconds``."""
    gpu: str | None = None
    """The GPU the run trained on (``A10G``), priced from ``GPU_USD_PER_HOUR``."""
    seconds: float | None = Field(default=None, ge=0)
    """Seconds it trained (sets ``hours`` when that is absent)."""


class RunPatch(_Model):
    """The body of ``PATCH /runs/{id}``: fill what a run is missing, from any later session."""

    record: dict[str, Any] | None = None
    """Merged into the run record."""
    summary: dict[str, Any] | None = None
    """Merged into the run summary."""
    hours: float | None = Field(default=None, ge=0)
    """Training hours."""
    cost_usd: float | None = Field(default=None, ge=0)
    """Training bill in USD."""
    cost_basis: str | None = None
    """How cost_usd was reached."""
    adapter: str | None = None
    """Where the trained weights are."""
    notes: str | None = Field(default=None, max_length=NOTE_MAX)
    """Markdown under the run record (at most 8192 chars)."""
    archived: bool | None = None
    """Hide the run from the default listing."""
    delta: dict[str, Any] | None = None
    """The whole ``delta_report`` of the run's before and after."""
    total_steps: int | None = Field(default=None, ge=0)
    """Steps planned, for the progress bar (a trainer that learns its length late)."""


class ScoreBody(_Model):
    """The body of ``POST /runs/{id}/scores``: one behavior's score in points, with its evidence."""

    behavior: str
    """The behavior's name."""
    value: float = Field(ge=0, le=100)
    """Points out of 100, as posted; nothing rescales it."""
    ci: float | None = Field(default=None, ge=0)
    """Half-width of the 95% interval, in points."""
    n: int | None = Field(default=None, ge=0)
    """Asks behind the score."""
    examples: list[Example] = Field(default_factory=list, max_length=EXAMPLES_MAX)
    """The card's sample: up to 20 graded rows, the worst and the best."""

    @field_validator("behavior")
    @classmethod
    def _behavior(cls, value: str) -> str:
        if not _BEHAVIOR.match(value):
            raise ValueError(f"behavior name must be lower-case letters, digits and '_' starting with a letter, "
                             f"got {value!r}")
        return value


class RowsBody(_Model):
    """The body of ``POST /runs/{id}/scores/{score_id}/rows``: up to 500 graded rows."""

    rows: list[Example] = Field(min_length=1, max_length=ROWS_PER_CALL)
    """The rows."""
    batch_id: str | None = Field(default=None, max_length=64)
    """A client-chosen id; a batch already stored is not stored twice."""


class Experiment(_Model):
    """What the runs are for: one block per agent, the first thing the Runs page shows."""

    question: str = Field(min_length=1, max_length=EXPERIMENT_FIELD_MAX)
    """The question the runs answer (required)."""
    hypothesis: str | None = Field(default=None, max_length=EXPERIMENT_FIELD_MAX)
    """What you expect."""
    method: str | None = Field(default=None, max_length=EXPERIMENT_FIELD_MAX)
    """How the runs test it."""
    measure: str | None = Field(default=None, max_length=EXPERIMENT_FIELD_MAX)
    """What is measured."""
    decide: str | None = Field(default=None, max_length=EXPERIMENT_FIELD_MAX)
    """What result decides what."""
    notes: str | None = Field(default=None, max_length=EXPERIMENT_FIELD_MAX)
    """Anything else."""


class Figure(_Model):
    """A Plotly figure as JSON (never code), drawn under the run table as illustration.

    Refused as the page would refuse it: a name outside ``[a-z0-9][a-z0-9-]{0,39}``, more than
    200 KB of JSON, fewer than 1 or more than 50 traces, a trace type outside scatter, bar and pie
    (a missing type is scatter). ``layout.images``, ``updatemenus``, ``sliders`` and ``template``
    are dropped.
    """

    name: str
    """The figure's slug."""
    caption: str | None = Field(default=None, max_length=EXPERIMENT_FIELD_MAX)
    """Shown above the figure."""
    figure: dict[str, Any]
    """``{"data": [...], "layout": {...}}``."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _FIGURE.match(value):
            raise ValueError(f"figure name must match {FIGURE_NAME_PATTERN}, got {value!r}")
        return value

    @field_validator("figure")
    @classmethod
    def _figure(cls, value: dict[str, Any]) -> dict[str, Any]:
        from whileai.charts import check_figure

        layout = value.get("layout") or {}
        if isinstance(layout, dict):
            layout = {k: v for k, v in layout.items() if k not in FIGURE_DROPPED_LAYOUT}
        return check_figure({"data": value.get("data"), "layout": layout})  # an ArgumentError is a ValueError


class LiveDay(_Model):
    """A day of traffic on a version you serve yourself."""

    day: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    """The day, ``YYYY-MM-DD``."""
    version: str | None = None
    """The version that served it (default: the served version)."""
    replies: int = Field(ge=0)
    """Replies sent."""
    flagged: int = Field(default=0, ge=0)
    """Replies flagged (by users or a monitor); at most ``replies``."""

    @field_validator("day")
    @classmethod
    def _day(cls, value: str) -> str:
        import datetime as dt

        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"day must be a date of the calendar, YYYY-MM-DD, got {value!r}") from None
        return value

    @model_validator(mode="after")
    def _flagged(self) -> LiveDay:
        if self.flagged > self.replies:
            raise ValueError(f"flagged must be at most replies ({self.replies}), got {self.flagged}")
        return self


class Promote(_Model):
    """The body of ``POST /agents/{agent}/promote``: the version to serve, and who pressed Promote."""

    version: str = Field(min_length=1)
    """The version every candidate is compared against from now on (it must be one of the agent's)."""
    by: str | None = Field(default=None, max_length=100)
    """Who promoted it (the Runs page puts the key id here); recorded on the run."""


class DatasetPush(_Model):
    """The body of ``POST /datasets``: rows saved as a new version of a dataset in the server's store."""

    name: str
    """The dataset's name; new content under it adds a version."""
    purpose: Literal["train", "holdout", "eval"] = "train"
    """train, holdout or eval."""
    parent: str | None = None
    """The dataset these rows were made from (lineage; default: the previous version of ``name``)."""
    rows: list[dict[str, Any]] = Field(min_length=1)
    """The rows, as ``whileai.table.rows`` writes them."""
    meta: dict[str, Any] | None = None
    """Anything to keep with the record (the publish gate's summary lands here)."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _AGENT.match(value):
            raise ValueError(_name_error(value, "dataset name"))
        return value


class AgentInfo(AgentSpec):
    """An agent as stored: its spec, when it was first seen, and the platform's candidate slot."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    created_at: str
    """UTC, ISO 8601."""
    candidate: str | None = None
    """The agent-level candidate: the newest version scored that is not the served one."""


class RunRecord(_Model):
    """A tracked run as stored (what ``GET /runs/{id}`` returns)."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    id: str
    agent: str | None = None
    version: str | None = None
    name: str | None = None
    dataset_id: str | None = None
    base_model: str | None = None
    total_steps: int | None = None
    status: RunStatus = "running"
    created_at: str
    finished_at: str | None = None
    record: dict[str, Any] = Field(default_factory=dict)
    summary: dict[str, Any] = Field(default_factory=dict)
    hours: float | None = None
    cost_usd: float | None = None
    cost_basis: str | None = None
    adapter: str | None = None
    notes: str | None = None
    archived: bool = False
    delta: dict[str, Any] | None = None
    n_points: int = 0
    """Training points logged."""
    last_step: int | None = None
    """The highest step logged."""


class ScoreRecord(_Model):
    """A posted score as stored."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    id: str
    run_id: str
    behavior: str
    version: str | None = None
    value: float
    ci: float | None = None
    n: int | None = None
    examples: list[Example] = Field(default_factory=list)
    n_rows: int = 0
    """Graded rows posted behind the score."""
    seq: int
    """Posting order across the store (the verdict's 'newest')."""
    created_at: str
