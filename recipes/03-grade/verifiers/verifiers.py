"""Verifiers: rewards a program computes, no model. MathEqual on answers, CodeExec on code.

MathEqual reads the reply's final answer and compares it with the row's reference as a value
(42, 42.0, 84/2 and \\boxed{42} are equal). CodeExec runs the reply's last code block with the row's
tests in an isolated process (timeout, memory limit, no network) and says what failed. Both follow
the judge contract, so they go wherever a judge goes: run_judge, data.grade(judge=...).

Run: python recipes/03-grade/verifiers/verifiers.py
"""

import whileai as wai

math_rows = [
    {"task_id": "m1", "final_text": "So the total is \\boxed{42}.", "reference": "42"},
    {"task_id": "m2", "final_text": "84/2", "reference": "42"},
    {"task_id": "m3", "final_text": "The answer is 41.", "reference": "42"},
]
for row, verdict in zip(math_rows, map(wai.verify.MathEqual(), math_rows)):
    print(f"MathEqual {row['final_text']!r:32} -> reward {verdict['reward']:.0f}  ({verdict['reason']})")

tests = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"
code_rows = [
    {"task_id": "c1", "final_text": "```python\ndef add(a, b):\n    return a + b\n```", "tests": tests},
    {"task_id": "c2", "final_text": "```python\ndef add(a, b):\n    return a - b\n```", "tests": tests},
]
scored = wai.run_judge(code_rows, wai.verify.CodeExec(timeout=20))
for row in scored.rows():
    print(f"CodeExec {row['task_id']}: reward {row['reward']:.0f}  ({row['reason']})")
