"""Every whileai figure, built once as Plotly figure JSON from plain numbers (docs/notebook.md).

The builders return ``{"data": [...], "layout": {...}}`` dicts using only the trace types
plotly.js-basic draws (scatter, bar, pie); reports' ``.figure()``, the notebook displays
(``application/vnd.plotly.v1+json``), the Runs page and the docs all draw the same dicts. No
plotly import: :func:`figure` returns a ``plotly.graph_objects.Figure`` only when plotly is
installed. The vendored bundle is ``whileai/charts/static/plotly-basic.min.js``.
"""

from whileai.charts._figures import (
    cost_scatter,
    curve,
    difficulty_histogram,
    feature_bars,
    forest,
    histogram_counts,
    interval_bars,
    judge_trust_chart,
    train_curves,
    version_scores,
)
from whileai.charts._render import (
    PLOTLY_JS_VERSION,
    check_figure,
    figure,
    html_page,
    plotly_js_path,
)

__all__ = [
    "PLOTLY_JS_VERSION",
    "check_figure",
    "cost_scatter",
    "curve",
    "difficulty_histogram",
    "feature_bars",
    "figure",
    "forest",
    "histogram_counts",
    "html_page",
    "interval_bars",
    "judge_trust_chart",
    "plotly_js_path",
    "train_curves",
    "version_scores",
]
