"""A figure dict as a plotly Figure (when plotly is installed), checked, or drawn on an HTML page."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from whileai.defaults import FIGURE_MAX_BYTES, FIGURE_MAX_TRACES, FIGURE_TRACE_TYPES
from whileai.errors import ArgumentError

__all__ = ["PLOTLY_JS_VERSION", "check_figure", "figure", "html_page", "plotly_js_path"]

_STATIC = Path(__file__).with_name("static")


def _read_version() -> str:
    try:
        return (_STATIC / "VERSION").read_text(encoding="utf-8").split()[1]
    except (OSError, IndexError):  # pragma: no cover - a broken install
        return "unknown"


#: The vendored plotly.js-basic bundle's version (``whileai/charts/static/VERSION``).
PLOTLY_JS_VERSION = _read_version()


def plotly_js_path() -> Path:
    """The vendored ``plotly-basic.min.js`` (plotly.js-basic-dist-min, MIT; the Runs page serves it).

    Examples:
        >>> plotly_js_path().name
        'plotly-basic.min.js'
    """
    return _STATIC / "plotly-basic.min.js"


def check_figure(spec: Any) -> dict[str, Any]:
    """Check a figure dict against what plotly.js-basic and the Runs page draw; return it.

    A figure is ``{"data": [...], "layout": {...}}`` with 1 to ``FIGURE_MAX_TRACES`` traces,
    each of a type in ``FIGURE_TRACE_TYPES`` (a missing type means scatter), and at most
    ``FIGURE_MAX_BYTES`` of JSON.

    Args:
        spec: The figure dict.

    Returns:
        ``spec`` unchanged.

    Raises:
        ArgumentError: The dict is not a figure the page can draw.

    Examples:
        >>> check_figure({"data": [{"type": "bar", "y": [1]}], "layout": {}})["data"][0]["type"]
        'bar'
    """
    if not isinstance(spec, Mapping) or not isinstance(spec.get("data"), list) or not isinstance(spec.get("layout", {}), Mapping):
        raise ArgumentError(f"a figure must be a dict with a 'data' list and a 'layout' dict, got {type(spec).__name__}. "
                            "Build it with whileai.charts or pass fig.to_plotly_json().")
    n = len(spec["data"])
    if not 1 <= n <= FIGURE_MAX_TRACES:
        raise ArgumentError(f"a figure must have 1 to {FIGURE_MAX_TRACES} traces, got {n}. Split it into several figures.")
    for trace in spec["data"]:
        kind = trace.get("type", "scatter") if isinstance(trace, Mapping) else None
        if kind not in FIGURE_TRACE_TYPES:
            raise ArgumentError(f"a trace type must be one of {list(FIGURE_TRACE_TYPES)} (what plotly.js-basic draws), "
                                f"got {kind!r}. Draw it as a scatter or bar trace.")
    size = len(json.dumps(spec, default=str))
    if size > FIGURE_MAX_BYTES:
        raise ArgumentError(f"a figure must be at most {FIGURE_MAX_BYTES} bytes of JSON, got {size}. "
                            "Plot fewer points (bin or sample them).")
    return dict(spec)


def figure(spec: Mapping[str, Any]) -> Any:
    """A ``plotly.graph_objects.Figure`` of ``spec`` when plotly is installed, else the checked dict.

    plotly stays optional: the dict renders through the ``application/vnd.plotly.v1+json`` mime
    type in Jupyter and on the Runs page's vendored plotly.js-basic.

    Args:
        spec: A figure dict from this package's builders.

    Returns:
        A plotly Figure, or the dict.

    Examples:
        >>> out = figure({"data": [{"type": "bar", "y": [1]}], "layout": {}})
        >>> type(out).__name__ in {"Figure", "dict"}
        True
    """
    checked = check_figure(spec)
    try:
        import plotly.graph_objects as go
    except ImportError:
        return checked
    return go.Figure(checked)


def html_page(figures: Sequence[Mapping[str, Any]], *, titles: Sequence[str] | None = None,
              script_src: str | None = None, inline: bool = False) -> str:
    """A standalone HTML page drawing ``figures`` with the vendored plotly.js-basic.

    Args:
        figures: Figure dicts.
        titles: A caption above each figure.
        script_src: Where the page loads plotly-basic.min.js from (default: the vendored file's
            ``file://`` URL).
        inline: Embed the bundle in the page instead (about 1.2 MB).

    Returns:
        The HTML text.

    Examples:
        >>> "Plotly.newPlot" in html_page([{"data": [{"type": "bar", "y": [1]}], "layout": {}}])
        True
    """
    checked = [check_figure(f) for f in figures]
    if inline:
        script = "<script>" + plotly_js_path().read_text(encoding="utf-8") + "</script>"
    else:
        src = script_src or plotly_js_path().resolve().as_uri()
        script = f'<script src="{html.escape(src, quote=True)}"></script>'
    caps = list(titles) if titles is not None else [""] * len(checked)
    blocks = []
    for i, (fig, cap) in enumerate(zip(checked, caps)):
        # JSON inside <script>: escape "</" so a label cannot close the tag
        payload = json.dumps(fig, default=str).replace("</", "<\\/")
        blocks.append(f'<figure>{f"<figcaption>{html.escape(cap)}</figcaption>" if cap else ""}'
                      f'<div id="fig{i}"></div></figure>'
                      f'<script>Plotly.newPlot("fig{i}", ...(function(f){{return [f.data, f.layout, '
                      f'{{staticPlot: true}}];}})({payload}));</script>')
    return ("<!doctype html><html><head><meta charset=\"utf-8\">" + script +
            "<style>body{font-family:sans-serif;margin:8px}figure{margin:0 0 12px 0}</style></head><body>"
            + "".join(blocks) + "</body></html>")
