"""Reading rows for a measure: only the columns it needs, rewards checked, NaN read as ungraded.

Every step that reads a reward as a pass rate (measure, select, export) reads it through
:func:`clean_rewards` or its parts, so a 1-to-5 score or a NaN is refused or counted alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from whileai import table
from whileai.errors import SchemaError
from whileai.measure._runs import CONFIG_KEYS

__all__ = ["MEASURE_COLUMNS", "check_reward_range", "clean_rewards", "failure_exprs", "nan_as_ungraded", "nan_rewards_unset", "read_rows", "warn_duplicates"]


#: Columns a measure call reads; frame reads only these from Parquet.
MEASURE_COLUMNS: tuple[str, ...] = (
    "reward", "markers", "lineage", "judge_status", "truncated", "system_prompt", "rollout_index",
    *CONFIG_KEYS,
)


def read_rows(rows: Any, *, extra: Sequence[str] = (), all_columns: bool = False,
              markers: bool = True) -> pl.DataFrame:
    """``table.frame`` with empty input allowed, reading only the columns measure needs.

    Parquet is scanned lazily and a frame is narrowed before normalisation, so the conversation
    columns a measure never reads are neither loaded nor rebuilt. ``all_columns`` keeps every
    column (a ``by=`` callable sees whole rows); ``markers=False`` leaves out the markers, for a
    measure that reads none (decoding them is a third of a JSONL read).
    """
    if all_columns:
        return table.frame(rows, allow_empty=True)
    wanted = [c for c in MEASURE_COLUMNS if markers or c != "markers"]
    return table.frame(rows, columns=[*wanted, *extra], allow_empty=True)


def check_reward_range(df: pl.DataFrame) -> None:
    """Raise :class:`SchemaError` when a numeric ``reward`` holds a value outside [0, 1] (NaN and null pass).

    Every step that reads a reward as a pass rate (measure, select, export) checks it: a 1-to-5
    score read as one gives a plausible but wrong number.
    """
    if "reward" not in df.columns or not df.schema["reward"].is_numeric():
        return
    reward = pl.col("reward").cast(pl.Float64)
    outside = reward.is_not_nan() & ((reward < 0.0) | (reward > 1.0))  # polars orders NaN above every number
    counts = df.select(outside.sum().alias("bad"), reward.filter(outside).first().alias("example")).row(0, named=True)
    if counts["bad"]:
        raise SchemaError(
            f"reward must be in [0, 1], got {counts['example']!r} on {counts['bad']} row(s). "
            "Rescale the judge's score to [0, 1] (a 1-to-5 score s becomes (s - 1) / 4).",
            column="reward",
        )


def clean_rewards(df: pl.DataFrame, warnings: list[str]) -> pl.DataFrame:
    """Check rewards: a Float64 ``reward`` column in [0, 1] or null.

    A missing column reads as ungraded; NaN reads as ungraded with a warning; a value outside
    [0, 1] raises :class:`SchemaError` (a 1-to-5 score read as a pass rate gives a plausible but
    wrong number).
    """
    warn_duplicates(df, warnings)
    if "reward" not in df.columns:
        return df.with_columns(pl.lit(None, pl.Float64).alias("reward"))
    if df.schema["reward"] != pl.Float64:
        try:
            df = df.with_columns(pl.col("reward").cast(pl.Float64, strict=True))
        except pl.exceptions.PolarsError as exc:  # InvalidOperationError for text, structs and lists
            raise SchemaError(
                f"reward must hold numbers in [0, 1] or null, got dtype {df.schema['reward']}. "
                "Have the judge return a number (1.0 pass, 0.0 fail).", column="reward",
            ) from exc
    check_reward_range(df)
    return nan_as_ungraded(df, warnings)


def _float_reward(df: pl.DataFrame) -> bool:
    return "reward" in df.columns and df.schema["reward"] in (pl.Float32, pl.Float64)


def nan_rewards_unset(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with a NaN ``reward`` set to null, without a word (rows read again after ``nan_as_ungraded`` warned)."""
    return df.with_columns(pl.col("reward").fill_nan(None)) if _float_reward(df) else df


def nan_as_ungraded(df: pl.DataFrame, warnings: list[str]) -> pl.DataFrame:
    """``df`` with a NaN ``reward`` read as ungraded (null), and a warning that counts them.

    A reward model that overflowed, or a judge that returned ``float("nan")``, graded nothing:
    Polars orders NaN above every number, so left as it is a NaN passes any threshold, and JSON
    has no NaN to write. Every step that reads rewards (measure, select, export) reads it alike.
    """
    if not _float_reward(df):
        return df
    reward = pl.col("reward")
    n_nan = int(df.select(reward.is_nan().sum()).item())
    if n_nan:
        warnings.append(f"{n_nan} row(s) have reward NaN; they are read as ungraded. "
                        "Return None from the judge for a row it could not grade.")
        df = df.with_columns(pl.when(reward.is_nan()).then(None).otherwise(reward).alias("reward"))
    return df


def warn_duplicates(df: pl.DataFrame, warnings: list[str]) -> None:
    """Warn when rows repeat a (task, rollout_index) pair (within one replay, ``lineage.eval_run``).

    A file concatenated twice doubles k and narrows every interval with no new evidence; the
    measure steps read the rows as given, so this says so rather than fixing it silently.
    """
    if "rollout_index" not in df.columns or df.height == 0 or df["rollout_index"].null_count() == df.height:
        return
    keys = [pl.col("task_key"), pl.col("rollout_index")]
    if "lineage" in df.columns and isinstance(df.schema["lineage"], pl.Struct) and \
            "eval_run" in {f.name for f in df.schema["lineage"].fields}:
        keys.append(pl.col("lineage").struct.field("eval_run").alias("_eval_run"))
    # Equal pairs hash equal, so no repeated hash means no repeated pair: the group-by that counts
    # them (a hash table of every pair) runs only when a hash repeats (a pair, or a collision it rules out).
    hashed = pl.when(pl.col("rollout_index").is_not_null()).then(pl.struct(keys).hash(seed=0))
    if not df.select(hashed.drop_nulls().is_duplicated().any()).item():
        return
    counts = (df.filter(pl.col("rollout_index").is_not_null()).group_by(keys).len()
              .filter(pl.col("len") > 1))
    if counts.height == 0:
        return
    extra = int(counts["len"].sum() - counts.height)
    first = counts.sort("task_key", "rollout_index").row(0, named=True)
    warnings.append(
        f"{extra:,} row(s) repeat a (task, rollout_index) pair already seen, e.g. task {first['task_key']!r} rollout "
        f"{first['rollout_index']} appears {first['len']} times; k and the interval count them as new rollouts. "
        "Drop the duplicates (df.unique(['scenario_id', 'rollout_index'])) unless they are separate runs.")


def failure_exprs(df: pl.DataFrame) -> tuple[pl.Expr, pl.Expr]:
    """Per-row flags: an ungraded row whose agent or harness crashed, and one whose judge failed."""
    if "judge_status" not in df.columns:
        return pl.lit(False), pl.lit(False)
    ungraded = pl.col("reward").is_null() & pl.col("judge_status").is_not_null() & (pl.col("judge_status") != "ok")
    agent = pl.col("judge_status") == "agent_error"
    if "finish_reason" in df.columns:
        agent = agent | (pl.col("finish_reason") == "error")
    return (ungraded & agent).fill_null(False), (ungraded & ~agent).fill_null(False)
