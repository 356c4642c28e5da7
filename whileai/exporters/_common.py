"""Argument checks and source context shared by the exporters."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from whileai._checks import check_choice as check_choice
from whileai.errors import ArgumentError, InputFileError, WaiError
from whileai.table import atomic_path, output_format
from whileai.table import normalize as nz

__all__ = ["check_choice", "resolve_tools", "target_path", "writing"]


def _tool_dict(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        item = json.loads(item)
    if callable(item) and not isinstance(item, Mapping):
        schema = _callable_schema(item)
        if schema is None:
            raise ArgumentError(
                f"tools must be OpenAI tool schemas (dicts), got the function {getattr(item, '__name__', item)!r}. "
                "Pass the schemas, e.g. tools=[{'type': 'function', 'function': {...}}].",
                argument="tools",
            )
        item = schema
    if not isinstance(item, Mapping):
        raise ArgumentError(f"each tool must be a dict in the OpenAI tools shape, got {item!r}. Pass tool schemas.",
                            argument="tools")
    item = dict(item)
    if "function" not in item and "name" in item:  # a bare function schema
        item = {"type": "function", "function": item}
    item.setdefault("type", "function")
    return item


def _callable_schema(fn: Callable[..., Any]) -> dict[str, Any] | None:
    for attr in ("schema", "openai_schema", "tool_schema", "__tool_schema__"):
        value = getattr(fn, attr, None)
        value = value() if callable(value) else value
        if isinstance(value, Mapping):
            return dict(value)
    from whileai.simulation import (
        tool as make_tool,  # a plain function: simulate's @wai.tool builds it
    )

    try:
        schema = make_tool(fn).schema
    except (WaiError, TypeError, ValueError):
        return None
    return dict(schema) if isinstance(schema, Mapping) else None


def resolve_tools(tools: Any) -> str | None:
    """Tool schemas (list of dicts or callables, one dict, or JSON text) as canonical JSON text."""
    if tools is None:
        return None
    if isinstance(tools, str):
        try:
            tools = json.loads(tools)
        except ValueError as exc:
            raise ArgumentError(f"tools must be JSON text or a list of schemas, got {tools[:60]!r}. Pass a list of dicts.",
                                argument="tools") from exc
    if isinstance(tools, Mapping) or callable(tools):
        tools = [tools]
    return nz.dumps([_tool_dict(t) for t in tools])


def target_path(source: Any, output: str | os.PathLike[str] | None) -> Path:
    """Where to write: ``output``, or ``<name>.train.jsonl`` beside a path source; never the source."""
    if output is None:
        if isinstance(source, (str, os.PathLike)) and str(source) != "-":
            src = Path(source)
            stem = src.name
            for suffix in (".gz", ".jsonl", ".ndjson", ".json", ".parquet", ".pq"):
                if stem.lower().endswith(suffix):
                    stem = stem[: -len(suffix)]
            return src.with_name(f"{stem}.train.jsonl")
        raise ArgumentError(
            "output must be a file path (.jsonl, .jsonl.gz or .parquet), got None. "
            "Pass a path, or call training_rows(...) for the rows as a list.",
            argument="output",
        )
    target = Path(output)
    if isinstance(source, (str, os.PathLike)) and Path(source).exists() and target.exists():
        if target.resolve() == Path(source).resolve():
            raise ArgumentError(f"output must differ from the source, got {str(target)!r} for both. "
                                "Write the training rows to another file.", argument="output")
    return target


def is_parquet(path: Path) -> bool:
    """Parquet by suffix (``.parquet``, ``.pq``); JSONL for ``.jsonl``/``.jsonl.gz``; any other suffix raises.

    Raises:
        ArgumentError: A suffix whileai does not write (``table.output_format``).
    """
    return output_format(path) == "parquet"


@contextmanager
def writing(path: Path) -> Iterator[Path]:
    """``table.atomic_path`` with OS errors turned into a clear InputFileError (no file left)."""
    try:
        with atomic_path(path) as tmp:
            yield tmp
    except WaiError:
        raise
    except OSError as exc:
        raise InputFileError(
            f"output {str(path)!r} cannot be written ({exc.strerror or exc}). "
            "Choose a path in a folder you can write to; nothing was written.",
            path=str(path),
        ) from exc
