"""``sft``, ``dpo``, ``grpo``, ``reward_model``: thin over TRL. We choose the data shape, the masks and the knobs.

Each call checks what the trainer will use (``profile``, ``selection_report``) before it checks
for the train extra, so a refused set is reported on a machine without torch too; then it builds the TRL
trainer from our own TRL-format export, trains a LoRA adapter by default (Hu et al. 2021,
arXiv:2106.09685), logs the curve to a tracked run when one is given, measures the held-out
before/after, and returns a :class:`TrainResult`.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

from whileai import table
from whileai.defaults import (
    DEFAULT_SEED,
    MONITOR_K,
    MONITOR_MAX_NEW_TOKENS,
    MONITOR_N_PROMPTS,
    MONITOR_SAMPLE_TEMPERATURE,
    MONITOR_SAMPLE_TOP_P,
    REWARD_MODEL_HOLDOUT_BEHAVIOR,
    REWARD_MODEL_THRESHOLD,
    TRAIN_MIN_MIXED_TASKS,
    TRAIN_OUTPUT_DIR,
    TRAIN_PROMPTS_PER_STEP,
    TRAINING_LORA_ALPHA,
    TRAINING_LORA_LR_FACTOR,
    TRAINING_LORA_RANK,
    TRAINING_SFT_EPOCHS,
    TRAINING_STEPS,
)
from whileai.errors import ArgumentError, TrainingSelectionError
from whileai.train._extra import require_extra
from whileai.train._holdout import grade_rows, holdout_delta, post_holdout, summary_holdout
from whileai.train._knobs import check_knobs, paper_value
from whileai.train._monitor import HackMonitor
from whileai.train._profile import SelectionReport, profile, selection_report
from whileai.train._result import (
    CurvePoint,
    HeldOutNumbers,
    HeldOutRates,
    HeldOutSide,
    Knobs,
    TrainResult,
    cost_line,
)
from whileai.train._reward import TrlReward, trl_reward
from whileai.train._rm import calibrated_cut
from whileai.train._sample import prompt_tasks, sample_rows

__all__ = ["dpo", "grpo", "reward_model", "sft"]

# ---------------------------------------------------------------------------------------------
# shared pieces
# ---------------------------------------------------------------------------------------------


def _check_args(base_model: Any, run: Any) -> None:
    """The arguments every training call takes, checked before any row is read."""
    if not isinstance(base_model, (str, os.PathLike)) or not str(base_model):
        raise ArgumentError(f"base_model must be a hub name or a local model directory, got {base_model!r}. "
                            "Pass base_model='Qwen/Qwen2.5-0.5B-Instruct' for example.")
    for name in ("log", "finish"):
        if run is not None and not callable(getattr(run, name, None)):
            raise ArgumentError(f"run must be a tracked run with log(), delta() and finish(), got {type(run).__name__}. "
                                "Pass a run from whileai.platform, or None.")


def _setup(method: str, output: Any) -> Path:
    """After the selection check: the extra (MissingExtraError names the pip line), then the output path.

    The selection check runs first, so a set the method would refuse (or warn about) is reported
    on a machine without torch too.
    """
    require_extra(what=f"whileai.train.{method if method != 'rm' else 'reward_model'}")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(output) if output is not None else Path(TRAIN_OUTPUT_DIR) / f"{method}-{stamp}"


def _device() -> tuple[str, bool]:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.get_device_name(0), False
    return "cpu", True


def _tokenizer(base_model: str) -> Any:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(base_model))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def _causal_lm(base_model: str) -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(base_model))


def _lora(lora: bool, task_type: str = "CAUSAL_LM") -> Any:
    if not lora:
        return None
    from peft import LoraConfig

    return LoraConfig(r=TRAINING_LORA_RANK, lora_alpha=TRAINING_LORA_ALPHA, lora_dropout=0.0,
                      target_modules="all-linear", task_type=task_type)


def _lr(method: str, knobs: dict[str, Any], lora: bool) -> float:
    if "learning_rate" in knobs:
        return float(knobs["learning_rate"])
    paper = float(paper_value("learning_rate", method))
    return paper * TRAINING_LORA_LR_FACTOR if lora else paper


def _common_args(out: Path, *, lr: float, cpu: bool, seed: int, batch: int, steps: int | None = None,
                 epochs: int | None = None) -> dict[str, Any]:
    args: dict[str, Any] = dict(output_dir=str(out / "checkpoints"), report_to=[], learning_rate=lr, use_cpu=cpu,
                                logging_steps=1, save_strategy="no", seed=seed, per_device_train_batch_size=batch,
                                dataset_num_proc=None, disable_tqdm=None)
    if steps is not None:
        args["max_steps"] = steps
    if epochs is not None:
        args["num_train_epochs"] = epochs
    return args


def _curve_callback(curve: list[dict[str, Any]]) -> Any:
    from transformers import TrainerCallback

    class _Curve(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if not logs or "loss" not in logs:
                return
            numbers = {k: float(v) for k, v in logs.items()
                       if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in ("loss", "learning_rate", "epoch")}
            curve.append({"step": int(state.global_step), "loss": float(logs["loss"]),
                          "lr": float(logs["learning_rate"]) if "learning_rate" in logs else None, **numbers})

    return _Curve()


def _callbacks(curve: list[dict[str, Any]], run: Any) -> list[Any]:
    """The curve kept for the result, and a tracked run reported through ``tracked_callback``.

    The callback logs every line (loss, learning rate, the rewards GRPO logs, other numbers); the
    trainer samples the holdout itself (``post_holdout`` posts the delta and the score, as the
    callback does) and finishes the run with its cost and adapter (``_finish``), so the callback
    is made with ``finish=False`` and no holdout.
    """
    if run is None:
        return [_curve_callback(curve)]
    from whileai.train._callback import tracked_callback

    return [_curve_callback(curve), tracked_callback(run, finish=False)]


def _check_sft(rows: Any, check: str) -> SelectionReport:
    if check not in ("error", "warn"):
        raise ArgumentError(f"check must be 'error' or 'warn', got {check!r}. Pass check='warn' to train on failing rows on purpose.")
    report = selection_report(profile(rows), method="sft")
    if not report.ok:
        if check == "error":
            raise TrainingSelectionError(report.warnings[0], report=report)
        warnings.warn(report.warnings[0], stacklevel=3)
    return report


def _check_grouped(rows: Any, method: str, min_mixed_tasks: int) -> SelectionReport:
    report = selection_report(profile(rows), method=method, min_mixed_tasks=min_mixed_tasks)
    for w in report.warnings:
        warnings.warn(w, stacklevel=3)
    return report


def _before(holdout: list[dict[str, Any]] | None, judge: TrlReward | None, model: Any, tok: Any, *, seed: int,
            max_new_tokens: int) -> list[dict[str, Any]] | None:
    if not holdout or judge is None:
        return None
    return grade_rows(judge, sample_rows(model, tok, holdout, k=MONITOR_K, max_new_tokens=max_new_tokens,
                                     temperature=MONITOR_SAMPLE_TEMPERATURE, top_p=MONITOR_SAMPLE_TOP_P, seed=seed))


def _finish(trainer: Any, *, method: str, base_model: Any, out: Path, started: float, device: str, knobs: dict[str, Any],
            curve: list[dict[str, Any]], selection: SelectionReport | None, run: Any, n_train: int,
            gpu_usd_per_hour: float | None, holdout: HeldOutRates | HeldOutNumbers | None = None, status: str = "done",
            stop_reason: str | None = None, **extra: Any) -> TrainResult:
    seconds = time.perf_counter() - started
    adapter = out / "adapter"
    trainer.save_model(str(adapter))
    cost, basis = cost_line(seconds, device, gpu_usd_per_hour)
    result = TrainResult(method=method, base_model=str(base_model), adapter=str(adapter), status=status,
                         stop_reason=stop_reason, steps=int(trainer.state.global_step), seconds=round(seconds, 3),
                         device=device, cost_usd=cost, cost_basis=basis, knobs=Knobs.model_validate(knobs),
                         curve=[CurvePoint.model_validate(p) for p in curve], selection=selection,
                         holdout=holdout, n_train=n_train, **extra)
    bad = [p for p in curve if not math.isfinite(p["loss"])]
    if bad:
        result.warnings.append(f"{len(bad)} logged loss values are not finite (first at step {bad[0]['step']}); lower learning_rate.")
    if run is not None:
        summary = {"method": method, "base_model": str(base_model), "steps": result.steps, "seconds": result.seconds,
                   "device": device, "cost_usd": cost, "cost_basis": basis,
                   "holdout": summary_holdout(holdout) if holdout else None}
        if result.monitor:
            summary["alarms"] = [a["line"] for a in result.monitor.get("alarms", [])]
        if stop_reason:
            summary["stop_reason"] = stop_reason
        run.finish(status=status, hours=seconds / 3600, cost_usd=cost, summary=summary, adapter=str(adapter))
    return result


def _judge_or_none(judge: Any) -> TrlReward | None:
    if judge is None:
        return None
    return judge if isinstance(judge, TrlReward) else trl_reward(judge)


# ---------------------------------------------------------------------------------------------
# SFT
# ---------------------------------------------------------------------------------------------


def sft(rows: Any, base_model: str, /, *, holdout: Any = None, judge: Callable[[dict[str, Any]], Any] | None = None,
        epochs: int | None = None, learning_rate: float | None = None, check: Literal["error", "warn"] = "error",
        lora: bool = True, batch_size: int = 4, system_prompt: str | None = None, tools: Any = None,
        output: str | os.PathLike[str] | None = None, run: Any = None, gpu_usd_per_hour: float | None = None,
        max_new_tokens: int = MONITOR_MAX_NEW_TOKENS, seed: int = DEFAULT_SEED) -> TrainResult:
    """Supervised fine-tuning on the agent's turns of passing rollouts, with TRL's ``SFTTrainer``.

    The loss is on the agent's turns only: with a chat template that marks them
    (``{% generation %}``) the rows are whole conversations under ``assistant_only_loss``;
    otherwise each agent turn becomes a prompt/completion row (``unroll=True``) under
    ``completion_only_loss``, which trains the same tokens on any template. SFT imitates every
    row, so failing rows are refused (``TrainingSelectionError``) unless ``check="warn"``.

    Args:
        rows: Graded rollouts (or a path); select passing rows first.
        base_model: Hub name or local directory.
        holdout: Held-out rows. With ``judge`` the holdout is sampled before and after and read
            with ``delta_report`` (pass@1); without, the held-out loss before and after.
        judge: Scores holdout samples (the judge contract).
        epochs: Passes over the set (``TRAINING_SFT_EPOCHS`` when None).
        learning_rate: Optimizer rate (ten times the paper's full-weight rate under LoRA).
        check: ``"error"`` refuses failing rows; ``"warn"`` trains on them with a warning.
        lora: Train a LoRA adapter (rank ``TRAINING_LORA_RANK``); False trains every weight.
        batch_size: Rows per device step.
        system_prompt: System prompt added to every conversation.
        tools: Tool schemas rendered by the chat template.
        output: Directory for the adapter (default ``wai-train/sft-<time>``).
        run: A tracked run: the curve goes to ``run.log``, the held-out delta to ``run.delta``,
            and ``run.finish`` closes it with hours, cost and the adapter.
        gpu_usd_per_hour: The GPU's hourly rate, for the cost line (None: unknown).
        max_new_tokens: New tokens a holdout sample.
        seed: Seed of training and sampling.

    Returns:
        A :class:`TrainResult`.

    Raises:
        TrainingSelectionError: Failing rows with ``check="error"``.
        ArgumentError: A knob out of range (the message gives the paper's value).
        MissingExtraError: The train extra is missing (``pip install 'whileai[train]'``).
    """
    knobs = check_knobs("sft", {"epochs": epochs, "learning_rate": learning_rate})
    _check_args(base_model, run)
    df = table.frame(rows)
    selection = _check_sft(df, check)
    out = _setup("sft", output)
    from trl import SFTConfig, SFTTrainer

    from whileai.exporters import trl_dataset

    tok = _tokenizer(base_model)
    marked = "generation" in (tok.chat_template or "")
    options = {"system_prompt": system_prompt, "tools": tools}
    train_ds = trl_dataset(df, **options) if marked else trl_dataset(df, unroll=True, **options)
    eval_ds = None
    if holdout is not None and judge is None:
        hdf = table.frame(holdout)
        eval_ds = trl_dataset(hdf, **options) if marked else trl_dataset(hdf, unroll=True, **options)
    device, cpu = _device()
    model = _causal_lm(base_model)
    gold = _judge_or_none(judge)
    tasks = prompt_tasks(holdout) if holdout is not None and gold is not None else None
    before = _before(tasks, gold, model, tok, seed=seed, max_new_tokens=max_new_tokens)
    args = SFTConfig(**_common_args(out, lr=_lr("sft", knobs, lora), cpu=cpu, seed=seed, batch=batch_size,
                                    epochs=knobs.get("epochs", TRAINING_SFT_EPOCHS)),
                     assistant_only_loss=marked, completion_only_loss=None if marked else True,
                     per_device_eval_batch_size=batch_size)
    curve: list[dict[str, Any]] = []
    trainer = SFTTrainer(model=model, args=args, processing_class=tok, train_dataset=train_ds, eval_dataset=eval_ds,
                         peft_config=_lora(lora), callbacks=_callbacks(curve, run))
    loss_before = trainer.evaluate()["eval_loss"] if eval_ds is not None else None
    started = time.perf_counter()
    trainer.train()
    held: HeldOutRates | HeldOutNumbers | None = None
    if eval_ds is not None and loss_before is not None:
        held = _loss_block(float(loss_before), float(trainer.evaluate()["eval_loss"]), len(eval_ds))
    elif before is not None and tasks is not None and gold is not None:
        held = holdout_delta(tasks, gold, before, trainer.model, tok, seed=seed, max_new_tokens=max_new_tokens, run=run)
    return _finish(trainer, method="sft", base_model=base_model, out=out, started=started, device=device, knobs=knobs,
                   curve=curve, selection=selection, run=run, n_train=len(train_ds), gpu_usd_per_hour=gpu_usd_per_hour,
                   holdout=held)


# ---------------------------------------------------------------------------------------------
# DPO
# ---------------------------------------------------------------------------------------------


def _pairs(rows: Any, method: str, min_mixed_tasks: int) -> tuple[Any, SelectionReport | None]:
    """Preference pairs as given, or built from graded rollouts after the selection check."""
    if isinstance(rows, (list, tuple)) and rows and isinstance(rows[0], dict) and "chosen" in rows[0]:
        return list(rows), None
    import polars as pl

    if isinstance(rows, pl.DataFrame) and "chosen" in rows.columns:
        return rows, None
    from whileai.selection import build_preference_pairs

    df = table.frame(rows)
    selection = _check_grouped(df, method, min_mixed_tasks)
    pairs = build_preference_pairs(df).df
    if pairs.height == 0:
        raise TrainingSelectionError(
            f"rows must hold tasks with both a pass and a fail to pair, got {selection.n_used} mixed tasks. "
            "Simulate more rollouts a task, or pass pairs (prompt, chosen, rejected) directly.")
    return pairs, selection


def dpo(pairs: Any, base_model: str, /, *, holdout: Any = None, judge: Callable[[dict[str, Any]], Any] | None = None,
        steps: int | None = None, beta: float | None = None, loss_type: str | None = None,
        learning_rate: float | None = None, lora: bool = True, batch_size: int = 4, system_prompt: str | None = None,
        min_mixed_tasks: int = TRAIN_MIN_MIXED_TASKS, output: str | os.PathLike[str] | None = None, run: Any = None,
        gpu_usd_per_hour: float | None = None, max_new_tokens: int = MONITOR_MAX_NEW_TOKENS,
        seed: int = DEFAULT_SEED) -> TrainResult:
    """Direct preference optimisation (Rafailov et al. 2023, arXiv:2305.18290) with TRL's ``DPOTrainer``.

    ``pairs`` are preference pairs (``prompt``, ``chosen``, ``rejected``, from
    ``build_preference_pairs``) or graded rollouts, paired here after the selection check (fewer
    than ``min_mixed_tasks`` mixed tasks warns). The TRL export cuts each side to the one agent
    turn where they diverge and puts the shared conversation in the prompt, which DPO never
    puts loss on. LoRA by default: the reference model is the base with the adapter off.

    Args:
        pairs: Pairs, or graded rollouts to pair.
        base_model: Hub name or local directory.
        holdout: Held-out rows sampled before and after and graded with ``judge``.
        judge: The holdout's judge.
        steps: Optimizer steps (``TRAINING_STEPS`` when None).
        beta: DPO's beta (the paper used 0.1).
        loss_type: ``sigmoid`` (DPO), ``ipo``, ``hinge`` or ``robust``.
        learning_rate: Optimizer rate.
        lora: Train a LoRA adapter.
        batch_size: Pairs per device step.
        system_prompt: System prompt added to every pair.
        min_mixed_tasks: Fewest mixed tasks before the warning.
        output: Directory for the adapter.
        run: A tracked run (see :func:`sft`).
        gpu_usd_per_hour: The GPU's hourly rate, for the cost line.
        max_new_tokens: New tokens a holdout sample.
        seed: Seed.

    Returns:
        A :class:`TrainResult`.
    """
    knobs = check_knobs("dpo", {"steps": steps, "beta": beta, "loss_type": loss_type, "learning_rate": learning_rate})
    _check_args(base_model, run)
    pair_rows, selection = _pairs(pairs, "dpo", min_mixed_tasks)
    out = _setup("dpo", output)
    from trl import DPOConfig, DPOTrainer

    from whileai.exporters import trl_dataset

    tok = _tokenizer(base_model)
    train_ds = trl_dataset(pair_rows, kind="preference", system_prompt=system_prompt)
    device, cpu = _device()
    model = _causal_lm(base_model)
    gold = _judge_or_none(judge)
    tasks = prompt_tasks(holdout) if holdout is not None and gold is not None else None
    before = _before(tasks, gold, model, tok, seed=seed, max_new_tokens=max_new_tokens)
    extra = {k: knobs[k] for k in ("beta", "loss_type") if k in knobs}
    args = DPOConfig(**_common_args(out, lr=_lr("dpo", knobs, lora), cpu=cpu, seed=seed, batch=batch_size,
                                    steps=knobs.get("steps", TRAINING_STEPS)), **extra)
    curve: list[dict[str, Any]] = []
    trainer = DPOTrainer(model=model, args=args, processing_class=tok, train_dataset=train_ds,
                         peft_config=_lora(lora), callbacks=_callbacks(curve, run))
    started = time.perf_counter()
    trainer.train()
    held = None
    if before is not None and tasks is not None and gold is not None:
        held = holdout_delta(tasks, gold, before, trainer.model, tok, seed=seed, max_new_tokens=max_new_tokens, run=run)
    return _finish(trainer, method="dpo", base_model=base_model, out=out, started=started, device=device, knobs=knobs,
                   curve=curve, selection=selection, run=run, n_train=len(train_ds), gpu_usd_per_hour=gpu_usd_per_hour,
                   holdout=held)


# ---------------------------------------------------------------------------------------------
# GRPO
# ---------------------------------------------------------------------------------------------


def _prompt_dataset(tasks: list[dict[str, Any]]) -> Any:
    import datasets

    rows = [{k: (v if v is None or isinstance(v, (str, int, float, bool)) else str(v)) for k, v in t.items()} for t in tasks]
    return datasets.Dataset.from_list(rows, on_mixed_types="use_json")


def grpo(rows: Any, base_model: str, /, *, reward: Callable[[dict[str, Any]], Any], holdout: Any = None,
         gold: Callable[[dict[str, Any]], Any] | None = None, monitor: HackMonitor | bool = True,
         steps: int | None = None, generations: int | None = None, learning_rate: float | None = None,
         beta: float | None = None, max_completion_length: int | None = None, temperature: float | None = None,
         loss_type: str | None = None, truncated: str | None = None, prompts_per_step: int = TRAIN_PROMPTS_PER_STEP,
         lora: bool = True, min_mixed_tasks: int = TRAIN_MIN_MIXED_TASKS, output: str | os.PathLike[str] | None = None,
         run: Any = None, gpu_usd_per_hour: float | None = None, seed: int = DEFAULT_SEED) -> TrainResult:
    """Group-relative policy optimisation (Shao et al. 2024, arXiv:2402.03300) on the judge, with TRL's ``GRPOTrainer``.

    The prompts are one per task of ``rows`` (the conversation up to the agent's first turn,
    with the task's columns beside it for the judge). ``reward`` is a judge under the judge
    contract, turned into TRL's reward function by :func:`trl_reward`, so the policy trains on
    the judge that graded the eval. A :class:`HackMonitor` watches by default (``monitor=True``
    builds one on ``holdout`` with ``gold``); a ``stop_on`` alarm stops training and the result
    and run finish as stopped. At the end the holdout is sampled again and graded by ``gold``
    (or the reward judge) into the held-out delta.

    Args:
        rows: Graded rollouts whose tasks give the prompts (the selection check warns under
            ``min_mixed_tasks`` mixed tasks).
        base_model: Hub name or local directory.
        reward: The training judge (or a :class:`TrlReward`).
        holdout: Held-out rows for the monitor and the delta (default: ``rows``, with a warning).
        gold: A scorer the proxy cannot see, for the monitor and the delta.
        monitor: True (default), False, or a configured :class:`HackMonitor`.
        steps: Optimizer steps (``TRAINING_STEPS`` when None).
        generations: Completions a prompt (the group size).
        learning_rate: Optimizer rate.
        beta: KL coefficient (0 keeps no reference model; DeepSeekMath used 0.04).
        max_completion_length: Tokens a completion.
        temperature: Sampling temperature.
        loss_type: ``grpo``, ``dr_grpo``, ``dapo`` or ``bnpo``.
        truncated: ``mask`` leaves truncated completions out of the loss; ``keep`` trains them.
        prompts_per_step: Prompts a device step (the batch is ``prompts_per_step x generations``).
        lora: Train a LoRA adapter.
        min_mixed_tasks: Fewest mixed tasks before the warning.
        output: Directory for the adapter.
        run: A tracked run (see :func:`sft`); the monitor logs proxy_reward, gold_reward and
            holdout_length to it.
        gpu_usd_per_hour: The GPU's hourly rate, for the cost line.
        seed: Seed.

    Returns:
        A :class:`TrainResult` with ``reward`` (judge counters) and ``monitor`` (its summary).
    """
    knobs = check_knobs("grpo", {"steps": steps, "generations": generations, "learning_rate": learning_rate,
                                 "beta": beta, "max_completion_length": max_completion_length,
                                 "temperature": temperature, "loss_type": loss_type, "truncated": truncated})
    _check_args(base_model, run)
    judge = _judge_or_none(reward)
    if judge is None:
        raise ArgumentError("reward must be a judge taking a row dict, got None. Pass reward=your_judge (the eval's judge).")
    df = table.frame(rows)
    selection = _check_grouped(df, "grpo", min_mixed_tasks)
    out = _setup("grpo", output)
    from trl import GRPOConfig, GRPOTrainer

    if holdout is None:
        holdout = df
        warnings.warn("grpo: no holdout= given, so the monitor and the held-out delta sample the training prompts; "
                      "pass the eval's held-out rows to measure generalisation.", stacklevel=2)
    mon: HackMonitor | None
    if monitor is True:
        mon = HackMonitor(holdout=holdout, gold=gold, run=run, seed=seed)
    elif isinstance(monitor, HackMonitor):
        mon = monitor
        if mon.holdout is None:
            mon.holdout = holdout
        if mon.run is None:
            mon.run = run
        if mon.gold is None and gold is not None:
            mon.gold = trl_reward(gold, name="gold")
    else:
        mon = None
    reward_fn: Any = mon.wrap(judge) if mon is not None else judge
    tok = _tokenizer(base_model)
    train_ds = _prompt_dataset(prompt_tasks(df))
    device, cpu = _device()
    model = _causal_lm(base_model)
    n_gen = knobs.get("generations", 8)
    max_len = knobs.get("max_completion_length", MONITOR_MAX_NEW_TOKENS)
    final_judge = _judge_or_none(gold) or trl_reward(judge.judge, name=judge.name)
    tasks = prompt_tasks(holdout, limit=MONITOR_N_PROMPTS)
    before = _before(tasks, final_judge, model, tok, seed=seed, max_new_tokens=max_len)
    extra: dict[str, Any] = {"num_generations": n_gen, "max_completion_length": max_len}
    for knob, key in (("beta", "beta"), ("temperature", "temperature"), ("loss_type", "loss_type")):
        if knob in knobs:
            extra[key] = knobs[knob]
    if "truncated" in knobs:
        extra["mask_truncated_completions"] = knobs["truncated"] == "mask"
    common = _common_args(out, lr=_lr("grpo", knobs, lora), cpu=cpu, seed=seed, batch=prompts_per_step * n_gen,
                          steps=knobs.get("steps", TRAINING_STEPS))
    common.pop("dataset_num_proc", None)
    args = GRPOConfig(**common, **extra)
    curve: list[dict[str, Any]] = []
    callbacks = _callbacks(curve, run) + ([mon.callback()] if mon is not None else [])
    trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=args, train_dataset=train_ds, processing_class=tok,
                          peft_config=_lora(lora), callbacks=callbacks)
    started = time.perf_counter()
    trainer.train()
    held = holdout_delta(tasks, final_judge, before or [], trainer.model, tok, seed=seed, max_new_tokens=max_len,
                          run=run) if before is not None else None
    stopped = mon is not None and mon.stopped
    summary = mon.summary() if mon is not None else None
    return _finish(trainer, method="grpo", base_model=base_model, out=out, started=started, device=device, knobs=knobs,
                   curve=curve, selection=selection, run=run, n_train=len(train_ds), gpu_usd_per_hour=gpu_usd_per_hour,
                   holdout=held, status="stopped" if stopped else "done",
                   stop_reason=mon.stop_reason if stopped and mon is not None else None,
                   reward=judge.stats(), monitor=summary)


# ---------------------------------------------------------------------------------------------
# reward model
# ---------------------------------------------------------------------------------------------


def _pair_scores(model: Any, tok: Any, ds: Any) -> tuple[list[float], list[float]]:
    """The raw scores of each pair's chosen (passing) and rejected (failing) side."""
    import torch

    from whileai.train._rm import score_texts

    chosen, rejected = [], []
    for ex in ds:
        prompt = ex["prompt"]
        chosen.append(tok.apply_chat_template([*prompt, *ex["chosen"]], tokenize=False))
        rejected.append(tok.apply_chat_template([*prompt, *ex["rejected"]], tokenize=False))
    with torch.no_grad():
        return score_texts(model, tok, chosen), score_texts(model, tok, rejected)


def _pair_accuracy(model: Any, tok: Any, ds: Any) -> float:
    """Share of pairs whose chosen side scores above the rejected side."""
    a, b = _pair_scores(model, tok, ds)
    return float(sum(x > y for x, y in zip(a, b)) / max(len(a), 1))


def _pair_block(before: float, after: float, n_pairs: int, *, on: str) -> HeldOutRates:
    """The reward model's held-out pair accuracy in the one ``summary["holdout"]`` shape (Wilson intervals).

    ``on`` says which pairs were read: ``holdout``, or ``train`` when no holdout was given.
    """
    from whileai.stats.wilson import wilson

    def side(acc: float) -> HeldOutSide:
        lo, hi = wilson(np.array([round(acc * n_pairs)]), np.array([max(n_pairs, 1)]))
        return HeldOutSide(pass_rate=acc, n_tasks=n_pairs, k=1, ci95=[float(lo[0]), float(hi[0])])

    return HeldOutRates(metric="pair_accuracy", before=side(before), after=side(after), delta=after - before,
                        ci95=None, verdict=None, on=on)


def _loss_block(before: float, after: float, n: int) -> HeldOutNumbers:
    """SFT's held-out block without a judge: the eval loss before and after on ``n`` rows (lower is better)."""
    return HeldOutNumbers(metric="loss", before=before, after=after, delta=after - before, lower_is_better=True, n=n)


def reward_model(rows: Any, base_model: str, /, *, holdout: Any = None, steps: int | None = None,
                 learning_rate: float | None = None, lora: bool = True, batch_size: int = 4,
                 system_prompt: str | None = None, threshold: float | None = None,
                 min_mixed_tasks: int = TRAIN_MIN_MIXED_TASKS, output: str | os.PathLike[str] | None = None,
                 run: Any = None, gpu_usd_per_hour: float | None = None, seed: int = DEFAULT_SEED) -> TrainResult:
    """Train a Bradley-Terry reward model on pass-versus-fail pairs with TRL's ``RewardTrainer``.

    Pairs come from the rows (``build_preference_pairs``, after the selection check) or are
    given. The held-out block is pair accuracy on the held-out pairs (or the training pairs,
    with a warning) before and after (Ouyang et al. 2022, InstructGPT, arXiv:2203.02155,
    section 3.5). ``wai.reward_model(result)`` is the trained model as a judge.

    Args:
        rows: Graded rollouts, or pairs.
        base_model: Hub name or local directory.
        holdout: Held-out rollouts or pairs for the accuracy.
        steps: Optimizer steps (``TRAINING_STEPS`` when None).
        learning_rate: Optimizer rate.
        lora: Train a LoRA adapter (the score head is trained in full).
        batch_size: Pairs per device step.
        system_prompt: System prompt added to every pair.
        threshold: The judge passes a reply at sigmoid(score) >= threshold. None (the default)
            calibrates it on the held-out pairs (:func:`calibrated_cut`); without ``holdout=`` it
            falls back to ``REWARD_MODEL_THRESHOLD`` and warns. ``threshold_basis`` says which.
        min_mixed_tasks: Fewest mixed tasks before the warning.
        output: Directory for the model.
        run: A tracked run (see :func:`sft`).
        gpu_usd_per_hour: The GPU's hourly rate, for the cost line.
        seed: Seed.

    Returns:
        A :class:`TrainResult` with ``threshold`` and ``holdout`` = pair accuracy before/after.
    """
    knobs = check_knobs("rm", {"steps": steps, "learning_rate": learning_rate})
    if threshold is not None and not (isinstance(threshold, (int, float)) and 0 < threshold < 1):
        raise ArgumentError(f"threshold must be a number in (0, 1), got {threshold!r}. Pass threshold=0.5.")
    _check_args(base_model, run)
    pair_rows, selection = _pairs(rows, "rm", min_mixed_tasks)
    out = _setup("rm", output)
    from transformers import AutoModelForSequenceClassification
    from trl import RewardConfig, RewardTrainer

    from whileai.exporters import trl_dataset

    tok = _tokenizer(base_model)
    train_ds = trl_dataset(pair_rows, kind="preference", system_prompt=system_prompt)
    if holdout is not None:
        held_pairs, _ = _pairs(holdout, "rm", 0)
        eval_ds = trl_dataset(held_pairs, kind="preference", system_prompt=system_prompt)
    else:
        eval_ds = train_ds
        warnings.warn("reward_model: no holdout= given, so pair accuracy is read on the training pairs.", stacklevel=2)
    device, cpu = _device()
    model = AutoModelForSequenceClassification.from_pretrained(str(base_model), num_labels=1)
    model.config.pad_token_id = tok.pad_token_id
    acc_before = _pair_accuracy(model, tok, eval_ds)
    args = RewardConfig(**_common_args(out, lr=_lr("rm", knobs, lora), cpu=cpu, seed=seed, batch=batch_size,
                                       steps=knobs.get("steps", TRAINING_STEPS)))
    curve: list[dict[str, Any]] = []
    trainer = RewardTrainer(model=model, args=args, processing_class=tok, train_dataset=train_ds,
                            peft_config=_lora(lora, "SEQ_CLS"), callbacks=_callbacks(curve, run))
    started = time.perf_counter()
    trainer.train()
    acc_after = _pair_accuracy(trainer.model, tok, eval_ds)
    held = _pair_block(acc_before, acc_after, len(eval_ds), on="holdout" if holdout is not None else "train")
    if threshold is not None:
        cut, basis = float(threshold), f"given: threshold={float(threshold):g}"
    elif holdout is not None:
        passes, fails = _pair_scores(trainer.model, tok, eval_ds)
        cut, basis = calibrated_cut(passes, fails)
    else:
        cut, basis = REWARD_MODEL_THRESHOLD, (f"fallback {REWARD_MODEL_THRESHOLD:g}: no holdout= pairs to calibrate on "
                                              "(pass holdout= to cut where held-out passes and failures part)")
        warnings.warn(f"reward_model: the judge's cut is the {basis}.", stacklevel=2)
    if run is not None and holdout is not None:  # the held-out pair accuracy, a score of its own behavior
        post_holdout(run, None, None, held, behavior=REWARD_MODEL_HOLDOUT_BEHAVIOR)
    result = _finish(trainer, method="rm", base_model=base_model, out=out, started=started, device=device, knobs=knobs,
                     curve=curve, selection=selection, run=run, n_train=len(train_ds), gpu_usd_per_hour=gpu_usd_per_hour,
                     holdout=held, threshold=cut, threshold_basis=basis)
    tok.save_pretrained(result.adapter)
    return result
