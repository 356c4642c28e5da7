"""verify.MathEqual: answers compared as values, with a tolerance, pure Python."""

from __future__ import annotations

from fractions import Fraction

import pytest

import whileai as wai
from whileai import run_judge
from whileai.errors import ArgumentError
from whileai.verify import MathEqual, extract_answer, math_value


@pytest.mark.parametrize("reply,answer", [
    (r"\boxed{\frac{1}{2}}", "0.5"),
    (r"so $\dfrac{3}{4}$", 0.75),
    (r"\boxed{\tfrac12}", "1/2"),
    ("50%", "0.5"),
    ("50%", "50"),
    (r"50\%", "1/2"),
    ("0.5", "50%"),
    ("The answer is 1,234.", 1234),
    ("#### 72", "72"),
    ("Final answer: -3", "-3.0"),
    ("We computed 10 then 12, giving 42", 42),
    (r"$\sqrt{2}$", 1.41421356237),
    (r"2.5 \times 10^{3}", "2500"),
    (r"\boxed{-\frac{3}{2}}", "-1.5"),
    (r"\boxed{\text{x+1}}", "x + 1"),
    ("1e-3", "0.001"),
    (r"\boxed{\frac{\frac{1}{2}}{2}}", "0.25"),
])
def test_equal(reply, answer):
    out = MathEqual()({"final_text": reply, "answer": answer})
    assert out["reward"] == 1.0, out["reason"]


@pytest.mark.parametrize("reply,answer", [
    (r"\boxed{\frac{1}{3}}", "0.33"),
    ("I think 0.4", "1/2"),
    ("no idea", "3"),
    ("", "3"),
    (r"\boxed{x+2}", "x+1"),
    ("41", 42),
])
def test_not_equal(reply, answer):
    assert MathEqual()({"final_text": reply, "answer": answer})["reward"] == 0.0


def test_tolerance():
    row = {"final_text": "0.3334", "answer": "1/3"}
    assert MathEqual()(row)["reward"] == 0.0
    assert MathEqual(tol=1e-3)(row)["reward"] == 1.0
    assert MathEqual(tol=0, rel=1e-3)(row)["reward"] == 1.0
    with pytest.raises(ArgumentError, match="tol must be a finite number"):
        MathEqual(tol=-1)


def test_values_and_extraction():
    assert math_value(r"\frac{1}{2}").value == Fraction(1, 2)
    assert math_value("1,234,567").value == 1234567
    assert math_value("abc").value is None
    assert math_value(True).value is None
    assert extract_answer(r"first \boxed{1} then \boxed{2}") == "2"
    assert extract_answer(r"\boxed{\frac{a}{\sqrt{b}}}") == r"\frac{a}{\sqrt{b}}"
    assert extract_answer("Let $x = 2$. Adding 3 gives 5.") == "5"
    assert extract_answer("") is None


def test_reasons_and_contract():
    out = MathEqual()({"final_text": "I think 0.4", "answer": "1/2"})
    assert out["reason"] == "got 0.4 (from '0.4'), want 0.5"
    assert out["judge_meta"] == {"verifier": "MathEqual", "answer": "0.4"}
    assert MathEqual()({"final_text": "hmm", "answer": 1})["reason"].endswith("(compared as text)")
    rows = [{"prompt": "1/2 as a decimal?", "final_text": r"\boxed{0.5}", "answer": "1/2"},
            {"prompt": "2+2?", "final_text": "5", "answer": 4},
            {"prompt": "no reference", "final_text": "5"}]
    scored = run_judge(rows, wai.verify.MathEqual())
    assert scored.df["reward"].to_list() == [1.0, 0.0, None]
    assert scored.df["judge_status"].to_list() == ["ok", "ok", "error"]
    assert "reference answer" in scored.df["reason"][2]
    assert scored.df["judge_name"][0] == "MathEqual"


def test_reference_field_and_candidate_field():
    judge = MathEqual(field="gold", candidate_field="output")
    assert judge({"output": "3/4", "gold": "0.75"})["reward"] == 1.0
