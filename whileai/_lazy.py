"""Lazy package exports (PEP 562) read from the package's ``__init__.pyi``, the one list of its names.

Each package that re-exports names (``whileai``, ``whileai.measure``, ``whileai.table``...) writes
them once, in the stub ``__init__.pyi`` beside its ``__init__.py``: one ``from M import a as a``
line per name (``from . import sub as sub`` for a submodule, an absolute ``M`` for a name another
package defines) and ``b = a`` for a second name of the same object (``optimize = select``). Type
checkers and editors read the stub for the package's types. The ``__init__.py`` is its docstring
and :func:`attach_stub`, which reads the same stub and gives the package its ``__getattr__``,
``__dir__`` and ``__all__``: a name's module is imported on first use and the value kept in the
package, so the second lookup is an ordinary attribute and ``import whileai`` loads no step
(docs/performance.md, "Cold start").

The scheme of scientific-python's ``lazy_loader.attach_stub`` (SPEC 1,
https://scientific-python.org/specs/spec-0001/). lazy_loader 0.6 reads only ``from .sub import a``
and ignores ``as``, so it has no alias (``wai.optimize``), no rename (``whileai.table.canonical_json``
is ``normalize.dumps``), no name from another package (``whileai.store.content_hash``), no
submodule left out of the stub (``whileai.measure._ray``) and another ``AttributeError`` message;
this reader keeps all five and reads the stub as the typing spec says a type checker does.
``tests/test_lazy_imports.py`` checks every name of every stub against the object it names.
"""

from __future__ import annotations

import importlib
import os
import sys
import types

TYPE_CHECKING = False  # typing itself is about 15 ms: ``import whileai`` does not load it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: Package -> its exports as its stub says: public name -> (module, attribute; None for the module itself).
_TABLES: dict[str, dict[str, tuple[str, str | None]]] = {}


def _read_stub(package: str, stub: str) -> dict[str, tuple[str, str | None]]:
    """Public name -> (module, attribute) for each name ``stub`` exports, as a type checker reads it.

    The typing spec's rule for stubs: ``from M import a as a`` exports ``a``; ``from M import a``
    (or ``as b``) binds a private name, which ``b = a`` exports under a second name. Read line by
    line with ``str`` methods (``ast`` would cost ``import whileai`` about 4 ms, a third of it); any
    other statement raises, and ``tests/test_lazy_imports.py`` checks this reading against ``ast``'s.
    """
    with open(stub, encoding="utf-8") as f:
        lines = iter(enumerate(f.read().splitlines(), 1))
    table: dict[str, tuple[str, str | None]] = {}
    bound: dict[str, tuple[str, str | None]] = {}
    for number, text in lines:
        line = text.split("#", 1)[0].strip()
        while line.startswith("from ") and "(" in line and not line.endswith(")"):  # an import over lines
            line += " " + next(lines, (0, ")"))[1].split("#", 1)[0].strip()
        words = line.replace("(", " ").replace(")", " ").replace(",", " , ").split()
        if not words:
            continue
        if len(words) >= 4 and words[0] == "from" and words[2] == "import" and words[1] != "__future__":
            level = len(words[1]) - len(words[1].lstrip("."))
            base = package.rsplit(".", level - 1)[0] if level else ""
            module = ".".join(part for part in (base, words[1][level:]) if part)
            for item in " ".join(words[3:]).split(","):
                name, _, asname = item.strip().partition(" as ")
                if not name.isidentifier() or not (asname.isidentifier() or not asname):
                    break
                # ``from . import sub``: the submodule itself (a getattr on the package would come back here)
                target = (f"{module}.{name}", None) if module == package else (module, name)
                bound[asname or name] = target
                if asname == name:
                    table[name] = target
            else:
                continue
        elif len(words) == 3 and words[1] == "=" and words[0].isidentifier() and words[2] in bound:
            table[words[0]] = bound[words[0]] = bound[words[2]]
            continue
        raise ImportError(f"{stub}:{number}: a package stub holds only 'from M import a as a' and 'b = a' "
                          f"lines, got {text.strip()!r}. Define the object in a module and name it here.")
    return table


def _load(module: str, attribute: str | None) -> Any:
    """What ``from module import attribute`` binds (the module itself when attribute is None)."""
    found = importlib.import_module(module)
    if attribute is None:
        return found
    try:
        return getattr(found, attribute)
    except AttributeError:
        return importlib.import_module(f"{module}.{attribute}")  # a submodule, as ``from ... import`` falls back


class _StubPackage(types.ModuleType):
    """A package whose exported name is also a submodule's (``whileai.stats.wilson``, the function).

    Importing the submodule makes the import system ``setattr(package, "wilson", <module>)``, which
    would hide the exported function from ``__getattr__`` for good; that one assignment is skipped
    (the guard ``lazy_loader`` applies to the same case).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        table = _TABLES.get(self.__name__, {})
        if name in table and table[name][1] is not None and value is sys.modules.get(f"{self.__name__}.{name}"):
            return
        super().__setattr__(name, value)


def attach_stub(package: str, file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of ``package`` from the stub beside ``file``.

    ``__init__.py`` calls ``__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)``.
    A name of the stub imports its module on first use and is cached in the package; any other name
    that is a submodule (``whileai.measure._ray``) is imported as one, as an eager ``from . import``
    would have bound it; anything else raises ``AttributeError``. ``__all__`` is every name of the
    stub, sorted; ``dir()`` adds the public submodules.
    """
    table = _TABLES[package] = _read_stub(package, os.path.splitext(file)[0] + ".pyi")
    names = sorted(table)
    shadowed = [n for n, (module, attribute) in table.items()
                if attribute is not None and (module == f"{package}.{n}" or module.startswith(f"{package}.{n}."))]
    if shadowed and type(sys.modules[package]) is types.ModuleType:
        sys.modules[package].__class__ = _StubPackage

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is not None:
            value = _load(*target)
            sys.modules[package].__dict__[name] = value
            return value
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        import pkgutil

        submodules = {m.name for m in pkgutil.iter_modules(sys.modules[package].__path__) if not m.name.startswith("_")}
        return sorted(set(names) | submodules)

    return __getattr__, __dir__, list(names)


def exports_of(package: str) -> dict[str, tuple[str, str | None]]:
    """Public name -> (module, attribute) as ``package``'s stub re-exports it (attribute None: a submodule).

    The package's ``__all__`` with where each name comes from: what the docs pages and the tests
    read instead of a second list.
    """
    importlib.import_module(package)
    return dict(_TABLES[package])


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
