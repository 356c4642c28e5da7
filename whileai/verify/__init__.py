"""Verifiers: judges whose verdict a program computes (``wai.verify.MathEqual``, ``wai.verify.CodeExec``).

Each is a callable under the judge contract: called on a row dict it returns
``{"reward": 0 or 1, "reason": ..., "judge_meta": {"verifier": ...}}``, so it goes wherever a
judge goes: ``data.grade(judge=wai.verify.MathEqual())``.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
