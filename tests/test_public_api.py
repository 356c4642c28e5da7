"""The one public door: wai.__all__ is sorted, complete and every name resolves."""

from __future__ import annotations

import subprocess
import sys

import pytest

import whileai as wai
from whileai._aliases import ALIASES
from whileai._lazy import exports_of


def test_all_is_sorted_and_unique():
    assert list(wai.__all__) == sorted(set(wai.__all__))


@pytest.mark.parametrize("name", wai.__all__)
def test_every_public_name_resolves(name):
    assert getattr(wai, name) is not None


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        wai.nope  # noqa: B018


def test_import_is_light():
    code = "import sys, whileai; print(','.join(m for m in ('duckdb', 'httpx', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


#: Each wai.* name -> (module, attribute), as whileai/__init__.pyi names it (the one list).
EXPORTS = exports_of("whileai")

#: The public names less the aliases: what the docs pages document one by one.
PUBLIC = sorted(n for n in EXPORTS if n not in ALIASES and n != "__version__")


def test_all_is_the_stub_and_each_alias_is_a_second_name_of_its_preferred():
    assert wai.__all__ == sorted(EXPORTS)
    assert "__version__" in EXPORTS
    for alias, entry in ALIASES.items():  # the alias table says why and since; the stub binds the name
        assert EXPORTS[alias] == EXPORTS[entry.preferred], alias
    renamed = {n for n, (_, attribute) in EXPORTS.items() if attribute not in (None, n)}
    assert renamed == set(ALIASES), "a wai.* name that is not its object's own name is an alias: add it to whileai/_aliases.py"


def test_aliases_are_the_same_objects():
    for alias, entry in ALIASES.items():
        assert getattr(wai, alias) is getattr(wai, entry.preferred)


_DOCS_TEXT: list[str] = []


def _docs_text() -> str:
    """docs/*.md and the API pages docs/_gen/reference.py generates from the package, read once."""
    if not _DOCS_TEXT:
        import sys
        from pathlib import Path

        docs = Path(__file__).resolve().parents[1] / "docs"
        sys.path.insert(0, str(docs / "_gen"))
        import reference

        _DOCS_TEXT.append("\n".join([*(p.read_text(encoding="utf-8") for p in docs.glob("*.md")), *reference.pages().values()]))
    return _DOCS_TEXT[0]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_is_documented(name):
    import re

    text = _docs_text()
    assert re.search(rf"`(wai\.)?{re.escape(name)}[`(\[]", text), f"{name} is on no docs page (docs/_gen/reference.py writes the API pages)"


def test_the_package_ships_py_typed():
    from pathlib import Path

    assert (Path(wai.__file__).parent / "py.typed").exists()


ROW_ARGUMENTS = {"rows", "source", "before", "after", "runs", "pairs"}


@pytest.mark.parametrize("name", [n for n in PUBLIC if n[0].islower()])
def test_rows_arguments_are_typed_as_into_rows(name):
    import inspect

    obj = getattr(wai, name)
    if not inspect.isfunction(obj):
        return
    for param in inspect.signature(obj).parameters.values():
        positional = param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD, param.VAR_POSITIONAL)
        if positional and param.name in ROW_ARGUMENTS:
            assert "IntoRows" in str(param.annotation), f"{name}({param.name}: {param.annotation})"
