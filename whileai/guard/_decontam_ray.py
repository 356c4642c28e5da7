"""``decontaminate`` on Ray Data: the eval index broadcast once, rows checked block by block.

The eval side (ids, texts, their n-gram and whole-text hashes) is built once on the driver and
put in Ray's object store (``ray.put``). Each block of training rows goes through the local
kernel (``check_rows``: the task, exact and 8-gram near-copy rules) in a worker, which writes the
block's clean rows as a Parquet part file and hands back a small summary: the rule counts, hits
per field, skipped rules and the block's first offenders. The driver adds the summaries up in
input order (docs/scale.md). A row's verdict depends on the row and the eval index only, so the
counts and the flagged rows are those of the local path on the same rows.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import polars as pl
import pyarrow as pa

from whileai import table
from whileai.guard._decontam import (
    ContaminationReport,
    Decontaminated,
    EvalIndex,
    check_fields,
    check_rows,
    eval_index,
    row_examples,
    rule_counts,
    tally,
)
from whileai.table.raydata import check_output_folder, require_ray, write_parts

__all__ = ["decontaminate_ray"]

_COUNTS = ("n", "n_same_task", "n_exact", "n_near", "n_semantic")


def _check_block(batch: pa.Table, *, index: Any, fields: tuple[str, ...], n: int, overlap: float,
                 examples: int) -> tuple[pa.Table, dict[str, Any]]:
    """One block's clean rows and its summary (runs in a worker)."""
    import ray

    idx: EvalIndex = ray.get(index)
    df = table.frame(batch, allow_empty=True)
    check_fields(df, fields)
    checked = check_rows(df, idx, fields, n=n, overlap=overlap, examples=examples, progress=False)
    summary = {**rule_counts(checked.rule), "by_field": checked.by_field, "skipped": checked.skipped,
               "examples": row_examples(df, checked, fields, examples)}
    return table.to_arrow(df.filter(pl.Series(checked.rule == 0))), summary


def decontaminate_ray(ds: Any, ev: pl.DataFrame, described: list[str], fields: Sequence[str], *, n: int,
                      overlap: float, examples: int, out: Any) -> Decontaminated:
    """``decontaminate`` on a Ray dataset: the clean rows written to ``out`` by the workers, and the report.

    ``ev`` is the eval rows as the local path reads them; the options are checked by the caller.
    Returns ``(path, report)``: the Parquet folder of clean rows and the report the local path
    would give on the same rows (its examples' ``index`` counts rows in the dataset's order).
    """
    ray = require_ray("decontaminate on a Ray dataset")
    out_path = check_output_folder(out, "decontaminate")
    fields_t = tuple(fields)
    index = eval_index(ev, n)
    block = functools.partial(_check_block, index=ray.put(index), fields=fields_t, n=n, overlap=overlap,
                              examples=examples)

    def finish(summaries: list[dict[str, Any]]) -> ContaminationReport:
        counts = {k: sum(int(s[k]) for s in summaries) for k in _COUNTS}
        report = ContaminationReport(n=counts["n"], n_eval_rows=ev.height, eval_sources=described, ngram=n,
                                     overlap=overlap, similarity=None, fields=list(fields_t),
                                     n_eval_texts=len(index.texts))
        if len(index.ids) == 0:  # said whatever the rows (the local path says it for no rows too)
            report.rules_skipped["same_task"] = f"0 of {ev.height} evaluation rows carried a scenario_id or task_id"
        for s in summaries:
            for rule, why in s["skipped"].items():
                report.rules_skipped.setdefault(rule, why)
            for field, hits in s["by_field"].items():
                into = report.by_field.setdefault(field, {"exact": 0, "near": 0, "semantic": 0})
                for k, v in hits.items():
                    into[k] = into.get(k, 0) + int(v)
        found = [{**ex, "index": int(ex["index"]) + s["offset"]} for s in summaries for ex in s["examples"]]
        report.notes.append(
            "the text rules catch exact and lightly edited copies of eval texts, not reworded ones; to also flag "
            "paraphrases, run decontaminate with embedder= on the clean folder read into Polars."
        )
        tally(report, counts, found[:examples])
        return report

    path, report = write_parts(ds, out_path, block, suffix="parquet", finish=finish)
    return Decontaminated(path, report)

