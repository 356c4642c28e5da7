"""verify.CodeExec: a subprocess with a timeout, a memory limit and no network; says why it failed."""

from __future__ import annotations

import time

import pytest

from whileai import run_judge
from whileai.errors import ArgumentError
from whileai.verify import CodeExec, extract_code

GOOD = "Here you go:\n```python\ndef add(a, b):\n    return a + b\n```"


def test_pass_and_assertion_failure():
    judge = CodeExec(tests="assert add(2, 3) == 5")
    out = judge({"final_text": GOOD})
    assert out["reward"] == 1.0 and out["reason"] == "all tests passed"
    assert out["judge_meta"]["verifier"] == "CodeExec" and out["judge_meta"]["returncode"] == 0
    out = judge({"final_text": "```python\ndef add(a, b):\n    return a - b\n```"})
    assert out["reward"] == 0.0 and out["reason"] == "AssertionError at `assert add(2, 3) == 5`"
    out = judge({"final_text": "```python\ndef add(a, b):\n    return a +\n```"})
    assert out["reward"] == 0.0 and "SyntaxError" in out["reason"]


def test_timeout_kills_the_program():
    judge = CodeExec(tests="add(1, 2)", timeout=1)
    t0 = time.monotonic()
    out = judge({"final_text": "```python\ndef add(a, b):\n    while True:\n        pass\n```"})
    assert time.monotonic() - t0 < 5
    assert out["reward"] == 0.0 and out["reason"] == "timed out after 1 s"


def test_memory_limit():
    judge = CodeExec(tests="pass", mem_mb=256)
    out = judge({"final_text": "```python\nblob = bytearray(1024 ** 3)\n```"})
    assert out["reward"] == 0.0 and out["reason"] == "ran out of memory (limit 256 MB)"


def test_no_network():
    code = ("```python\nimport socket\nsocket.create_connection(('93.184.215.14', 80), timeout=2)\n```")
    out = CodeExec(tests="pass")({"final_text": code})
    assert out["reward"] == 0.0 and "network access is disabled" in out["reason"]
    code = "```python\nimport socket\nsocket.getaddrinfo('example.com', 80)\n```"
    assert "network access is disabled" in CodeExec(tests="pass")({"final_text": code})["reason"]
    # local machinery that needs a socketpair (asyncio's event loop) still works
    code = "```python\nimport asyncio\nasync def f():\n    return 1\nassert asyncio.run(f()) == 1\n```"
    assert CodeExec(tests="pass")({"final_text": code})["reward"] == 1.0


def test_child_gets_a_clean_environment(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("SECRET_API_KEY", "sk-123")
    code = "```python\nimport os\nassert 'HTTPS_PROXY' not in os.environ and 'SECRET_API_KEY' not in os.environ\n```"
    assert CodeExec(tests="pass")({"final_text": code})["reward"] == 1.0


def test_tests_from_the_row_and_setup():
    judge = CodeExec(setup="import math")
    row = {"prompt": "area of a circle", "final_text": "```python\ndef area(r):\n    return math.pi * r * r\n```",
           "tests": ["assert abs(area(1) - math.pi) < 1e-9", "assert area(0) == 0"]}
    assert judge(row)["reward"] == 1.0
    scored = run_judge([row, {"prompt": "add", "final_text": GOOD}], judge)
    assert scored.df["judge_status"].to_list() == ["ok", "error"]
    assert "needs tests" in scored.df["reason"][1]


def test_no_code_and_extraction():
    assert CodeExec(tests="pass")({"final_text": ""})["reason"] == "no code found in the reply"
    text = "```js\nconsole.log(1)\n```\n```python\nx = 1\n```"
    assert extract_code(text) == "x = 1\n"
    assert extract_code("x = 2") == "x = 2"


def test_bad_options():
    with pytest.raises(ArgumentError, match="timeout must be a positive"):
        CodeExec(timeout=0)
    with pytest.raises(ArgumentError, match="mem_mb"):
        CodeExec(mem_mb=-5)


def test_no_isolation_raises_sandbox_error(monkeypatch):
    from whileai.errors import SandboxError
    from whileai.verify import _sandbox

    monkeypatch.setattr(_sandbox, "_probe", lambda name, python: f"{name} failed here: test")
    with pytest.raises(SandboxError, match="got no working isolation for isolation='auto'.*isolation='none'"):
        CodeExec(tests="pass")
    with pytest.raises(SandboxError, match="isolation='bwrap'"):
        CodeExec(tests="pass", isolation="bwrap")
    judge = CodeExec(tests="assert add(2, 3) == 5", isolation="none")
    out = judge({"final_text": GOOD})
    assert out["reward"] == 1.0 and out["judge_meta"]["isolation"] == "none"


def test_an_interpreter_path_with_dotdot_runs_isolated(tmp_path):
    """``/x/outside/../bin/python``: the sandbox holds the interpreter's folders, not ``outside``."""
    import os
    import sys

    from whileai.verify import _sandbox

    outside = tmp_path / "outside"
    outside.mkdir()
    dotted = os.path.join(str(outside), "..", os.path.relpath(sys.executable, str(tmp_path)))
    assert ".." in dotted and os.path.samefile(dotted, sys.executable)
    judge = CodeExec(tests="assert add(2, 3) == 5", python=dotted)
    assert ".." not in judge.python and os.path.samefile(judge.python, sys.executable)
    assert os.path.basename(judge.python) == os.path.basename(sys.executable)  # the venv's link kept
    if judge.isolation != "none":
        assert _sandbox._probe(judge.isolation, judge.python) == ""
    assert judge({"final_text": GOOD})["reward"] == 1.0


def test_a_missing_interpreter_names_the_interpreter_not_bubblewrap(tmp_path):
    from whileai.errors import SandboxError

    missing = str(tmp_path / "nowhere" / ".." / "python9")
    with pytest.raises(SandboxError, match=r"python must be a Python interpreter that runs here, got '.*/python9': "
                                           r"no such file\. Pass CodeExec\(python=\.\.\.\)") as info:
        CodeExec(tests="pass", python=missing)
    assert "bubblewrap" not in str(info.value) and info.value.reason == "bad_interpreter"


def test_bad_isolation_and_limits():
    with pytest.raises(ArgumentError, match="isolation must be one of auto, bwrap, namespaces, none, got 'docker'"):
        CodeExec(isolation="docker")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="max_output_bytes must be an integer >= 1024"):
        CodeExec(max_output_bytes=10)
    with pytest.raises(ArgumentError, match="max_procs must be an integer >= 4"):
        CodeExec(max_procs=1)


def test_graded_rows_record_the_isolation():
    import json

    judge = CodeExec(tests="assert add(2, 3) == 5")
    scored = run_judge([{"prompt": "add", "final_text": GOOD}], judge)
    meta = json.loads(scored.df["judge_meta"][0])
    assert meta["isolation"] in ("bwrap", "namespaces") and meta["isolation"] == judge.isolation


def test_tests_reach_the_code_through_the_checker():
    """The tests run in the checker process: classes, methods, iterators and exceptions of the reply still work."""
    reply = """```python
class Solution:
    def two_sum(self, nums, target):
        seen = {}
        for i, n in enumerate(nums):
            if target - n in seen:
                return [seen[target - n], i]
            seen[n] = i
def squares(n):
    for i in range(n):
        yield i * i
def check(x):
    if x < 0:
        raise ValueError("negative")
    return x
counter = {"calls": 0}
def bump():
    counter["calls"] += 1
    return counter["calls"]
```"""
    tests = """
assert Solution().two_sum([2, 7, 11], 9) == [0, 1]
assert list(squares(4)) == [0, 1, 4, 9]
assert sum(squares(3)) == 5
try:
    check(-1)
    raise AssertionError("no error")
except ValueError as exc:
    assert "negative" in str(exc)
assert bump() == 1 and bump() == 2 and counter["calls"] == 2
assert type(Solution().two_sum([1, 2], 3)) is list
"""
    out = CodeExec(tests=tests)({"final_text": reply})
    assert out["reward"] == 1.0, out


def test_the_reply_cannot_shadow_the_tests_builtins():
    """A reply that redefines all() (or type) at module level changes nothing for the tests."""
    reply = "```python\ndef all(values):\n    return True\ndef f(x):\n    return x\n```"
    out = CodeExec(tests="assert all(f(x) == 1 for x in (1, 2))")({"final_text": reply})
    assert out["reward"] == 0.0 and out["reason"].startswith("AssertionError"), out
