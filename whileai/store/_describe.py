"""What a rollout file holds: rows, tasks, k, graded share, columns, markers, pass@1 with its interval."""

from __future__ import annotations

import contextlib
import gzip
import itertools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import Field

from whileai import table
from whileai.defaults import DEFAULT_SEED, JSONL_SCHEMA_HEAD_LINES, PARQUET_SUFFIXES
from whileai.report import Part, Report, fmt_num
from whileai.store._reports import ci_text

__all__ = ["MarkerRows", "RolloutSummary", "describe"]

#: Columns describe reads from a Parquet source (the rest are listed from its schema only).
_DATA_COLUMNS = ("reward", "markers", "judge_status", "rollout_index", "truncated")
#: JSONL files whose data columns describe reads through the projected reader (a ``.json`` file may be a log).
_JSONL_HEAD_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")


class MarkerRows(Part):
    """A marker over the rows that carry it: how many, and its mean over them."""

    n: int = 0
    """Rows carrying the marker."""
    mean: float | None = None
    """Its mean over those rows (1.0 is the good outcome)."""


class RolloutSummary(Report):
    """A rollout table at a glance (``wai inspect``)."""

    source: str
    """What was read."""
    n_rows: int
    """Rollouts."""
    n_tasks: int
    """Distinct tasks (``task_key``)."""
    k: int
    """The most rollouts any task has."""
    k_min: int
    """The fewest rollouts any task has (equal to ``k`` when every task has the same number)."""
    n_graded: int
    """Rows with a reward."""
    graded_share: float
    """n_graded / n_rows (NaN with no rows)."""
    n_partial: int
    """Graded rows whose reward is neither 0 nor 1 (partial credit)."""
    judge_status: dict[str, int] = Field(default_factory=dict)
    """Rows per judge status, when the rows carry one."""
    columns: dict[str, str] = Field(default_factory=dict)
    """Every column and its type."""
    markers: dict[str, MarkerRows] = Field(default_factory=dict)
    """Per marker: rows carrying it and its mean over them."""
    pass_at_1: float = float("nan")
    """pass@1 (mean over tasks of each task's mean reward), from ``whileai.measure.pass_at``."""
    ci95: tuple[float, float] | None = None
    """Its 95% interval over tasks."""

    def render(self) -> str:
        """Counts, pass@1, markers and columns, one block each."""
        uneven = "" if self.k == self.k_min else f" (uneven: {self.k_min} to {self.k} per task)"
        lines = [
            f"{self.source}: {self.n_rows:,} rows, {self.n_tasks:,} tasks, k={self.k}{uneven}",
            f"  graded   {self.n_graded:,} of {self.n_rows:,} ({fmt_num(100 * self.graded_share, 1)}%)"
            + (f", {self.n_partial:,} partial credit" if self.n_partial else ""),
            f"  pass@1   {fmt_num(self.pass_at_1)} {ci_text(self.ci95)}",
        ]
        if self.judge_status:
            lines.append("  judge    " + ", ".join(f"{k} {v:,}" for k, v in self.judge_status.items()))
        if self.markers:
            lines.append("  markers  " + ", ".join(f"{name} {fmt_num(m.mean)} (n={m.n:,})"
                                                   for name, m in self.markers.items()))
        lines.append("  columns  " + ", ".join(f"{name}:{dtype}" for name, dtype in self.columns.items()))
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def _is_parquet(rows: Any) -> bool:
    if not isinstance(rows, (str, os.PathLike)) or str(rows) == "-":
        return False
    path = Path(rows)
    if path.is_dir():  # a folder of Parquet files; a folder of logs is read whole
        return bool(table.parquet_files(path))
    return path.name.lower().endswith(PARQUET_SUFFIXES)


@contextlib.contextmanager
def _head_file(path: Path, lines: list[bytes]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="wai-inspect-") as folder:
        sample = Path(folder) / path.name.removesuffix(".gz")
        sample.write_bytes(b"".join(lines))
        yield sample


def _jsonl_head(rows: Any) -> contextlib.AbstractContextManager[Path] | None:
    """A JSONL file's first ``JSONL_SCHEMA_HEAD_LINES`` lines as a file of its own.

    Those are the rows the JSONL reader takes the file's fields from. None for any other input,
    and for a shorter file or one JSON array (read whole: as cheap, or the only way).
    """
    if not isinstance(rows, (str, os.PathLike)) or str(rows) == "-":
        return None
    path = Path(rows)
    if not path.is_file() or not path.name.lower().endswith(_JSONL_HEAD_SUFFIXES):
        return None
    opener: Any = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as handle:
        lines = list(itertools.islice(handle, JSONL_SCHEMA_HEAD_LINES + 1))
    if len(lines) <= JSONL_SCHEMA_HEAD_LINES or lines[0].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
        return None  # short, or one JSON array: the whole read is as cheap, or the only one
    return _head_file(path, lines[:JSONL_SCHEMA_HEAD_LINES])


def _dtype_name(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Struct):
        return "struct"
    if isinstance(dtype, pl.List):
        return "list[struct]" if isinstance(dtype.inner, pl.Struct) else f"list[{_dtype_name(dtype.inner)}]"  # type: ignore[arg-type]
    return str(dtype).lower()


def describe(rows: table.IntoRows, /, *, seed: int = DEFAULT_SEED) -> RolloutSummary:
    """Summarise a rollout table: counts, graded share, columns, markers and pass@1 with its interval.

    A Parquet source is read lazily: its columns are listed from the schema, and only the
    reward, markers and judge columns (plus the task identity) are loaded. A JSONL file longer
    than ``JSONL_SCHEMA_HEAD_LINES`` lines is read as those columns too (DuckDB's JSON reader),
    its columns listed from a read of its first ``JSONL_SCHEMA_HEAD_LINES`` rows: the rows the
    JSONL reader takes a file's fields from. pass@1 and its
    interval come from :func:`whileai.measure.pass_at` (a t interval over task means).

    Args:
        rows: Any rows ``table.frame`` reads.
        seed: Seed of pass_at's bootstrap.

    Returns:
        A :class:`RolloutSummary`.
    """
    from whileai.measure import pass_at

    source = "stdin" if str(rows) == "-" else str(rows) if isinstance(rows, (str, os.PathLike)) else type(rows).__name__
    if _is_parquet(rows):
        df = table.frame(rows, columns=list(_DATA_COLUMNS))  # first: a missing or broken file is said here
        schema = table.scan(rows).collect_schema()  # type: ignore[arg-type]
        columns = {name: _dtype_name(dtype) for name, dtype in schema.items()}
    elif (head := _jsonl_head(rows)) is not None:
        df = table.frame(rows, columns=list(_DATA_COLUMNS))
        with head as sample:
            columns = {name: _dtype_name(dtype) for name, dtype in table.frame(sample).schema.items()
                       if name != "task_key"}
    else:
        df = table.frame(rows)
        columns = {name: _dtype_name(dtype) for name, dtype in df.schema.items() if name != "task_key"}
    counts = df.group_by("task_key").len()["len"]
    reward = df["reward"] if "reward" in df.columns else pl.Series("reward", [None] * df.height, dtype=pl.Float64)
    graded = reward.drop_nulls()
    markers: dict[str, MarkerRows] = {}
    if "markers" in df.columns and isinstance(df.schema["markers"], pl.Struct):
        stats = df.select(
            [pl.struct(n=pl.col("markers").struct.field(m).count(), mean=pl.col("markers").struct.field(m).mean())
             .alias(m) for m in table.markers_of(df)]
        )
        markers = {m: MarkerRows(**stats[m][0]) for m in stats.columns if stats[m][0]["n"]}
    status: dict[str, int] = {}
    if "judge_status" in df.columns:
        vc = df["judge_status"].fill_null("none").value_counts(sort=True)
        status = dict(zip(vc["judge_status"].to_list(), vc["count"].to_list()))
    report = pass_at(df, seed=seed)
    return RolloutSummary(
        source=source, n_rows=df.height, n_tasks=counts.len(), k=int(counts.max() or 0),  # type: ignore[arg-type]
        k_min=int(counts.min() or 0), n_graded=graded.len(),  # type: ignore[arg-type]
        graded_share=graded.len() / df.height if df.height else float("nan"),
        n_partial=int(((graded > 0) & (graded < 1)).sum()), judge_status=status, columns=columns, markers=markers,
        pass_at_1=report.pass_at_1, ci95=report.ci95, warnings=list(report.warnings),
    )
