"""Training knobs: each one's accepted range, the method it applies to, and the value its paper used."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from whileai.defaults import TRAINING_KNOBS
from whileai.errors import ArgumentError

__all__ = ["KNOB_METHODS", "METHODS", "Method", "check_knobs", "paper_value"]

Method = Literal["sft", "dpo", "grpo", "rm"]

#: The four methods, in the order the loop uses them.
METHODS: tuple[str, ...] = ("sft", "dpo", "grpo", "rm")

#: Which methods read each knob.
KNOB_METHODS: Mapping[str, tuple[str, ...]] = {
    "epochs": ("sft",),
    "steps": ("dpo", "grpo", "rm"),
    "generations": ("grpo",),
    "learning_rate": METHODS,
    "beta": ("dpo", "grpo"),
    "max_completion_length": ("grpo",),
    "temperature": ("grpo",),
    "loss_type": ("dpo", "grpo"),
    "truncated": ("grpo",),
}

_INTEGER = frozenset({"epochs", "steps", "generations", "max_completion_length"})


def paper_value(knob: str, method: str) -> Any:
    """The value the cited paper used for ``knob`` under ``method`` (None when it gives none).

    Examples:
        >>> paper_value("beta", "dpo"), paper_value("generations", "grpo")
        (0.1, 64)
    """
    spec = TRAINING_KNOBS[knob]
    value = spec.get("paper")
    if isinstance(value, Mapping):
        return value.get(method)
    return value


def _reference(knob: str, method: str) -> str:
    spec = TRAINING_KNOBS[knob]
    value = paper_value(knob, method)
    used = "gives no value" if value is None else f"used {value!r}"
    return f"The cited paper {used} ({spec['source']})"


def check_knobs(method: str, knobs: Mapping[str, Any]) -> dict[str, Any]:
    """Validate training knobs for ``method`` against ``TRAINING_KNOBS``; return those that are set.

    A knob left None keeps the trainer's default. A value outside its range (or choices) is
    refused with the value the cited paper used, so the fix is in the message.

    Args:
        method: ``"sft"``, ``"dpo"``, ``"grpo"`` or ``"rm"``.
        knobs: Knob name to value.

    Returns:
        The knobs that are not None, numbers as ``int`` or ``float``.

    Raises:
        ArgumentError: An unknown knob, one the method does not read, or a value out of range.

    Examples:
        >>> check_knobs("grpo", {"beta": 0.04, "steps": None})
        {'beta': 0.04}
        >>> check_knobs("dpo", {"beta": 3.0})
        Traceback (most recent call last):
        ...
        whileai.errors.ArgumentError: beta must be a number in [0.0, 1.0], got 3.0. The cited paper used 0.1 (DPO arXiv:2305.18290 section 6; DeepSeekMath KL coefficient); pass a value in that range, or None for the trainer default.
    """
    if method not in METHODS:
        raise ArgumentError(f"method must be one of {', '.join(METHODS)}, got {method!r}. Pass one of those.")
    out: dict[str, Any] = {}
    for knob, value in knobs.items():
        if knob not in TRAINING_KNOBS:
            raise ArgumentError(
                f"knob must be one of {', '.join(TRAINING_KNOBS)}, got {knob!r}. "
                "Pass one of those (whileai.defaults.TRAINING_KNOBS lists each with its range).",
                argument=knob,
            )
        if value is None:
            continue
        if method not in KNOB_METHODS[knob]:
            raise ArgumentError(
                f"{knob} must be set only for {', '.join(KNOB_METHODS[knob])}, got {knob}={value!r} for {method}. "
                "Drop it" + (" (SFT takes epochs=)" if knob == "steps" else "") + ".",
                argument=knob,
            )
        spec = TRAINING_KNOBS[knob]
        if "choices" in spec:
            choices = spec["choices"].get(method, ())
            if value not in choices:
                raise ArgumentError(
                    f"{knob} must be one of {', '.join(choices)} for {method}, got {value!r}. "
                    f"{_reference(knob, method)}; pass one of those, or None for the trainer default.",
                    argument=knob,
                )
            out[knob] = value
            continue
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if knob in _INTEGER and numeric and float(value) != int(value):
            numeric = False
        if not numeric or not math.isfinite(float(value)) or not spec["lo"] <= value <= spec["hi"]:
            kind = "a whole number" if knob in _INTEGER else "a number"
            raise ArgumentError(
                f"{knob} must be {kind} in [{spec['lo']}, {spec['hi']}], got {value!r}. "
                f"{_reference(knob, method)}; pass a value in that range, or None for the trainer default.",
                argument=knob,
            )
        out[knob] = int(value) if knob in _INTEGER else float(value)
    return out
