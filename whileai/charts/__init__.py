"""Every whileai figure, built once as Plotly figure JSON from plain numbers (docs/notebook.md).

The builders return ``{"data": [...], "layout": {...}}`` dicts using only the trace types
plotly.js-basic draws (scatter, bar, pie); reports' ``.figure()``, the notebook displays
(``application/vnd.plotly.v1+json``), the Runs page and the docs all draw the same dicts. No
plotly import: :func:`figure` returns a ``plotly.graph_objects.Figure`` only when plotly is
installed. The vendored bundle is ``whileai/charts/static/plotly-basic.min.js``.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
