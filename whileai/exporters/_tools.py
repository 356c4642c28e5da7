"""Tool schemas an export carries: a list of dicts or callables, one dict, or JSON text, as canonical JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from whileai.errors import ArgumentError, WaiError
from whileai.table import normalize as nz

__all__ = ["resolve_tools"]


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
