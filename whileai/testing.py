"""Seeded, realistic rollout tables for tests and benchmarks, and a scripted policy and judge.

``rollout_table`` draws tasks with Beta-distributed difficulty, k rollouts each, tool calls,
reply lengths that vary, markers, fault kinds and tiers, optionally a planted shortcut word that
tracks reward within task, and the matching ``after`` run of the same tasks with a shift. Every
column is drawn with numpy and assembled with Polars expressions, so 10 million rows take
seconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from whileai._fake_hub import fake_hub as fake_hf_hub  # noqa: F401 - the loopback Hub push_to_hub tests run on
from whileai.defaults import DEFAULT_SEED, PASS_THRESHOLD
from whileai.stats.rng import check_rng
from whileai.table.schema import MESSAGE, TOOL_CALL

__all__ = ["ScriptedPolicy", "fake_hf_hub", "rollout_table", "scripted_judge", "true_pass_rates", "word_table"]

TOOLS = ("get_order", "refund_order", "cancel_order", "update_address")
FAULTS = (None, "timeout", "server_error", "rate_limit", "malformed_output", "empty_result", "partial_result")
TIERS = ("ordinary", "ambiguous", "boundary", "adversarial")
STANCES = ("cooperative", "vague", "impatient", "adversarial", "off_topic")
WORDS = ("order", "refund", "status", "shipping", "account", "item", "delivery", "payment", "address", "today")


def rollout_table(
    n_tasks: int = 16,
    k: int = 4,
    *,
    seed: int | np.random.Generator = DEFAULT_SEED,
    difficulty: tuple[float, float] = (2.0, 1.5),
    pass_rates: Sequence[float] | np.ndarray | None = None,
    shift: float = 0.0,
    shortcut: str | None = None,
    shortcut_strength: float = 0.8,
    markers: Sequence[str] = ("no_hedging", "honest_claims", "argument_grounding"),
    partial: bool = False,
    messages: bool = True,
    eval_run: int | None = None,
    outcome_signal: float = 1.0,
    replica: int = 0,
    task_prefix: str = "sc-",
    policy_version: str | None = None,
) -> pl.DataFrame:
    """Draw a graded rollout table with known per-task pass rates.

    Args:
        n_tasks: Number of tasks (situations).
        k: Rollouts per task.
        seed: Seed or Generator; the same seed gives the same table.
        difficulty: Beta(a, b) parameters of the per-task pass rate.
        pass_rates: Explicit per-task pass rates (overrides ``difficulty``).
        shift: Added to every task's pass rate (clipped to [0, 1]): the 'after' run of a
            training that moved pass@1 by about this much. Task identities stay the same.
        shortcut: A word planted in replies; within a task it appears on passing rollouts with
            probability ``shortcut_strength`` and on failing ones with ``1 - shortcut_strength``.
        shortcut_strength: See ``shortcut``.
        markers: Marker names to draw (each Bernoulli, 1.0 is good, correlated with reward).
        partial: Rewards are partial credit (multiples of 0.25) instead of 0/1.
        messages: Build the ``messages`` column (turn off for the largest benchmarks).
        eval_run: Stamp ``lineage.eval_run`` with this number (replays of one task set).
        outcome_signal: Probability that the reply's closing phrase ("resolved it." or "could not
            finish.") matches the reward. 1.0 makes the text state the outcome (a judge can read
            it); 0.5 makes the phrase carry no signal, so only planted features track reward.
        replica: Another draw of the same tasks (same pass rates, new rollouts): re-runs of one
            eval, e.g. ``eval_run=r, replica=r``. 0 is the seed's own draw.
        task_prefix: Prefix of scenario ids.
        policy_version: Written to ``policy_version``. Default ``scripted@v1``, with ``+shift<shift>``
            after it when ``shift`` is not 0, so a before and an after arm are told apart as two setups.

    Returns:
        A rollout table (not yet passed through ``frame``; call ``table.frame`` for task_key).
    """
    rng = check_rng(seed) if replica == 0 or isinstance(seed, np.random.Generator) \
        else np.random.default_rng([int(seed), int(replica), 104729])
    # Per-task draws come from a generator keyed on the seed alone so an 'after' run with a shift
    # keeps the same tasks and base difficulty.
    base = true_pass_rates(n_tasks, seed=seed, difficulty=difficulty) if pass_rates is None else np.asarray(pass_rates, float)
    p = np.clip(base + shift, 0.0, 1.0)
    n = n_tasks * k
    task = np.repeat(np.arange(n_tasks), k)
    idx = np.tile(np.arange(k), n_tasks)
    if partial:
        reward = np.round(rng.binomial(4, p[task]) / 4.0, 2)
    else:
        reward = (rng.random(n) < p[task]).astype(np.float64)
    passed = reward >= PASS_THRESHOLD
    n_calls = rng.poisson(1.2, n).clip(0, 4)
    tool_ix = rng.integers(0, len(TOOLS), n)
    fault_ix = np.where(rng.random(n) < 0.3, rng.integers(1, len(FAULTS), n), 0)
    reply_words = rng.integers(5, 80, n) + np.where(passed, 10, 0)
    says_pass = np.where(rng.random(n) < outcome_signal, passed, ~passed)
    has_short = np.zeros(n, bool)
    if shortcut is not None:
        prob = np.where(passed, shortcut_strength, 1.0 - shortcut_strength)
        has_short = rng.random(n) < prob
    cols: dict[str, Any] = {
        "rollout_index": idx,
        "reward": reward,
        "n_calls": n_calls,
        "tool": np.asarray(TOOLS)[tool_ix],
        "fault_kind": np.asarray([f or "" for f in FAULTS])[fault_ix],
        "tier": np.asarray(TIERS)[task % len(TIERS)],
        "stance": np.asarray(STANCES)[task % len(STANCES)],
        "reply_words": reply_words,
        "has_short": has_short,
        "says_pass": says_pass,
        "word": np.asarray(WORDS)[rng.integers(0, len(WORDS), n)],
    }
    df = pl.DataFrame({"_t": task, **cols}).with_columns(
        pl.concat_str([pl.lit(task_prefix), pl.col("_t").cast(pl.String).str.zfill(8)]).alias("scenario_id")
    ).drop("_t")
    df = df.with_columns(
        pl.concat_str([pl.lit("Please look into "), pl.col("word"), pl.lit(" "), pl.col("tool"), pl.lit(" for customer "), pl.col("scenario_id")]).alias("prompt"),
        pl.concat_str(
            [
                pl.lit("I checked the "),
                pl.col("word"),
                pl.lit(" and "),
                pl.when(pl.col("says_pass")).then(pl.lit("resolved it.")).otherwise(pl.lit("could not finish.")),
                pl.when(pl.col("has_short")).then(pl.lit(f" {shortcut} ")).otherwise(pl.lit(" ")),
                pl.lit("detail " * 100).str.slice(0, pl.col("reply_words") * 7),
            ]
        ).alias("final_text"),
        pl.concat_str([pl.col("scenario_id"), pl.lit("-"), pl.col("rollout_index").cast(pl.String)]).alias("rollout_id"),
        pl.lit(policy_version if policy_version is not None
               else "scripted@v1" if not shift else f"scripted@v1+shift{shift:+g}").alias("policy_version"),
        ((pl.col("fault_kind") != "") & (pl.col("n_calls") > 0)).alias("_faulted"),
    )
    marker_cols = []
    for j, name in enumerate(markers):
        good = rng.random(n) < np.where(passed, 0.9, 0.6 - 0.1 * j)
        marker_cols.append(pl.Series(name, good.astype(np.float64)))
    if marker_cols:
        df = df.with_columns(pl.struct(marker_cols).alias("markers"))
    if eval_run is not None:
        df = df.with_columns(pl.struct(pl.lit(int(eval_run)).alias("eval_run"), pl.lit("grade").alias("source")).alias("lineage"))
    if messages:
        df = df.with_columns(_messages_column(df))
    df = df.with_columns(pl.when(pl.col("_faulted")).then(pl.col("fault_kind")).otherwise(None).alias("fault_kind"))
    keep = ["scenario_id", "rollout_index", "rollout_id", "prompt", "final_text", "reward", "fault_kind", "tier",
            "stance", "policy_version"]
    keep += [c for c in ("messages", "markers", "lineage") if c in df.columns]
    return df.select(keep)


def _messages_column(df: pl.DataFrame) -> pl.Series:
    """Build the conversation column with Arrow offsets, vectorised: no per-row Python.

    Each row gets a user turn, an optional tool call with its result, and the final reply.
    """
    from whileai.table import list_series

    n = df.height
    has_call = (df["n_calls"] > 0).to_numpy()
    counts = np.where(has_call, 4, 2)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    row = np.repeat(np.arange(n), counts)
    pos = np.arange(offsets[-1]) - offsets[:-1][row]
    last = pos == counts[row] - 1
    role = np.where(pos == 0, "user", np.where(last, "assistant", np.where(pos == 1, "assistant", "tool")))
    call_id = pl.concat_str([pl.lit("call_"), pl.col("rollout_index").cast(pl.String)])
    base = df.select(
        "prompt", "final_text", "tool", "_faulted",
        call_id.alias("call_id"),
        pl.concat_str([pl.lit('{"order_id":"'), pl.col("scenario_id"), pl.lit('"}')]).alias("args"),
        pl.when(pl.col("_faulted")).then(pl.concat_str([pl.lit('{"status":"'), pl.col("fault_kind"), pl.lit('"}')]))
        .otherwise(pl.lit('{"status":"ok"}')).alias("result"),
    )[row]
    flat = base.with_columns(
        pl.Series("role", role), pl.Series("pos", pos), pl.Series("last", last)
    ).select(
        pl.col("role"),
        pl.when(pl.col("pos") == 0).then(pl.col("prompt")).when(pl.col("last")).then(pl.col("final_text"))
        .when(pl.col("role") == "tool").then(pl.col("result")).otherwise(None).alias("content"),
        pl.when(pl.col("role") == "tool").then(pl.col("tool")).otherwise(None).alias("name"),
        pl.when(pl.col("role") == "tool").then(pl.col("call_id")).otherwise(None).alias("tool_call_id"),
        pl.when((pl.col("pos") == 1) & ~pl.col("last"))
        .then(pl.concat_list([pl.struct(pl.col("call_id").alias("id"), pl.col("tool").alias("name"),
                                        pl.col("args").alias("arguments"))]))
        .otherwise(pl.lit([], pl.List(TOOL_CALL))).alias("tool_calls"),
        pl.lit(None, pl.String).alias("extra"),
    )
    return list_series("messages", flat.to_struct("m").cast(MESSAGE), offsets).cast(pl.List(MESSAGE))


def true_pass_rates(n_tasks: int, *, seed: int | np.random.Generator = DEFAULT_SEED,
                    difficulty: tuple[float, float] = (2.0, 1.5)) -> np.ndarray:
    """The per-task pass rates ``rollout_table`` draws for this seed (the truth a test checks)."""
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(0, 2**31))
    task_rng = np.random.default_rng([int(seed), 7919])
    return task_rng.beta(difficulty[0], difficulty[1], n_tasks)


class ScriptedPolicy:
    """A deterministic agent for tests: answers from a script keyed on the user's first message.

    Called with ``(messages, tools)``; returns an assistant message dict. ``script`` maps a
    substring of the prompt to the reply (a string, or a dict with ``tool_calls``); the default
    reply is ``default``.
    """

    def __init__(self, script: Mapping[str, Any] | None = None, *, default: str = "Done.") -> None:
        self.script = dict(script or {})
        self.default = default

    def __call__(self, messages: Sequence[Mapping[str, Any]], tools: Any = None) -> dict[str, Any]:
        """Reply to the conversation so far."""
        prompt = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
        for needle, reply in self.script.items():
            if needle in prompt:
                return reply if isinstance(reply, dict) else {"role": "assistant", "content": str(reply)}
        return {"role": "assistant", "content": self.default}


def scripted_judge(row: Mapping[str, Any]) -> dict[str, Any]:
    """A deterministic judge for tests: passes a row whose reply says 'resolved', else fails."""
    text = str(row.get("final_text") or "")
    return {"reward": 1.0 if "resolved" in text else 0.0, "reason": "keyword 'resolved'"}


def word_table(n_tasks: int = 20, k: int = 8, *, seed: int | np.random.Generator = DEFAULT_SEED, vocab: int = 12,
               word_share: float = 0.5, shortcut: float = 0.0) -> pl.DataFrame:
    """A graded table whose replies are random words: the null (and planted-shortcut) case of hack_scan.

    Every reply holds each of ``vocab`` words (``w00``...) with probability ``word_share``, the
    reward is a fair coin, and with ``shortcut > 0`` the word ``w00`` appears on a passing rollout
    with probability ``word_share + shortcut / 2`` and on a failing one with ``word_share -
    shortcut / 2`` (a within-ask shortcut of that strength). Few words and many co-occurrences
    make the AND tier's search large, which is where a floor that ignores the search fails.

    Examples:
        >>> word_table(4, 2, seed=0).shape
        (8, 4)
    """
    rng = check_rng(seed)
    n = n_tasks * k
    reward = rng.integers(0, 2, n).astype(np.float64)
    share = np.full((n, vocab), word_share)
    if shortcut:
        share[:, 0] = np.clip(word_share + (reward - 0.5) * shortcut, 0.0, 1.0)
    present = rng.random((n, vocab)) < share
    words = np.array([f"w{i:02d}" for i in range(vocab)])
    texts = [" ".join(words[row]) or "none" for row in present]
    return pl.DataFrame({"scenario_id": [f"t{i // k:04d}" for i in range(n)], "rollout_index": np.arange(n) % k,
                         "final_text": texts, "reward": reward})
