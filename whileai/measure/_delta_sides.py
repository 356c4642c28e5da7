"""Reading the two arms of ``delta_report``: each arm's rows down to a :class:`DeltaSide`.

A side is what the comparison reads of an arm, every field a per-task mean or a sum, min or max
over rows, so any engine that sees the rows in parts merges it exactly (``docs/scale.md``).
:func:`read_sides` picks the engine: a Ray dataset's merged sums, a Parquet arm streamed, or the
rows read whole (``by=`` and ``balance_rollouts=True`` need them, and balancing trims every paired
task to the rollouts both arms have, drawn by seed). Either way both arms settle the metrics they
share (pass_at_1 first, then markers), and a target, guard or marker neither measures is refused.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import polars as pl

from whileai.errors import ArgumentError
from whileai.measure._delta_args import DeltaOptions
from whileai.measure._metrics import PASS_AT_1, marker_names, metric_label, task_values
from whileai.measure._rows import clean_rewards, read_rows
from whileai.measure._runs import run_config, run_labels
from whileai.measure._stream import StreamSide, stream_side
from whileai.table import IntoRows, is_ray_dataset


class DeltaSide(NamedTuple):
    """What ``delta_report`` reads of one arm: per-task values and a few row facts.

    Every field is a per-task mean or a sum, min or max over rows, so an engine that sees the rows
    in parts merges them exactly (``docs/scale.md``).
    """

    values: pl.DataFrame
    """``task_values`` over the metrics: task_key, n_graded, one column a metric."""
    run_values: pl.DataFrame | None
    """``task_values`` keyed by (``_run``, task_key) when the rows carry an eval-run label, else None."""
    n_rows: int
    """Rows in the arm."""
    n_graded: int
    """Rows with a reward."""
    marker_range: dict[str, tuple[Any, Any]]
    """Each marker's (min, max) over the arm's rows."""
    config: dict[str, Any]
    """``run_config`` of the arm (empty for no rows)."""


def delta_side(df: pl.DataFrame, metrics: list[str]) -> DeltaSide:
    """One arm's :class:`DeltaSide` from its rows (the local engine)."""
    if df.height == 0:
        return DeltaSide(_empty_values(metrics), None, 0, 0, {}, {})
    markers = [m for m in metrics if m != PASS_AT_1]
    ranges: dict[str, tuple[Any, Any]] = {}
    if markers:
        row = df.select([e for m in markers for e in (pl.col("markers").struct.field(m).min().alias(f"{m}:lo"),
                                                      pl.col("markers").struct.field(m).max().alias(f"{m}:hi"))]).row(0, named=True)
        ranges = {m: (row[f"{m}:lo"], row[f"{m}:hi"]) for m in markers}
    expr = run_labels(df)[0]
    run_values = None
    if expr is not None:
        run_values = task_values(df.with_columns(expr.alias("_run")), metrics, keys=("_run", "task_key"), maintain_order=False)
    return DeltaSide(task_values(df, metrics, maintain_order=False), run_values, df.height, int(df["reward"].count()),
                     ranges, run_config(df))


class DeltaSides(NamedTuple):
    """Both arms read: their sides, the metrics both measure, the target's name, and what reading did."""

    a: DeltaSide
    """The before arm."""
    b: DeltaSide
    """The after arm."""
    metrics: list[str]
    """pass_at_1, then every compared marker."""
    target_name: str
    """The target as a metric name."""
    balanced: dict[str, int]
    """Rows each arm gave up under ``balance_rollouts=True`` (empty when off)."""
    frames: tuple[pl.DataFrame, pl.DataFrame] | None = None
    """Both arms' rows when they were read whole (``by=`` groups need them), else None."""


def read_sides(before: IntoRows, after: IntoRows, opts: DeltaOptions, warnings: list[str]) -> DeltaSides:
    """Both arms' :class:`DeltaSide`: Ray's merged sums, a Parquet arm streamed, or the rows read whole."""
    if is_ray_dataset(before) or is_ray_dataset(after):
        return _ray_sides(before, after, opts, warnings)
    if opts.by is None and not opts.balance_rollouts:
        streamed = [stream_side(rows) for rows in (before, after)]
        if any(side is not None for side in streamed):
            return _streamed_sides((before, after), streamed, opts.wanted_markers, opts.target, opts.guards, warnings)
    return _frame_sides((before, after), by=opts.by, balance_rollouts=opts.balance_rollouts,
                        wanted_markers=opts.wanted_markers, target=opts.target, guards=opts.guards, rng=opts.rng,
                        warnings=warnings)


def _frame_sides(arms: tuple[IntoRows, IntoRows], *, by: Any, balance_rollouts: bool,
                 wanted_markers: list[str] | None, target: str | None, guards: list[str], rng: np.random.Generator,
                 warnings: list[str]) -> DeltaSides:
    """Both arms read whole (``by=`` or balancing needs the rows): their sides, frames, metrics, target, trims."""
    extra = [by] if isinstance(by, str) else []
    a_df, b_df = (clean_rewards(read_rows(rows, extra=extra, all_columns=callable(by)), warnings) for rows in arms)
    shared_markers = sorted(set(marker_names(a_df)) & set(marker_names(b_df)))
    metrics, target_name = _metrics_of(shared_markers, wanted_markers, target, guards)
    configs = [run_config(df) if df.height else {} for df in (a_df, b_df)]
    balanced: dict[str, int] = {}
    if balance_rollouts and a_df.height and b_df.height:
        a_df, b_df, balanced = _balance(a_df, b_df, rng)
    return DeltaSides(delta_side(a_df, metrics)._replace(config=configs[0]),
                      delta_side(b_df, metrics)._replace(config=configs[1]), metrics, target_name, balanced,
                      (a_df, b_df))


def _metrics_of(shared_markers: list[str], wanted_markers: list[str] | None, target: str | None,
                guards: list[str]) -> tuple[list[str], str]:
    """The metrics both arms measure (pass_at_1 first) and the target's name; refuses unknown names."""
    if wanted_markers is not None:
        missing = [m for m in wanted_markers if m not in shared_markers]
        if missing:
            raise ArgumentError(f"markers must be carried by both arms, got {missing!r}. "
                                f"Both arms carry: {', '.join(shared_markers) or 'no markers'}.")
        shared_markers = [m for m in shared_markers if m in wanted_markers]
    metrics = [PASS_AT_1, *shared_markers]
    target_name = metric_label(target) if target is not None else PASS_AT_1
    for name, what in [(target_name, "target"), *((g, "must_not_regress") for g in guards)]:
        if name not in metrics:
            raise ArgumentError(f"{what} must name a metric both arms measure, got {name!r}. "
                                f"Measured on both: {', '.join(metrics)}.")
    return metrics, target_name



def _streamed_sides(arms: tuple[Any, Any], streamed: list[StreamSide | None], wanted_markers: list[str] | None,
                    target: str | None, guards: list[str],
                    warnings: list[str]) -> DeltaSides:
    """Both arms' :class:`DeltaSide`, a Parquet arm read by the streaming engine and any other one eagerly.

    What ``delta_side`` and ``run_config`` read off the rows, from the streamed per-task values
    and reductions; the warnings in the order the eager reads give them.
    """
    frames: list[pl.DataFrame | None] = []
    names: list[list[str]] = []
    for rows, side in zip(arms, streamed, strict=True):
        if side is not None:
            warnings.extend(side.warnings)
            frames.append(None)
            names.append(side.markers)
        else:
            df = clean_rewards(read_rows(rows), warnings)
            frames.append(df)
            names.append(marker_names(df))
    metrics, target_name = _metrics_of(sorted(set(names[0]) & set(names[1])), wanted_markers, target, guards)
    sides: list[DeltaSide] = []
    for frame, side in zip(frames, streamed, strict=True):
        if side is None:
            assert frame is not None
            sides.append(delta_side(frame, metrics)._replace(config=run_config(frame) if frame.height else {}))
            continue
        markers = [m for m in metrics if m != PASS_AT_1]
        sides.append(DeltaSide(side.values.select("task_key", "n_graded", *metrics), side.run_values(metrics),
                               side.n_rows, side.n_graded, {m: side.marker_range[m] for m in markers}, side.config()))
    return DeltaSides(sides[0], sides[1], metrics, target_name, {})


def _ray_sides(before: Any, after: Any, opts: DeltaOptions, warnings: list[str]) -> DeltaSides:
    """Both arms with one or both a ``ray.data.Dataset``: each Ray arm's merged sums, any other one read eagerly."""
    if opts.by is not None or opts.balance_rollouts:
        raise ArgumentError(f"by= and balance_rollouts=True must be left off when an arm is a Ray dataset, got "
                            f"by={opts.by!r}, balance_rollouts={opts.balance_rollouts!r}. Compare without them, or "
                            "read the arms into Polars first (docs/scale.md).")
    arms: list[tuple[pl.DataFrame | None, pl.DataFrame | None, list[str]]] = []
    for rows in (before, after):
        if is_ray_dataset(rows):
            cells, markers, found = _delta_cells_ray(rows)
            warnings.extend(found)
            arms.append((None, cells, markers))
        else:
            df = clean_rewards(read_rows(rows), warnings)
            arms.append((df, None, marker_names(df)))
    shared = sorted(set(arms[0][2]) & set(arms[1][2]))
    metrics, target_name = _metrics_of(shared, opts.wanted_markers, opts.target, opts.guards)
    sides = []
    for local, merged, _ in arms:
        if local is not None:
            sides.append(delta_side(local, metrics)._replace(config=run_config(local) if local.height else {}))
        elif merged is not None:
            sides.append(_side_from_cells_ray(merged, metrics))
    return DeltaSides(sides[0], sides[1], metrics, target_name, {})


def _empty_values(metrics: list[str]) -> pl.DataFrame:
    return pl.DataFrame(schema={"task_key": pl.String, "n_graded": pl.Int64, **{m: pl.Float64 for m in metrics}})


def _balance(a: pl.DataFrame, b: pl.DataFrame, rng: np.random.Generator) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, int]]:
    """Trim every paired task to the rollouts both sides have, the kept rows drawn by seed."""
    na = a.group_by("task_key").agg(pl.len().alias("_na"))
    nb = b.group_by("task_key").agg(pl.len().alias("_nb"))
    both = na.join(nb, on="task_key").select("task_key", pl.min_horizontal("_na", "_nb").alias("_keep"))
    out = []
    for df in (a, b):
        ranked = (df.with_columns(pl.Series("_r", rng.random(df.height)))
                  .with_columns(pl.col("_r").rank("ordinal").over("task_key").alias("_rank"))
                  .join(both, on="task_key", how="left", maintain_order="left"))
        out.append(ranked.filter(pl.col("_keep").is_null() | (pl.col("_rank") <= pl.col("_keep"))).drop("_r", "_rank", "_keep"))
    return out[0], out[1], {"before": a.height - out[0].height, "after": b.height - out[1].height}


def _delta_cells_ray(ds: Any) -> tuple[pl.DataFrame, list[str], list[str]]:
    """One ``delta_report`` arm: merged cells keyed by eval run, marker names, warnings."""
    from whileai.measure._ray import cells, nan_warning

    c, markers = cells(ds, runs=True)
    warnings: list[str] = []
    nan_warning(c, warnings)
    return c, markers, warnings


def _side_from_cells_ray(c: pl.DataFrame, metrics: list[str]) -> Any:
    """A ``DeltaSide`` from merged cells: what ``delta_side`` reads off the rows, from sums."""
    from whileai.measure._ray import SEP, per_task, ray_config, values_of

    if c.height == 0:
        return DeltaSide(_empty_values(metrics), None, 0, 0, {}, {})
    markers = [m for m in metrics if m != PASS_AT_1]
    t = per_task(c, markers)
    run_values = None
    if c["_run"].null_count() < c.height:
        run_values = values_of(per_task(c, markers, ("_run", "task_key")), metrics, ("_run", "task_key"))
    ranges: dict[str, tuple[Any, Any]] = {}
    if markers:
        row = t.select([e for m in markers for e in (pl.col(f"{m}{SEP}lo").min(), pl.col(f"{m}{SEP}hi").max())]).row(0)
        ranges = {m: (row[2 * i], row[2 * i + 1]) for i, m in enumerate(markers)}
    return DeltaSide(values_of(t, metrics), run_values, int(c["n"].sum()), int(c["n_graded"].sum()), ranges,
                     ray_config(c))
