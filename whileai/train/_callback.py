"""``tracked_callback``: report a user's own TRL trainer to a tracked run, the way ``report_to="wandb"`` does.

One ``transformers.TrainerCallback``: every log line goes to ``run.log`` (loss, learning rate, the
rewards GRPO logs and any other number), a ``HackMonitor`` samples and checks on its schedule (its
proxy, gold and length points land on the same run, its alarms in the run's notes), and when
training ends the holdout is sampled again, the held-out delta is kept on the run and posted as a
score (``post_holdout``), and the run is finished (stopped with the reason when an alarm stopped it).
Nothing here raises into the training loop: a failed send is a warning.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

from whileai.defaults import (
    DEFAULT_SEED,
    MONITOR_K,
    MONITOR_MAX_NEW_TOKENS,
    MONITOR_SAMPLE_TEMPERATURE,
    MONITOR_SAMPLE_TOP_P,
)
from whileai.errors import ArgumentError
from whileai.train._extra import require

__all__ = ["tracked_callback"]


def _numbers(logs: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in logs.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in ("loss", "learning_rate", "epoch")}


def tracked_callback(run: Any, *, holdout: Any = None, judge: Callable[[dict[str, Any]], Any] | None = None,
                     monitor: Any = None, finish: bool = True, max_new_tokens: int = MONITOR_MAX_NEW_TOKENS,
                     seed: int = DEFAULT_SEED) -> Any:
    """A ``transformers.TrainerCallback`` that reports any TRL trainer to a tracked run and finishes it.

    Pass it in ``callbacks=[...]`` of your own ``SFTTrainer``, ``DPOTrainer`` or ``GRPOTrainer``.
    With ``holdout`` and ``judge`` the holdout is sampled from the policy at the start and the end
    of training (``k`` = ``MONITOR_K`` completions a task) and graded, and the held-out delta
    (``delta_report``, paired over tasks) is kept on the run and posted as a score on the
    ``holdout`` behavior. With ``monitor`` (a :class:`HackMonitor`) its holdout points and alarms
    go to the same run and a ``stop_on`` alarm stops training.

    Args:
        run: A tracked run (``tracked.run(version)``): anything with ``log``, ``finish``, and for
            the held-out delta ``delta`` and ``score``.
        holdout: Held-out rows whose prompts are sampled before and after.
        judge: Grades the holdout samples (the judge contract).
        monitor: A ``HackMonitor`` to drive (its ``run`` is set to ``run`` when unset).
        finish: Finish the run when training ends (``done``, or ``stopped`` with the alarm).
        max_new_tokens: New tokens a holdout sample.
        seed: Seed of the holdout sampling.

    Returns:
        The callback.

    Raises:
        ArgumentError: ``run`` cannot log, or only one of ``holdout`` and ``judge`` is given.
        MissingExtraError: transformers is not installed (``pip install 'whileai[train]'``).
    """
    if not callable(getattr(run, "log", None)) or not callable(getattr(run, "finish", None)):
        raise ArgumentError(f"run must be a tracked run with log() and finish(), got {type(run).__name__}. "
                            "Pass tracked.run('version').")
    if (holdout is None) != (judge is None):
        raise ArgumentError(f"holdout and judge must be given together, got holdout={'set' if holdout is not None else None}"
                            f" and judge={'set' if judge is not None else None}. Pass both for the held-out delta.")
    require("transformers", what="wai.train.tracked_callback")
    from transformers import TrainerCallback

    from whileai.train._holdout import grade_rows, holdout_delta, summary_holdout
    from whileai.train._reward import trl_reward
    from whileai.train._sample import prompt_tasks, sample_rows

    grader = None if judge is None else trl_reward(judge)
    tasks = None if holdout is None else prompt_tasks(holdout)
    if monitor is not None and getattr(monitor, "run", None) is None:
        monitor.run = run
    memo: dict[str, Any] = {"before": None, "started": None}

    def warn(what: str, exc: Exception) -> None:
        warnings.warn(f"{what} failed and was skipped: {exc}", RuntimeWarning, stacklevel=3)

    class _Tracked(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            memo["started"] = time.perf_counter()
            model, tok = kw.get("model"), kw.get("processing_class") or kw.get("tokenizer")
            if tasks and grader is not None and model is not None and tok is not None:
                try:
                    memo["before"] = grade_rows(grader, sample_rows(
                        model, tok, tasks, k=MONITOR_K, max_new_tokens=max_new_tokens,
                        temperature=MONITOR_SAMPLE_TEMPERATURE, top_p=MONITOR_SAMPLE_TOP_P, seed=seed))
                except Exception as exc:  # boundary: a tracking or monitor failure warns, never stops training
                    warn("sampling the holdout before training", exc)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if not logs:
                return
            if monitor is not None and logs.get("kl") is not None:
                monitor.record_kl(state.global_step, float(logs["kl"]))
            loss, lr = logs.get("loss"), logs.get("learning_rate")
            numbers = _numbers(logs)
            if loss is None and lr is None and not numbers:
                return
            try:
                run.log(step=int(state.global_step), loss=None if loss is None else float(loss),
                        lr=None if lr is None else float(lr), **numbers)
            except Exception as exc:  # boundary: a tracking or monitor failure warns, never stops training
                warn("run.log", exc)

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            if monitor is None:
                return control
            monitor.step = state.global_step
            if state.global_step % monitor.every == 0:
                model, tok = kw.get("model"), kw.get("processing_class") or kw.get("tokenizer")
                try:
                    if model is not None and tok is not None:
                        monitor.sample_holdout(model, tok, state.global_step)
                    monitor.check(state.global_step)
                except Exception as exc:  # boundary: a tracking or monitor failure warns, never stops training
                    warn("the hack monitor's check", exc)
            if monitor.stopped:
                control.should_training_stop = True
            return control

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            model, tok = kw.get("model"), kw.get("processing_class") or kw.get("tokenizer")
            block = None
            if tasks and grader is not None and memo["before"] is not None and model is not None and tok is not None:
                try:
                    block = holdout_delta(tasks, grader, memo["before"], model, tok, seed=seed,
                                          max_new_tokens=max_new_tokens, run=run)
                except Exception as exc:  # boundary: a tracking or monitor failure warns, never stops training
                    warn("the held-out delta", exc)
            if not finish:
                return
            stopped = monitor is not None and monitor.stopped
            summary: dict[str, Any] = {"steps": int(state.global_step)}
            if block is not None:
                summary["holdout"] = summary_holdout(block)
            if monitor is not None:
                summary["alarms"] = [a["line"] for a in monitor.alarms]
                if stopped:
                    summary["stop_reason"] = monitor.stop_reason
            seconds = time.perf_counter() - memo["started"] if memo["started"] is not None else None
            try:
                run.finish(status="stopped" if stopped else "done", summary=summary,
                           hours=None if seconds is None else seconds / 3600)
            except Exception as exc:  # boundary: a tracking or monitor failure warns, never stops training
                warn("run.finish", exc)

    return _Tracked()
