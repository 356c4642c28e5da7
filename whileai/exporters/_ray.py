"""``export`` on Ray Data: the workers encode and write the training rows, the driver merges counts.

Per-task group stats (k, n0/n1, reward mean and std) are computed per task in a Ray Data shuffle
and broadcast once; each block then goes through the local encoder (``prepare_frame`` and
``build_chunk``, the functions every local chunk goes through) in a worker, which writes the
block's JSONL lines as a part file and hands back its counts, leak check and broken-call rows.
The driver adds the counts up in input order and builds the local report (``_Run.finish``), so
a leak or a broken tool call refuses the export before the folder lands (docs/scale.md).
"""

from __future__ import annotations

import functools
from dataclasses import asdict
from typing import Any

import polars as pl
import pyarrow as pa

from whileai import table
from whileai.defaults import PASS_THRESHOLD
from whileai.errors import TrainingSelectionError
from whileai.exporters._report import ExportReport, Rewards
from whileai.exporters._rows import (
    Counts,
    LeakCounts,
    Options,
    build_chunk,
    leak_counts,
    line_bytes,
    prepare_frame,
)
from whileai.exporters._tools import resolve_tools
from whileai.table.raydata import (
    check_output_folder,
    collect_small,
    require_ray,
    translated,
    write_parts,
)

__all__ = ["export_ray"]


def _task_rows(batch: pa.Table) -> pa.Table:
    return table.frame(batch, columns=["reward"], allow_empty=True).select("task_key", "reward").to_arrow()


def _task_group(group: pa.Table) -> pa.Table:
    """One task's group stats and pass counts (runs in a worker)."""
    from whileai.exporters._rows import group_stats
    from whileai.measure import task_stats

    df = pl.from_arrow(group)
    assert isinstance(df, pl.DataFrame)
    df = df.with_columns(pl.col("reward").cast(pl.Float64))
    counts = task_stats(df, threshold=PASS_THRESHOLD).select("task_key", "c", "n_graded", "n")
    return group_stats(df).join(counts, on="task_key").to_arrow()


def _encode_block(batch: pa.Table, *, opts: Options, stats: Any, system_prompt: str | None, tools_json: str | None,
                  columns: tuple[str, ...]) -> tuple[bytes, dict[str, Any]]:
    """One block's JSONL lines and its counts (runs in a worker)."""
    import ray

    part = table.frame(batch, columns=columns, allow_empty=True)
    if part.height and "messages" not in part.columns:
        raise TrainingSelectionError(
            "rows must carry a conversation (messages, or prompt and final_text) to become training rows, "
            f"got columns {', '.join(part.columns[:12])}. Pass rollouts with messages.")
    counts = Counts()
    summary: dict[str, Any] = {"leaks": asdict(leak_counts(part))}
    payload = b""
    if part.height:
        group = ray.get(stats) if stats is not None else None
        prepared = prepare_frame(part, system_prompt=system_prompt, tools_json=tools_json,
                                 with_groups=group is not None, stats=group, row_offset=0)
        out = build_chunk(prepared, opts, counts, row_offset=0)
        if out.height:
            payload = bytes(line_bytes(out))
    summary["counts"] = asdict(counts)
    return payload, summary


def export_ray(ds: Any, output: Any, opts: Options, /, *, run_type: Any, columns: tuple[str, ...], validate: bool,
               system_prompt: str | None, tools: Any) -> ExportReport:
    """``export`` on a Ray dataset: JSONL part files in the folder ``output``, and the local report.

    ``export_dataset`` checks the options (``opts``) and hands in its run class (``run_type``,
    whose ``finish`` builds the report from the counts) and the columns it reads. Row indices
    in the report (leaking rows, broken tool calls) count rows in the dataset's order.
    """
    ray = require_ray("export on a Ray dataset")
    out_path = check_output_folder(output, "export")
    tools_json = resolve_tools(tools)
    with translated():
        per_task = (ds.map_batches(_task_rows, batch_format="pyarrow").groupby("task_key")
                    .map_groups(_task_group, batch_format="pyarrow"))
    tasks = collect_small(per_task)
    n = int(tasks["n"].sum()) if tasks.height else 0
    c = int(tasks["c"].sum()) if tasks.height else 0
    g = int(tasks["n_graded"].sum()) if tasks.height else 0
    stats = None if opts.unroll or not tasks.height else ray.put(
        tasks.select("task_key", "group_id", "k", "n0", "n1", "reward_mean", "reward_std"))
    block = functools.partial(_encode_block, opts=opts, stats=stats, system_prompt=system_prompt, tools_json=tools_json,
                              columns=columns)

    def finish(summaries: list[dict[str, Any]]) -> ExportReport:
        # the local run, filled from the blocks' counts (no rows), builds the local report
        run = run_type.from_counts(opts, validate=validate, n=n, groups=tasks.height,
                                   rewards=Rewards(n_pass=c, n_fail=g - c, n_ungraded=n - g))
        for s in summaries:
            part = Counts(**{**s["counts"], "invalid_rows": [r + s["offset"] for r in s["counts"]["invalid_rows"]]})
            run.add(part, LeakCounts(**s["leaks"]), offset=s["offset"])
        return run.finish(None)

    path, report = write_parts(ds, out_path, block, suffix="jsonl", finish=finish)
    report.path = path
    return report
