"""``select(mode="rl")`` on Ray Data: per-ask decisions in the workers, the group order on the driver.

RL selection keeps or drops whole asks (a task's rollouts), and every filter before the row
budget reads only that ask's rows: privileged leaks, junk, duplicates within the ask, truncation,
unanimity and the difficulty band on the rate as graded. So the rows are grouped by task key
(a Ray Data shuffle), each ask runs the local selector on its own rows in a worker, and one
summary row per ask comes back. The driver orders the eligible asks with the local kernel
(``_order_groups``: round-robin over fault kinds and pass rates) and cuts at ``target``; the
kept asks' rows are selected again in the workers and written as a Parquet folder. No row
reaches the driver.
"""

from __future__ import annotations

import functools
from typing import Any

import polars as pl
import pyarrow as pa

from whileai import table
from whileai.defaults import PASS_THRESHOLD
from whileai.errors import TrainingSelectionError
from whileai.table.raydata import (
    FolderResult,
    check_output_folder,
    collect_small,
    require_ray,
    translated,
    write_rows,
)

#: Counters each ask's summary carries; the driver adds them up.
_COUNTS = ("n", "leak", "no_output", "garbage", "ungraded", "dup", "dup_sets", "conflicting", "trunc_found",
           "all_pass", "all_fail", "single", "collapsed", "too_easy", "too_hard", "unanimous_rows", "band_rows",
           "n_graded", "c", "stamped", "carried", "eval_sourced_input", "after_gates", "after_trim", "dup_n")


def keyed(batch: pa.Table) -> pa.Table:
    """One batch as the canonical rollout table with its ``task_key`` (runs in a worker)."""
    return table.frame(batch, allow_empty=True).to_arrow()


def _ask_summary(group: pa.Table, *, options: dict[str, Any]) -> pa.Table:
    """One ask's decision: eligible or not, its size, rate, fault kind and drop counts (runs in a worker)."""
    from whileai.selection._common import eval_sourced, junk_flag, junk_split
    from whileai.selection._rl import select_for_rl

    df = table.frame(group, allow_empty=True)
    key = df["task_key"][0]
    row: dict[str, Any] = {c: 0 for c in _COUNTS}
    row.update(task_key=key, n=df.height, eligible=False, size=0, rate=None, kind=None,
               eval_sourced_input=int(df.select(eval_sourced(df).sum()).item()))
    graded = df["reward"].drop_nulls() if "reward" in df.columns else pl.Series([], dtype=pl.Float64)
    row["n_graded"] = graded.len()
    row["c"] = int((graded >= PASS_THRESHOLD).sum())
    try:
        result = select_for_rl(df, **options, target=None, endorsed=None)
        rep: dict[str, Any] = result.report.to_dict()
        dropped: dict[str, int] = rep.get("dropped", {})
        row.update(eligible=True, size=result.df.height, kind=next(iter(rep["fault_kinds"]), None),
                   stamped=rep["calibration"]["n_stamped"], carried=rep["calibration"]["n_carried"])
    except TrainingSelectionError as exc:
        rep = getattr(exc, "report", None) or {}
        dropped = getattr(exc, "counts", None) or {}
        if not rep:  # no graded row at all: every row is junk or ungraded
            no_output, garbage = junk_split(df, df.select(junk_flag(df)).to_series())
            row.update(no_output=no_output, garbage=garbage, ungraded=df.height - no_output - garbage)
            return pl.DataFrame([row]).to_arrow()
    row["rate"] = row["c"] / row["n_graded"] if row["n_graded"] else None
    gates, dup, unan = rep.get("gates", {}), rep.get("duplicates", {}), rep.get("unanimous", {})
    band = rep.get("band_dropped", {})
    row.update(leak=rep.get("privileged_leaks_dropped", 0), no_output=gates.get("no_output", 0),
               garbage=gates.get("garbage", 0), ungraded=gates.get("ungraded", 0), dup=dup.get("n_dropped", 0),
               dup_sets=dup.get("groups_affected", 0), conflicting=dup.get("conflicting_rewards", 0),
               dup_n=dup.get("n", 0), trunc_found=rep.get("truncated_found", 0),
               all_pass=unan.get("all_pass", 0), all_fail=unan.get("all_fail", 0), single=unan.get("single", 0),
               collapsed=rep.get("collapsed_groups_dropped", 0), too_easy=band.get("too_easy", 0),
               too_hard=band.get("too_hard", 0), unanimous_rows=dropped.get("unanimous", 0),
               band_rows=dropped.get("band", 0), after_gates=rep.get("n_after_gates", 0),
               after_trim=rep.get("n_after_trim", 0))
    return pl.DataFrame([row]).to_arrow()


def _ask_rows(group: pa.Table, *, options: dict[str, Any]) -> pa.Table:
    """A kept ask's selected rows, as the local selector gives them (runs in a worker)."""
    from whileai.selection._rl import select_for_rl

    return table.to_arrow(select_for_rl(table.frame(group), **options, target=None, endorsed=None).df)


def _keep_tasks(batch: pa.Table, *, chosen: Any) -> pa.Table:
    import pyarrow.compute as pc

    keys = ray_get(chosen)
    return batch.filter(pc.is_in(batch["task_key"], value_set=keys))


def ray_get(ref: Any) -> Any:
    """The object behind a Ray object reference (a broadcast value)."""
    import ray

    return ray.get(ref)


def select_rl(ds: Any, *, out: Any, target: int | None, band: tuple[float, float], enforce_band: bool,
              truncated: str, order: str) -> FolderResult:
    """``select(mode="rl")`` on a Ray dataset: the report, and the kept rows written to ``out``."""
    from whileai.charts import histogram_counts
    from whileai.defaults import BAND_MIN_ROLLOUTS, CI_LEVEL
    from whileai.selection._rl import (
        RLSelectionReport,
        _empty_message,
        _groups_within_target,
        _order_groups,
    )

    ray = require_ray('select(mode="rl") on a Ray dataset')
    out_path = check_output_folder(out, 'select(mode="rl")')
    options = {"band": band, "enforce_band": enforce_band, "truncated": truncated, "order": order}
    with translated():
        rows = ds.map_batches(keyed, batch_format="pyarrow")
        summaries = rows.groupby("task_key").map_groups(functools.partial(_ask_summary, options=options),
                                                        batch_format="pyarrow")
    asks = collect_small(summaries).sort("task_key")
    lo, hi = band
    if asks.height == 0 or int(asks["n_graded"].sum()) == 0:
        raise TrainingSelectionError(
            f'select(mode="rl") needs graded rows, but none of the {int(asks["n"].sum()) if asks.height else 0} rows '
            "carries a reward. Grade first: scored = data.grade(judge=...) (or whileai.grade.run_judge), then select.")
    total = {c: int(asks[c].sum()) for c in _COUNTS}
    graded = asks.filter(pl.col("n_graded") > 0)
    k_in = float(graded["n_graded"].median())  # type: ignore[arg-type]
    unanimous = total["all_pass"] + total["all_fail"] + total["single"]
    report: dict[str, Any] = {
        "n": total["n"], "n_tasks": asks.height, "truncated_policy": truncated, "band": (lo, hi),
        "enforce_band": bool(enforce_band), "target": target, "order": order, "band_rollouts": k_in,
        "privileged_leaks_dropped": total["leak"],
        "gates": {"no_output": total["no_output"], "garbage": total["garbage"], "ungraded": total["ungraded"]},
        "junk_dropped": total["no_output"] + total["garbage"] + total["ungraded"],
        "n_after_gates": total["after_gates"],
        "duplicates": {"n": total["dup_n"], "n_kept": total["dup_n"] - total["dup"], "n_dropped": total["dup"],
                       "groups_affected": total["dup_sets"],
                       "duplicate_rate": round(total["dup"] / total["dup_n"], 4) if total["dup_n"] else 0.0,
                       "conflicting_rewards": total["conflicting"]},
        "truncated_found": total["trunc_found"],
        "truncated_dropped": total["trunc_found"] if truncated == "drop" else 0,
        "truncated_kept": total["trunc_found"] if truncated == "keep" else 0,
        "truncated_penalized": total["trunc_found"] if truncated == "penalize" else 0,
        "n_after_trim": total["after_trim"],
        "unanimous_groups_dropped": unanimous,
        "unanimous": {"all_pass": total["all_pass"], "all_fail": total["all_fail"], "single": total["single"]},
        "collapsed_groups_dropped": total["collapsed"],
        "band_dropped": ({"too_easy": total["too_easy"], "too_hard": total["too_hard"]} if enforce_band
                         else {"too_easy": 0, "too_hard": 0}),
        "eval_sourced_input": total["eval_sourced_input"],
        "difficulty": histogram_counts((graded["c"] / graded["n_graded"]).to_numpy()),
    }
    if enforce_band:
        report["band_groups_dropped"] = total["too_easy"] + total["too_hard"]
    eligible = asks.filter(pl.col("eligible"))
    report["groups_eligible"] = eligible.height
    dropped = {"privileged_leak": total["leak"], "junk": report["junk_dropped"], "duplicate": total["dup"],
               "truncated": report["truncated_dropped"], "unanimous": total["unanimous_rows"],
               "band": total["band_rows"] if enforce_band else 0}
    if eligible.height == 0:
        raise TrainingSelectionError(_empty_message(report, dropped, lo, hi), report=report, counts=dropped)

    # the group order: the local kernel on one row per ask (first row = the ask's rank by task key)
    groups = eligible.select(pl.col("task_key").alias("_tid"), pl.col("size").alias("_size"), pl.col("rate").alias("_rate"),
                             pl.col("kind").fill_null("no fault").alias("_kind"),
                             pl.int_range(pl.len(), dtype=pl.Int64).alias("_first"))
    ordered = _order_groups(groups, order)
    sizes = ordered["_size"].to_numpy()
    warnings: list[str] = []
    n_keep = _groups_within_target(sizes, target, warnings)
    chosen = ordered.head(n_keep)
    dropped["target"] = int(sizes[n_keep:].sum())
    report["dropped"] = dropped
    report["groups_selected"] = chosen.height
    report["n_selected"] = int(sizes[:n_keep].sum())
    report["difficulty_kept"] = histogram_counts(chosen["_rate"].to_numpy())
    kinds = chosen.group_by("_kind", maintain_order=True).len()
    report["fault_kinds"] = dict(zip(kinds["_kind"].to_list(), (int(v) for v in kinds["len"].to_list())))
    kept_keys = set(chosen["_tid"].to_list())
    kept = asks.filter(pl.col("task_key").is_in(list(kept_keys)))
    report["calibration"] = {"n_tasks": chosen.height, "n_stamped": int(kept["stamped"].sum()),
                             "n_carried": int(kept["carried"].sum()), "k_median": k_in, "level": CI_LEVEL}
    hygiene: list[str] = []
    if total["dup"]:
        hygiene.append(f"{total['dup']} duplicate rollout(s) within {total['dup_sets']} ask(s) dropped")
    if total["conflicting"]:
        hygiene.append(f"{total['conflicting']} set(s) of identical rollouts got different rewards; "
                       "the judge is not deterministic on the same trajectory; check it before training")
    if k_in < BAND_MIN_ROLLOUTS:
        hygiene.append(f"difficulty was measured from {k_in:g} rollouts per task (median), fewer than "
                       f"{BAND_MIN_ROLLOUTS}; simulate with repeats={BAND_MIN_ROLLOUTS} for a firmer band.")
    hygiene.append("the Ray engine leaves out the selection's correlations, group signal and hack scan (they read "
                   f"the kept rows); run them on the folder {out_path!r}.")
    report["hygiene_warnings"] = hygiene

    keys_ref = ray.put(pa.array(sorted(kept_keys), pa.string()))
    with translated():
        kept_rows = (rows.map_batches(functools.partial(_keep_tasks, chosen=keys_ref), batch_format="pyarrow")
                     .groupby("task_key").map_groups(functools.partial(_ask_rows, options=options), batch_format="pyarrow"))
    path = write_rows(kept_rows, out_path)
    return FolderResult(path, RLSelectionReport(**report, warnings=[*hygiene, *warnings]), {"mode": "rl", "engine": "ray"})


def select(ds: Any, /, *, mode: str = "rl", out: Any = None, **options: Any) -> FolderResult:
    """``whileai.select`` on a Ray dataset: the report, and the kept rows as a Parquet folder at ``out``.

    ``mode="rl"`` takes the options of ``select_for_rl`` except ``endorsed`` (the hack scan reads
    the kept rows: run ``wai.hack_scan`` on the folder). ``mode="sft"`` takes every option of
    ``select_for_sft``; its tie-breaks are a seeded hash of each row's ``rollout_id``, so both
    engines keep the same rows.
    """
    import inspect

    from whileai._checks import check_choice
    from whileai.defaults import DIFFICULTY_BAND, SELECT_TARGET
    from whileai.errors import ArgumentError
    from whileai.selection._common import check_band
    from whileai.selection._rl import (
        RL_ORDERS,
        TRUNCATED_POLICIES,
        check_positive_int,
        select_for_rl,
    )

    if mode == "sft":
        return _select_sft(ds, out=out, **options)
    if mode != "rl":
        raise ArgumentError(f"mode must be 'rl' or 'sft', got {mode!r}. Pass mode='rl' or mode='sft'.", argument="mode")
    allowed = {n for n, p in inspect.signature(select_for_rl).parameters.items() if p.kind is p.KEYWORD_ONLY} - {"endorsed"}
    stray = sorted(set(options) - allowed)
    if stray:
        raise ArgumentError(f"options must be those select(mode='rl') takes on a Ray dataset, got {', '.join(stray)}. "
                            f"Pass only {', '.join(sorted(allowed | {'out'}))} (run wai.hack_scan on the output folder).")
    truncated = check_choice("truncated", options.get("truncated", "drop"), TRUNCATED_POLICIES)
    order = check_choice("order", options.get("order", "spread"), RL_ORDERS)
    band = check_band(options.get("band", DIFFICULTY_BAND))
    target = check_positive_int("target", options.get("target", SELECT_TARGET), allow_none=True)
    return select_rl(ds, out=out, target=target, band=band, enforce_band=bool(options.get("enforce_band", True)),
                     truncated=truncated, order=order)


def _select_sft(ds: Any, *, out: Any, **options: Any) -> FolderResult:
    """Check ``select(mode="sft")``'s options as the local selector does, then run it on Ray."""
    import inspect
    import math

    from whileai._checks import check_choice
    from whileai.defaults import DEFAULT_SEED, SELECT_TARGET, SFT_MIN_REWARD
    from whileai.errors import ArgumentError
    from whileai.selection._rl import check_positive_int
    from whileai.selection._sft import SFT_SELECTIONS, select_for_sft, tie_salt
    from whileai.selection._sft_ray import select_sft

    allowed = {n for n, p in inspect.signature(select_for_sft).parameters.items() if p.kind is p.KEYWORD_ONLY}
    stray = sorted(set(options) - allowed)
    if stray:
        raise ArgumentError(f"options must be those select(mode='sft') takes, got {', '.join(stray)}. "
                            f"Pass only {', '.join(sorted(allowed | {'out'}))}.", argument=stray[0])
    select = check_choice("select", options.get("select", "top_per_prompt"), SFT_SELECTIONS)
    min_reward = options.get("min_reward", SFT_MIN_REWARD)
    if isinstance(min_reward, bool) or not isinstance(min_reward, (int, float)) or math.isnan(float(min_reward)):
        raise ArgumentError(f"min_reward must be a number, got {min_reward!r}. Pass for example min_reward=1.0.",
                            argument="min_reward")
    if options.get("target", SELECT_TARGET) is None:
        raise ArgumentError('target must be a positive integer with mode="sft", got None. Pass for example target=1000.',
                            argument="target")
    target = check_positive_int("target", options.get("target", SELECT_TARGET))
    k = check_positive_int("k", options.get("k"), allow_none=True)
    assert target is not None
    return select_sft(ds, out=out, select=select, min_reward=float(min_reward), target=target, k=k,
                      salt=tie_salt(options.get("seed", DEFAULT_SEED)))
