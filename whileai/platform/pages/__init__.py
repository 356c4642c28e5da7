"""The Runs pages ``wai server`` serves, and the static report ``wai report`` writes (docs/pages.md).

Server-rendered Jinja2 over the same :class:`~whileai.platform._service.Service` the REST routes
read; the page data comes from :mod:`whileai.platform._page` and the figures from
:mod:`whileai.charts`, drawn by the vendored plotly.js-basic (no CDN).
"""

from whileai.platform.pages._app import Pages, safe_next
from whileai.platform.pages._markdown import render_markdown
from whileai.platform.pages._render import render
from whileai.platform.pages._report import report_html, report_sections, write_report

__all__ = ["Pages", "render", "render_markdown", "report_html", "report_sections", "safe_next", "write_report"]
