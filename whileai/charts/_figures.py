"""Figure builders: plain numbers in, a Plotly figure JSON dict (``{"data": [...], "layout": {...}}``) out.

Only the trace types plotly.js-basic draws (scatter, bar, pie), so the same dict renders in a
notebook (``application/vnd.plotly.v1+json``), through ``plotly.graph_objects.Figure`` and on the
Runs page's vendored bundle. NaN or None values become gaps (JSON ``null``), never a number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from whileai.defaults import (
    CHART_BAD,
    CHART_BAND_FILL,
    CHART_COLORS,
    CHART_GOOD,
    CHART_HEIGHT,
    CHART_MARGIN,
    CHART_MUTED,
    CHART_NEUTRAL,
    CHART_WIDTH,
    DIFFICULTY_BAND,
    DIFFICULTY_BINS,
)

__all__ = [
    "cost_scatter",
    "curve",
    "difficulty_histogram",
    "feature_bars",
    "forest",
    "histogram_counts",
    "interval_bars",
    "judge_trust_chart",
    "train_curves",
    "version_scores",
]

Number = float | int | None


def _num(value: Any) -> float | None:
    """A JSON number or None (NaN, inf and None are gaps)."""
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def _nums(values: Sequence[Any]) -> list[float | None]:
    return [_num(v) for v in values]


def _layout(title: str, *, x_title: str = "", y_title: str = "", height: int = CHART_HEIGHT,
            **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "title": {"text": title},
        "width": CHART_WIDTH,
        "height": height,
        "margin": dict(CHART_MARGIN),
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "showlegend": False,
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(layout.get(key), dict):
            layout[key] = {**layout[key], **value}
        else:
            layout[key] = value
    return layout


def _errors(values: Sequence[Any], lows: Sequence[Any] | None, highs: Sequence[Any] | None) -> tuple[list[Any], list[Any]]:
    """Asymmetric error lengths (value - low, high - value); None where a bound is missing."""
    n = len(values)
    lo = list(lows) if lows is not None else [None] * n
    hi = list(highs) if highs is not None else [None] * n
    minus, plus = [], []
    for v, a, b in zip(_nums(values), _nums(lo), _nums(hi)):
        minus.append(None if v is None or a is None else max(v - a, 0.0))
        plus.append(None if v is None or b is None else max(b - v, 0.0))
    return plus, minus


def interval_bars(names: Sequence[str], values: Sequence[Number], lows: Sequence[Number] | None = None,
                  highs: Sequence[Number] | None = None, *, title: str = "", y_title: str = "",
                  y_range: tuple[float, float] | None = (0.0, 1.0), colors: Sequence[str] | None = None,
                  text: Sequence[str] | None = None) -> dict[str, Any]:
    """One bar per name with its interval as an asymmetric error bar (one bar trace).

    Args:
        names: Bar labels (metrics, groups).
        values: Bar heights; NaN or None leaves a gap.
        lows: Lower interval bounds, same length (None: no error bars).
        highs: Upper interval bounds.
        title: Figure title.
        y_title: Y axis title.
        y_range: Y axis range (None: automatic).
        colors: One colour per bar (default: the first palette colour).
        text: Label printed on each bar (default: the value to two decimals).

    Returns:
        A Plotly figure dict.

    Examples:
        >>> fig = interval_bars(["pass@1"], [0.5], [0.4], [0.6])
        >>> fig["data"][0]["type"], fig["data"][0]["error_y"]["array"]
        ('bar', [0.09999999999999998])
    """
    plus, minus = _errors(values, lows, highs)
    vals = _nums(values)
    labels = list(text) if text is not None else ["" if v is None else f"{v:.2f}" for v in vals]
    trace: dict[str, Any] = {
        "type": "bar", "x": [str(n) for n in names], "y": vals, "text": labels, "textposition": "outside",
        "marker": {"color": list(colors) if colors is not None else CHART_NEUTRAL},
        "hovertemplate": "%{x}: %{y:.3f}<extra></extra>",
    }
    if lows is not None or highs is not None:
        trace["error_y"] = {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus,
                            "color": "#333333", "thickness": 1.5, "width": 6}
    yaxis: dict[str, Any] = {"range": list(y_range)} if y_range is not None else {}
    return {"data": [trace], "layout": _layout(title, y_title=y_title, yaxis=yaxis)}


def forest(names: Sequence[str], deltas: Sequence[Number], lows: Sequence[Number], highs: Sequence[Number], *,
           band: float | None = None, verdict: str = "", colors: Sequence[str] | None = None,
           title: str = "", x_title: str = "delta (after - before)") -> dict[str, Any]:
    """A forest plot: one row per metric, its delta as a point and its interval as a bar.

    Zero is a solid vertical line; the noise band (``-band`` to ``+band``) is shaded, since a
    delta inside it is the eval re-running; the verdict word heads the figure.

    Args:
        names: Metric names, top to bottom.
        deltas: Deltas (after - before).
        lows: Lower interval bounds.
        highs: Upper interval bounds.
        band: Half-width of the noise band (None: no band).
        verdict: The verdict word shown in the title.
        colors: One marker colour per metric (default: neutral).
        title: Title text after the verdict word.
        x_title: X axis title.

    Returns:
        A Plotly figure dict (one scatter trace).

    Examples:
        >>> fig = forest(["pass_at_1"], [0.1], [0.05], [0.15], band=0.02, verdict="PASS")
        >>> fig["layout"]["shapes"][0]["x0"], fig["layout"]["title"]["text"]
        (-0.02, 'PASS')
    """
    plus, minus = _errors(deltas, lows, highs)
    rows = [str(n) for n in names]
    trace: dict[str, Any] = {
        "type": "scatter", "mode": "markers", "x": _nums(deltas), "y": rows,
        "error_x": {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus,
                    "color": "#333333", "thickness": 1.5, "width": 6},
        "marker": {"size": 10, "color": list(colors) if colors is not None else CHART_NEUTRAL},
        "hovertemplate": "%{y}: %{x:+.3f}<extra></extra>",
    }
    shapes: list[dict[str, Any]] = []
    if band is not None and _num(band) is not None:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": -float(band), "x1": float(band),
                       "y0": 0, "y1": 1, "fillcolor": CHART_BAND_FILL, "line": {"width": 0}, "layer": "below"})
    shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": 0, "x1": 0, "y0": 0, "y1": 1,
                   "line": {"color": "#333333", "width": 1}})
    head = " · ".join(t for t in (verdict, title) if t)
    height = max(220, 80 + 40 * len(rows))
    return {"data": [trace], "layout": _layout(head, x_title=x_title, height=height, shapes=shapes,
                                               yaxis={"autorange": "reversed", "automargin": True})}


def histogram_counts(rates: Sequence[float] | np.ndarray, *, bins: int = DIFFICULTY_BINS) -> list[int]:
    """Counts of values in ``bins`` equal bins over [0, 1] (the last bin closed), NaN left out.

    Examples:
        >>> histogram_counts([0.0, 0.05, 0.5, 1.0], bins=4)
        [2, 0, 1, 1]
    """
    x = np.asarray(rates, dtype=np.float64)
    x = x[np.isfinite(x)]
    counts, _ = np.histogram(np.clip(x, 0.0, 1.0), bins=bins, range=(0.0, 1.0))
    return [int(c) for c in counts]


def difficulty_histogram(counts: Sequence[int], *, band: tuple[float, float] = DIFFICULTY_BAND,
                         title: str = "", kept: Sequence[int] | None = None) -> dict[str, Any]:
    """Per-task pass rates as a histogram over [0, 1] with the difficulty band shaded.

    Bars inside the band are coloured as trainable, outside it muted; with ``kept`` a second
    bar trace overlays the tasks a selection kept.

    Args:
        counts: Tasks per bin, equal bins over [0, 1] (``histogram_counts``).
        band: The inclusive pass-rate band (``DIFFICULTY_BAND``, Lambert 2025, chapter Reasoning).
        title: Figure title.
        kept: Tasks kept per bin (optional second trace).

    Returns:
        A Plotly figure dict.

    Examples:
        >>> fig = difficulty_histogram([1, 2, 3, 4, 5, 5, 4, 3, 2, 1])
        >>> len(fig["data"]), fig["layout"]["shapes"][0]["x0"]
        (1, 0.2)
    """
    n = len(counts)
    width = 1.0 / n if n else 1.0
    mids = [round((i + 0.5) * width, 10) for i in range(n)]
    lo, hi = band
    colors = [CHART_GOOD if lo - 1e-12 <= m - width / 2 and m + width / 2 <= hi + 1e-12 else CHART_MUTED for m in mids]
    data: list[dict[str, Any]] = [{
        "type": "bar", "name": "tasks", "x": mids, "y": [int(c) for c in counts], "width": width * 0.95,
        "marker": {"color": colors}, "hovertemplate": "pass rate %{x:.2f}: %{y} tasks<extra></extra>",
    }]
    if kept is not None:
        data.append({"type": "bar", "name": "kept", "x": mids, "y": [int(c) for c in kept], "width": width * 0.5,
                     "marker": {"color": CHART_NEUTRAL}, "hovertemplate": "kept %{y}<extra></extra>"})
    shapes = [{"type": "rect", "xref": "x", "yref": "paper", "x0": lo, "x1": hi, "y0": 0, "y1": 1,
               "fillcolor": CHART_BAND_FILL, "line": {"width": 0}, "layer": "below"}]
    annotations = [{"x": (lo + hi) / 2, "y": 1.0, "xref": "x", "yref": "paper", "yanchor": "bottom",
                    "text": f"band {lo:.0%}-{hi:.0%}", "showarrow": False}]
    return {"data": data, "layout": _layout(title, x_title="task pass rate", y_title="tasks", shapes=shapes,
                                            annotations=annotations, xaxis={"range": [0, 1]},
                                            barmode="overlay", showlegend=kept is not None)}


def feature_bars(names: Sequence[str], rhos: Sequence[float], *, floor: float | None,
                 endorsed: Sequence[bool] | None = None, title: str = "") -> dict[str, Any]:
    """Features against a noise floor: one horizontal bar of rho per feature, endorsed ones coloured.

    The floor ``tau`` is drawn at ``-tau`` and ``+tau``: a bar past it is signal the reward pays
    for. Endorsed features (what the reward should track) are green, the rest above the floor
    vermillion, the rest below it grey.

    Args:
        names: Feature names, top first.
        rhos: Within-ask correlations with reward.
        floor: The shuffle floor tau (None or NaN: no floor lines).
        endorsed: Per feature, whether it is endorsed.
        title: Figure title.

    Returns:
        A Plotly figure dict (one bar trace).

    Examples:
        >>> fig = feature_bars(["len", "tool:search"], [0.6, 0.3], floor=0.2, endorsed=[False, True])
        >>> fig["data"][0]["marker"]["color"]
        ['#D55E00', '#009E73']
    """
    ends = list(endorsed) if endorsed is not None else [False] * len(names)
    tau = _num(floor)
    colors = []
    for rho, end in zip(_nums(rhos), ends):
        if end:
            colors.append(CHART_GOOD)
        elif rho is not None and tau is not None and abs(rho) > tau:
            colors.append(CHART_BAD)
        else:
            colors.append(CHART_MUTED)
    trace = {"type": "bar", "orientation": "h", "x": _nums(rhos), "y": [str(n) for n in names],
             "marker": {"color": colors}, "hovertemplate": "%{y}: rho %{x:+.3f}<extra></extra>"}
    shapes = []
    if tau is not None:
        for x in (-tau, tau):
            shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
                           "line": {"color": "#333333", "width": 1, "dash": "dash"}})
    height = max(240, 90 + 26 * len(names))
    return {"data": [trace], "layout": _layout(title, x_title="within-ask correlation with reward", height=height,
                                               shapes=shapes, xaxis={"range": [-1, 1]},
                                               yaxis={"autorange": "reversed", "automargin": True})}


def judge_trust_chart(agreement: Number, agreement_ci: tuple[Number, Number] | None, kappa: Number,
                      kappa_ci: tuple[Number, Number] | None, *, short: Sequence[Number], long: Sequence[Number],
                      groups: Sequence[str] = ("gold pass", "gold fail"), floors: tuple[Number, Number] | None = None,
                      title: str = "") -> dict[str, Any]:
    """Judge agreement and kappa with intervals (left), judge pass rate on short vs long replies (right).

    Args:
        agreement: Share of rows where judge and gold agree.
        agreement_ci: Its interval (Wilson).
        kappa: Cohen's kappa.
        kappa_ci: Its interval (None: none drawn).
        short: Judge pass rate on short replies, per gold group.
        long: Judge pass rate on long replies, per gold group.
        groups: The gold groups' labels.
        floors: The agreement and kappa floors, drawn as ticks (None: none).
        title: Figure title.

    Returns:
        A Plotly figure dict with three bar traces: agreement and kappa, short, long.

    Examples:
        >>> fig = judge_trust_chart(0.9, (0.8, 0.95), 0.7, None, short=[0.9, 0.1], long=[0.95, 0.3])
        >>> [t["name"] for t in fig["data"]]
        ['agreement and kappa', 'short replies', 'long replies']
    """
    values = [agreement, kappa]
    lows = [agreement_ci[0] if agreement_ci else None, kappa_ci[0] if kappa_ci else None]
    highs = [agreement_ci[1] if agreement_ci else None, kappa_ci[1] if kappa_ci else None]
    plus, minus = _errors(values, lows, highs)
    vals = _nums(values)
    left = {"type": "bar", "name": "agreement and kappa", "x": ["agreement", "kappa"], "y": vals,
            "text": ["" if v is None else f"{v:.2f}" for v in vals], "textposition": "outside",
            "error_y": {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "color": "#333333"},
            "marker": {"color": [CHART_NEUTRAL, CHART_COLORS[1]]}, "xaxis": "x", "yaxis": "y", "showlegend": False}
    right = [
        {"type": "bar", "name": name, "x": [str(g) for g in groups], "y": _nums(vals_), "xaxis": "x2", "yaxis": "y2",
         "marker": {"color": color}, "hovertemplate": f"{name} %{{x}}: %{{y:.2f}}<extra></extra>"}
        for name, vals_, color in (("short replies", short, CHART_COLORS[5]), ("long replies", long, CHART_COLORS[0]))
    ]
    shapes = []
    if floors is not None:
        for i, f in enumerate(floors):
            if _num(f) is not None:
                shapes.append({"type": "line", "xref": "x", "yref": "y", "x0": i - 0.4, "x1": i + 0.4,
                               "y0": float(f), "y1": float(f),  # type: ignore[arg-type]
                               "line": {"color": CHART_BAD, "width": 2, "dash": "dot"}})
    layout = _layout(title, shapes=shapes, showlegend=True, barmode="group",
                     xaxis={"domain": [0.0, 0.42]}, yaxis={"range": [min(0.0, (_num(kappa) or 0.0) - 0.1), 1.1],
                                                           "title": {"text": "agreement, kappa"}},
                     xaxis2={"domain": [0.58, 1.0], "anchor": "y2", "title": {"text": "length bias"}},
                     yaxis2={"range": [0, 1.1], "anchor": "x2", "title": {"text": "judge pass rate"}},
                     legend={"x": 0.58, "y": 1.0, "xanchor": "left", "yanchor": "bottom", "orientation": "h"})
    return {"data": [left, *right], "layout": layout}


def curve(x: Sequence[float], y: Sequence[Number], *, title: str = "", x_title: str = "", y_title: str = "",
          hline: float | None = None, vline: float | None = None, name: str = "",
          y_range: tuple[float, float] | None = None, points: tuple[Sequence[float], Sequence[Number]] | None = None,
          ) -> dict[str, Any]:
    """A line against x (a power or sizing curve), with an optional target line and marked x.

    Args:
        x: X values (n_tasks).
        y: Y values (power, or the detectable gain).
        title: Figure title.
        x_title: X axis title.
        y_title: Y axis title.
        hline: A horizontal reference (the target power), dashed.
        vline: A vertical reference (the answer's n_tasks), dashed.
        name: The line's name.
        y_range: Y axis range (None: automatic).
        points: Extra marked points (x, y) as a second trace.

    Returns:
        A Plotly figure dict (one scatter trace, two with ``points``).

    Examples:
        >>> fig = curve([10, 20], [0.3, 0.6], hline=0.8, vline=30)
        >>> fig["data"][0]["mode"], len(fig["layout"]["shapes"])
        ('lines', 2)
    """
    data: list[dict[str, Any]] = [{"type": "scatter", "mode": "lines", "name": name or "curve",
                                   "x": _nums(x), "y": _nums(y), "line": {"color": CHART_NEUTRAL, "width": 2}}]
    if points is not None:
        data.append({"type": "scatter", "mode": "markers", "name": "measured", "x": _nums(points[0]),
                     "y": _nums(points[1]), "marker": {"color": CHART_BAD, "size": 9}})
    shapes = []
    if hline is not None and _num(hline) is not None:
        shapes.append({"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": hline, "y1": hline,
                       "line": {"color": CHART_MUTED, "width": 1, "dash": "dash"}})
    if vline is not None and _num(vline) is not None:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": vline, "x1": vline, "y0": 0, "y1": 1,
                       "line": {"color": CHART_BAD, "width": 1, "dash": "dash"}})
    yaxis: dict[str, Any] = {"range": list(y_range)} if y_range is not None else {}
    return {"data": data, "layout": _layout(title, x_title=x_title, y_title=y_title, shapes=shapes, yaxis=yaxis)}


def version_scores(versions: Sequence[str], values: Sequence[Number], cis: Sequence[Number] | None = None, *,
                   served: str | None = None, frontier: tuple[str, float] | None = None, candidate: str | None = None,
                   title: str = "", y_title: str = "points (of 100)") -> dict[str, Any]:
    """A held-out score per version with its 95% interval, the served version marked, the frontier as a line.

    The served version's bar is green and labelled "served", the candidate's orange; the frontier
    model's score is a dashed horizontal line (the line to beat). Scores are points out of 100, as
    posted (docs/platform.md, "The rules").

    Args:
        versions: Version names, in posting order.
        values: Their scores in points.
        cis: Half-widths of their 95% intervals (None: no error bars).
        served: The served version.
        frontier: The frontier model's (name, score), drawn as a line.
        candidate: The candidate version.
        title: Figure title.
        y_title: Y axis title.

    Returns:
        A Plotly figure dict (one bar trace).

    Examples:
        >>> fig = version_scores(["base", "sft"], [60, 70], [4, 4], served="base", frontier=("gpt-x", 80))
        >>> fig["data"][0]["text"], fig["layout"]["shapes"][0]["y0"]
        (['60.0 served', '70.0'], 80.0)
    """
    vals = _nums(values)
    half = _nums(cis) if cis is not None else [None] * len(vals)
    colors = [CHART_GOOD if v == served else CHART_COLORS[1] if v == candidate else CHART_NEUTRAL for v in versions]
    text = [("" if x is None else f"{x:.1f}") + (" served" if v == served else "") for v, x in zip(versions, vals)]
    trace: dict[str, Any] = {
        "type": "bar", "name": "held-out score", "x": [str(v) for v in versions], "y": vals, "text": text,
        "textposition": "outside", "marker": {"color": colors}, "cliponaxis": False,
        "hovertemplate": "%{x}: %{y:.1f} points<extra></extra>",
    }
    if cis is not None:
        trace["error_y"] = {"type": "data", "array": half, "visible": True, "color": "#333333", "thickness": 1.5,
                            "width": 6}
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    if frontier is not None and _num(frontier[1]) is not None:
        y = float(frontier[1])
        shapes.append({"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": y, "y1": y,
                       "line": {"color": CHART_BAD, "width": 2, "dash": "dash"}})
        annotations.append({"xref": "paper", "yref": "y", "x": 1, "y": y, "xanchor": "right", "yanchor": "bottom",
                            "text": f"frontier {frontier[0]} {y:.1f}", "showarrow": False})
    return {"data": [trace], "layout": _layout(title, y_title=y_title, shapes=shapes, annotations=annotations,
                                               yaxis={"range": [0, 105]}, xaxis={"type": "category"})}


def train_curves(series: Sequence[tuple[str, str, Sequence[float], Sequence[Number]]], *, title: str = "") -> dict[str, Any]:
    """Training curves: one panel per metric (loss, lr, rewards, length) stacked, one line per run.

    Each metric gets its own y axis so a learning rate of 1e-5 and a loss of 2 both read; the
    panels share the step axis.

    Args:
        series: ``(metric, run label, steps, values)`` per line; metrics keep their first-seen order.
        title: Figure title.

    Returns:
        A Plotly figure dict (one scatter trace per line).

    Examples:
        >>> fig = train_curves([("loss", "sft", [0, 1], [2.0, 1.5]), ("lr", "sft", [0, 1], [1e-5, 1e-5])])
        >>> [t["yaxis"] for t in fig["data"]], fig["layout"]["yaxis2"]["title"]["text"]
        (['y', 'y2'], 'lr')
    """
    metrics: list[str] = []
    for metric, *_ in series:
        if metric not in metrics:
            metrics.append(metric)
    runs: list[str] = []
    for _, run, *_ in series:
        if run not in runs:
            runs.append(run)
    n = max(len(metrics), 1)
    gap = 0.04
    height_each = (1.0 - gap * (n - 1)) / n
    data = []
    for metric, run, steps, values in series:
        i = metrics.index(metric)
        axis = "" if i == 0 else str(i + 1)
        data.append({"type": "scatter", "mode": "lines", "name": f"{run} {metric}", "legendgroup": run,
                     "x": _nums(steps), "y": _nums(values), "xaxis": "x", "yaxis": f"y{axis}",
                     "line": {"color": CHART_COLORS[runs.index(run) % len(CHART_COLORS)], "width": 2},
                     "hovertemplate": f"{run} {metric} step %{{x}}: %{{y:.4g}}<extra></extra>"})
    extra: dict[str, Any] = {}
    for i, metric in enumerate(metrics):
        top = 1.0 - i * (height_each + gap)
        key = "yaxis" if i == 0 else f"yaxis{i + 1}"
        extra[key] = {"domain": [max(top - height_each, 0.0), top], "title": {"text": metric}, "anchor": "x",
                      "exponentformat": "e"}
        finite = [v for m, _, _, vals in series if m == metric for v in _nums(vals) if v is not None]
        if finite and min(finite) == max(finite):  # a constant (a fixed lr): autorange would centre it on 0 +- 1
            v = finite[0]
            extra[key]["range"] = [v - abs(v) * 0.5, v + abs(v) * 0.5] if v else [-1.0, 1.0]
    extra["xaxis"] = {"anchor": f"y{'' if n == 1 else n}", "title": {"text": "step"}}
    return {"data": data, "layout": _layout(title, height=max(CHART_HEIGHT, 150 * n + 80), showlegend=len(runs) > 1,
                                            **extra)}


def cost_scatter(versions: Sequence[str], cost_per_1k: Sequence[Number], scores: Sequence[Number], *,
                 served: str | None = None, title: str = "") -> dict[str, Any]:
    """Held-out score against USD per 1,000 tasks, one labelled dot per version (up and left is better).

    Args:
        versions: Version names.
        cost_per_1k: Each version's USD per 1,000 tasks.
        scores: Each version's held-out score in points.
        served: The served version (its dot is green).
        title: Figure title.

    Returns:
        A Plotly figure dict (one scatter trace).

    Examples:
        >>> cost_scatter(["a", "b"], [1.2, 3.4], [60, 70], served="a")["data"][0]["marker"]["color"]
        ['#009E73', '#0072B2']
    """
    colors = [CHART_GOOD if v == served else CHART_NEUTRAL for v in versions]
    trace = {"type": "scatter", "mode": "markers+text", "name": "versions", "x": _nums(cost_per_1k),
             "y": _nums(scores), "text": [str(v) for v in versions], "textposition": "top center",
             "marker": {"size": 11, "color": colors},
             "hovertemplate": "%{text}: $%{x:.2f} per 1,000 tasks, %{y:.1f} points<extra></extra>"}
    return {"data": [trace], "layout": _layout(title, x_title="USD per 1,000 tasks", y_title="held-out score (points)",
                                               yaxis={"range": [0, 105]}, xaxis={"rangemode": "tozero"})}
