"""Field descriptions from attribute docstrings: ``Documented`` against pydantic's ``use_attribute_docstrings``."""

from __future__ import annotations

import importlib
import pkgutil
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

import whileai
from whileai.report import Documented, Report, attribute_docs


class _PydanticBase(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, arbitrary_types_allowed=True)

    shared: int = 1
    """Declared on the base."""


class _OursBase(Documented):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    shared: int = 1
    """Declared on the base."""


class _PydanticShapes(_PydanticBase):
    plain: int = 0
    """A plain default."""
    required: str
    """No default at all,
       over two lines."""
    factory: list[str] = Field(default_factory=list)
    """A Field with a factory."""
    described: float = Field(0.5, description="given in Field")
    """The Field's description wins."""
    aliased: int = Field(3, alias="other", ge=0)
    """A Field with an alias and a bound."""
    counter: ClassVar[int] = 0
    """A class variable, not a field."""
    _private: int = PrivateAttr(default=0)
    shared: int = 2
    """Re-declared below."""
    bare: int = 4
    after: int = 5

    """Not right after its assignment."""


class _OursShapes(_OursBase):
    plain: int = 0
    """A plain default."""
    required: str
    """No default at all,
       over two lines."""
    factory: list[str] = Field(default_factory=list)
    """A Field with a factory."""
    described: float = Field(0.5, description="given in Field")
    """The Field's description wins."""
    aliased: int = Field(3, alias="other", ge=0)
    """A Field with an alias and a bound."""
    counter: ClassVar[int] = 0
    """A class variable, not a field."""
    _private: int = PrivateAttr(default=0)
    shared: int = 2
    """Re-declared below."""
    bare: int = 4
    after: int = 5

    """Not right after its assignment."""


def _shape(cls: type[BaseModel]) -> dict:
    schema = cls.model_json_schema()
    schema.pop("title")
    fields = {n: (f.description, f.default, f.alias, f.is_required(), f.default_factory) for n, f in cls.model_fields.items()}
    return {"schema": schema, "fields": fields}


def test_documented_gives_what_use_attribute_docstrings_gives():
    assert _shape(_OursShapes) == _shape(_PydanticShapes)
    assert _OursShapes.model_fields["described"].description == "given in Field"
    assert _OursShapes.model_fields["required"].description == "No default at all,\nover two lines."
    assert _OursShapes(required="x", other=1).aliased == 1
    assert _OursShapes.counter == 0 and "counter" not in _OursShapes.model_fields


def test_a_class_made_in_a_function_reads_its_docs_too():
    def make() -> type[Documented]:
        class Inner(Documented):
            value: int = 0
            """Made inside a function."""

        return Inner

    assert make().model_fields["value"].description == "Made inside a function."


def _models() -> list[type]:
    for info in pkgutil.walk_packages(whileai.__path__, "whileai."):
        try:
            importlib.import_module(info.name)
        except Exception:  # an optional extra's module
            continue
    seen, todo = [], [Documented]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return [c for c in seen if c.__module__.startswith("whileai")]


def test_every_library_model_reads_the_docstrings_pydantic_reads():
    models = _models()
    assert Report in models and len(models) > 50
    for cls in models:
        assert attribute_docs(cls) == extract_docstrings_from_cls(cls, use_inspect=True), cls.__qualname__
        for name, doc in extract_docstrings_from_cls(cls, use_inspect=True).items():
            field = cls.model_fields.get(name)
            if field is not None and name in cls.__dict__.get("__annotations__", {}):
                assert field.description is not None, (cls.__qualname__, name)
