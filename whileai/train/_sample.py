"""Holdout prompts from rows, and completions sampled from a live policy (torch only at call time)."""

from __future__ import annotations

from typing import Any

import polars as pl

from whileai import table

__all__ = ["prompt_tasks", "sample_rows"]

_DROP = ("messages", "final_text", "reward", "rollout_id", "rollout_index", "markers", "judge_status", "judge_meta",
         "steps", "prompt")


def _prompt_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    system = row.get("system_prompt")
    for m in row.get("messages") or []:
        if m.get("role") == "assistant":
            break
        if m.get("role") in ("system", "user"):
            msgs.append({"role": m["role"], "content": m.get("content") or ""})
    if not msgs and row.get("prompt"):
        msgs = [{"role": "user", "content": str(row["prompt"])}]
    if system and not any(m["role"] == "system" for m in msgs):
        msgs.insert(0, {"role": "system", "content": str(system)})
    return msgs


def prompt_tasks(rows: Any, *, limit: int | None = None) -> list[dict[str, Any]]:
    """One prompt per task, in first-seen order: ``{"prompt": [messages up to the first agent turn], **task columns}``.

    The task columns are the first row's scalar fields (identity, reference, tier...), so a judge
    scoring a sampled completion sees what it saw when grading the eval.
    """
    df = table.frame(rows)
    first = df.unique(subset="task_key", keep="first", maintain_order=True)
    if limit is not None:
        first = first.head(limit)
    scalar = [c for c, t in first.schema.items()
              if c not in _DROP and not isinstance(t, (pl.List, pl.Struct, pl.Array, pl.Object))]
    out = []
    for row in first.iter_rows(named=True):
        task = {c: row[c] for c in scalar}
        task["prompt"] = _prompt_of(row)
        out.append(task)
    return out


def sample_rows(model: Any, tokenizer: Any, tasks: list[dict[str, Any]], *, k: int, max_new_tokens: int,
                temperature: float, top_p: float, seed: int) -> list[dict[str, Any]]:
    """Sample ``k`` completions per task from ``model``; one rollout row dict each (no reward yet).

    Each row carries the task's columns, ``rollout_index``, ``prompt`` (the last user turn),
    ``messages`` (prompt turns plus the completion), ``final_text`` and ``n_tokens``.
    """
    import torch

    was_training = model.training
    model.eval()
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    device = next(model.parameters()).device
    out: list[dict[str, Any]] = []
    try:
        texts = [tokenizer.apply_chat_template(t["prompt"], tokenize=False, add_generation_prompt=True) for t in tasks]
        torch.manual_seed(seed)
        enc = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
        with torch.no_grad():
            gen = model.generate(**enc, do_sample=True, temperature=temperature, top_p=top_p,
                                 max_new_tokens=max_new_tokens, num_return_sequences=k,
                                 pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
        new = gen[:, enc["input_ids"].shape[1]:]
        for i, task in enumerate(tasks):
            user = next((m["content"] for m in reversed(task["prompt"]) if m["role"] == "user"), "")
            for j in range(k):
                ids = [t for t in new[i * k + j].tolist() if t != tokenizer.pad_token_id]
                if tokenizer.eos_token_id in ids:
                    ids = ids[: ids.index(tokenizer.eos_token_id)]
                text = tokenizer.decode(ids, skip_special_tokens=True)
                row = {c: v for c, v in task.items() if c != "prompt"}
                row.update(rollout_index=j, prompt=user, final_text=text, n_tokens=len(ids),
                           messages=[*task["prompt"], {"role": "assistant", "content": text}])
                out.append(row)
    finally:
        tokenizer.padding_side = side
        if was_training:
            model.train()
    return out
