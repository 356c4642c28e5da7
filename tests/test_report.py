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


def test_markdown_body_cannot_close_its_own_fence():
    """A group name holding ``` closed the code fence and put raw HTML in the notebook's Markdown."""
    import random

    import whileai as wai

    rng = random.Random(1)
    evil = "```\n<img src=x onerror=alert(1)>\n```"

    def rows(shift):
        return [{"scenario_id": f"t{t}", "rollout_index": i, "prompt": f"p{t}", "final_text": "r",
                 "reward": float(rng.random() < 0.4 + shift), "tier": evil if t % 2 else "ordinary"}
                for t in range(12) for i in range(4)]

    md = wai.delta_report(rows(0), rows(0.3), by="tier")._repr_markdown_()
    fence = next(line for line in md.splitlines() if line.startswith("```"))
    assert len(fence) > 3 and md.count(fence) == 2  # the block opens and closes with the longer fence only
    inside = md.split(fence)[1]
    assert "<img" in inside and "<img" not in md.split(fence)[0] + md.split(fence)[2]


def test_a_part_dumps_the_keys_it_was_given_and_reads_like_the_dict_it_replaced():
    from pydantic import Field

    from whileai.report import Part

    class Block(Part):
        a: float | None = None
        b: int = 0

    class Holder(Report):
        block: Block = Field(default_factory=Block)

    assert Holder().to_dict()["block"] == {} and not Holder().block
    given = Holder.model_validate({"block": {"b": 2}})
    assert given.to_dict()["block"] == {"b": 2} and given.model_dump_json() == '{"warnings":[],"block":{"b":2}}'
    assert given.block["b"] == 2 and given.block.get("a", "none") == "none" and "a" not in given.block
    with pytest.raises(KeyError):
        given.block["a"]
    assert given.block == {"b": 2} and given.block != {"b": 3} and given.block.keys() == ["b"]
    given.block.a = 0.5  # set later: dumped, in declared order
    assert list(given.to_dict()["block"]) == ["a", "b"]
