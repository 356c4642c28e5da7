"""The typed reports the exporters return."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from whileai.report import ROWS_GIVEN, Report

__all__ = ["EnvironmentReport", "ExportReport", "PreferenceExportReport", "PrivilegedLeaks", "Rewards", "ToolCallRoundtrip"]


class ToolCallRoundtrip(Report):
    """Whether every tool call's arguments parse back as a JSON object, in the encoding written."""

    checked: int = 0
    """Tool calls checked."""
    invalid: int = 0
    """Calls whose arguments do not parse as a JSON object."""
    rows: list[int] = Field(default_factory=list)
    """Indices (in the source) of the first rows holding an invalid call."""
    encoding: str = "json_string"
    """What was checked: ``json_string`` (OpenAI: arguments a JSON string that decodes to an
    object) or ``dict`` (TRL: arguments written as the object itself)."""
    checked_for: str = ""
    """The consumer the check vouches for, in words."""

    def render(self) -> str:
        """One line: checked, invalid and the encoding."""
        return f"tool calls: {self.checked} checked, {self.invalid} invalid ({self.encoding})"


class _Block(BaseModel):
    """A nested report block that also reads like the dict whileai 0.131 returned."""

    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields:
            return getattr(self, key)
        raise KeyError(key)

    def keys(self) -> list[str]:
        """The field names."""
        return list(type(self).model_fields)


class Rewards(_Block):
    """Pass, fail and ungraded counts of the exported conversations (pass at reward >= 0.5)."""

    n_pass: int = 0
    """Rows with reward >= 0.5."""
    n_fail: int = 0
    """Rows with reward < 0.5."""
    n_ungraded: int = 0
    """Rows with no reward."""


class PrivilegedLeaks(_Block):
    """The privileged-context check the export ran before writing."""

    checked: bool = False
    """Whether the check ran (``validate=True``)."""
    n_checked: int = 0
    """Rows carrying privileged context, i.e. the rows looked at."""
    n_leaked: int = 0
    """Rows whose assistant turns quote their own privileged context."""
    leaked: list[int] = Field(default_factory=list)
    """Indices of the first leaking rows."""
    summary: str = ""
    """The check in one sentence."""


class ExportReport(Report):
    """What ``export_dataset`` / ``training_rows`` wrote (whileai 0.131 export report keys)."""

    n_rows: int = Field(0, validation_alias=ROWS_GIVEN)
    """Rows (conversations) in the source."""
    renamed: ClassVar[dict[str, str]] = {"n": "n_rows"}

    @property
    def n(self) -> int:
        """``n_rows`` under its old name (rows in the source), kept so code written with it still reads."""
        return self.n_rows

    n_written: int = 0
    """Training samples written (more than ``n_rows`` with ``unroll=True``)."""
    format: str = "openai"
    """``openai`` (API wire rows) or ``trl`` (what TRL's data utilities take)."""
    with_system: int = 0
    """Samples whose first message is the system prompt."""
    with_tools: int = 0
    """Samples carrying tool schemas."""
    groups: int = 0
    """Distinct tasks exported."""
    trained_messages: int = 0
    """Messages with loss (mask 1)."""
    masked_messages: int = 0
    """Messages without loss (system, user, tool turns; earlier agent turns in final mode)."""
    mask_mode: str = "assistant"
    """Which turns train, in words (for TRL: what TRL itself will do with these rows)."""
    unrolled: bool = False
    """Whether each agent turn became its own sample."""
    max_tool_output_chars: int | None = None
    """The cap on each tool message, if any."""
    tool_output_truncated: int = 0
    """Tool messages cut by ``max_tool_output_chars``."""
    tool_output_chars_cut: int = 0
    """Characters of tool output cut in all."""
    tool_call_roundtrip: ToolCallRoundtrip = Field(default_factory=ToolCallRoundtrip)
    """Every call's arguments parse back, in the encoding written."""
    privileged_leaks: PrivilegedLeaks = Field(default_factory=PrivilegedLeaks)
    """The privileged-context check."""
    rewards: Rewards = Field(default_factory=Rewards)
    """Pass, fail and ungraded conversations."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Rows left out and why (``no_assistant_turn``)."""
    path: str | None = None
    """The file written (None for ``training_rows``)."""

    def render(self) -> str:
        """A few lines: what was written, the mask, the checks, the warnings."""
        where = f" -> {self.path}" if self.path else ""
        lines = [
            f"export ({self.format}): {self.n_written} samples from {self.n_rows} rows, {self.groups} tasks{where}",
            f"  mask: {self.mask_mode}",
            f"  trained messages {self.trained_messages}, masked {self.masked_messages}; "
            f"system {self.with_system}, tools {self.with_tools}",
            f"  rewards: {self.rewards.n_pass} pass, {self.rewards.n_fail} fail, {self.rewards.n_ungraded} ungraded",
            f"  {self.tool_call_roundtrip.render()}",
        ]
        if self.max_tool_output_chars is not None:
            lines.append(f"  tool output cut at {self.max_tool_output_chars} chars: {self.tool_output_truncated} messages, "
                         f"{self.tool_output_chars_cut} chars")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


class PreferenceExportReport(Report):
    """What ``export_preference`` wrote."""

    n_rows: int = Field(0, validation_alias=ROWS_GIVEN)
    """Pairs given."""
    renamed: ClassVar[dict[str, str]] = {"n": "n_rows"}

    @property
    def n(self) -> int:
        """``n_rows`` under its old name (pairs given), kept so code written with it still reads."""
        return self.n_rows

    pairs: int = 0
    """Pairs written."""
    format: str = "openai"
    """``openai``, ``trl`` or ``fireworks``."""
    trl_turns_cut: int = 0
    """Pairs that lost turns after the diverging one (one-turn shapes only)."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Pairs left out and why: ``ties`` (no reward margin), ``no_one_turn_contrast`` (the sides
    first differ at a turn that is not the agent's), ``identical``."""
    tool_call_roundtrip: ToolCallRoundtrip = Field(default_factory=ToolCallRoundtrip)
    """Every call's arguments parse back, in the encoding written."""
    chosen_longer_frac: float = float("nan")
    """Share of written pairs whose chosen turn is longer than the rejected one (length confound)."""
    first_turn_identical: int = 0
    """Pairs whose first agent turn is the same on both sides (they diverge later)."""
    mean_margin: float = float("nan")
    """Mean reward margin of the written pairs."""
    path: str | None = None
    """The file written."""

    def render(self) -> str:
        """A few lines: pairs written, what was cut or dropped, the warnings."""
        lines = [f"preference export ({self.format}): {self.pairs} of {self.n_rows} pairs -> {self.path}"]
        if self.dropped:
            lines.append("  dropped: " + ", ".join(f"{k} {v}" for k, v in self.dropped.items()))
        if self.format != "openai":
            lines.append(f"  pairs that lost later turns (trl_turns_cut): {self.trl_turns_cut}")
        lines.append(f"  {self.tool_call_roundtrip.render()}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


class EnvironmentReport(Report):
    """What ``export_environment`` wrote."""

    name: str = ""
    """The environment's module name."""
    path: str = ""
    """The package folder."""
    prompts: int = 0
    """Distinct prompts (tasks) in the source."""
    train: int = 0
    """Tasks in data/train.jsonl."""
    holdout: int = 0
    """Tasks in data/holdout.jsonl."""
    band: tuple[float, float] = (0.2, 0.8)
    """The difficulty band tasks were kept in (graded tasks only)."""
    band_dropped: int = 0
    """Graded tasks outside the band, left out."""
    graded_prompts: int = 0
    """Tasks with at least one graded rollout."""
    reward: str | None = None
    """The reward as ``module:attr`` (None: the environment has none and says so when scoring)."""
    runtime: str = "verifiers"
    """The trainer runtime the package targets."""
    files: list[str] = Field(default_factory=list)
    """The files written, relative to ``path``."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping."""
