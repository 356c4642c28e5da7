"""``@wai.tool``: a Python function becomes a tool, its signature the JSON schema.

The schema is the OpenAI tools shape (``{"type": "function", "function": {name, description,
parameters}}``) that every OpenAI-compatible server (vLLM, Ollama, OpenAI) and HF chat templates
accept. Parameters map from annotations: ``str``, ``int``, ``float``, ``bool``, ``Literal``,
``Optional``/``X | None``, ``list[...]``, ``tuple[...]``, ``set[...]``, ``dict[...]``, ``Enum``,
pydantic models, dataclasses and ``TypedDict``; ``Annotated[X, "text"]`` and a Google-style
``Args:`` section give parameter descriptions; a default makes a parameter optional. Anything
else fails at decoration time with :class:`~whileai.errors.ToolSchemaError` naming the parameter.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from whileai.errors import ArgumentError, ToolSchemaError

__all__ = ["Tool", "ToolSpec", "normalize_tools", "tool"]

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_NONE = type(None)


class Tool:
    """A tool the agent can call: the function, and its schema in the OpenAI tools shape.

    Calling the object calls the function, so decorating changes nothing for the code that
    already uses it.

    Attributes:
        fn: The function.
        name: The tool name the model sees.
        description: The docstring's summary (or ``description=``).
        parameters: The JSON schema of the arguments.
    """

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None) -> None:
        if not callable(fn):
            raise ToolSchemaError(f"a tool must be a function, got {fn!r}. Decorate a def with @wai.tool.")
        self.fn = fn
        self.name = _check_name(name if name is not None else getattr(fn, "__name__", type(fn).__name__))
        doc = inspect.getdoc(fn) or ""
        summary, arg_docs = _parse_doc(doc)
        self.description = description if description is not None else summary
        self.parameters = _parameters_schema(fn, self.name, arg_docs)
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    @property
    def schema(self) -> dict[str, Any]:
        """The tool in the OpenAI tools shape (a fresh dict each time; safe to edit)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description,
                         "parameters": json.loads(json.dumps(self.parameters))},
        }

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        params = ", ".join(self.parameters.get("properties", {}))
        return f"Tool(name={self.name!r}, parameters=[{params}])"


@typing.overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@typing.overload
def tool(fn: None = None, /, *, name: str | None = None, description: str | None = None) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
         description: str | None = None) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a :class:`Tool`: its signature is the schema, its docstring the description.

    Use bare (``@wai.tool``) or with options (``@wai.tool(name="lookup")``). The schema is built
    once, here, so a signature that cannot be a JSON schema fails at decoration time.

    Args:
        fn: The function (when used bare).
        name: The tool name the model sees (default: the function name).
        description: The description (default: the docstring's summary).

    Returns:
        A :class:`Tool`, or a decorator that makes one.

    Raises:
        ToolSchemaError: ``*args``/``**kwargs``, a positional-only parameter, or an annotation
            with no JSON-schema form; the message names the parameter.

    Examples:
        >>> @tool
        ... def get_order(order_id: str, verbose: bool = False) -> dict:
        ...     '''Look up an order by id.'''
        ...     return {}
        >>> get_order.schema["function"]["parameters"]["required"]
        ['order_id']
    """
    if fn is not None:
        return Tool(fn, name=name, description=description)

    def decorate(inner: Callable[..., Any]) -> Tool:
        return Tool(inner, name=name, description=description)

    return decorate


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ToolSchemaError(
            f"tool name must be 1 to 64 letters, digits, '_' or '-', got {name!r}. "
            "Pass name='my_tool' (OpenAI-compatible servers reject other names).",
            name=name,
        )
    return name


# ------------------------------------------------------------------------------------------
# docstrings
# ------------------------------------------------------------------------------------------

_SECTION_RE = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples|Example|Note|Notes):\s*$")


def _parse_doc(doc: str) -> tuple[str, dict[str, str]]:
    """The description (first paragraph before any section) and per-parameter text from ``Args:``."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section = None
    arg_indent: int | None = None
    current = None
    for line in doc.splitlines():
        stripped = line.strip()
        if _SECTION_RE.match(stripped):
            section, arg_indent, current = stripped[:-1], None, None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        item = re.match(r"^\*{0,2}(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", stripped)
        if item and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            current = item.group(1)
            args[current] = item.group(3).strip()
        elif current is not None:
            args[current] = (args[current] + " " + stripped).strip()
    text = "\n".join(summary).strip()
    return (" ".join(text.split("\n\n")[0].split()) if text else ""), args


# ------------------------------------------------------------------------------------------
# signature -> JSON schema
# ------------------------------------------------------------------------------------------


def _parameters_schema(fn: Callable[..., Any], tool_name: str, arg_docs: Mapping[str, str]) -> dict[str, Any]:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ToolSchemaError(f"tool {tool_name!r} must have a readable signature, got {fn!r} ({exc}). "
                              "Wrap it in a def with named parameters.") from exc
    hints = _type_hints(fn, signature, tool_name)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        where = f"parameter {param.name!r} of tool {tool_name!r}"
        if param.kind is param.VAR_POSITIONAL:
            raise ToolSchemaError(
                f"{where} is *{param.name}, which a JSON schema cannot describe (arguments arrive by name). "
                "Replace it with a named list parameter, e.g. items: list[str].",
                argument=param.name, name=tool_name)
        if param.kind is param.VAR_KEYWORD:
            raise ToolSchemaError(
                f"{where} is **{param.name}, which a JSON schema cannot describe. "
                "Name each argument, or take one options: dict parameter.",
                argument=param.name, name=tool_name)
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolSchemaError(
                f"{where} is positional-only, but tool arguments arrive by name. Remove the '/' from the signature.",
                argument=param.name, name=tool_name)
        annotation = hints.get(param.name, inspect.Parameter.empty)
        schema = {} if annotation is inspect.Parameter.empty else _schema_for(annotation, where)
        description = arg_docs.get(param.name)
        if description and "description" not in schema:
            schema = {**schema, "description": description}
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        else:
            default = param.default.value if isinstance(param.default, enum.Enum) else param.default
            if _jsonable(default):
                schema = {**schema, "default": default}
        properties[param.name] = schema
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def _type_hints(fn: Callable[..., Any], signature: inspect.Signature, tool_name: str) -> dict[str, Any]:
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else getattr(fn, "__call__", fn)  # noqa: B004
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:  # an annotation names something not importable: find which one
        pass
    hints: dict[str, Any] = {}
    globalns = getattr(target, "__globals__", {})
    for param in signature.parameters.values():
        ann = param.annotation
        if ann is inspect.Parameter.empty:
            continue
        if isinstance(ann, str):
            try:
                ann = eval(ann, dict(globalns), {})  # noqa: S307 - resolving the user's own annotation
            except Exception as exc:  # boundary: evaluating the user's annotation raises anything
                raise ToolSchemaError(
                    f"parameter {param.name!r} of tool {tool_name!r} must have a resolvable annotation, got {param.annotation!r} "
                    f"({type(exc).__name__}: {exc}). Import the type at module level.",
                    argument=param.name, name=tool_name) from exc
        hints[param.name] = ann
    return hints


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _schema_for(annotation: Any, where: str) -> dict[str, Any]:  # noqa: C901 - one branch per type family
    if annotation is Any or annotation is object:
        return {}
    if annotation is None or annotation is _NONE:
        return {"type": "null"}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        inner = _schema_for(args[0], where)
        text = next((a for a in args[1:] if isinstance(a, str)), None)
        return {**inner, "description": text} if text else inner
    if origin is typing.Literal:
        values = list(args)
        if not all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
            raise _unsupported(annotation, where)
        kinds = {_SCALARS.get(type(v), "null") for v in values}
        schema: dict[str, Any] = {"enum": values}
        if len(kinds) == 1:
            schema = {"type": kinds.pop(), **schema}
        return schema
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        members = [a for a in args if a is not _NONE]
        nullable = len(members) < len(args)
        schemas = [_schema_for(a, where) for a in members]
        if len(schemas) == 1:
            inner = schemas[0]
            if nullable and isinstance(inner.get("type"), str) and "enum" not in inner:
                return {**inner, "type": [inner["type"], "null"]}
            return {"anyOf": [inner, {"type": "null"}]} if nullable else inner
        return {"anyOf": schemas + ([{"type": "null"}] if nullable else [])}
    if origin in (list, Sequence, typing.Sequence, Iterable, set, frozenset) or annotation in (list, set, frozenset):
        schema = {"type": "array"}
        if args:
            schema["items"] = _schema_for(args[0], where)
        if origin in (set, frozenset) or annotation in (set, frozenset):
            schema["uniqueItems"] = True
        return schema
    if origin is tuple or annotation is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _schema_for(args[0], where)}
        items = [_schema_for(a, where) for a in args]
        return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    if origin in (dict, Mapping, typing.Mapping) or annotation in (dict,):
        schema = {"type": "object"}
        if len(args) == 2:
            if args[0] is not str:
                raise _unsupported(annotation, where, "JSON object keys are strings; use dict[str, ...]")
            value = _schema_for(args[1], where)
            if value:
                schema["additionalProperties"] = value
        return schema
    if inspect.isclass(annotation):
        if issubclass(annotation, enum.Enum):
            values = [m.value for m in annotation]
            if not all(isinstance(v, (str, int, float, bool)) for v in values):
                raise _unsupported(annotation, where, "enum values must be strings or numbers")
            kinds = {_SCALARS[type(v)] for v in values}
            out: dict[str, Any] = {"enum": values}
            return {"type": kinds.pop(), **out} if len(kinds) == 1 else out
        if _is_pydantic_model(annotation):
            return _inline_refs(annotation.model_json_schema())  # type: ignore[attr-defined]
        if dataclasses.is_dataclass(annotation):
            return _object_schema(annotation, where)
        if typing.is_typeddict(annotation):
            return _object_schema(annotation, where)
    raise _unsupported(annotation, where)


def _object_schema(cls: type, where: str) -> dict[str, Any]:
    hints = typing.get_type_hints(cls, include_extras=True)
    properties = {name: _schema_for(ann, f"{where} (field {name!r})") for name, ann in hints.items()}
    if dataclasses.is_dataclass(cls):
        required = [f.name for f in dataclasses.fields(cls)
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    else:
        required = sorted(getattr(cls, "__required_keys__", properties))
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def _is_pydantic_model(cls: type) -> bool:
    from pydantic import BaseModel

    return issubclass(cls, BaseModel)


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$defs`` references so the parameter schema stands alone."""
    defs = schema.pop("$defs", {})

    def resolve(node: Any, depth: int = 0) -> Any:
        if depth > 32:
            return {}
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = defs.get(ref.split("/")[-1], {})
                rest = {k: v for k, v in node.items() if k != "$ref"}
                return {**resolve(target, depth + 1), **resolve(rest, depth + 1)}
            return {k: resolve(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v, depth + 1) for v in node]
        return node

    return resolve(schema)


def _unsupported(annotation: Any, where: str, why: str = "") -> ToolSchemaError:
    shown = getattr(annotation, "__name__", None) or repr(annotation)
    reason = why or ("it has no JSON-schema form; use str, int, float, bool, Literal, Optional, list, "
                     "dict[str, ...], an Enum, a dataclass or a pydantic model")
    return ToolSchemaError(f"{where} must have a JSON-schema annotation, got {shown} ({reason}).",
                           value=shown)


# ------------------------------------------------------------------------------------------
# normalising what simulate() is given
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ToolSpec:
    """One tool as the engine sees it: name, schema, and the callable when there is one."""

    name: str
    schema: dict[str, Any]
    parameters: dict[str, Any]
    description: str
    fn: Callable[..., Any] | None = None

    @property
    def required(self) -> list[str]:
        """Names of required parameters."""
        return list(self.parameters.get("required", []))

    @property
    def properties(self) -> dict[str, Any]:
        """Parameter name to schema."""
        props = self.parameters.get("properties", {})
        return props if isinstance(props, dict) else {}


def normalize_tools(tools: Any) -> list[ToolSpec]:
    """Tools given to ``simulate``/``seeded_agent`` as :class:`ToolSpec` s.

    Accepts :class:`Tool` objects, plain functions (decorated here), and OpenAI tool schemas
    (``{"type": "function", "function": {...}}`` or the bare ``{"name", "parameters"}``).
    """
    if tools is None:
        return []
    if isinstance(tools, (Tool, Mapping)) or callable(tools) and not isinstance(tools, (list, tuple)):
        tools = [tools]
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
        raise ArgumentError(f"tools must be a list of @wai.tool functions or OpenAI tool schemas, got {tools!r}. "
                            "Pass tools=[my_tool].")
    out: list[ToolSpec] = []
    seen: set[str] = set()
    for item in tools:
        if isinstance(item, Tool):
            spec = ToolSpec(item.name, item.schema, item.parameters, item.description, item.fn)
        elif isinstance(item, Mapping):
            spec = _spec_from_schema(item)
        elif callable(item):
            made = Tool(item)
            spec = ToolSpec(made.name, made.schema, made.parameters, made.description, made.fn)
        else:
            raise ArgumentError(f"each tool must be a @wai.tool function or an OpenAI tool schema, got {item!r}. "
                                "Decorate the function with @wai.tool.")
        if spec.name in seen:
            raise ArgumentError(f"tool names must be unique, got {spec.name!r} twice. Rename one with @wai.tool(name=...).")
        seen.add(spec.name)
        out.append(spec)
    return out


def _spec_from_schema(item: Mapping[str, Any]) -> ToolSpec:
    fn = item.get("function") if isinstance(item.get("function"), Mapping) else item
    assert isinstance(fn, Mapping)
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"a tool schema must have a function name, got {dict(item)!r}. "
                            'Use {"type": "function", "function": {"name": ..., "parameters": {...}}}.')
    parameters = fn.get("parameters") or {"type": "object", "properties": {}}
    if not isinstance(parameters, Mapping):
        raise ArgumentError(f"tool {name!r} parameters must be a JSON schema object, got {parameters!r}. "
                            'Use {"type": "object", "properties": {...}}.')
    parameters = json.loads(json.dumps(parameters))
    description = str(fn.get("description") or "")
    schema = {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}
    return ToolSpec(name, schema, parameters, description, None)
