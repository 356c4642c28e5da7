"""Scoring with a trained reward model, and the model as a judge under the judge contract."""

from __future__ import annotations

import json
import math
from typing import Any

from whileai.errors import ArgumentError

__all__ = ["RewardModelJudge", "score_texts"]


def score_texts(model: Any, tok: Any, texts: list[str], *, batch: int = 16) -> list[float]:
    """The reward model's raw score of each text (one forward pass per batch, right-padded)."""
    import torch

    device = next(model.parameters()).device
    was = model.training
    model.eval()
    out: list[float] = []
    try:
        with torch.no_grad():
            for i in range(0, len(texts), batch):
                enc = tok(texts[i:i + batch], return_tensors="pt", padding=True, add_special_tokens=False).to(device)
                out.extend(float(x) for x in model(**enc).logits[:, 0].float().cpu())
    finally:
        if was:
            model.train()
    return out


def _call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call in the shape chat templates render (function.name, arguments as an object)."""
    fn = call.get("function") or {"name": call.get("name"), "arguments": call.get("arguments")}
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            pass
    return {"type": "function", "function": {"name": fn.get("name"), "arguments": args}}


class RewardModelJudge:
    """A trained reward model as a judge: ``{"reward": 0 or 1, "rm_score": raw}`` for a row dict.

    The row's conversation (``messages``, or ``prompt`` and ``final_text``) is rendered with the
    model's chat template and scored; the reward is 1 when sigmoid(score) reaches the threshold.
    """

    def __init__(self, path: str, *, threshold: float, name: str = "reward_model") -> None:
        self.path, self.threshold, self.name = path, float(threshold), name
        self._model: Any = None
        self._tok: Any = None

    def _load(self) -> None:
        from whileai.train._extra import require

        require("torch", "transformers", "peft", what="wai.reward_model")
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self._tok = AutoTokenizer.from_pretrained(self.path)
        try:
            from peft import AutoPeftModelForSequenceClassification

            self._model = AutoPeftModelForSequenceClassification.from_pretrained(self.path, num_labels=1)
        except (ValueError, OSError):
            self._model = AutoModelForSequenceClassification.from_pretrained(self.path, num_labels=1)
        self._model.config.pad_token_id = self._tok.pad_token_id

    def _text(self, row: dict[str, Any]) -> str:
        msgs = row.get("messages")
        if not msgs:
            msgs = [{"role": "user", "content": str(row.get("prompt") or "")},
                    {"role": "assistant", "content": str(row.get("final_text") or "")}]
        clean = []
        for m in msgs:
            out = {"role": m.get("role"), "content": m.get("content") or ""}
            calls = [_call(c) for c in m.get("tool_calls") or []]
            if calls:
                out["tool_calls"] = calls
            clean.append(out)
        return self._tok.apply_chat_template(clean, tokenize=False)

    def score(self, rows: list[dict[str, Any]]) -> list[float]:
        """Raw scores of many rows at once."""
        if self._model is None:
            self._load()
        return score_texts(self._model, self._tok, [self._text(r) for r in rows])

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        s = self.score([row])[0]
        return {"reward": float(1.0 / (1.0 + math.exp(-s)) >= self.threshold), "rm_score": s}

    def __repr__(self) -> str:
        return f"RewardModelJudge({self.path!r}, threshold={self.threshold:g})"


def as_judge(result: Any, *, threshold: float | None = None) -> RewardModelJudge:
    """Check a reward-model result and build its judge."""
    method = getattr(result, "method", None) if not isinstance(result, dict) else result.get("method")
    adapter = getattr(result, "adapter", None) if not isinstance(result, dict) else result.get("adapter")
    if method != "rm" or not adapter:
        raise ArgumentError(f"result must be a reward-model TrainResult (method 'rm' with an adapter), got method {method!r}. "
                            "Train one with wai.train.reward_model(rows, base_model).")
    thr = threshold if threshold is not None else (getattr(result, "threshold", None) if not isinstance(result, dict)
                                                   else result.get("threshold"))
    return RewardModelJudge(str(adapter), threshold=float(thr if thr is not None else 0.5))
