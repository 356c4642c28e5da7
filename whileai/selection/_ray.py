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
from whileai.defaults import CI_LEVEL, PASS_THRESHOLD
from whileai.errors import TrainingSelectionError
from whileai.selection._rows import eval_sourced, junk_flag, junk_split, refuse_ungraded
from whileai.table.raydata import (
    FolderResult,
    check_output_folder,
    collect_small,
    require_ray,
    translated,
    write_rows,
)

#: What each ask's summary carries besides its tally (``RLTally``): the driver sums the counts.
_EXTRA_COUNTS = ("n_graded", "c", "stamped", "carried", "leak_n_checked", "leak_dropped")


def keyed(batch: pa.Table) -> pa.Table:
    """One batch as the canonical rollout table with its ``task_key`` (runs in a worker)."""
    return table.frame(batch, allow_empty=True).to_arrow()


def _ask_summary(group: pa.Table, *, options: dict[str, Any]) -> pa.Table:
    """One ask's tally (the local selector's, on its rows), and whether it is eligible, its size, rate and fault kind.

    Runs in a worker. The tally is read back from the local report (``RLTally.of``), so the
    driver's sum is what the local path counts over every ask.
    """
    from whileai.selection._rl import RLTally, select_for_rl

    df = table.frame(group, allow_empty=True)
    graded = df["reward"].drop_nulls() if "reward" in df.columns else pl.Series([], dtype=pl.Float64)
    row: dict[str, Any] = dict.fromkeys(_EXTRA_COUNTS, 0)
    row.update(task_key=df["task_key"][0], eligible=False, size=0, rate=None, kind=None, leak_checked=False,
               n_graded=graded.len(), c=int((graded >= PASS_THRESHOLD).sum()))
    try:
        result = select_for_rl(df, **options, target=None, endorsed=None)
        report = result.report
        row.update(eligible=True, size=result.df.height, kind=next(iter(report.fault_kinds), None),
                   stamped=report.calibration.n_stamped, carried=report.calibration.n_carried)
    except TrainingSelectionError as exc:
        report = getattr(exc, "report", None)
        if report is None:  # no graded row at all: every row is junk or ungraded
            no_output, garbage = junk_split(df, df.select(junk_flag(df)).to_series())
            tally = RLTally(n_rows=df.height, no_output=no_output, garbage=garbage,
                            ungraded=df.height - no_output - garbage,
                            eval_sourced_input=int(df.select(eval_sourced(df).sum()).item()))
            return pl.DataFrame([{**row, **tally.as_dict()}]).to_arrow()
    row["rate"] = row["c"] / row["n_graded"] if row["n_graded"] else None
    row.update(leak_checked=report.privileged_leaks.checked, leak_n_checked=report.privileged_leaks.n_checked,
               leak_dropped=report.privileged_leaks.n_dropped)
    return pl.DataFrame([{**row, **RLTally.of(report).as_dict()}]).to_arrow()


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
    """``select(mode="rl")`` on a Ray dataset: the report, and the kept rows written to ``out``.

    The asks' tallies are summed and the report is ``rl_report``'s, as on the local path; the
    group order and the cut at ``target`` are the local kernels on one row per ask.
    """
    from whileai.selection._rl import (
        CalibrationStamps,
        RLTally,
        band_resolution_notes,
        duplicate_notes,
        groups_within_target,
        keep_groups,
        order_groups,
        refuse_no_group,
        rl_report,
    )
    from whileai.selection._scans import LeakCheck

    ray = require_ray('select(mode="rl") on a Ray dataset')
    out_path = check_output_folder(out, 'select(mode="rl")')
    options = {"band": band, "enforce_band": enforce_band, "truncated": truncated, "order": order}
    with translated():
        rows = ds.map_batches(keyed, batch_format="pyarrow")
        summaries = rows.groupby("task_key").map_groups(functools.partial(_ask_summary, options=options),
                                                        batch_format="pyarrow")
    asks = collect_small(summaries).sort("task_key")
    if asks.height == 0 or int(asks["n_graded"].sum()) == 0:
        refuse_ungraded(int(asks["n_rows"].sum()) if asks.height else 0, 'select(mode="rl")')
    tally = RLTally(**{name: int(asks[name].sum()) for name in RLTally.names()})
    graded = asks.filter(pl.col("n_graded") > 0)
    k_in = float(graded["n_graded"].median())  # type: ignore[arg-type]
    # the leak block: counts summed over the asks (a leaking row's position is the local engine's, not kept here)
    leaks = LeakCheck(checked=bool(asks["leak_checked"].any()), n_checked=int(asks["leak_n_checked"].sum()),
                      n_dropped=int(asks["leak_dropped"].sum()), leaked=[])
    eligible = asks.filter(pl.col("eligible"))
    report = rl_report(tally, leaks=leaks, n_tasks=asks.height, k_in=k_in,
                       rates=(graded["c"] / graded["n_graded"]).to_numpy(), groups_eligible=eligible.height,
                       truncated=truncated, band=band, enforce_band=enforce_band, target=target, order=order)
    refuse_no_group(report)

    # the group order: the local kernel on one row per ask (first row = the ask's rank by task key)
    groups = eligible.select(pl.col("task_key").alias("_tid"), pl.col("size").alias("_size"), pl.col("rate").alias("_rate"),
                             pl.col("kind").fill_null("no fault").alias("_kind"),
                             pl.int_range(pl.len(), dtype=pl.Int64).alias("_first"))
    ordered = order_groups(groups, order)
    warnings: list[str] = []
    n_keep = groups_within_target(ordered["_size"].to_numpy(), target, warnings)
    chosen = keep_groups(report, ordered, n_keep)
    report.n_selected = int(chosen["_size"].sum())
    kept_keys = set(chosen["_tid"].to_list())
    kept = asks.filter(pl.col("task_key").is_in(list(kept_keys)))
    report.calibration = CalibrationStamps(n_tasks=chosen.height, n_stamped=int(kept["stamped"].sum()),
                                           n_carried=int(kept["carried"].sum()), k_median=k_in, level=CI_LEVEL)
    hygiene = [*duplicate_notes(report), *band_resolution_notes(k_in),
               "the Ray engine leaves out the selection's correlations, group signal and hack scan (they read "
               f"the kept rows); run them on the folder {out_path!r}."]
    report.hygiene_warnings = hygiene
    report.warnings = [*hygiene, *warnings]

    keys_ref = ray.put(pa.array(sorted(kept_keys), pa.string()))
    with translated():
        kept_rows = (rows.map_batches(functools.partial(_keep_tasks, chosen=keys_ref), batch_format="pyarrow")
                     .groupby("task_key").map_groups(functools.partial(_ask_rows, options=options), batch_format="pyarrow"))
    path = write_rows(kept_rows, out_path)
    return FolderResult(path, report, {"mode": "rl", "engine": "ray"})


def select(ds: Any, /, *, mode: str = "rl", out: Any = None, **options: Any) -> FolderResult:
    """``whileai.select`` on a Ray dataset: the report, and the kept rows as a Parquet folder at ``out``.

    ``mode="rl"`` takes the options of ``select_for_rl`` except ``endorsed`` (the hack scan reads
    the kept rows: run ``wai.hack_scan`` on the folder). ``mode="sft"`` takes every option of
    ``select_for_sft``; its tie-breaks are a seeded hash of each row's ``rollout_id``, so both
    engines keep the same rows.
    """
    import inspect

    from whileai.defaults import DIFFICULTY_BAND, SELECT_TARGET
    from whileai.errors import ArgumentError
    from whileai.selection._rl import check_rl_options, select_for_rl

    if mode == "sft":
        return _select_sft(ds, out=out, **options)
    if mode != "rl":
        raise ArgumentError(f"mode must be 'rl' or 'sft', got {mode!r}. Pass mode='rl' or mode='sft'.", argument="mode")
    allowed = {n for n, p in inspect.signature(select_for_rl).parameters.items() if p.kind is p.KEYWORD_ONLY} - {"endorsed"}
    stray = sorted(set(options) - allowed)
    if stray:
        raise ArgumentError(f"options must be those select(mode='rl') takes on a Ray dataset, got {', '.join(stray)}. "
                            f"Pass only {', '.join(sorted(allowed | {'out'}))} (run wai.hack_scan on the output folder).")
    truncated, order, band, target = check_rl_options(
        truncated=options.get("truncated", "drop"), order=options.get("order", "spread"),
        band=options.get("band", DIFFICULTY_BAND), target=options.get("target", SELECT_TARGET))
    return select_rl(ds, out=out, target=target, band=band, enforce_band=bool(options.get("enforce_band", True)),
                     truncated=truncated, order=order)


def _select_sft(ds: Any, *, out: Any, **options: Any) -> FolderResult:
    """Check ``select(mode="sft")``'s options as the local selector does, then run it on Ray."""
    import inspect

    from whileai.defaults import DEFAULT_SEED, SELECT_TARGET, SFT_MIN_REWARD
    from whileai.errors import ArgumentError
    from whileai.selection._sft import check_sft_options, select_for_sft, tie_salt
    from whileai.selection._sft_ray import select_sft

    allowed = {n for n, p in inspect.signature(select_for_sft).parameters.items() if p.kind is p.KEYWORD_ONLY}
    stray = sorted(set(options) - allowed)
    if stray:
        raise ArgumentError(f"options must be those select(mode='sft') takes, got {', '.join(stray)}. "
                            f"Pass only {', '.join(sorted(allowed | {'out'}))}.", argument=stray[0])
    select, min_reward, target, k = check_sft_options(
        select=options.get("select", "top_per_prompt"), min_reward=options.get("min_reward", SFT_MIN_REWARD),
        target=options.get("target", SELECT_TARGET), k=options.get("k"))
    return select_sft(ds, out=out, select=select, min_reward=min_reward, target=target, k=k,
                      salt=tie_salt(options.get("seed", DEFAULT_SEED)))
