"""The report base prints, indexes and serialises."""

from __future__ import annotations

import json
import math

import pytest

from whileai.report import Report, fmt_ci, fmt_num


class Example(Report):
    ok: bool = True
    """Whether it is fine."""
    value: float = math.nan
    """A number that may be undefined."""

    def render(self) -> str:
        return f"value {fmt_num(self.value)}"


def test_report_indexes_prints_and_dumps():
    report = Example(warnings=["look here"])
    assert report["ok"] is True and "ok" in report and report.get("missing", 3) == 3
    with pytest.raises(KeyError):
        report["missing"]
    assert str(report) == "value n/a"
    assert json.loads(report.to_json()) == {"warnings": ["look here"], "ok": True, "value": None}
    assert set(report.keys()) == {"warnings", "ok", "value"}


def test_formatters():
    assert fmt_num(0.666) == "0.67" and fmt_num(None) == "n/a"
    assert fmt_ci((0.1, 0.25)) == "[0.10..0.25]" and fmt_ci(None) == "[n/a]" and fmt_ci((math.nan, 1.0)) == "[n/a]"


def test_a_report_refuses_an_undeclared_field():
    import pydantic

    from whileai.report import Report

    class One(Report):
        n: int = 0

    with pytest.raises(pydantic.ValidationError, match="Extra inputs are not permitted"):
        One(n=1, m=2)
    assert "m" not in One(n=1) and One(n=1)["n"] == 1
