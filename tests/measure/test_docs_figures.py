"""docs/measure.md's quoted interval figures come from the code: each is read off the page and recomputed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import whileai as wai

DOC = Path(__file__).resolve().parents[2] / "docs" / "measure.md"


def _rows(passes: int) -> list[dict]:
    rows = [{"task_id": f"t{i}", "reward": 0.0} for i in range(16) for _ in range(2)]
    for r in rows[:passes]:
        r["reward"] = 1.0
    return rows


def test_the_zero_and_one_pass_upper_ends_on_the_page_are_the_librarys():
    text = " ".join(DOC.read_text().split())
    m = re.search(r"The old t interval gave one pass in 32 rollouts \(16 tasks x 2\) the upper end (0\.\d+) and zero "
                  r"passes (0\.\d+); now zero passes and one pass both give (0\.\d+)", text)
    assert m, "the sentence quoting the 16 x 2 upper ends is gone from docs/measure.md"
    old_one, old_zero, now = (float(x) for x in m.groups())
    assert wai.pass_at(_rows(1), ci_method="t").ci95[1] == pytest.approx(old_one, abs=5e-4)
    assert wai.pass_at(_rows(0), ci_method="t").ci95[1] == pytest.approx(old_zero, abs=5e-4)
    assert wai.pass_at(_rows(0)).ci95[1] == pytest.approx(now, abs=5e-4)
    assert wai.pass_at(_rows(1)).ci95[1] == pytest.approx(now, abs=5e-4)


def test_the_six_tasks_that_each_gained_read_the_quoted_interval():
    text = " ".join(DOC.read_text().split())
    m = re.search(r"those six tasks read \((0\.\d+), (0\.\d+)\), the test's p (0\.\d+)", text)
    assert m
    a = [{"task_id": t, "reward": r} for t in "abcdef" for r in (0, 1)]
    b = [{"task_id": t, "reward": 1} for t in "abcdef" for _ in (0, 1)]
    r = wai.compare_runs(a, b)
    assert r.ci95 == pytest.approx((float(m.group(1)), float(m.group(2))), abs=5e-4)
    assert r.p_value == pytest.approx(float(m.group(3)), abs=5e-4)
