"""The one public door: wai.__all__ is sorted, complete and every name resolves."""

from __future__ import annotations

import subprocess
import sys

import pytest

import whileai as wai


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


def _init_tree():
    import ast
    from pathlib import Path

    return ast.parse(Path(wai.__file__).read_text(encoding="utf-8"))


def _type_checking_imports():
    """(module, imported name, bound name) for every import in the TYPE_CHECKING block."""
    import ast

    out = []
    for node in _init_tree().body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom), ast.dump(stmt)
                out.extend((stmt.module, a.name, a.asname or a.name) for a in stmt.names)
    return out


def test_all_is_the_public_table_plus_the_aliases():
    from whileai._aliases import ALIASES

    assert set(wai.__all__) == set(wai._PUBLIC) | set(ALIASES) | {"__version__"}
    assert not set(wai._PUBLIC) & set(ALIASES)
    assert all(alias.preferred in wai._PUBLIC for alias in ALIASES.values())


def test_the_type_checking_block_imports_exactly_the_public_names():
    from whileai._aliases import ALIASES

    imports = _type_checking_imports()
    bound = [name for _, _, name in imports]
    assert sorted(bound) == sorted(set(wai._PUBLIC) | set(ALIASES))  # each once, none missing or extra
    for module, name, as_name in imports:
        preferred = ALIASES[as_name].preferred if as_name in ALIASES else as_name
        assert (module, name) == (wai._PUBLIC[preferred], preferred), as_name


def test_aliases_are_the_same_objects():
    from whileai._aliases import ALIASES

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


@pytest.mark.parametrize("name", sorted(wai._PUBLIC))
def test_every_public_name_is_documented(name):
    import re

    text = _docs_text()
    assert re.search(rf"`(wai\.)?{re.escape(name)}[`(\[]", text), f"{name} is on no docs page (docs/_gen/reference.py writes the API pages)"


def test_the_package_ships_py_typed():
    from pathlib import Path

    assert (Path(wai.__file__).parent / "py.typed").exists()


ROW_ARGUMENTS = {"rows", "source", "before", "after", "runs", "pairs"}


@pytest.mark.parametrize("name", sorted(n for n in wai._PUBLIC if n[0].islower()))
def test_rows_arguments_are_typed_as_into_rows(name):
    import inspect

    obj = getattr(wai, name)
    if not inspect.isfunction(obj):
        return
    for param in inspect.signature(obj).parameters.values():
        positional = param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD, param.VAR_POSITIONAL)
        if positional and param.name in ROW_ARGUMENTS:
            assert "IntoRows" in str(param.annotation), f"{name}({param.name}: {param.annotation})"
