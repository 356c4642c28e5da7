"""Notebook displays: one-line repr, escaped HTML, Markdown, the Plotly mime type, data objects, listings."""

from __future__ import annotations

import polars as pl
import pytest

import whileai as wai
from tests.charts.reports import build
from whileai import table
from whileai.measure import pass_at
from whileai.report import Report, align_rows
from whileai.testing import rollout_table

REPORTS = build()
PLOTLY = "application/vnd.plotly.v1+json"


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_repr_is_one_short_line_with_the_headline(name):
    r = REPORTS[name]
    text = repr(r)
    assert "\n" not in text and len(text) <= 200 and text.startswith(type(r).__name__ + "(")
    assert r.render().split("\n")[0] in text


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_mimebundle_has_text_html_markdown_and_the_figure(name):
    r = REPORTS[name]
    bundle = r._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "text/markdown", PLOTLY}
    assert bundle[PLOTLY] == r.figure_spec()
    for key in ("text/html", "text/markdown"):
        assert "\r" not in bundle[key] and "\x1b[" not in bundle[key]


def test_pass_at_html_is_the_metric_table_with_what_it_says():
    r = REPORTS["pass_at"]
    page = r._repr_html_()
    assert "<th>What it says</th>" in page and "how often all four tries pass" in page
    assert f"{r.pass_at_1:.2f}" in page and f"{r.ci95[0]:.2f} to {r.ci95[1]:.2f}" in page
    md = r._repr_markdown_()
    assert "| Metric | Value |" in md and f"{r.pass_at_k:.2f}" in md


def test_report_without_a_table_shows_its_lines_and_warnings_escaped():
    class Tiny(Report):
        value: float = 0.5

        def render(self):
            return "\n".join([f"TINY <b>{self.value}</b>", "detail & more", *(f"! {w}" for w in self.warnings)])

    r = Tiny(warnings=["look at <script>alert(1)</script>"])
    page = r._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<li>" in page and "detail &amp; more" in page and "TINY &lt;b&gt;0.5&lt;/b&gt;" in page
    assert "text/markdown" in r._repr_mimebundle_() and PLOTLY not in r._repr_mimebundle_()
    assert r._repr_markdown_().endswith("- look at &lt;script>alert(1)&lt;/script>")
    assert repr(r) == "Tiny(TINY <b>0.5</b>)"


def test_a_bare_verdict_word_reads_with_its_numbers():
    r = REPORTS["delta_report"]
    assert repr(r).startswith("DeltaReport(PASS · pass_at_1: moved (+0.")


def test_text_table_is_aligned():
    text = pass_at([{"task_id": t, "reward": r} for t in "abcdefgh" for r in (1, 0, 1, 1)]).table(style="text")
    lines = text.split("\n")
    col = lines[0].index("Value")
    assert all(line[col - 2:col] == "  " for line in lines)
    assert align_rows([["a", "bb"], ["ccc", "d"]]) == "a    bb\nccc  d"


def test_data_objects_show_rows_tasks_k_graded_and_the_first_rows():
    scored = wai.ScoredData(table.frame(rollout_table(12, 4, seed=2)))
    assert repr(scored) == "ScoredData(rows=48, tasks=12, k=4, graded=100%)"
    page = scored._repr_html_()
    assert "rows=48, tasks=12, k=4, graded=100%" in page and page.count("<tr>") == 1 + 5
    assert "43 more rows in .df" in page
    md = scored._repr_markdown_()
    assert "| task_key |" in md and "sc-00000000" in md
    sel = wai.select(scored)
    assert "rl selection: kept" in sel._repr_html_()


def test_data_object_cells_are_escaped_and_cut():
    df = table.frame([{"task_id": "t", "prompt": "<img src=x onerror=alert(1)>" + "y" * 200, "reward": 1.0}])
    page = wai.ScoredData(df)._repr_html_()
    assert "<img" not in page and "&lt;img" in page and "y" * 100 not in page


def test_store_listings_render_as_tables(tmp_path):
    from whileai.store import Store

    store = Store(tmp_path / "s.duckdb")
    assert "no datasets" in store.datasets()._repr_html_().lower() or store.datasets()._repr_html_().startswith("<p>")
    store.save_dataset(rollout_table(8, 2), "demo")
    page = store.datasets()._repr_html_()
    assert page.count("<table>") == 1 and "demo" in page
    assert "| id |" in store.datasets()._repr_markdown_() or "demo" in store.datasets()._repr_markdown_()


def test_displays_hold_no_raw_frames():
    r = REPORTS["pass_at"]
    assert isinstance(r.per_task, pl.DataFrame)
    assert "shape:" not in r._repr_html_()
