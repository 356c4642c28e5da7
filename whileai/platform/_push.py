"""Datasets into the platform's store: ``push_rows`` and ``push_file``, the publish gate run first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from whileai.platform._backend import backend_for
from whileai.platform._models import DatasetPush
from whileai.platform._routes import build

__all__ = ["push_file", "push_rows"]


def push_rows(rows: Any, name: str, *, purpose: Literal["train", "holdout", "eval"] = "train",
              parent: str | None = None, gate: bool = False, meta: dict[str, Any] | None = None,
              base_url: str | None = None, api_key: str | None = None, store: str | os.PathLike[str] | None = None,
              transport: Any = None) -> dict[str, Any]:
    """Save rows as a new version of dataset ``name`` on the server (or in ``store=``), with lineage.

    ``gate=True`` runs ``publish_gate`` first and refuses what it refuses (an ungraded RL-shaped
    set, or one with no mixed group: ``PublishGateError``); push_rows does not gate by default,
    because the caller may already have run ``select`` (the publish gate, docs/select.md).

    Args:
        rows: Any rows ``table.frame`` accepts.
        name: The dataset's name.
        purpose: ``train``, ``holdout`` or ``eval``.
        parent: The dataset these rows were made from (default: the previous version of ``name``).
        gate: Run the publish gate before sending.
        meta: Anything JSON-serialisable to keep with the record.
        base_url: The server (default: the saved login, then ``WHILEAI_BASE_URL``).
        api_key: The key (default: ``WHILEAI_API_KEY``, then the saved one).
        store: Write into this store directly instead.
        transport: An httpx transport or an ASGI app (in-process).

    Returns:
        The dataset entry (id ``name@version``, n_rows, n_tasks, parent, ...) with ``entry["gate"]``:
        the gate's report as a dict, or None when it did not run.
    """
    from whileai import table

    df = table.frame(rows)
    report = None
    extra = dict(meta or {})
    if gate:
        from whileai.selection import publish_gate

        report = publish_gate(df)
        extra["gate"] = {"ok": report["ok"], "warnings": list(report.warnings)}
    body = build(DatasetPush, name=name, purpose=purpose, parent=parent, rows=table.rows(df), meta=extra or None)
    backend = backend_for(base_url=base_url, api_key=api_key, store=store, transport=transport)
    entry = dict(backend.call("push_dataset", body=body))
    entry["gate"] = report.to_dict() if report is not None else None
    return entry


def push_file(path: str | os.PathLike[str], name: str | None = None, *, gate: bool = True, **kwargs: Any) -> dict[str, Any]:
    """``push_rows`` of a file (JSONL, Parquet, ...), named after the file by default, gated by default."""
    return push_rows(path, name or Path(path).name.split(".")[0], gate=gate, **kwargs)
