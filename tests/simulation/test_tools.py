from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional, TypedDict

import pydantic
import pytest

import whileai as wai
from whileai.errors import ArgumentError, ToolSchemaError
from whileai.simulation import Tool, tool
from whileai.simulation._tools import normalize_tools


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(pydantic.BaseModel):
    street: str
    zip_code: Optional[str] = None  # noqa: UP045 - the typing spelling on purpose


class Inner(pydantic.BaseModel):
    city: str


class Outer(pydantic.BaseModel):
    inner: Inner


@dataclasses.dataclass
class Window:
    start: str
    days: int = 7


class Filters(TypedDict):
    status: str
    limit: int


def params(t: Tool) -> dict[str, Any]:
    return t.schema["function"]["parameters"]


def test_scalars_defaults_and_description():
    @tool
    def get_order(order_id: str, count: int = 1, ratio: float = 0.5, verbose: bool = False) -> dict:
        """Look up an order by id.

        Longer text the model does not need.

        Args:
            order_id: The order's id, e.g. ORD-1234.
            count: How many to return,
                at most ten.
        """
        return {"id": order_id}

    p = params(get_order)
    assert p["type"] == "object"
    assert p["required"] == ["order_id"]
    assert p["properties"]["order_id"] == {"type": "string", "description": "The order's id, e.g. ORD-1234."}
    assert p["properties"]["count"] == {"type": "integer", "description": "How many to return, at most ten.", "default": 1}
    assert p["properties"]["ratio"] == {"type": "number", "default": 0.5}
    assert p["properties"]["verbose"] == {"type": "boolean", "default": False}
    assert get_order.schema["type"] == "function"
    assert get_order.schema["function"]["name"] == "get_order"
    assert get_order.schema["function"]["description"] == "Look up an order by id."
    # the decorated object still calls the function
    assert get_order("ORD-1") == {"id": "ORD-1"}


def test_wai_tool_is_the_public_decorator():
    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        ...

    assert isinstance(get_order, wai.Tool)
    assert get_order.name == "get_order"


def test_literal_optional_list_dict_enum():
    @tool
    def search(
        kind: Literal["open", "closed"],
        tags: list[str],
        meta: dict[str, int],
        color: Color,
        note: Optional[str] = None,  # noqa: UP045
        maybe: int | None = None,
        pair: tuple[int, str] = (1, "a"),
        many: tuple[float, ...] = (),
        uniq: set[str] = frozenset(),  # noqa: B006
        anything: Any = None,
    ) -> list:
        """Search."""
        return []

    p = params(search)["properties"]
    assert p["kind"] == {"type": "string", "enum": ["open", "closed"]}
    assert p["tags"] == {"type": "array", "items": {"type": "string"}}
    assert p["meta"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert p["color"] == {"type": "string", "enum": ["red", "blue"]}
    assert p["note"] == {"type": ["string", "null"], "default": None}
    assert p["maybe"] == {"type": ["integer", "null"], "default": None}
    assert p["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert p["many"] == {"type": "array", "items": {"type": "number"}, "default": []}
    assert p["uniq"]["uniqueItems"] is True
    assert p["anything"] == {"default": None}
    assert params(search)["required"] == ["kind", "tags", "meta", "color"]


def test_models_dataclasses_typeddicts_and_annotated():
    @tool(name="ship", description="Ship things.")
    def ship(address: Address, outer: Outer, window: Window, filters: Filters,
             code: Annotated[str, "A promo code."] = "") -> None:
        """Ignored because description= is given."""

    p = params(ship)["properties"]
    assert ship.description == "Ship things."
    assert p["address"]["type"] == "object" and set(p["address"]["properties"]) == {"street", "zip_code"}
    assert "$defs" not in str(p["outer"]) and p["outer"]["properties"]["inner"]["properties"]["city"]["type"] == "string"
    assert p["window"] == {"type": "object", "properties": {"start": {"type": "string"}, "days": {"type": "integer"}},
                           "required": ["start"]}
    assert p["filters"]["required"] == ["limit", "status"]
    assert p["code"] == {"type": "string", "description": "A promo code.", "default": ""}


def test_string_annotations_are_resolved():
    ns: dict[str, Any] = {}
    exec(
        "from __future__ import annotations\n"
        "def f(order_id: str, n: int = 2) -> dict:\n"
        "    '''Doc.'''\n",
        ns,
    )
    t = tool(ns["f"])
    assert params(t)["properties"]["n"]["type"] == "integer"


@pytest.mark.parametrize(
    ("source", "param"),
    [
        ("def f(order_id: str, *ids: str): ...", "ids"),
        ("def f(order_id: str, **extra: str): ...", "extra"),
        ("def f(order_id: str, /, n: int): ...", "order_id"),
        ("def f(order_id: str, when: complex): ...", "when"),
        ("def f(order_id: str, cb: Callable[[int], int]): ...", "cb"),
        ("def f(order_id: str, d: dict[int, str]): ...", "d"),
        ("def f(order_id: str, ref: NotImported): ...", "ref"),
    ],
)
def test_unsupported_signatures_fail_at_decoration_naming_the_parameter(source, param):
    ns: dict[str, Any] = {}
    exec("from typing import Callable\n" + source, ns)
    with pytest.raises(ToolSchemaError, match=f"parameter '{param}' of tool 'f'"):
        tool(ns["f"])


def test_bad_tool_name():
    with pytest.raises(ToolSchemaError, match="tool name must be 1 to 64 letters"):
        tool(lambda order_id: order_id)
    assert tool(lambda order_id: order_id, name="ok_name").name == "ok_name"


def test_untyped_parameter_is_any():
    def f(x):
        """Doc."""

    assert params(tool(f))["properties"] == {"x": {}}


def test_schema_is_a_fresh_copy():
    @tool
    def f(x: str) -> None:
        """Doc."""

    f.schema["function"]["parameters"]["properties"]["x"]["type"] = "integer"
    assert f.schema["function"]["parameters"]["properties"]["x"]["type"] == "string"


def test_normalize_tools_accepts_tools_schemas_and_functions():
    @tool
    def a(x: str) -> None:
        """A."""

    def b(y: int) -> None:
        """B."""

    c = {"type": "function", "function": {"name": "c", "description": "C.", "parameters": {
        "type": "object", "properties": {"z": {"type": "string"}}, "required": ["z"]}}}
    d = {"name": "d", "parameters": {"type": "object", "properties": {}}}
    specs = normalize_tools([a, b, c, d])
    assert [s.name for s in specs] == ["a", "b", "c", "d"]
    assert specs[2].required == ["z"] and specs[2].fn is None
    assert specs[3].schema["function"]["name"] == "d"
    with pytest.raises(ArgumentError, match="tool names must be unique"):
        normalize_tools([a, a])
    with pytest.raises(ArgumentError, match="must have a function name"):
        normalize_tools([{"type": "function", "function": {}}])
    with pytest.raises(ArgumentError, match="each tool must be"):
        normalize_tools([42])
    assert normalize_tools(None) == []
