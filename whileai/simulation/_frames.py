"""Landed rollouts as rows of the rollout table, and the counts the report reads off them.

:func:`_finish_frame` adds the run's columns (system prompt, tools, policy and model version, the
``lineage`` struct) to the flat rows :class:`RowBuffer` builds and puts the columns in their
order; :func:`_empty_frame` is the frame of a run where nothing landed. :func:`_row_counts` sums
over rows (faults met, seeded rows, truncated), so the Ray engine computes it per part and
:func:`merge_counts` adds the parts up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import polars as pl

from whileai.simulation._util import short_hash
from whileai.table.schema import MESSAGE

_ORDER = ("scenario_id", "rollout_index", "rollout_id", "lost_reason", "error", "prompt", "system_prompt", "messages", "final_text", "tools",
          "scenario_dimensions", "world_state", "stance", "ask_family", "tier", "fault_kind", "faults", "seeded",
          "seeded_kinds", "truncated", "finish_reason", "policy_version", "model_version", "privileged", "lineage")


def _empty_frame(*, lost: bool = False) -> pl.DataFrame:
    extra = {"lost_reason": pl.String, "error": pl.String} if lost else {}
    return pl.DataFrame(schema={**extra,
        "scenario_id": pl.String, "rollout_index": pl.Int64, "rollout_id": pl.String, "prompt": pl.String,
        "messages": pl.List(MESSAGE), "final_text": pl.String, "scenario_dimensions": pl.String,
        "world_state": pl.String, "stance": pl.String, "ask_family": pl.String, "tier": pl.String,
        "fault_kind": pl.String, "faults": pl.String, "seeded": pl.Boolean, "seeded_kinds": pl.List(pl.String),
        "truncated": pl.Boolean, "finish_reason": pl.String, "privileged": pl.String, "_eval_run": pl.Int64,
    })


def _finish_frame(df: pl.DataFrame, *, policy: str, tools_json: str, model_version: str, run_id: str, seed: int,
                  writer: str, replayed: bool, parent_run: str | None, generation: dict[str, Any],
                  user_model: str | None) -> pl.DataFrame:
    sha = short_hash(policy)
    df = df.with_columns(
        pl.lit(policy, pl.String).alias("system_prompt"),
        pl.lit(tools_json, pl.String).alias("tools"),
        pl.lit(f"{model_version}@{sha}", pl.String).alias("policy_version"),
        pl.lit(model_version, pl.String).alias("model_version"),
        pl.struct(
            pl.lit("simulate", pl.String).alias("source"),
            pl.lit(run_id, pl.String).alias("run_id"),
            pl.col("_eval_run").alias("eval_run"),
            pl.lit(seed, pl.Int64).alias("seed"),
            pl.lit(writer, pl.String).alias("writer"),
            pl.lit(sha, pl.String).alias("system_prompt_sha"),
            pl.lit(replayed, pl.Boolean).alias("replayed"),
            pl.lit(parent_run, pl.String).alias("parent_run"),
            pl.lit(generation.get("provider"), pl.String).alias("provider"),
            pl.lit(generation.get("base_url"), pl.String).alias("base_url"),
            pl.lit(generation.get("temperature"), pl.Float64).alias("temperature"),
            pl.lit(generation.get("top_p"), pl.Float64).alias("top_p"),
            pl.lit(generation.get("max_tokens"), pl.Int64).alias("max_tokens"),
            pl.lit(user_model, pl.String).alias("user_model"),
        ).alias("lineage"),
    ).drop("_eval_run")
    rest = [c for c in df.columns if c not in _ORDER]
    return df.select([c for c in _ORDER if c in df.columns] + rest)


def _row_counts(df: pl.DataFrame) -> dict[str, Any]:
    """What the report reads off the rows: their count, faults met by kind, seeded rows by kind, truncated.

    Sums over rows, so the Ray engine computes them on each worker's part and adds them up
    (:func:`merge_counts`).
    """
    out: dict[str, Any] = {"rows": df.height, "faults_met": 0, "fault_kinds": {}, "seeded_rows": 0, "seeded_by": {},
                           "truncated": 0}
    if df.height:
        fk = df["fault_kind"].drop_nulls().value_counts()
        out["fault_kinds"] = {str(a): int(b) for a, b in fk.iter_rows()}
        out["faults_met"] = int(df["fault_kind"].is_not_null().sum())
        out["seeded_rows"] = int(df["seeded"].sum())
        sk = df["seeded_kinds"].explode().drop_nulls().value_counts()
        out["seeded_by"] = {str(a): int(b) for a, b in sk.iter_rows()}
        out["truncated"] = int(df["truncated"].sum())
        if "injection_goal" in df.columns:
            ig = df["injection_goal"].drop_nulls().value_counts()
            out["injection_goals"] = {str(a): int(b) for a, b in ig.iter_rows()}
    return out


def merge_counts(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The :func:`_row_counts` of several parts' rows, added up (what one table of them all would give)."""
    out: dict[str, Any] = {"rows": 0, "faults_met": 0, "fault_kinds": Counter(), "seeded_rows": 0, "seeded_by": Counter(),
                           "truncated": 0}
    for part in parts:
        for key in ("rows", "faults_met", "seeded_rows", "truncated"):
            out[key] += int(part[key])
        out["fault_kinds"].update(part["fault_kinds"])
        out["seeded_by"].update(part["seeded_by"])
        out.setdefault("injection_goals", Counter()).update(part.get("injection_goals") or {})
    merged = {**out, "fault_kinds": dict(out["fault_kinds"]), "seeded_by": dict(out["seeded_by"])}
    if out.get("injection_goals"):
        merged["injection_goals"] = dict(out["injection_goals"])
    else:
        merged.pop("injection_goals", None)
    return merged


def _by_count(counts: dict[str, int]) -> dict[str, int]:
    """Most frequent first, ties by name (the same order however the counts were added up)."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
