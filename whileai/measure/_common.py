"""Shared pieces of the measure step: argument checks, reading rows, per-task metric values.

Every per-task pass rate comes from :func:`whileai.measure.task_stats` (the one group-by);
marker means per task come from one more group-by over the ``markers`` struct.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from whileai import table
from whileai._checks import check_choice as check_choice
from whileai._checks import check_fraction as check_fraction
from whileai._checks import check_int as check_int
from whileai.defaults import MIN_CI_TASKS, SHORT_HASH_CHARS
from whileai.errors import ArgumentError, SchemaError
from whileai.measure._tasks import task_stats
from whileai.stats.intervals import INTERVAL_METHODS, mean_interval
from whileai.stats.wilson import wilson

PASS_AT_1 = "pass_at_1"
MARKER_PREFIX = "marker:"

#: Columns (or lineage fields) read into ``config``: what the rows were produced with.
CONFIG_KEYS: tuple[str, ...] = (
    "temperature",
    "top_p",
    "max_tokens",
    "provider",
    "base_url",
    "policy_version",
    "model_version",
    "judge_name",
    "judge_version",
    "user_model",
    "writer_model",
)

#: Columns a measure call reads; frame reads only these from Parquet.
MEASURE_COLUMNS: tuple[str, ...] = (
    "reward", "markers", "lineage", "judge_status", "truncated", "system_prompt", "rollout_index",
    *CONFIG_KEYS,
)


# ------------------------------------------------------------------------------------------
# argument checks (before touching data)
# ------------------------------------------------------------------------------------------


def check_level(level: Any) -> float:
    """A confidence level strictly between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < float(level) < 1.0:
        raise ArgumentError(f"level must be a number between 0 and 1, got {level!r}. Pass level=0.95 for a 95% interval.")
    return float(level)


def check_ci_method(value: Any, name: str = "ci_method") -> str:
    """An interval method name."""
    return check_choice(name, value, INTERVAL_METHODS)


# ------------------------------------------------------------------------------------------
# reading rows
# ------------------------------------------------------------------------------------------


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


def marker_names(df: pl.DataFrame) -> list[str]:
    """Marker names the table carries."""
    return table.markers_of(df)


def metric_label(name: str) -> str:
    """``marker:x`` and ``x`` name the same marker; pass_at_1 stays."""
    return name[len(MARKER_PREFIX):] if name.startswith(MARKER_PREFIX) else name


def task_values(df: pl.DataFrame | pl.LazyFrame, metrics: Sequence[str], *, keys: Sequence[str] = ("task_key",),
                maintain_order: bool = True, extra: Sequence[pl.Expr] = (),
                engine: Literal["in-memory", "streaming"] = "in-memory") -> pl.DataFrame:
    """Per-task (or per ``keys`` cell) mean of each metric: pass_at_1 and markers.

    One ``task_stats`` group-by: pass_at_1 is the task's mean reward over graded rollouts (its
    ``reward_mean``), and each marker is the mean of its non-null values, aggregated in the same
    pass. Columns: keys, ``n_graded`` (pass_at_1 rollouts), then one Float64 column per metric
    (null where the cell has no value), named by :func:`metric_label`, then ``extra`` (more
    aggregations of the same group-by). ``engine`` collects it (``task_stats``).
    """
    labels = [metric_label(m) for m in metrics]
    markers = [m for m in labels if m != PASS_AT_1]
    marker = pl.col("markers")
    means = [marker.struct.field(m).cast(pl.Float64).mean().alias(m) for m in markers]
    stats = task_stats(df, keys=list(keys), extra=[*means, *extra], maintain_order=maintain_order, engine=engine)
    names = [e.meta.output_name() for e in extra]
    return stats.select(*keys, "n_graded", pl.col("reward_mean").alias(PASS_AT_1), *markers, *names)


def interval_over_tasks(values: np.ndarray, *, method: str, level: float, n_boot: int, seed: Any,
                        bounds: tuple[float, float] | None, what: str, notes: list[str],
                        binary_ci: str | None = None) -> tuple[float, float, str]:
    """Interval on a mean over tasks and the method used; NaN (with a note) under ``MIN_CI_TASKS`` tasks.

    With ``binary_ci="wilson"`` and every value 0 or 1, the mean is a proportion of tasks and the
    interval is Wilson's over tasks (``BINARY_CI_METHOD``).
    """
    if values.size < MIN_CI_TASKS:
        notes.append(f"no interval on {what}: {values.size} task(s), and an interval needs {MIN_CI_TASKS}")
        return float("nan"), float("nan"), method
    if binary_ci == "wilson" and bool(np.isin(values, (0.0, 1.0)).all()):
        lo, hi = wilson(float(values.sum()), float(values.size), level=level)
        return float(lo), float(hi), "wilson"
    lo_, hi_ = mean_interval(values, method=method, level=level, n_boot=n_boot, seed=seed, bounds=bounds)  # type: ignore[arg-type]
    return lo_, hi_, method


def rate_interval(values: np.ndarray, rollouts: float, sum_rewards: float, *, method: str, level: float,
                  n_boot: int, seed: Any, what: str, notes: list[str],
                  binary_ci: str | None = None) -> tuple[float, float, str]:
    """Interval on a mean pass rate over tasks, with a Wilson fallback when it has no width.

    When every task has the same (non 0/1) rate the t and bootstrap intervals have no width, so
    the Wilson interval over the graded rollouts is given (the rollouts read as independent: the
    narrowest honest interval) and a note says so.
    """
    lo, hi, used = interval_over_tasks(values, method=method, level=level, n_boot=n_boot, seed=seed,
                                       bounds=(0.0, 1.0), what=what, notes=notes, binary_ci=binary_ci)
    if used != "wilson" and values.size >= MIN_CI_TASKS and float(np.ptp(values)) == 0.0 and rollouts > 0:
        wlo, whi = wilson(sum_rewards, rollouts, level=level)
        notes.append(f"every task scored {values[0]:.2f} on {what}, so the interval over tasks has no width; "
                     f"the interval is Wilson's over the {int(rollouts)} rollouts")
        return float(wlo), float(whi), "wilson_rollouts"
    return lo, hi, used


def run_config(df: pl.DataFrame | pl.LazyFrame) -> dict[str, Any]:
    """What the rows were produced with: one value per key, a list when mixed (named in ``mixed``).

    A LazyFrame (a Parquet scan) is read by the streaming engine: each key's distinct values and
    the shares are reductions, so no column is held whole.
    """
    schema = df.collect_schema() if isinstance(df, pl.LazyFrame) else df.schema
    out: dict[str, Any] = {}
    exprs: dict[str, pl.Expr] = {}
    lineage_fields = set()
    if "lineage" in schema and isinstance(schema["lineage"], pl.Struct):
        lineage_fields = {f.name for f in schema["lineage"].fields}
    for key in CONFIG_KEYS:
        if key in schema:
            expr = pl.col(key)
        elif key in lineage_fields:
            expr = pl.col("lineage").struct.field(key)
        else:
            continue
        exprs[key] = expr.cast(pl.String).alias(key)
    if "system_prompt" in schema:
        exprs["system_prompt_hash"] = pl.col("system_prompt").alias("system_prompt_hash")
    agg = [pl.len().alias("_n")]
    if "reward" in schema:
        agg.append(pl.col("reward").is_not_null().mean().alias("graded_share"))
    if "truncated" in schema:
        agg.append(pl.col("truncated").cast(pl.Float64).mean().alias("truncated_share"))
    firsts = [e.drop_nulls().unique().sort().head(6).implode() for e in exprs.values()]
    if isinstance(df, pl.LazyFrame):  # one small query a key (its distinct values), one for the counts
        parts = pl.collect_all([df.select(e).drop_nulls().unique() for e in exprs.values()] + [df.select(agg)],
                               engine="streaming")
        shares = parts.pop().row(0, named=True)
        values = {k: p.to_series().sort().head(6).to_list() for k, p in zip(exprs, parts, strict=True)}
    else:
        shares = df.select(agg).row(0, named=True)
        values = df.select(firsts).row(0, named=True) if firsts else {}
    n_rows = int(shares.pop("_n"))
    mixed: list[str] = []
    if exprs and n_rows:
        for key in exprs:
            vals = values[key] or []
            if key == "system_prompt_hash":
                vals = [hashlib.sha256(v.encode("utf-8")).hexdigest()[:SHORT_HASH_CHARS] for v in vals]
            if not vals:
                continue
            if len(vals) == 1:
                out[key] = vals[0]
            else:
                out[key] = vals
                mixed.append(key)
    out["mixed"] = mixed
    out["n_rows"] = n_rows
    if n_rows:
        out.update({k: (None if v is None else round(float(v), 4)) for k, v in shares.items()})
    return out


def rollouts_per_task(n_graded: np.ndarray) -> int:
    """The k a table was run at: the most graded rollouts any task has (0 when none)."""
    return int(n_graded.max()) if n_graded.size else 0


def fmt_signed(value: float, digits: int = 3) -> str:
    """``+0.123`` / ``-0.050`` / ``n/a``."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:+.{digits}f}"


def fmt_interval(ci: tuple[float, float] | None, digits: int = 3, *, signed: bool = False) -> str:
    """``[lo..hi]`` (signed when asked) or ``[n/a]``."""
    if ci is None or any(v is None or not math.isfinite(v) for v in ci):
        return "[n/a]"
    if signed:
        return f"[{ci[0]:+.{digits}f}..{ci[1]:+.{digits}f}]"
    return f"[{ci[0]:.{digits}f}..{ci[1]:.{digits}f}]"


def nan_to_none(ci: tuple[float, float]) -> tuple[float, float] | None:
    """An interval with a NaN end becomes None (JSON-able, prints n/a)."""
    return None if any(not math.isfinite(v) for v in ci) else (float(ci[0]), float(ci[1]))


def check_probability(name: str, value: Any, *, open_low: bool = True, open_high: bool = True) -> float:
    """A number between 0 and 1, ends open unless asked (a test size, a power, an effect)."""
    return check_fraction(name, value, open_low=open_low, open_high=open_high, fix="Pass a share such as 0.05.")


#: Lineage fields that label an eval re-run, in the order ``run_labels`` tries them.
RUN_FIELDS = ("eval_run", "scoring_run_id")


def run_labels(df: pl.DataFrame, by: str | None = None) -> tuple[pl.Expr | None, str]:
    """The expression naming each row's re-run, and where it came from.

    ``by`` (a column or lineage field), else ``lineage.eval_run``, else ``lineage.scoring_run_id``;
    None when the rows carry none.
    """
    lineage = set()
    if "lineage" in df.columns and isinstance(df.schema["lineage"], pl.Struct):
        lineage = {f.name for f in df.schema["lineage"].fields}
    if by is not None:
        if by in df.columns:
            return pl.col(by).cast(pl.String), by
        if by in lineage:
            return pl.col("lineage").struct.field(by).cast(pl.String), f"lineage.{by}"
        raise ArgumentError(f"by must name a column or lineage field that labels the re-runs, got {by!r}. "
                            f"Columns: {', '.join(df.columns[:12])}.")
    for name in RUN_FIELDS:
        if name in lineage:
            expr = pl.col("lineage").struct.field(name)
            if df.select(expr.is_not_null().any()).item():
                return expr.cast(pl.String), f"lineage.{name}"
    return None, ""


def failure_exprs(df: pl.DataFrame) -> tuple[pl.Expr, pl.Expr]:
    """Per-row flags: an ungraded row whose agent or harness crashed, and one whose judge failed."""
    if "judge_status" not in df.columns:
        return pl.lit(False), pl.lit(False)
    ungraded = pl.col("reward").is_null() & pl.col("judge_status").is_not_null() & (pl.col("judge_status") != "ok")
    agent = pl.col("judge_status") == "agent_error"
    if "finish_reason" in df.columns:
        agent = agent | (pl.col("finish_reason") == "error")
    return (ungraded & agent).fill_null(False), (ungraded & ~agent).fill_null(False)
