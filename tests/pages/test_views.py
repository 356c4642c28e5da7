"""The page's data (whileai.platform._page), the markdown escaping and the chart builders, without a server."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import whileai.charts as charts
from whileai.errors import ArgumentError
from whileai.platform._models import Behavior, Example, ScoreRecord
from whileai.platform._page import rows_view, runs_page
from whileai.platform.pages import render_markdown


def _wilson(p, n, level=0.95):
    z = stats.norm.ppf(0.5 + level / 2)
    phat = p / n
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_rows_view_breaks_the_score_down_by_each_tag():
    rows = [Example(ok=i % 3 != 0, tags={"tier": "hard" if i < 10 else "easy"}) for i in range(30)]
    score = ScoreRecord(id="s", run_id="r", behavior="b", value=60, seq=1, created_at="")
    view = rows_view("r", Behavior(name="b"), score, rows, show="failed")
    assert (view.n, view.passed, view.failed, len(view.rows)) == (30, 20, 10, 10)
    by = {t.value: t for t in view.by_tag}
    hard = sum(1 for i in range(10) if i % 3 != 0)
    assert by["hard"].n == 10 and by["hard"].passed == hard
    lo, hi = _wilson(hard, 10)
    assert by["hard"].ci95 == pytest.approx((lo, hi), abs=1e-9)
    assert len(view.sample) == 16 and sum(not r.ok for r in view.sample) == 10  # 14 failures wanted, 10 exist; 6 passes
    with pytest.raises(ArgumentError, match="show must be one of"):
        rows_view("r", Behavior(name="b"), score, rows, show="maybe")


def test_runs_page_draws_the_newest_versions_and_keeps_the_served_one(seeded):
    from whileai.defaults import PAGE_VERSIONS_SHOWN

    _, tracked = seeded
    for i in range(PAGE_VERSIONS_SHOWN + 5):
        tracked.run(f"variant-{i}").score("refunds", 50.0 + i % 10, ci=4.0, n=60)
    page = runs_page(tracked.dashboard())
    chart = next(c for c in page.score_charts if c.caption.startswith("refunds"))
    xs = chart.figure["data"][0]["x"]
    assert "base" in xs and "gpt-frontier" not in xs  # served kept, frontier is the line
    assert len(xs) == PAGE_VERSIONS_SHOWN + 1 and f"{PAGE_VERSIONS_SHOWN + 1} of {PAGE_VERSIONS_SHOWN + 7} versions" in chart.caption
    assert page.frontier == "gpt-frontier" and "gpt-frontier" not in page.versions
    assert [c.traces for c in page.charts()] == [len(c.figure["data"]) for c in page.charts()]
    assert page.deltas[0].target is False  # the newest candidate has no target recorded


def test_runs_page_marks_the_target_and_the_training_curve(seeded):
    _, tracked = seeded
    page = runs_page(tracked.dashboard())
    rows = {d.behavior: d for d in page.deltas}
    assert rows["refunds"].target and not rows["tone"].target
    assert rows["refunds"].word == "beats" and rows["tone"].word == "no_difference"
    names = [t["name"] for t in page.train_chart.figure["data"]]
    assert names == ["sft-v1 loss", "sft-v1 lr", "sft-v1 proxy_reward", "sft-v1 gold_reward", "sft-v1 holdout_length"]
    assert {j.behavior: j.kappa for j in page.judge} == {"refunds": None, "tone": 0.62}
    assert page.missing == []  # the frontier run never trained: it owes no hours or cost


@pytest.mark.parametrize("text, must, must_not", [
    ("<script>alert(1)</script>", "&lt;script&gt;", "<script"),
    ('<img src=x onerror="alert(1)">', "&lt;img", "<img"),
    ("[x](javascript:alert(1))", "[x](javascript:alert(1))", "<a "),
    ("[x](https://example.com/?a=1&b=\"2\")", 'href="https://example.com/?a=1&amp;b=&quot;2&quot;"', "javascript"),
    ("`<b>`", "<code>&lt;b&gt;</code>", "<b>"),
    ("```\n<script>\n```", "<pre><code>&lt;script&gt;</code></pre>", "<script"),
    ("- a\n- **b**\n\n1. c", "<ul><li>a</li><li><strong>b</strong></li></ul><ol><li>c</li></ol>", "<script"),
    ("# Title\nline one\nline two", "<h3>Title</h3><p>line one<br>line two</p>", "<h1"),
])
def test_markdown_escapes_before_it_marks_up(text, must, must_not):
    out = str(render_markdown(text))
    assert must in out and must_not not in out


def test_chart_builders_use_only_basic_traces():
    figs = [charts.version_scores(["a", "b"], [10, 20], [1, None], served="a", frontier=("f", 30)),
            charts.train_curves([("loss", "r", [0, 1], [1.0, float("nan")]), ("lr", "r", [0, 1], [1e-5, 1e-5])]),
            charts.cost_scatter(["a"], [1.0], [50.0])]
    for fig in figs:
        charts.check_figure(fig)
    assert figs[0]["data"][0]["error_y"]["array"] == [1.0, None]
    assert figs[1]["data"][0]["y"] == [1.0, None]
    assert figs[1]["layout"]["yaxis2"]["range"] == pytest.approx([0.5e-5, 1.5e-5])
