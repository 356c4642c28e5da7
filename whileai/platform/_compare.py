"""Runs side by side: the metrics they logged, one series per run, and their configs field by field.

A pure function over stored records (no store access), so ``Service.compare``, the REST route
``GET /compare`` and the run explorer page (``GET /runs`` in a browser) show the same object
(docs/pages.md, "Compare runs").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from whileai.defaults import COMPARE_VALUE_CHARS, PAGE_CURVE_POINTS
from whileai.errors import ArgumentError
from whileai.platform._models import RunRecord
from whileai.platform._views import ConfigRow, MetricSeries, RunComparison
from whileai.table import canonical_json

__all__ = ["compare_of", "flatten", "thin_indices"]

#: Metrics listed first, in this order (the ones the training curve and the monitor log by name).
FIRST_METRICS = ("loss", "lr", "proxy_reward", "gold_reward", "reward", "holdout_length")

#: The run fields the config table starts with: (label, attribute).
RUN_FIELDS = (("agent", "agent"), ("version", "version"), ("name", "name"), ("status", "status"),
              ("created", "created_at"), ("base model", "base_model"), ("dataset", "dataset_id"),
              ("total steps", "total_steps"), ("last step", "last_step"), ("points logged", "n_points"),
              ("hours", "hours"), ("cost USD", "cost_usd"), ("archived", "archived"))


def thin_indices(n: int, cap: int) -> np.ndarray:
    """Positions of at most ``cap`` of ``n`` points, evenly spread, first and last kept.

    Examples:
        >>> thin_indices(5, 10).tolist(), thin_indices(10, 4).tolist()
        ([0, 1, 2, 3, 4], [0, 3, 6, 9])
    """
    if n <= cap:
        return np.arange(n, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, cap).round().astype(np.int64))


def flatten(value: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Nested dicts as dotted keys (``{"a": {"b": 1}}`` -> ``{"prefix.a.b": 1}``); lists stay values.

    Examples:
        >>> flatten({"optimizer": {"method": "sft", "lr": 1e-05}, "tags": ["a"]}, "record")
        {'record.optimizer.method': 'sft', 'record.optimizer.lr': 1e-05, 'record.tags': ['a']}
    """
    out: dict[str, Any] = {}
    stack: list[tuple[str, Any]] = [(prefix, value)]
    while stack:
        key, v = stack.pop()
        if isinstance(v, Mapping) and v:
            stack.extend((f"{key}.{k}", v[k]) for k in reversed(list(v)))
        else:
            out[key] = v
    return out


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else canonical_json(value)
    return text if len(text) <= COMPARE_VALUE_CHARS else text[:COMPARE_VALUE_CHARS - 1] + "…"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def compare_of(runs: Sequence[RunRecord], points: Mapping[str, Sequence[Mapping[str, Any]]], *,
               metric: str | None = None, cap: int = PAGE_CURVE_POINTS) -> RunComparison:
    """Runs side by side: every numeric metric they logged, one series per run, and a config table.

    A metric is any numeric value a logged point carries (``loss``, ``lr`` and every extra key of
    ``run.log``); booleans and text are not metrics. Each run's series keeps its points in logging
    order, thinned evenly to at most ``cap`` (the first and last kept), with ``n`` the count before
    thinning. The config table lists the run fields, then ``record`` and ``summary`` flattened to
    dotted keys; a field reads ``differs`` when the runs do not all hold the same value (a run
    without it counts as a different value).

    Args:
        runs: The runs, in the order the table and the legend show them.
        points: Per run id, its logged points (``Service.points``), oldest first.
        metric: Keep only this metric's series (``metrics`` still lists them all).
        cap: The most points a series keeps (``PAGE_CURVE_POINTS``).

    Returns:
        A :class:`RunComparison`.

    Raises:
        ArgumentError: ``metric`` is not one the runs logged.
    """
    seen: dict[str, None] = {}
    series_by: dict[str, list[MetricSeries]] = {}
    for run in runs:
        rows = points.get(run.id) or []
        label = run.version or run.name or run.id
        columns: dict[str, tuple[list[int | None], list[float | None]]] = {}
        for p in rows:
            for key, raw in p.items():
                if key == "step":
                    continue
                v = _number(raw)
                if v is None:
                    continue
                steps, values = columns.setdefault(key, ([], []))
                steps.append(p.get("step"))
                values.append(v)
        for name, (steps, values) in columns.items():
            seen.setdefault(name, None)
            keep = thin_indices(len(values), cap)
            series_by.setdefault(name, []).append(MetricSeries(
                run_id=run.id, label=label, metric=name, steps=[steps[i] for i in keep],
                values=[values[i] for i in keep], n=len(values)))
    metrics = [m for m in FIRST_METRICS if m in seen] + sorted(m for m in seen if m not in FIRST_METRICS)
    if metric is not None and metric not in seen:
        raise ArgumentError(f"metric must be one the runs logged ({', '.join(metrics) or 'none logged'}), got "
                            f"{metric!r}. Pick one of those, or leave metric out for every one.", argument="metric",
                            value=metric)
    shown = [metric] if metric is not None else metrics
    fields: list[dict[str, Any]] = []
    for run in runs:
        row = {label: getattr(run, attr) for label, attr in RUN_FIELDS}
        row.update(flatten(run.record or {}, "record"))
        row.update(flatten(run.summary or {}, "summary"))
        fields.append(row)
    keys: dict[str, None] = {}
    for row in fields:
        keys.update(dict.fromkeys(row))
    config = []
    for key in keys:
        texts = [_text(row.get(key)) for row in fields]
        config.append(ConfigRow(key=key, values=texts, differs=len(set(texts)) > 1))
    return RunComparison(runs=list(runs), metrics=metrics, series=[s for m in shown for s in series_by[m]],
                         config=config)
