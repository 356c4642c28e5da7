"""Scoring with a trained reward model, and the model as a judge under the judge contract."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from whileai.errors import ArgumentError

__all__ = ["RewardModelJudge", "calibrated_cut", "score_texts"]


def calibrated_cut(passes: list[float], fails: list[float]) -> tuple[float, str]:
    """The judge's cut on sigmoid(score), where held-out passing and failing replies part best.

    Every cut between two neighbouring distinct raw scores is tried; the one with the highest
    balanced accuracy (the mean of the pass rate on passing replies and the fail rate on failing
    ones, so a skewed held-out set does not pull the cut to its majority) wins, ties going to the
    cut nearest raw 0 (sigmoid 0.5). The classic threshold choice on a scored validation set
    (Fawcett 2006, "An introduction to ROC analysis", Pattern Recognition Letters 27; Youden's J
    is the same maximum).

    Args:
        passes: Raw reward-model scores of replies that pass (the pairs' chosen sides).
        fails: Raw scores of replies that fail (the rejected sides).

    Returns:
        (cut on sigmoid(score), a sentence saying how it was chosen).

    Raises:
        ArgumentError: Either side is empty.

    Examples:
        >>> cut, basis = calibrated_cut([2.0, 3.0, 2.5], [1.0, 0.5, 1.5])
        >>> round(cut, 4), basis.startswith("calibrated on 3 held-out pairs")
        (0.852, True)
    """
    p, f = np.asarray(passes, dtype=float), np.asarray(fails, dtype=float)
    if p.size == 0 or f.size == 0:
        raise ArgumentError(f"calibrated_cut needs passing and failing scores, got {p.size} and {f.size}. "
                            "Pass held-out pairs with both sides.")
    levels = np.unique(np.concatenate([p, f]))
    cuts = np.concatenate([[levels[0] - 1.0], (levels[:-1] + levels[1:]) / 2.0, [levels[-1] + 1.0]])
    ps, fs = np.sort(p), np.sort(f)
    tpr = 1.0 - np.searchsorted(ps, cuts, side="left") / p.size  # share of passes scored >= cut
    tnr = np.searchsorted(fs, cuts, side="left") / f.size  # share of failures scored < cut
    balanced = (tpr + tnr) / 2.0
    best = np.flatnonzero(balanced >= balanced.max() - 1e-12)
    raw = float(cuts[best[np.argmin(np.abs(cuts[best]))]])
    cut = float(1.0 / (1.0 + math.exp(-raw)))
    return cut, (f"calibrated on {p.size} held-out pairs: sigmoid cut {cut:.4f} (raw {raw:+.3f}), balanced accuracy "
                 f"{float(balanced.max()):.3f}")


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

    def __init__(self, path: str, *, threshold: float, name: str = "reward_model", basis: str | None = None) -> None:
        self.path, self.threshold, self.name = path, float(threshold), name
        self.basis = basis or f"given: threshold={float(threshold):g}"
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
        return f"RewardModelJudge({self.path!r}, threshold={self.threshold:g}; {self.basis})"


def as_judge(result: Any, *, threshold: float | None = None) -> RewardModelJudge:
    """Check a reward-model result and build its judge."""
    method = getattr(result, "method", None) if not isinstance(result, dict) else result.get("method")
    adapter = getattr(result, "adapter", None) if not isinstance(result, dict) else result.get("adapter")
    if method != "rm" or not adapter:
        raise ArgumentError(f"result must be a reward-model TrainResult (method 'rm' with an adapter), got method {method!r}. "
                            "Train one with wai.train.reward_model(rows, base_model).")
    from whileai.defaults import REWARD_MODEL_THRESHOLD

    def field(name: str) -> Any:
        return result.get(name) if isinstance(result, dict) else getattr(result, name, None)

    if threshold is not None:
        thr, basis = float(threshold), f"given: threshold={float(threshold):g}"
    elif field("threshold") is not None:
        thr, basis = float(field("threshold")), field("threshold_basis") or "the training result's threshold"
    else:
        thr, basis = REWARD_MODEL_THRESHOLD, f"fallback {REWARD_MODEL_THRESHOLD:g}: the result carries no calibrated cut"
    return RewardModelJudge(str(adapter), threshold=thr, basis=basis)
