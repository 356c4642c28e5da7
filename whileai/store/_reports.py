"""What the store hands back: typed records that print themselves, and listings of them."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import polars as pl
from pydantic import Field

from whileai.report import Part, Report, fmt_ci, fmt_num, html_table, markdown_table
from whileai.table import short_hash as short

__all__ = ["DatasetDiff", "DatasetInfo", "EvalSetInfo", "Listing", "MarkerMean", "MetricPair", "RunDiff", "RunInfo",
           "SplitInfo"]


def ci_text(ci: Any) -> str:
    """An interval that may hold missing ends, as ``[lo..hi]`` or ``[n/a]``."""
    return fmt_ci(ci)


def _pct(part: int, whole: int) -> str:
    return "n/a" if whole == 0 else f"{100.0 * part / whole:.0f}%"


class DatasetInfo(Report):
    """One saved dataset version: what it holds, where its rows are, and where it came from."""

    id: str
    """``name@version``: how every store call and ``wai datasets`` refers to it."""
    name: str
    """The dataset's name; saving new content under it adds a version."""
    version: int
    """1 for the first save under this name, then 2, 3..."""
    purpose: str
    """``train``, ``holdout`` or ``eval``."""
    content_hash: str
    """Hash of the rows' canonical form, tagged with its algorithm (``rows-v1-sha256:...``)."""
    n_rows: int
    """Rollouts."""
    n_tasks: int
    """Distinct tasks (``task_key``)."""
    k: int
    """The most rollouts any task has."""
    n_graded: int
    """Rows carrying a reward."""
    parent: str | None = None
    """The dataset this one was made from (lineage): the previous version by default."""
    created_at: str
    """When it was saved, ISO 8601 UTC."""
    path: str
    """The Parquet file holding the rows (read it with Polars or DuckDB directly)."""
    columns: list[str] = Field(default_factory=list)
    """The columns the rows carry."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """What the caller attached at save time."""
    reused: bool = False
    """True when the same content was already the latest version under this name, so nothing new was written."""

    def render(self) -> str:
        """Several lines: the counts, then hash, lineage, file and columns."""
        head = (f"dataset {self.id} ({self.purpose}): {self.n_rows:,} rows, {self.n_tasks:,} tasks, k={self.k}, "
                f"{_pct(self.n_graded, self.n_rows)} graded" + ("  (unchanged: already the latest version)" if self.reused else ""))
        lines = [
            head,
            f"  hash     {self.content_hash}",
            f"  parent   {self.parent or '-'}",
            f"  saved    {self.created_at}",
            f"  file     {self.path}",
            f"  columns  {', '.join(self.columns)}",
        ]
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


class SplitInfo(Report):
    """The two datasets a split saved: the train side and the holdout side."""

    train: DatasetInfo
    """The train side (purpose ``train``)."""
    holdout: DatasetInfo
    """The holdout side (purpose ``holdout``), tasks disjoint from train."""
    share: float
    """The share of tasks asked for the holdout."""

    def render(self) -> str:
        """Both datasets, then the warnings."""
        lines = [f"split {self.train.n_tasks + self.holdout.n_tasks:,} tasks: "
                 f"{self.train.n_tasks:,} train, {self.holdout.n_tasks:,} holdout (share {self.share:g} asked)",
                 self.train.render(), self.holdout.render()]
        lines.extend(f"! {w}" for w in self.warnings if w not in self.holdout.warnings)
        return "\n".join(lines)


class EvalSetInfo(Report):
    """An eval set pinned by task ids, so later runs score exactly these tasks."""

    id: str
    """``name@version``."""
    name: str
    """The eval set's name."""
    version: int
    """1, 2, ... as the pinned task set changes."""
    content_hash: str
    """Hash of the sorted task ids (``tasks-v1-sha256:...``)."""
    n_tasks: int
    """Pinned tasks."""
    dataset: str | None = None
    """The dataset the tasks were pinned from, if any."""
    created_at: str
    """When it was pinned, ISO 8601 UTC."""
    task_keys: list[str] = Field(default_factory=list)
    """The pinned task ids (filled by ``Store.eval_set``; empty in listings)."""
    reused: bool = False
    """True when the same task set was already the latest version under this name."""

    def render(self) -> str:
        """One line, plus warnings."""
        line = (f"eval set {self.id}: {self.n_tasks:,} tasks pinned, hash {short(self.content_hash)}"
                f"{', from ' + self.dataset if self.dataset else ''}, {self.created_at}")
        return "\n".join([line, *(f"! {w}" for w in self.warnings)])


#: An interval as recorded: a pair, kept as the list or tuple it was written as (JSON reads back a list).
Interval = tuple[float | None, float | None] | list[float | None] | None


class MarkerMean(Part):
    """A marker's mean over tasks on a recorded run, with its 95% interval (``whileai.measure.marker_summary``)."""

    mean: float | None = None
    """The mean (1.0 is the good outcome)."""
    ci95: Interval = None
    """Its 95% interval over tasks (None when it has none)."""


class MetricPair(Part):
    """One number on two recorded runs: each side with its interval, and b minus a."""

    a: float | None = None
    """The number on the first run."""
    a_ci95: Interval = None
    """Its 95% interval."""
    b: float | None = None
    """The number on the second run."""
    b_ci95: Interval = None
    """Its 95% interval."""
    delta: float | None = None
    """b - a (None when either is missing)."""


class RunInfo(Report):
    """One recorded run: what produced it and how well it did, with intervals."""

    id: str
    """The run id (``r-`` and 12 hex)."""
    name: str | None = None
    """An optional label."""
    created_at: str
    """When it was recorded, ISO 8601 UTC."""
    policy: str | None = None
    """The policy (agent and system prompt) version."""
    judge: str | None = None
    """The judge that wrote the rewards."""
    harness: str | None = None
    """Fingerprint of the instructions, tools and model the run used (``h-`` and 12 hex)."""
    seed: int | None = None
    """The seed the run was drawn with."""
    dataset: str | None = None
    """The saved dataset holding the run's rows, if any."""
    eval_set: str | None = None
    """The pinned eval set the run was scored on, if any."""
    n_rows: int = 0
    """Rollouts."""
    n_tasks: int = 0
    """Distinct tasks."""
    k: int = 0
    """The most rollouts any task has."""
    n_graded: int = 0
    """Rows carrying a reward."""
    pass_at_1: float | None = None
    """pass@1 (mean reward over tasks), from ``whileai.measure.pass_at``."""
    ci95: tuple[float | None, float | None] | None = None
    """Its 95% interval over tasks."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    """Every number of the pass_at report (pass^k, pass@k, headroom, their intervals)."""
    markers: dict[str, MarkerMean] = Field(default_factory=dict)
    """Per marker: mean and 95% interval."""
    baseline: str | None = None
    """The run a delta report compared this one against."""
    verdict: str | None = None
    """That report's headline verdict."""
    delta: dict[str, Any] | None = None
    """That delta report, as data."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """What the caller attached."""

    def render(self) -> str:
        """A headline with pass@1 and its interval, then provenance, markers and the verdict."""
        label = f" ({self.name})" if self.name else ""
        lines = [
            f"run {self.id}{label}: pass@1 {fmt_num(self.pass_at_1)} {ci_text(self.ci95)}, "
            f"{self.n_tasks:,} tasks, k={self.k}, {self.n_rows:,} rows, {_pct(self.n_graded, self.n_rows)} graded",
            f"  policy {self.policy or '-'} | judge {self.judge or '-'} | harness {self.harness or '-'} | "
            f"seed {'-' if self.seed is None else self.seed}",
        ]
        if self.dataset or self.eval_set:
            lines.append(f"  dataset {self.dataset or '-'} | eval set {self.eval_set or '-'}")
        for name, m in sorted(self.markers.items()):
            lines.append(f"  marker {name:<24} {fmt_num(m.get('mean'))} {ci_text(m.get('ci95'))}")
        if self.verdict is not None:
            lines.append(f"  verdict vs {self.baseline or 'baseline'}: {self.verdict}")
        lines.append(f"  recorded {self.created_at}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


class DatasetDiff(Report):
    """What changed between two dataset versions: rows, tasks and columns."""

    a: str
    """The first dataset's id."""
    b: str
    """The second dataset's id."""
    same_content: bool
    """Both hold the same rows (equal content hashes)."""
    n_rows: tuple[int, int]
    """Rows in a and in b."""
    n_tasks: tuple[int, int]
    """Tasks in a and in b."""
    shared_tasks: int
    """Tasks in both."""
    only_a: int
    """Tasks only in a."""
    only_b: int
    """Tasks only in b."""
    columns_added: list[str] = Field(default_factory=list)
    """Columns b has and a does not."""
    columns_removed: list[str] = Field(default_factory=list)
    """Columns a has and b does not."""
    related: str | None = None
    """How they are related in the lineage (``b descends from a``...), if they are."""

    def render(self) -> str:
        """A few lines: same or not, the counts side by side, columns, lineage."""
        lines = [f"{self.a} -> {self.b}: " + ("same content" if self.same_content else "different content"),
                 f"  rows   {self.n_rows[0]:,} -> {self.n_rows[1]:,} ({self.n_rows[1] - self.n_rows[0]:+,})",
                 f"  tasks  {self.n_tasks[0]:,} -> {self.n_tasks[1]:,}: {self.shared_tasks:,} shared, "
                 f"{self.only_a:,} only in {self.a}, {self.only_b:,} only in {self.b}"]
        if self.columns_added or self.columns_removed:
            lines.append(f"  columns +[{', '.join(self.columns_added)}] -[{', '.join(self.columns_removed)}]")
        if self.related:
            lines.append(f"  lineage {self.related}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


class RunDiff(Report):
    """Two recorded runs side by side: their setup and each number's change."""

    a: str
    """The first run's id."""
    b: str
    """The second run's id."""
    setup: dict[str, tuple[Any, Any]] = Field(default_factory=dict)
    """Setup fields that differ (policy, judge, harness, seed, dataset, eval set): (a, b)."""
    metrics: dict[str, MetricPair] = Field(default_factory=dict)
    """Per number (pass_at_1 and each marker): a, b, delta, and each side's interval."""
    verdict: str | None = None
    """The headline verdict of a paired delta report over both runs' saved rows, when both have them."""
    delta: dict[str, Any] | None = None
    """That delta report, as data."""

    def render(self) -> str:
        """The verdict (when the rows were compared), then one line per number, then setup changes."""
        lines = [f"{self.a} -> {self.b}" + (f": {self.verdict}" if self.verdict else "")]
        for name, m in self.metrics.items():
            delta = m.get("delta")
            lines.append(f"  {name:<28} {fmt_num(m.get('a'), 3)} {ci_text(m.get('a_ci95'))} -> "
                         f"{fmt_num(m.get('b'), 3)} {ci_text(m.get('b_ci95'))}  "
                         f"{'n/a' if delta is None else f'{delta:+.3f}'}")
        for key, (va, vb) in self.setup.items():
            lines.append(f"  {key:<10} {va} -> {vb}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


T = TypeVar("T", bound=Report)

_Col = tuple[str, Callable[[Any], str]]


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return str(value)


class Listing(list, Generic[T]):
    """A list of store records that prints as a table and dumps to JSON like a report."""

    def __init__(self, items: Sequence[T], *, title: str, columns: Sequence[_Col], empty: str) -> None:
        super().__init__(items)
        self.title = title
        self.columns = list(columns)
        self.empty = empty

    def render(self) -> str:
        """A plain-text table, one row per record, newest first."""
        if not self:
            return self.empty
        header = [name for name, _ in self.columns]
        body = [[_cell(get(item)) for _, get in self.columns] for item in self]
        widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [self.title, fmt.format(*header).rstrip()]
        lines.extend(fmt.format(*r).rstrip() for r in body)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"<{self.title}: {len(self)} item(s)>"

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        return [name for name, _ in self.columns], [[_cell(get(item)) for _, get in self.columns] for item in self]

    def _repr_html_(self) -> str:
        """The listing as an HTML table under its title (cells escaped)."""
        if not self:
            return f"<p>{html.escape(self.empty)}</p>"
        header, body = self._cells()
        return f"<p><b>{html.escape(self.title)}</b></p>" + html_table(header, body)

    def _repr_markdown_(self) -> str:
        """The listing as a Markdown table under its title."""
        if not self:
            return self.empty
        header, body = self._cells()
        return f"**{self.title}**\n\n" + markdown_table(header, body)

    def to_dicts(self) -> list[dict[str, Any]]:
        """Every record as plain data."""
        return [item.to_dict() for item in self]

    def to_json(self, *, indent: int | None = 2) -> str:
        """The records as a JSON list (what ``--json`` prints)."""
        return json.dumps(self.to_dicts(), indent=indent, default=str)

    def to_frame(self) -> pl.DataFrame:
        """The records as a Polars DataFrame (nested fields as JSON text)."""
        rows = [{k: (json.dumps(v, default=str) if isinstance(v, (dict, list, tuple)) else v)
                 for k, v in d.items()} for d in self.to_dicts()]
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()
