"""The verifier base: a judge under the contract whose verdict a program computes.

A verifier is called on a row dict and returns ``{"reward": 0 or 1, "reason": ...,
"judge_meta": {"verifier": <class name>, ...}}``, so it goes wherever a judge goes
(``data.grade(judge=wai.verify.MathEqual())``, ``run_judge``, ``judge_trust``). It cannot be
argued into a pass and agrees with itself on every run, which is why its labels count as
``kind="program"`` gold (Lambert 2025, chapter Evaluation, verifiable rewards).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

from whileai.errors import JudgeError

__all__ = ["ExactMatch", "Verifier", "candidate_text", "normalize_text", "reference_value"]

#: Row keys read as the reference answer, in order, when no ``field=`` is given.
REFERENCE_KEYS = ("reference", "answer", "expected_answer", "expected", "gold_answer", "solution", "target")


def candidate_text(row: Mapping[str, Any], field: str | None = None) -> str:
    """The text a verifier checks: ``row[field]``, else ``final_text``, else the last assistant message."""
    if field is not None:
        value = row.get(field)
        return "" if value is None else str(value)
    text = row.get("final_text")
    if isinstance(text, str):
        return text
    for message in reversed(row.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, str):
                return content
    return ""


def reference_value(row: Mapping[str, Any], field: str | None = None, *, keys: Sequence[str] = REFERENCE_KEYS) -> Any:
    """The reference answer on a row.

    ``row[field]``, else the first of ``REFERENCE_KEYS`` present, else ``privileged.reference``.

    Raises:
        JudgeError: The row holds none of them (the judge contract records it as ``error``).
    """
    if field is not None:
        if row.get(field) is None:
            raise JudgeError(f"the row must carry the reference in {field!r}, got no such field (keys: "
                             f"{', '.join(sorted(map(str, row))[:12])}). Pass field= naming the reference column.")
        return row[field]
    for key in keys:
        if row.get(key) is not None:
            return row[key]
    privileged = row.get("privileged")
    if isinstance(privileged, Mapping) and privileged.get("reference") is not None:
        return privileged["reference"]
    raise JudgeError(f"the row must carry a reference answer in one of {', '.join(keys)}, got none. "
                     "Add one, or pass field= naming the column that holds it.")


_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_text(text: Any, *, lower: bool = True, strip_punct: bool = True) -> str:
    """Text compared loosely: lowercased, punctuation dropped, whitespace collapsed.

    Examples:
        >>> normalize_text("  The Answer: Paris. ")
        'the answer paris'
    """
    out = str(text)
    if lower:
        out = out.lower()
    if strip_punct:
        out = out.translate(_PUNCT)
    return re.sub(r"\s+", " ", out).strip()


class Verifier:
    """Base class: subclasses implement :meth:`check` and get the judge contract for free.

    Args:
        field: The row key holding the reference (default: ``reference``, ``answer``, ...).
        candidate_field: The row key holding the answer to check (default: the final reply).
        name: The judge name recorded on graded rows (default: the class name).
    """

    def __init__(self, *, field: str | None = None, candidate_field: str | None = None, name: str | None = None) -> None:
        self.field = field
        self.candidate_field = candidate_field
        self.name = name or type(self).__name__

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    def check(self, candidate: str, row: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
        """Return (passed, reason, extra judge_meta) for one candidate answer."""
        raise NotImplementedError

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """Verify one row under the judge contract."""
        passed, reason, meta = self.check(candidate_text(row, self.candidate_field), row)
        return {"reward": 1.0 if passed else 0.0, "reason": reason, "judge_meta": {"verifier": type(self).__name__, **meta}}


class ExactMatch(Verifier):
    """Pass when the reply equals the reference after :func:`normalize_text` (or contains it, ``whole=False``).

    Examples:
        >>> ExactMatch()({"final_text": "Paris.", "answer": "paris"})["reward"]
        1.0
    """

    def __init__(self, *, field: str | None = None, candidate_field: str | None = None, lower: bool = True,
                 strip_punct: bool = True, whole: bool = True, name: str | None = None) -> None:
        super().__init__(field=field, candidate_field=candidate_field, name=name)
        self.lower = lower
        self.strip_punct = strip_punct
        self.whole = whole

    def check(self, candidate: str, row: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
        """Compare the normalised reply with the normalised reference."""
        want = normalize_text(reference_value(row, self.field), lower=self.lower, strip_punct=self.strip_punct)
        got = normalize_text(candidate, lower=self.lower, strip_punct=self.strip_punct)
        ok = got == want if self.whole else bool(want) and f" {want} " in f" {got} "
        return ok, f"got {got[:80]!r}, want {want[:80]!r}", {}
