r"""``MathEqual``: a math answer compared as a value, not as a string. Pure Python.

The answer is taken from the reply (the last ``\boxed{}``, else a ``####`` or "answer is"
line, else the last number in the text) and read as a value: integers, decimals, thousands
separators, fractions ``a/b``, percentages (``50%`` equals ``0.5`` and ``50``), and simple LaTeX
(``\frac{1}{2}``, ``\dfrac``, ``\sqrt{2}``, ``\pi``, ``\times 10^{3}``, ``\text{}``,
``$...$``). Two values are equal within ``|a - b| <= tol + rel * |b|``. Anything that does not
read as a value is compared as normalised text.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, NamedTuple

from whileai.defaults import MATH_ABS_TOL, MATH_REL_TOL
from whileai.errors import ArgumentError
from whileai.verify._base import Verifier, reference_value

__all__ = ["MathEqual", "MathValue", "extract_answer", "math_value"]


class MathValue(NamedTuple):
    """A parsed answer: its value, whether it was written as a percentage, and the text read."""

    value: float | Fraction | None
    percent: bool
    text: str


def _boxed(text: str) -> str | None:
    last = None
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        if depth == 0:
            last = text[match.end(): i - 1]
    return last


_NUMBER = r"-?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+"
_TOKEN = re.compile(
    r"-?\\[dt]?frac\s*\{[^{}]*\}\s*\{[^{}]*\}|-?\\[dt]?frac\d\d"
    rf"|(?:{_NUMBER})\s*/\s*(?:{_NUMBER})"
    rf"|(?:{_NUMBER})\s*(?:\\?%|\\percent)?"
)


def extract_answer(text: str) -> str | None:
    r"""The answer part of a reply, as text; None when there is nothing.

    The last ``\boxed{}``, else a ``####`` line, an "answer is" phrase, the whole reply when it
    is a value, or the last number-like token.

    Examples:
        >>> extract_answer(r"so the result is \boxed{\frac{1}{2}}.")
        '\\frac{1}{2}'
        >>> extract_answer("We get 12 apples, then 3/4 of them: 9")
        '9'
    """
    if not isinstance(text, str) or not text.strip():
        return None
    boxed = _boxed(text)
    if boxed is not None:
        return boxed.strip()
    hashes = re.findall(r"####\s*([^\n]+)", text)
    if hashes:
        return hashes[-1].strip()
    phrase = re.findall(r"(?:final answer|answer)\s*(?:is|:|=)\s*\$?([^\n$]+?)\$?\s*(?:\.\s|\.?$|\n)", text,
                        flags=re.IGNORECASE)
    if phrase:
        return phrase[-1].strip()
    stripped = text.strip()
    if len(stripped) <= 60 and math_value(stripped).value is not None:
        return stripped
    best: tuple[int, str] | None = None
    for match in re.finditer(r"\$([^$]+)\$|\\\((.+?)\\\)", text):
        content = (match.group(1) or match.group(2) or "").strip()
        if math_value(content).value is not None:
            best = (match.end(), content)
    for match in _TOKEN.finditer(text):
        if best is None or match.end() > best[0]:
            best = (match.end(), match.group().strip())
    if best is not None:
        return best[1]
    return stripped if len(stripped) <= 40 else None


def _unwrap(command: str, text: str) -> str:
    pattern = re.compile(r"\\" + command + r"\s*\{([^{}]*)\}")
    while True:
        new = pattern.sub(r"\1", text)
        if new == text:
            return new
        text = new


def _latex_to_expr(text: str) -> tuple[str, bool]:
    s = text.strip()
    s = re.sub(r"^\$+|\$+$", "", s).strip()
    s = s.replace("\\$", "").replace("\\(", "").replace("\\)", "").replace("\\[", "").replace("\\]", "")
    for cmd in ("text", "mathrm", "textbf", "mathbf", "operatorname", "displaystyle"):
        s = _unwrap(cmd, s)
    s = re.sub(r"\\(?:left|right|displaystyle|,|;|!|:|quad|qquad)", "", s)
    s = s.replace("~", "").replace("\\ ", "")
    percent = False
    if re.search(r"(\\?%|\\percent|\bpercent\b)\s*$", s):
        percent = True
        s = re.sub(r"(\\?%|\\percent|\bpercent\b)\s*$", "", s)
    s = re.sub(r"\\[dt]frac", r"\\frac", s)
    s = re.sub(r"\\frac(\d)(\d)", r"(\1)/(\2)", s)
    s = re.sub(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"((\1)/(\2))", s)
    while "\\frac" in s:  # nested fractions, inner first
        new = re.sub(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"((\1)/(\2))", s)
        if new == s:
            break
        s = new
    s = re.sub(r"\\sqrt\s*\{([^{}]*)\}", r"sqrt(\1)", s)
    s = re.sub(r"\\sqrt\s*(\d+)", r"sqrt(\1)", s)
    s = s.replace("\\pi", "pi").replace("\\cdot", "*").replace("\\times", "*").replace("×", "*").replace("−", "-")
    s = re.sub(r"\^\s*\{([^{}]*)\}", r"**(\1)", s).replace("^", "**")
    s = s.replace("{", "(").replace("}", ")")
    s = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s)  # thousands separators
    s = s.strip().rstrip(".").strip()
    return s, percent


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _eval(node: ast.AST) -> float | Fraction:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Fraction(node.value) if isinstance(node.value, int) else Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Div) and right == 0:
            raise ZeroDivisionError
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, exp = _eval(node.left), _eval(node.right)
        if abs(float(exp)) > 64:
            raise ValueError("exponent too large")
        if isinstance(exp, Fraction) and exp.denominator == 1 and isinstance(base, Fraction):
            return base ** int(exp)
        return float(base) ** float(exp)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt" and len(node.args) == 1:
        value = float(_eval(node.args[0]))
        if value < 0:
            raise ValueError("sqrt of a negative number")
        root = math.sqrt(value)
        return Fraction(round(root)) if float(round(root)) ** 2 == value else root
    if isinstance(node, ast.Name) and node.id == "pi":
        return math.pi
    raise ValueError(f"unsupported expression {ast.dump(node)[:40]}")


def math_value(text: Any) -> MathValue:
    r"""Read an answer as a number (exact Fraction where the text is exact); value None when it is not one.

    Examples:
        >>> math_value(r"\frac{1}{2}").value
        Fraction(1, 2)
        >>> math_value("50%")
        MathValue(value=Fraction(1, 2), percent=True, text='50%')
        >>> math_value("1,234.5").value
        Fraction(2469, 2)
    """
    if isinstance(text, bool):
        return MathValue(None, False, str(text))
    if isinstance(text, (int, float)):
        if isinstance(text, float) and not math.isfinite(text):
            return MathValue(None, False, str(text))
        return MathValue(Fraction(text) if isinstance(text, int) else Fraction(str(text)), False, str(text))
    raw = str(text)
    expr, percent = _latex_to_expr(raw)
    if not expr or len(expr) > 200 or re.search(r"[^0-9eE.+\-*/() a-z]", expr):
        return MathValue(None, percent, raw)
    try:
        value = _eval(ast.parse(expr, mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
        return MathValue(None, percent, raw)
    if percent:
        value = value / 100
    return MathValue(value, percent, raw)


def _text_key(text: str) -> str:
    s, _ = _latex_to_expr(text)
    return re.sub(r"\s+", "", s).lower()


def _close(a: float, b: float, tol: float, rel: float) -> bool:
    return abs(a - b) <= tol + rel * abs(b)


def _fmt(value: float | Fraction | None) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        return f"{float(value):.10g}"
    return f"{value:.10g}"


class MathEqual(Verifier):
    r"""Pass when the reply's answer equals the reference as a value (pure Python, no Math-Verify).

    Reads the last ``\boxed{}`` (else a ``####`` line, an "answer is" phrase, or the last number)
    and compares values with ``|a - b| <= tol + rel * |b|``; a percentage matches both its
    fraction and its number (``50%`` equals ``0.5`` and ``50``). Text that is not a value is
    compared after normalising LaTeX and spaces.

    Args:
        tol: Absolute tolerance (``MATH_ABS_TOL``).
        rel: Relative tolerance (``MATH_REL_TOL``).
        field: The row key holding the reference (default: ``reference``, ``answer``, ...).
        candidate_field: The row key holding the reply (default: the final reply).
        name: The judge name (default ``MathEqual``).

    Examples:
        >>> MathEqual()({"final_text": r"The answer is \boxed{\dfrac{1}{2}}", "answer": "0.5"})["reward"]
        1.0
        >>> MathEqual()({"final_text": "I think it is 0.4", "answer": "1/2"})["reason"]
        "got 0.4 (from '0.4'), want 0.5"
    """

    def __init__(self, *, tol: float = MATH_ABS_TOL, rel: float = MATH_REL_TOL, field: str | None = None,
                 candidate_field: str | None = None, name: str | None = None) -> None:
        for label, value in (("tol", tol), ("rel", rel)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or not math.isfinite(value):
                raise ArgumentError(f"{label} must be a finite number >= 0, got {value!r}. Pass {label}=1e-6 for example.")
        super().__init__(field=field, candidate_field=candidate_field, name=name)
        self.tol = float(tol)
        self.rel = float(rel)

    def check(self, candidate: str, row: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
        """Compare the reply's answer with the reference."""
        reference = reference_value(row, self.field)
        answer = extract_answer(candidate)
        if answer is None:
            return False, "no answer found in the reply", {"answer": None}
        ref_text = reference if isinstance(reference, str) else str(reference)
        ref = math_value(reference if not isinstance(reference, str) else (extract_answer(reference) or reference))
        got = math_value(answer)
        meta: dict[str, Any] = {"answer": answer}
        if got.value is not None and ref.value is not None:
            options_got = [got.value] + ([got.value * 100] if got.percent else [])
            options_ref = [ref.value] + ([ref.value * 100] if ref.percent else [])
            ok = any(_close(float(a), float(b), self.tol, self.rel) for a in options_got for b in options_ref)
            return ok, f"got {_fmt(got.value)} (from {answer!r}), want {_fmt(ref.value)}", meta
        ok = _text_key(answer) == _text_key(ref_text) and bool(_text_key(answer))
        return ok, f"got {answer[:60]!r}, want {ref_text[:60]!r} (compared as text)", meta
