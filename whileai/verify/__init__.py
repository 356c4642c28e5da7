"""Verifiers: judges whose verdict a program computes (``wai.verify.MathEqual``, ``wai.verify.CodeExec``).

Each is a callable under the judge contract: called on a row dict it returns
``{"reward": 0 or 1, "reason": ..., "judge_meta": {"verifier": ...}}``, so it goes wherever a
judge goes: ``data.grade(judge=wai.verify.MathEqual())``.
"""

from whileai.verify._base import (
    ExactMatch,
    Verifier,
    candidate_text,
    normalize_text,
    reference_value,
)
from whileai.verify._code import CodeExec, extract_code
from whileai.verify._math import MathEqual, MathValue, extract_answer, math_value

__all__ = [
    "CodeExec",
    "ExactMatch",
    "MathEqual",
    "MathValue",
    "Verifier",
    "candidate_text",
    "extract_answer",
    "extract_code",
    "math_value",
    "normalize_text",
    "reference_value",
]
