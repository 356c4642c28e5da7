"""The caps on what a row can hold, the behavior-name rule, figures and the harness fingerprint."""

from __future__ import annotations

import re
import warnings

import pytest
from pydantic import ValidationError

from whileai.errors import ArgumentError
from whileai.platform import Behavior, CutWarning, Example, Figure, Harness, cut_middle
from whileai.platform._models import check_behavior_name


def test_cut_middle_keeps_head_and_tail_with_the_count():
    text = "H" * 3000 + "M" * 1877 + "T" * 3000
    out = cut_middle(text, 2000)
    assert len(out) == 2000 and out[:988] == "H" * 988 and out[-988:] == "T" * 988
    assert out[988:-988] == "[... 5901 chars cut ...]"
    assert cut_middle("short", 2000) == "short"


def test_example_caps_each_field_with_one_warning_per_field():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex = Example(prompt="p" * 2500, reply="r" * 2001, ok=False, why="w" * 500, reference="x" * 10)
    cut = [w for w in caught if issubclass(w.category, CutWarning)]
    assert len(cut) == 3
    assert sorted(str(w.message).split(" ")[0] for w in cut) == ["prompt", "reply", "why"]
    assert len(ex.prompt) == 2000 and len(ex.reply) == 2000 and len(ex.why) == 400 and ex.reference == "x" * 10
    assert "[... 523 chars cut ...]" in ex.prompt  # 2500 - (2000 - 23 marker chars)
    sample = ex.sample()
    assert len(sample.prompt) == 1200 and len(sample.reply) == 1200


def test_tags_are_capped():
    with pytest.warns(CutWarning):
        ex = Example(ok=True, tags={f"k{i}": "v" for i in range(10)})
    assert len(ex.tags) == 8
    with pytest.warns(CutWarning, match="keys over 32 or values over 80"):
        ex = Example(ok=True, tags={"k" * 40: "v" * 100})
    (key, value), = ex.tags.items()
    assert len(key) <= 32 and len(value) <= 80


def test_rubric_cap():
    with pytest.warns(CutWarning, match="rubric"):
        b = Behavior(name="refunds", rubric="r" * 5000)
    assert len(b.rubric) == 4000


@pytest.mark.parametrize("bad", ["refund policy", "Refunds", "1refunds", "", "a" * 65])
def test_behavior_name_rule(bad):
    with pytest.raises(ArgumentError, match="behavior name must be lower-case"):
        check_behavior_name(bad)
    with pytest.raises(ValidationError, match="behavior name must be"):
        Behavior(name=bad)


def test_behavior_name_suggests_the_fix():
    with pytest.raises(ArgumentError, match="Use 'refund_policy'"):
        check_behavior_name("refund policy")


def test_figure_refusals_and_dropped_layout():
    ok = Figure(name="loss-curve", figure={"data": [{"y": [1, 2]}], "layout": {"title": "t", "template": {}, "images": []}})
    assert ok.figure["layout"] == {"title": "t"}
    with pytest.raises(ValidationError, match="figure name must match"):
        Figure(name="Loss Curve", figure={"data": [{}]})
    with pytest.raises(ValidationError, match="1 to 50 traces"):
        Figure(name="f", figure={"data": []})
    with pytest.raises(ValidationError, match="1 to 50 traces"):
        Figure(name="f", figure={"data": [{}] * 51})
    with pytest.raises(ValidationError, match="a trace type must be one of"):
        Figure(name="f", figure={"data": [{"type": "heatmap"}]})
    with pytest.raises(ValidationError, match="at most 200000 bytes of JSON"):
        Figure(name="f", figure={"data": [{"y": list(range(50_000))}]})


def test_harness_version_is_its_content():
    a = Harness(label="short@m1", instructions="Be brief.", tools=["lookup"], model="m1")
    assert a.version == Harness(label="other label", instructions="Be brief.", tools=["lookup"], model="m1").version
    assert a.version != Harness(instructions="Be brief!", tools=["lookup"], model="m1").version
    assert a.version.startswith("h-") and len(a.version) == 14
    # the same hash the store puts on rows with that system prompt and model
    from whileai.store import harness_fingerprint

    assert Harness(instructions="Be brief.", model="m1").version == harness_fingerprint(
        [{"scenario_id": "t", "system_prompt": "Be brief.", "model_version": "m1"}])


def test_a_field_error_says_what_it_got_once():
    """Our validators' messages end with what they got; the field message added ', got X' again."""
    from whileai.platform._models import RunSpec, TrainPoint
    from whileai.platform._routes import build

    with pytest.raises(ArgumentError) as bad_id:
        build(RunSpec, id="../../x", version="v")
    assert str(bad_id.value).count("got") == 1 and str(bad_id.value).endswith("got '../../x'. Fix that field and send it again.")
    with pytest.raises(ArgumentError, match=r"metric 'tag' must be a number, got str 's'\. Fix that field") as bad_metric:
        build(TrainPoint, step=1, tag="s")
    assert ", got dict" not in str(bad_metric.value)
    with pytest.raises(ArgumentError, match=r"field 'step': Input should be greater than or equal to 0, got -1\. Fix"):
        build(TrainPoint, step=-1)


@pytest.mark.parametrize(("fields", "said"), [
    ({"day": "2026-13-45", "replies": 10}, "day must be a date of the calendar, YYYY-MM-DD, got '2026-13-45'"),
    ({"day": "2026-02-30", "replies": 5}, "got '2026-02-30'"),
    ({"day": "2026-02-28", "replies": 10, "flagged": 20}, "flagged must be at most replies (10), got 20"),
])
def test_a_live_day_is_a_real_day_with_no_more_flags_than_replies(fields, said):
    from whileai.platform._models import LiveDay

    with pytest.raises(ValidationError, match=re.escape(said)):
        LiveDay(**fields)
    assert LiveDay(day="2028-02-29", replies=3, flagged=3).flagged == 3


def test_a_run_version_is_not_empty():
    from whileai.platform._models import RunSpec

    with pytest.raises(ValidationError, match="at least 1 character"):
        RunSpec(version="")
    assert RunSpec().version is None
