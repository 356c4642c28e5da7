"""The calibration stamp: each graded row carries its task's pass rate over k repeats.

The stamp is what lets a trainer build a curriculum or retire solved tasks without re-measuring:
the task's pass rate over the k rollouts the grader saw, its 95% Wilson interval, k, and the
policy that produced the row (docs/select.md, "The publish gate"). ``optimize(mode="rl")`` stamps from the
rows it was given, before its own dedupe and trims, and a carried stamp measured over more
repeats than the rows now hold is kept rather than re-measured.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from whileai import table
from whileai.defaults import CI_LEVEL
from whileai.measure import task_stats
from whileai.report import NanFloat, Part, Report
from whileai.selection._rows import has
from whileai.stats.wilson import wilson
from whileai.table import IntoRows

__all__ = [
    "CALIBRATION_DTYPE",
    "Calibration",
    "CalibrationCounts",
    "CalibrationReport",
    "PolicyRef",
    "calibrate",
    "calibration_of",
    "stamp_calibration",
]

POLICY_DTYPE = pl.Struct({"name": pl.String, "model": pl.String, "prompt_hash": pl.String, "version": pl.String})

#: The ``calibration`` column's struct type.
CALIBRATION_DTYPE = pl.Struct(
    {
        "task_id": pl.String,
        "student": POLICY_DTYPE,
        "n": pl.Int64,
        "pass_rate": pl.Float64,
        "mean_kl": pl.Float64,
        "pass_rate_ci95": pl.List(pl.Float64),
    }
)


class PolicyRef(BaseModel):
    """The policy that produced a row: a name, the model, a system-prompt hash and a version."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = ""
    """A human name for the policy (may be empty)."""
    model: str | None = None
    """The model the agent ran on (``model_version``)."""
    prompt_hash: str | None = None
    """A hash of the system prompt it ran under (``lineage.system_prompt_sha`` when known)."""
    version: str | None = None
    """The policy version (``policy_version``)."""


class Calibration(BaseModel):
    """A row's calibration stamp: its task's pass rate over the k graded repeats.

    The interval is the Wilson score interval (Wilson 1927, JASA 22:209) at ``CI_LEVEL``; at k=8
    a task's band assignment can be off by about 0.3 (docs/select.md, "the difficulty band").
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    task_id: str
    """The task (``task_key``) the pass rate is over."""
    student: PolicyRef = Field(default_factory=PolicyRef)
    """The policy that produced the row."""
    n: int = Field(ge=1)
    """k: the graded rollouts the pass rate is over, as graded (before any prune)."""
    pass_rate: float = Field(ge=0.0, le=1.0)
    """Share of those rollouts with reward >= 0.5."""
    mean_kl: float | None = None
    """Mean KL to a reference policy, when measured (not by this library yet)."""
    pass_rate_ci95: tuple[float, float] | None = None
    """The 95% Wilson interval on ``pass_rate``."""

    @field_validator("pass_rate_ci95", mode="before")
    @classmethod
    def _pair(cls, value: Any) -> Any:
        if value is None:
            return None
        pair = tuple(value)
        if len(pair) != 2 or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in pair):
            return None
        return pair


def calibration_of(row: Mapping[str, Any] | Any) -> Calibration | None:
    """Read a row's calibration stamp back, typed; ``None`` when it has none or it is invalid.

    Args:
        row: A row dict (``table.rows`` output, a JSONL line) or anything with a ``calibration``
            key; the stamp may be a dict or its JSON text.

    Examples:
        >>> c = calibration_of({"calibration": {"task_id": "t1", "n": 4, "pass_rate": 0.5,
        ...                                     "pass_rate_ci95": [0.15, 0.85]}})
        >>> c.n, c.pass_rate, c.pass_rate_ci95
        (4, 0.5, (0.15, 0.85))
        >>> calibration_of({"prompt": "hi"}) is None
        True
    """
    if not isinstance(row, Mapping):
        return None
    value = row.get("calibration")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, Mapping):
        return None
    data = dict(value)
    if data.get("student") is None:
        data.pop("student", None)
    try:
        return Calibration.model_validate(data)
    except ValidationError:
        return None


def _student_expr(df: pl.DataFrame, policy: str | None, model: str | None) -> pl.Expr:
    version = pl.lit(policy, pl.String) if policy is not None else (
        pl.col("policy_version").cast(pl.String) if has(df, "policy_version") else pl.lit(None, pl.String))
    model_e = pl.lit(model, pl.String) if model is not None else (
        pl.col("model_version").cast(pl.String) if has(df, "model_version") else pl.lit(None, pl.String))
    lineage = df.schema.get("lineage")
    if isinstance(lineage, pl.Struct) and "system_prompt_sha" in {f.name for f in lineage.fields}:
        prompt_hash = pl.col("lineage").struct.field("system_prompt_sha").cast(pl.String)
    else:
        prompt_hash = pl.lit(None, pl.String)
    return pl.struct(pl.lit("", pl.String).alias("name"), model_e.alias("model"),
                     prompt_hash.alias("prompt_hash"), version.alias("version"))


def _carried(df: pl.DataFrame) -> pl.Expr | None:
    """The existing ``calibration`` column recast to CALIBRATION_DTYPE, field by field."""
    dtype = df.schema.get("calibration")
    if not isinstance(dtype, pl.Struct):
        return None
    names = {f.name: f.dtype for f in dtype.fields}
    if "n" not in names or "pass_rate" not in names:
        return None
    col = pl.col("calibration")
    parts = []
    for field in CALIBRATION_DTYPE.fields:
        if field.name not in names:
            parts.append(pl.lit(None, field.dtype).alias(field.name))
        elif field.name == "student":
            sub = names["student"]
            sub_names = {f.name for f in sub.fields} if isinstance(sub, pl.Struct) else set()
            parts.append(pl.struct([
                (col.struct.field("student").struct.field(f.name).cast(pl.String) if f.name in sub_names
                 else pl.lit(None, pl.String)).alias(f.name)
                for f in POLICY_DTYPE.fields
            ]).alias("student"))
        else:
            parts.append(col.struct.field(field.name).cast(field.dtype, strict=False).alias(field.name))
    return pl.struct(parts)


def task_calibration(stats: pl.DataFrame, *, level: float = CI_LEVEL) -> pl.DataFrame:
    """Per task from ``task_stats``: task_key, n (graded), pass_rate and its Wilson bounds."""
    graded = stats.filter(pl.col("n_graded") > 0)
    lo, hi = wilson(graded["c"].to_numpy(), graded["n_graded"].to_numpy(), level=level)
    return graded.select(
        "task_key",
        pl.col("n_graded").alias("_cal_n"),
        (pl.col("c") / pl.col("n_graded")).alias("_cal_rate"),
    ).with_columns(pl.Series("_cal_lo", lo), pl.Series("_cal_hi", hi))


#: The columns a stamp reads (besides ``task_key``): the rest of a row is never touched.
STAMP_COLUMNS = ("reward", "policy_version", "model_version", "lineage", "calibration")


def stamp_calibration(df: pl.DataFrame, stats: pl.DataFrame, *, policy: str | None = None,
                      model: str | None = None, only_graded: bool = True) -> tuple[pl.DataFrame, int]:
    """Add or refresh the ``calibration`` column of ``df`` from per-task ``stats``.

    ``stats`` is ``task_stats`` over the rows as graded (before any prune). A row whose carried
    stamp counts more repeats than ``stats`` holds for its task keeps that stamp (policy
    refreshed only when ``policy``/``model`` are given). Rows with no reward (when
    ``only_graded``) or whose task has no graded rollout keep whatever they had. The work runs on
    the few columns a stamp reads, never on the conversations.

    Returns:
        The stamped table and the number of rows that kept a carried stamp.
    """
    narrow = df.select("task_key", *[c for c in STAMP_COLUMNS if c in df.columns])
    cal = task_calibration(stats)
    out = narrow.join(cal, on="task_key", how="left", maintain_order="left")
    fresh = pl.struct(
        pl.col("task_key").alias("task_id"),
        _student_expr(narrow, policy, model).alias("student"),
        pl.col("_cal_n").alias("n"),
        pl.col("_cal_rate").alias("pass_rate"),
        pl.lit(None, pl.Float64).alias("mean_kl"),
        pl.concat_list(pl.col("_cal_lo").round(4), pl.col("_cal_hi").round(4)).alias("pass_rate_ci95"),
    ).cast(CALIBRATION_DTYPE)
    measured = pl.col("_cal_n").is_not_null()
    if only_graded and has(narrow, "reward"):
        measured = measured & pl.col("reward").is_not_null()
    elif only_graded:
        measured = pl.lit(False)
    carried = _carried(narrow)
    n_carried = 0
    if carried is not None:
        keep_old = pl.col("calibration").is_not_null() & (
            carried.struct.field("n").fill_null(0) > pl.col("_cal_n").fill_null(0))
        if policy is not None or model is not None:
            carried = carried.struct.with_fields(_student_expr(narrow, policy, model).alias("student"))
        n_carried = int(out.select((keep_old & measured).sum()).item())
        value = pl.when(keep_old).then(carried).when(measured).then(fresh).otherwise(carried)
    else:
        value = pl.when(measured).then(fresh).otherwise(pl.lit(None, CALIBRATION_DTYPE))
    column = out.select(value.alias("calibration")).to_series()
    return df.with_columns(column), n_carried


class CalibrationReport(Report):
    """What ``calibrate`` stamped."""

    n_tasks: int = 0
    """Tasks with at least one graded rollout."""
    n_rows: int = 0
    """Rows given."""
    n_stamped: int = 0
    """Rows that carry a stamp afterwards (fresh or carried)."""
    n_carried: int = 0
    """Rows that kept a stamp measured over more repeats than these rows hold (after a prune)."""
    n_unstamped: int = 0
    """Rows left without a stamp (no reward)."""
    k_median: NanFloat = math.nan
    """Median graded rollouts per task: the k the stamps are over."""
    student: dict[str, Any] = Field(default_factory=dict)
    """The policy named on the call (empty: read from each row's policy_version)."""

    def render(self) -> str:
        """One line: rows stamped, carried and left."""
        line = (f"calibration: {self.n_stamped} of {self.n_rows} rows stamped over {self.n_tasks} tasks "
                f"(k median {self.k_median:g})" if not math.isnan(self.k_median) else
                f"calibration: {self.n_stamped} of {self.n_rows} rows stamped")
        if self.n_carried:
            line += f"; {self.n_carried} kept a carried stamp"
        if self.n_unstamped:
            line += f"; {self.n_unstamped} ungraded left unstamped"
        return "\n".join([line, *(f"! {w}" for w in self.warnings)])


class CalibrationCounts(Part, CalibrationReport):
    """``calibrate``'s report as a block of the gate's report: the rows a stamp would cover, carried stamps kept."""


def calibrate(rows: IntoRows, /, *, policy: str | None = None, model: str | None = None) -> table.StepResult:
    """Stamp every graded row with its task's pass rate, Wilson interval, k and policy.

    The pass rate per task comes from ``whileai.measure.task_stats`` (reward >= 0.5 passes);
    the interval is Wilson's (Wilson 1927) at ``CI_LEVEL``. A row whose existing stamp counts
    more repeats than these rows hold keeps it (docs/select.md, "The publish gate": the gate keeps a
    carried stamp rather than re-measuring it on what is left). Nothing is mutated.

    Args:
        rows: A graded rollout table or anything ``table.frame`` reads.
        policy: The policy version to record (default: each row's ``policy_version``).
        model: The model to record (default: each row's ``model_version``).

    Returns:
        A :class:`whileai.table.StepResult`: the rows with a ``calibration`` column and a
        :class:`CalibrationReport` (``wai.calibrate`` wraps them as the input's fluent type, else
        ``ScoredData``). Read a stamp back with :func:`calibration_of`.
    """
    df = table.frame(rows, allow_empty=True)
    work = df if has(df, "reward") else df.with_columns(pl.lit(None, pl.Float64).alias("reward"))
    stats = task_stats(work)
    stamped, n_carried = stamp_calibration(work, stats, policy=policy, model=model)
    if not has(df, "reward"):
        stamped = stamped.drop("reward")
    n_stamped = int(stamped["calibration"].is_not_null().sum()) if stamped.height else 0
    graded = stats.filter(pl.col("n_graded") > 0)
    warnings = []
    if graded.height == 0:
        warnings.append("no row carries a reward, so nothing was stamped; grade first (data.grade(judge=...))")
    report = CalibrationReport(
        n_tasks=graded.height,
        n_rows=df.height,
        n_stamped=n_stamped,
        n_carried=n_carried,
        n_unstamped=df.height - n_stamped,
        k_median=float(graded["n_graded"].median()) if graded.height else math.nan,  # type: ignore[arg-type]
        student={k: v for k, v in {"version": policy, "model": model}.items() if v is not None},
        warnings=warnings,
    )
    return table.StepResult(stamped, report)
