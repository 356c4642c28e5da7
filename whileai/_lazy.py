"""Lazy package exports (PEP 562): a package names what it re-exports, a submodule loads on first use.

A step package (``whileai.measure``, ``whileai.selection``...) re-exports the public names of many
submodules. Importing them all up front made every call pay for every report model and kernel of
the package (``wai.pass_at`` loaded compare, delta, self_check...); with :func:`exports` the
package's ``__getattr__`` imports only the submodule that defines the name asked for and keeps the
value in the package's namespace, so the second lookup is an ordinary attribute. Type checkers read
the package's ``if TYPE_CHECKING:`` imports, which ``tests/test_lazy_imports.py`` keeps equal to the
table (docs/performance.md, "Cold start").
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, table: Mapping[str, tuple[str, ...]]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for ``table`` (submodule -> names it defines).

    A name in the table imports its submodule and is cached in the package; any other name that is
    a submodule of the package (``whileai.measure._ray``) is imported as one, as an eager
    ``from . import`` would have bound it; anything else raises ``AttributeError``.
    """
    where = {name: module for module, names in table.items() for name in names}

    def __getattr__(name: str) -> Any:
        namespace = sys.modules[package].__dict__
        module = where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
            namespace[name] = value
            return value
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(sys.modules[package].__dict__) | set(where))

    return __getattr__, __dir__


class _Deferred:
    """Stands in for a module until an attribute is first read, then hands out the module's."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<deferred module {self._name!r}>"


def module(name: str) -> Any:
    """``import name`` deferred to the first attribute read (``pa = module("pyarrow")``).

    For a module a file uses inside a few functions only: the import (pyarrow is about 25 ms)
    is paid by the call that reads ``pa.Table``, not by every import of the file. Type checkers
    should see the real import under ``if TYPE_CHECKING:``.
    """
    return _Deferred(name)
