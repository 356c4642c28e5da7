"""``wai report``: pass rates, the failure table, a delta and the hack scan of rollout files as one HTML file.

The same templates, stylesheet, script and charts as the Runs pages, with the plotly.js-basic
bundle inlined, so the file opens offline from disk and can be mailed or attached to a PR
(docs/pages.md, "wai report").
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

import whileai.charts as charts
from whileai.errors import ArgumentError, WaiError
from whileai.platform._page import Chart
from whileai.platform.pages._render import STATIC, render

__all__ = ["ReportSection", "report_html", "report_sections", "write_report"]


class ReportSection(BaseModel):
    """One block of the report: a title, the report's headline, its table (or lines), warnings, a chart."""

    id: str
    title: str
    headline: str = ""
    header: list[str] = Field(default_factory=list)
    rows: list[list[str]] = Field(default_factory=list)
    lines: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    chart: Chart | None = None
    error: str | None = None


def _section(sid: str, title: str, report: Any) -> ReportSection:
    table = report.table_rows()
    spec = report.figure_spec()
    chart = None
    if spec is not None:
        chart = Chart(id=f"{sid}-chart", caption=title, figure=charts.check_figure(spec), traces=len(spec["data"]))
    return ReportSection(id=sid, title=title, headline=report.display_line(),
                         header=[str(c) for c in table[0]] if table else [],
                         rows=[[str(c) for c in r] for r in table[1:]] if table else [],
                         lines=[] if table else report._body_lines(), warnings=list(report.warnings), chart=chart)


def _attempt(sid: str, title: str, fn: Any) -> ReportSection:
    try:
        return _section(sid, title, fn())
    except WaiError as exc:  # a block these rows cannot fill says why; the rest of the report stands
        return ReportSection(id=sid, title=title, error=exc.message)


def report_sections(paths: Sequence[str | os.PathLike[str]], *, labels: Sequence[str] | None = None,
                    by: str | Sequence[str] | None = None, seed: int | None = None) -> list[ReportSection]:
    """The report's blocks: pass rates with intervals per file, failures, the delta of the first two, hack scans.

    Args:
        paths: Rollout files (anything ``wai pass-at`` reads).
        labels: A name per file (default: the file names).
        by: The failure table's dimensions (default ``FAILURE_BY``).
        seed: The seed of the delta's permutation test and the hack scan's shuffle floor.

    Raises:
        ArgumentError: No path, or a label count that differs from the path count.
    """
    from whileai.defaults import DEFAULT_SEED, FAILURE_BY
    from whileai.guard import hack_scan
    from whileai.measure import delta_report, failure_table, pass_at
    from whileai.table import frame as read_frame

    if not paths:
        raise ArgumentError("paths must name at least one rollout file, got none. Pass ROWS... to wai report.")
    names = list(labels) if labels is not None else [Path(p).name for p in paths]
    if len(names) != len(paths):
        raise ArgumentError(f"labels must give one name per file ({len(paths)}), got {len(names)}. "
                            "Pass one --label per file, or none.")
    seed = DEFAULT_SEED if seed is None else seed
    frames = [read_frame(str(p)) for p in paths]
    reports = [pass_at(f) for f in frames]
    sections: list[ReportSection] = []
    lo = [r.ci95[0] if r.ci95 else None for r in reports]
    hi = [r.ci95[1] if r.ci95 else None for r in reports]
    fig = charts.interval_bars(names, [r.pass_at_1 for r in reports], lo, hi, title="pass@1 with its 95% interval",
                               y_title="pass@1")
    sections.append(ReportSection(
        id="pass-rates", title="Pass rates with intervals", headline=f"{len(paths)} file(s)",
        header=["file", "pass@1", "95% interval", "k", "pass^k", "pass@k", "tasks", "rows"],
        rows=[[n, f"{r.pass_at_1:.3f}", f"{r.ci95[0]:.3f}..{r.ci95[1]:.3f}" if r.ci95 else "–", str(r.k),
               f"{r.pass_pow_k:.3f}", f"{r.pass_at_k:.3f}", str(r.n_tasks), str(r.n_rows)] for n, r in zip(names, reports)],
        warnings=[f"{n}: {w}" for n, r in zip(names, reports) for w in r.warnings],
        chart=Chart(id="pass-rates-chart", caption="pass@1 by file (95% interval over tasks)", figure=fig,
                    traces=len(fig["data"]))))
    for i, (name, frame) in enumerate(zip(names, frames)):
        sections.append(_attempt(f"failures-{i}", f"Where {name} fails",
                                 lambda f=frame: failure_table(f, by=by if by is not None else FAILURE_BY)))
    if len(frames) >= 2:
        sections.append(_attempt("delta", f"{names[1]} against {names[0]}",
                                 lambda: delta_report(frames[0], frames[1], seed=seed)))
    for i, (name, frame) in enumerate(zip(names, frames)):
        sections.append(_attempt(f"hack-{i}", f"Hack scan of {name}", lambda f=frame: hack_scan(f, seed=seed)))
    return sections


def report_html(paths: Sequence[str | os.PathLike[str]], *, title: str | None = None,
                labels: Sequence[str] | None = None, by: str | Sequence[str] | None = None,
                seed: int | None = None) -> str:
    """The static report of :func:`report_sections` as one self-contained HTML page (bundle inlined)."""
    from whileai.charts import plotly_js_path

    sections = report_sections(paths, labels=labels, by=by, seed=seed)
    assets = {"inline": True, "css": (STATIC / "page.css").read_text(encoding="utf-8"),
              "js": (STATIC / "page.js").read_text(encoding="utf-8"),
              "plotly": plotly_js_path().read_text(encoding="utf-8"),
              "note": f"wai report · {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"}
    chart_list = [s.chart for s in sections if s.chart is not None]
    return render("report.html", assets=assets, account=None, title=title or "whileai report",
                  sections=sections, files=[str(p) for p in paths], charts=chart_list)


def write_report(paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Write :func:`report_html` to ``out`` (a temporary file, then renamed) and return the path.

    Raises:
        ArgumentError: ``out`` does not end in ``.html`` or ``.htm`` (checked before any row is read).
    """
    from whileai.errors import ArgumentError
    from whileai.table import atomic_path

    if Path(out).suffix.lower() not in (".html", ".htm"):
        raise ArgumentError(f"output must be an HTML file (.html), got {os.fspath(out)!r}. Name it report.html.",
                            argument="output")
    text = report_html(paths, **kwargs)
    with atomic_path(out) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(out)
