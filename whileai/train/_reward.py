"""``trl_reward``: the judge contract as a TRL reward function, so GRPO trains on the judge that graded the eval."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from whileai._checks import check_choice
from whileai.grade import (
    check_judge,
    error_verdict,
    judge_name_of,
    normalize_judge_result,
)

__all__ = ["TrlReward", "completion_text", "prompt_messages", "trl_reward"]

log = logging.getLogger("whileai.train")

_NOT_COLUMNS = frozenset({"trainer_state", "completion_ids", "log_extra", "log_metric", "environments"})


def completion_text(completion: Any) -> str:
    """The text of one TRL completion: a string, or the contents of its assistant messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content") or "")
    if isinstance(completion, Sequence):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, Mapping))
    return str(completion)


def prompt_messages(prompt: Any) -> list[dict[str, Any]]:
    """One TRL prompt as a message list (a plain string becomes one user turn)."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]


def _last_user(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""


class TrlReward:
    """A judge under the judge contract, called the way TRL calls a reward function.

    ``reward(prompts, completions, **columns)`` builds one row dict per completion (``prompt``,
    ``messages`` = prompt turns plus the completion, ``final_text``, and every dataset column
    TRL passes, such as ``task_key`` or a reference answer), calls the judge on it, and maps what
    it returned through the contract (``normalize_judge_result``). A judge that raises or returns
    something unusable is counted by status and scores None (TRL skips it) or 0.0
    (``on_error="zero"``), never a silent pass.
    """

    def __init__(self, judge: Callable[[dict[str, Any]], Any], *, name: str | None = None,
                 on_error: Literal["none", "zero"] = "none") -> None:
        check_judge(judge)
        check_choice("on_error", on_error, ("none", "zero"))
        self.judge = judge
        self.name = judge_name_of(judge, name)
        self.__name__ = self.name  # TRL names the logged reward column after it
        self.on_error = on_error
        self.n_batches = 0
        """Batches scored."""
        self.n_calls = 0
        """Judge calls made."""
        self.statuses: dict[str, int] = {}
        """Judge calls by judge_status (ok, error, invalid_result, missing_reward)."""
        self.marker_sums: dict[str, float] = {}
        self.marker_counts: dict[str, int] = {}
        self.last_rows: list[dict[str, Any]] = []
        """The row dicts of the last batch, with ``reward`` and ``markers`` filled in."""

    @property
    def n_errors(self) -> int:
        """Judge calls whose status was not ok."""
        return sum(v for k, v in self.statuses.items() if k != "ok")

    def marker_means(self) -> dict[str, float]:
        """Mean of every marker the judge set, over every call so far."""
        return {k: self.marker_sums[k] / self.marker_counts[k] for k in sorted(self.marker_sums)}

    def stats(self) -> dict[str, Any]:
        """Counters: batches, calls, statuses, errors and marker means."""
        return {"judge": self.name, "n_batches": self.n_batches, "n_calls": self.n_calls,
                "n_errors": self.n_errors, "statuses": dict(self.statuses), "markers": self.marker_means()}

    def rows(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[dict[str, Any]]:
        """The row dicts the judge sees for one TRL batch."""
        n = len(completions)
        columns = {k: v for k, v in kwargs.items()
                   if k not in _NOT_COLUMNS and isinstance(v, (list, tuple)) and len(v) == n}
        out = []
        for i, (prompt, completion) in enumerate(zip(prompts, completions)):
            msgs = prompt_messages(prompt)
            text = completion_text(completion)
            row = {k: v[i] for k, v in columns.items()}
            row.update(prompt=_last_user(msgs), final_text=text,
                       messages=[*msgs, {"role": "assistant", "content": text}])
            out.append(row)
        return out

    def score_rows(self, rows: list[dict[str, Any]]) -> list[float | None]:
        """Judge each row under the contract; fills ``reward``, ``judge_status`` and ``markers`` on it."""
        rewards: list[float | None] = []
        for row in rows:
            try:
                raw = self.judge(row)
                if inspect.isawaitable(raw):
                    raw = asyncio.run(_awaited(raw))
                verdict = normalize_judge_result(raw)
            except Exception as exc:  # the contract: a judge that raises is a counted error, not a crash
                verdict = error_verdict(exc)
            self.n_calls += 1
            self.statuses[verdict.status] = self.statuses.get(verdict.status, 0) + 1
            for key, value in (verdict.markers or {}).items():
                if value is not None:
                    self.marker_sums[key] = self.marker_sums.get(key, 0.0) + float(value)
                    self.marker_counts[key] = self.marker_counts.get(key, 0) + 1
            reward = verdict.reward
            if reward is None and self.on_error == "zero":
                reward = 0.0
            row["reward"], row["judge_status"], row["markers"] = reward, verdict.status, verdict.markers
            rewards.append(reward)
        return rewards

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        rows = self.rows(prompts, completions, **kwargs)
        rewards = self.score_rows(rows)
        self.n_batches += 1
        self.last_rows = rows
        bad = sum(1 for r in rows if r["judge_status"] != "ok")
        if bad:
            log.warning("%s: %d of %d judge calls in this batch were not ok (%s)", self.name, bad, len(rows),
                        ", ".join(sorted({r["judge_status"] for r in rows if r["judge_status"] != "ok"})))
        if self.marker_sums:
            log.info("%s markers: %s", self.name, self.marker_means())
        return rewards

    def __repr__(self) -> str:
        return f"trl_reward({self.name}, calls={self.n_calls}, errors={self.n_errors})"


async def _awaited(value: Any) -> Any:
    return await value


def trl_reward(judge: Callable[[dict[str, Any]], Any], /, *, name: str | None = None,
               on_error: Literal["none", "zero"] = "none") -> TrlReward:
    """Wrap a judge as a TRL reward function: a batch of completions in, one float (or None) each out.

    The row the judge sees is the one it sees when grading an eval (``prompt``, ``messages``,
    ``final_text`` and the dataset's columns), and its return goes through the same judge
    contract, so GRPO trains on exactly the judge that graded the eval. Errors are counted by
    status (``reward.statuses``), markers are averaged (``reward.marker_means()``) and logged.

    Args:
        judge: A callable taking a row dict (the judge contract).
        name: The name TRL logs the reward under (default the judge's name).
        on_error: A judge error scores ``"none"`` (TRL leaves it out of the mean) or ``"zero"``.

    Returns:
        A :class:`TrlReward`, callable as ``reward(prompts, completions, **columns)``.

    Raises:
        JudgeError: ``judge`` is not callable.

    Examples:
        >>> reward = trl_reward(lambda row: {"reward": float("42" in row["final_text"]), "markers": {"short": 1.0}})
        >>> reward(["What is 6 x 7?", "And 6 x 8?"], ["42", "47"])
        [1.0, 0.0]
        >>> reward.stats()["statuses"], reward.marker_means()
        ({'ok': 2}, {'short': 1.0})
    """
    return TrlReward(judge, name=name, on_error=on_error)
