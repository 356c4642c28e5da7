"""The fluent data objects: thin wrappers over one rollout table.

``SimulationData`` (what ``simulate`` returns), ``ScoredData`` (what ``grade`` returns) and
``Selection`` (what ``select`` returns) each hold one ``polars.DataFrame`` in ``.df`` plus the
run's context (system prompt, tools) in ``.meta`` and the report of the step that made them.
They hold no logic: every method delegates to the step function of the same name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import polars as pl
import pyarrow as pa

from whileai import table

__all__ = ["RolloutData", "ScoredData", "Selection", "SimulationData"]


class RolloutData:
    """A rollout table with fluent methods.

    Attributes:
        df: The rollout table.
        meta: Run context carried from step to step (``system_prompt``, ``tools``, ``mode``...).
        report: The report of the step that produced this object, if any.
        warnings: Run-level warnings, one sentence each.
    """

    def __init__(self, df: pl.DataFrame | Any, *, meta: dict[str, Any] | None = None,
                 report: Any = None, warnings: list[str] | None = None) -> None:
        self.df = df if isinstance(df, pl.DataFrame) else table.frame(df, allow_empty=True)
        self.meta: dict[str, Any] = dict(meta or {})
        self.report = report
        self.warnings: list[str] = list(warnings or [])

    # --- reading -----------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """The rows as a list of dicts (the wire shape: None dropped, JSON columns decoded)."""
        return table.rows(self.df)

    def __len__(self) -> int:
        return self.df.height

    def __iter__(self):  # noqa: ANN204 - iterator of row dicts
        return table.iter_rows(self.df)

    def __getitem__(self, index: int) -> dict[str, Any]:
        row = self.df.slice(index if index >= 0 else self.df.height + index, 1)
        if row.height == 0:
            raise IndexError(index)
        return table.rows(row)[0]

    def to_arrow(self) -> pa.Table:
        """The table as a pyarrow Table."""
        return table.to_arrow(self.df)

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the rows to JSONL or Parquet (by suffix), atomically."""
        return table.write(self.df, path)

    save = write

    @property
    def n_tasks(self) -> int:
        """Distinct tasks (by task_key)."""
        return self.df["task_key"].n_unique() if "task_key" in self.df.columns and self.df.height else 0

    @property
    def k(self) -> int:
        """The most rollouts any task has."""
        if not self.df.height:
            return 0
        return int(self.df.group_by("task_key").len()["len"].max())  # type: ignore[arg-type]

    @property
    def graded_share(self) -> float:
        """Share of rows with a non-null reward."""
        if not self.df.height or "reward" not in self.df.columns:
            return 0.0
        return 1.0 - self.df["reward"].null_count() / self.df.height

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(rows={len(self)}, tasks={self.n_tasks}, k={self.k}, "
                f"graded={self.graded_share:.0%})")

    def _derive(self, cls: type[RolloutData], df: pl.DataFrame, report: Any = None) -> Any:
        return cls(df, meta=self.meta, report=report, warnings=self.warnings)

    # --- the loop ----------------------------------------------------------------------------

    @property
    def pass_at(self) -> Any:
        """pass@1, pass^k and pass@k with intervals over tasks (see ``whileai.measure.pass_at``)."""
        from whileai.measure import pass_at

        return pass_at(self.df)

    def grade(self, judge: Any = None, *, grader: Any = None, **options: Any) -> ScoredData:
        """Grade every row with a judge or verifier (see ``whileai.grade.run_judge``)."""
        from whileai.grade import run_judge

        return run_judge(self, judge if judge is not None else grader, **options)

    def select(self, *, mode: Literal["rl", "sft"] = "rl", **options: Any) -> Selection:
        """Keep the rows that carry training signal (see ``whileai.select.optimize``)."""
        from whileai.select import optimize

        return optimize(self, mode=mode, **options)

    def export(self, path: str | os.PathLike[str] | None = None, **options: Any) -> Any:
        """Write training rows for a trainer (see ``whileai.export.export_dataset``)."""
        from whileai.export import export_dataset

        return export_dataset(self, path, **options)


class SimulationData(RolloutData):
    """What ``simulate`` returns: the rollouts, ungraded unless a grader ran in the loop.

    Attributes:
        lost: Rollouts that did not land (the agent raised, returned garbage, or the endpoint
            kept failing), with ``lost_reason`` and ``error``; kept out of ``df`` so pass-rate
            denominators stay honest, and counted in ``report.rollouts_lost_by``.
    """

    lost: pl.DataFrame | None = None


class ScoredData(RolloutData):
    """What ``grade`` returns: the rollouts with ``reward``, ``judge_status`` and lineage."""

    def passes(self) -> ScoredData:
        """Rows with reward >= 0.5."""
        return self._derive(ScoredData, self.df.filter(pl.col("reward") >= 0.5), self.report)

    def failures(self) -> ScoredData:
        """Rows with reward < 0.5."""
        return self._derive(ScoredData, self.df.filter(pl.col("reward") < 0.5), self.report)

    def unjudged(self) -> ScoredData:
        """Rows the judge left without a reward."""
        return self._derive(ScoredData, self.df.filter(pl.col("reward").is_null()), self.report)


class Selection(RolloutData):
    """What ``select`` returns: the kept rows, with the selection report in ``.report``."""

    def __str__(self) -> str:
        return str(self.report) if self.report is not None else repr(self)
