"""``select(mode="sft")`` on Ray Data: rejection sampling with the same picks as the local path.

The tie-break is a seeded hash of each row's ``rollout_id`` (``tie_keys``), so a row's rank
does not depend on where it sits. Each block is reduced in a worker to narrow rows (prompt key,
id, reward, tie key, and the eligibility flags the local selector computes); a Ray Data shuffle
groups them by prompt and each prompt's pick (``top_per_prompt`` / ``random_per_prompt``) comes
back as one summary row; the ``*_k_overall`` rules take the best ``k`` eligible rows with a Ray
Data sort. The driver runs the local ranking (``top_k`` / ``bottom_k``) on those rows, broadcasts
the chosen ids, and the workers write the kept rows as a Parquet folder (docs/scale.md). No
rollout row reaches the driver.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import polars as pl
import pyarrow as pa

from whileai import table
from whileai.errors import SchemaError
from whileai.selection._rows import eval_sourced, junk_flag, refuse_ungraded
from whileai.selection._scans import LeakCheck, privileged_leaks
from whileai.selection._sft import (
    note_eval_sourced,
    note_pick,
    pick,
    prompt_key,
    refuse_none_eligible,
    row_ids,
    sft_report,
    tie_keys,
)
from whileai.table.raydata import (
    FolderResult,
    check_output_folder,
    collect_small,
    in_order,
    require_ray,
    translated,
    write_rows,
)

__all__ = ["select_sft"]

_NARROW = {"_prompt": pl.UInt64, "_id": pl.String, "reward": pl.Float64, "_key": pl.Float64, "_pass": pl.Boolean,
           "_junk": pl.Boolean, "_leak": pl.Boolean, "_eval": pl.Boolean}


def _flags(df: pl.DataFrame, *, salt: int, min_reward: float) -> pl.DataFrame:
    """The narrow rows of one block: what the local selector ranks and filters on (runs in a worker)."""
    if "reward" not in df.columns:
        df = df.with_columns(pl.lit(None, pl.Float64).alias("reward"))
    passing = pl.col("reward").is_not_null() & (pl.col("reward").cast(pl.Float64) >= float(min_reward))
    work = df.select(prompt_key(df).alias("_prompt"), row_ids(df, by_position=False).alias("_id"),
                     pl.col("reward").cast(pl.Float64), passing.alias("_pass"), (passing & junk_flag(df)).alias("_junk"),
                     eval_sourced(df).alias("_eval"))
    if work["_id"].null_count():
        raise SchemaError('rollout_id must be set on every row for select(mode="sft") on a Ray dataset, got '
                          f'{work["_id"].null_count()} row(s) with no rollout_id and no rollout_index. Give each row '
                          "its rollout_id (the tie-break draws from it), or select locally.")
    leak, _ = privileged_leaks(df, [])
    return work.with_columns(tie_keys(pl.col("_id"), salt).alias("_key"),
                             leak.alias("_leak") if leak is not None else pl.lit(False).alias("_leak"))


def _narrow(batch: pa.Table, *, salt: int, min_reward: float) -> pa.Table:
    df = table.frame(batch, allow_empty=True)
    return _flags(df, salt=salt, min_reward=min_reward).select(
        [pl.col(c).cast(t) for c, t in _NARROW.items()]).to_arrow()


def _eligible(batch: pa.Table) -> pa.Table:
    w = pl.from_arrow(batch)
    assert isinstance(w, pl.DataFrame)
    return w.filter(pl.col("_pass") & ~pl.col("_junk") & ~pl.col("_leak")).select("_id", "reward", "_key", "_eval").to_arrow()


def _prompt_summary(group: pa.Table, *, top: bool, per_prompt: bool) -> pa.Table:
    """One prompt's counts and (for the per-prompt rules) its pick (runs in a worker)."""
    w = pl.from_arrow(group)
    assert isinstance(w, pl.DataFrame)
    eligible = w.filter(pl.col("_pass") & ~pl.col("_junk") & ~pl.col("_leak"))
    pool = eligible
    if per_prompt:
        if top:
            pool = pool.filter(pl.col("reward") == pl.col("reward").max())
        pool = pool.filter(pl.col("_key") == pl.col("_key").min())
    else:
        pool = pool.clear()
    graded = w["reward"].is_not_null()
    row = {
        "_prompt": w["_prompt"][0], "n": w.height, "ungraded": int((~graded).sum()),
        "not_pass": int((graded & ~w["_pass"]).sum()), "junk": int(w["_junk"].sum()), "graded": int(graded.sum()),
        "n_eligible": eligible.height, "reward_sum": float(eligible["reward"].sum()) if eligible.height else 0.0,
        "best": w["reward"].max(),
        "pick_id": pool["_id"].to_list(), "pick_reward": pool["reward"].to_list(), "pick_key": pool["_key"].to_list(),
        "pick_eval": pool["_eval"].to_list(),
    }
    return pa.Table.from_pylist([row], schema=pa.schema([
        ("_prompt", pa.uint64()), ("n", pa.int64()), ("ungraded", pa.int64()), ("not_pass", pa.int64()),
        ("junk", pa.int64()), ("graded", pa.int64()), ("n_eligible", pa.int64()), ("reward_sum", pa.float64()),
        ("best", pa.float64()), ("pick_id", pa.list_(pa.string())), ("pick_reward", pa.list_(pa.float64())),
        ("pick_key", pa.list_(pa.float64())), ("pick_eval", pa.list_(pa.bool_()))]))


def _leak_block(batch: pa.Table) -> pa.Table:
    """One block's privileged-leak summary, for the report's leak block (runs in a worker)."""
    df = table.frame(batch, allow_empty=True)
    warnings: list[str] = []
    _, info = privileged_leaks(df, warnings)
    return pa.table({"n": [df.height], "info": [info.model_dump_json()], "warnings": [json.dumps(warnings)]})


def _leaks(ds: Any, warnings: list[str]) -> LeakCheck:
    """The leak block over the whole dataset, rows indexed from the start (an ordered pass)."""
    info = LeakCheck(checked=False, n_checked=0, n_dropped=0, leaked=[])
    names = set(ds.schema().names) if ds.schema() is not None else set()
    if not names & set(table.PRIVILEGED_COLUMNS):
        return info
    with in_order(ds), translated():
        got = collect_small(ds.map_batches(_leak_block, batch_format="pyarrow", batch_size=None))
    offset = 0
    for row in got.iter_rows(named=True):
        part = LeakCheck.model_validate_json(row["info"])
        info.checked = info.checked or part.checked
        info.n_checked += part.n_checked
        info.n_dropped += part.n_dropped
        info.leaked.extend(x.model_copy(update={"index": x.index + offset}) for x in part.leaked)
        warnings.extend(w for w in json.loads(row["warnings"]) if w not in warnings)
        offset += int(row["n"])
    info.leaked = info.leaked[:20]
    return info


def _keep(batch: pa.Table, *, chosen: Any, salt: int, min_reward: float) -> pa.Table:
    """The block's rows whose id was chosen and that are eligible (runs in a worker)."""
    import ray

    ids = ray.get(chosen)
    df = table.frame(batch, allow_empty=True)
    w = _flags(df, salt=salt, min_reward=min_reward)
    keep = (w["_pass"] & ~w["_junk"] & ~w["_leak"] & w["_id"].is_in(ids.implode())).fill_null(False)
    return table.to_arrow(df.filter(keep))


def select_sft(ds: Any, *, out: Any, select: str, min_reward: float, target: int, k: int | None,
               salt: int) -> FolderResult:
    """``select(mode="sft")`` on a Ray dataset (options checked by the caller): the report, and the kept rows at ``out``."""
    ray = require_ray('select(mode="sft") on a Ray dataset')
    out_path = check_output_folder(out, 'select(mode="sft")')
    top = select.startswith("top")
    per_prompt = select.endswith("per_prompt")
    with translated():
        narrow = ds.map_batches(functools.partial(_narrow, salt=salt, min_reward=min_reward), batch_format="pyarrow")
        summaries = narrow.groupby("_prompt").map_groups(
            functools.partial(_prompt_summary, top=top, per_prompt=per_prompt), batch_format="pyarrow")
    prompts = collect_small(summaries)
    n = int(prompts["n"].sum()) if prompts.height else 0
    if not prompts.height or int(prompts["graded"].sum()) == 0:
        refuse_ungraded(n, 'select(mode="sft")')
    warnings: list[str] = []
    leaks = _leaks(ds, warnings)
    n_eligible = int(prompts["n_eligible"].sum())
    report = sft_report(n_rows=n, n_ungraded=int(prompts["ungraded"].sum()), n_not_pass=int(prompts["not_pass"].sum()),
                        n_junk=int(prompts["junk"].sum()), n_eligible=n_eligible,
                        prompts_eligible=int((prompts["n_eligible"] > 0).sum()),
                        per_prompt=prompts.filter(pl.col("graded") > 0)["graded"], leaks=leaks, target=target,
                        select=select, k=k, min_reward=float(min_reward))
    if n_eligible == 0:
        refuse_none_eligible(report, best=prompts["best"].max(), min_reward=min_reward)
    report.reward_mean_eligible = float(prompts["reward_sum"].sum()) / n_eligible

    n_take = target if per_prompt else (k if k is not None else target)
    if per_prompt:
        pool = prompts.select(pl.col("pick_id").alias("_id"), pl.col("pick_reward").alias("reward"),
                              pl.col("pick_key").alias("_key"), pl.col("pick_eval").alias("_eval")
                              ).explode(["_id", "reward", "_key", "_eval"]).drop_nulls("_id")
    else:  # the best (or a random) n_take eligible rows: a Ray Data sort, then n_take narrow rows
        with translated():
            eligible = narrow.map_batches(_eligible, batch_format="pyarrow")
            ranked = (eligible.sort(["reward", "_key"], descending=[True, False]) if top else eligible.sort("_key"))
            pool = collect_small(ranked.limit(n_take))
    chosen = pick(pool, n_take, top=top)
    note_pick(report, chosen, select)
    note_eval_sourced(report, int(chosen["_eval"].sum()), warnings)
    report.warnings = warnings
    ids_ref = ray.put(pl.Series("_id", sorted(chosen["_id"].to_list()), dtype=pl.String))
    with translated():
        kept = ds.map_batches(functools.partial(_keep, chosen=ids_ref, salt=salt, min_reward=min_reward),
                              batch_format="pyarrow")
    path = write_rows(kept, out_path)
    return FolderResult(path, report, {"mode": "sft", "engine": "ray"})
