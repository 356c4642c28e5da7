"""A call loads what it uses: the step packages' lazy exports, and what a cold call leaves unloaded.

Not a clock test: a fresh interpreter makes the call and prints which heavy modules it loaded
(docs/performance.md, "Cold start"). The lazy tables themselves are checked against what type
checkers read (each package's ``if TYPE_CHECKING:`` block) and against ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

#: What an __init__.py beside a stub holds besides its docstring (whileai/_lazy.py).
LOADER = ["from whileai._lazy import attach_stub", "__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)"]

LAZY_PACKAGES = ("whileai.measure", "whileai.selection", "whileai.guard", "whileai.grade", "whileai.simulation",
                 "whileai.stats", "whileai.table")

#: Heavy or unrelated modules neither cold call below may load: extras, the server, other steps.
NEVER = ("scipy", "scipy.stats", "pandas", "pyarrow.compute", "ray", "duckdb", "jinja2", "httpx", "starlette",
         "asyncio", "whileai.simulation", "whileai.grade", "whileai.exporters", "whileai.store", "whileai.platform",
         "whileai.table.raydata", "whileai.measure._compare", "whileai.measure._delta", "whileai.measure._selfcheck",
         "whileai.measure._variance", "whileai.measure._holdout", "whileai.measure._stream")

#: Besides those, pass_at on a DataFrame in memory reads no Arrow, writes and selects nothing.
NEVER_FOR_PASS_AT = (*NEVER, "pyarrow", "whileai.table._write", "whileai.data", "whileai.selection",
                     "whileai.guard", "whileai.charts", "whileai.measure._failures")


def _type_checking_imports(package: str) -> dict[str, set[str]]:
    """Module -> the names the package's TYPE_CHECKING block imports from it."""
    path = Path(importlib.import_module(package).__file__ or "")
    out: dict[str, set[str]] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom), ast.dump(stmt)
                assert all(a.asname in (None, a.name) for a in stmt.names), ast.dump(stmt)
                out.setdefault(stmt.module or "", set()).update(a.name for a in stmt.names)
    return out


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_the_type_checking_block_is_the_lazy_table(package):
    module = importlib.import_module(package)
    assert _type_checking_imports(package) == {m: set(names) for m, names in module._EXPORTS.items()}


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_is_in_all_and_resolves(package):
    module = importlib.import_module(package)
    lazy = {name for names in module._EXPORTS.values() for name in names}
    assert lazy <= set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    assert lazy <= set(dir(module))


def test_a_submodule_resolves_as_an_attribute_and_a_typo_does_not():
    import whileai.measure

    assert whileai.measure._ray.__name__ == "whileai.measure._ray"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        whileai.measure.nope  # noqa: B018


def _loaded_after(code: str, names: tuple[str, ...], tmp_path: Path) -> list[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps([m for m in {list(names)!r} if m in sys.modules]))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_cold_pass_at_loads_only_the_measure_it_calls(tmp_path):
    code = ('import whileai as wai; import polars as pl\n'
            'r = wai.pass_at(pl.DataFrame({"task_id": ["a", "a", "b", "b"], "reward": [1.0, 0.0, 1.0, 1.0]}))\n'
            'assert r.pass_at_1 == 0.75, r')
    assert _loaded_after(code, NEVER_FOR_PASS_AT, tmp_path) == []


def test_a_cold_pass_at_on_a_real_sized_run_loads_no_scipy(tmp_path):
    # 125 tasks of 8 with mixed rates: the clustered interval's t quantile and its envelope, whose
    # Poisson corners (rates near 0 or 1 only) are what would import scipy.special
    code = ('import whileai as wai; import polars as pl\n'
            'rows = pl.DataFrame({"task_id": [str(i // 8) for i in range(1000)],\n'
            '                     "reward": [float((i * 7) % 3 == 0) for i in range(1000)]})\n'
            'r = wai.pass_at(rows)\n'
            'assert r.ci95[0] < r.pass_at_1 < r.ci95[1], r')
    assert _loaded_after(code, NEVER_FOR_PASS_AT, tmp_path) == []


def test_a_cold_select_rl_from_parquet_loads_no_other_step(tmp_path):
    from whileai.testing import rollout_table

    path = tmp_path / "rows.parquet"
    rollout_table(40, 8, pass_rates=[0.5] * 40, seed=3).write_parquet(path)
    code = f'import whileai as wai\ns = wai.select({str(path)!r}, mode="rl")\nassert len(s) > 0, s'
    assert _loaded_after(code, NEVER, tmp_path) == []


def _package(tmp_path: Path, stub: str) -> str:
    """A package ``stubpkg`` under tmp_path whose __init__.py is the loader; the code that imports it."""
    folder = tmp_path / "stubpkg"
    folder.mkdir()
    (folder / "__init__.py").write_text('"""A package."""\n' + "\n".join(LOADER) + "\n")
    (folder / "__init__.pyi").write_text(stub)
    (folder / "_impl.py").write_text("def a():\n    return 1\n\n\nB = 2\n")
    (folder / "wilson.py").write_text("def wilson():\n    return 3\n")
    return f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nimport stubpkg\n"


def test_a_stub_name_loads_its_module_on_first_use_and_is_kept(tmp_path):
    code = _package(tmp_path, "from ._impl import a as a\nfrom . import wilson as wilson\n")
    code += ("assert 'stubpkg._impl' not in sys.modules and stubpkg.__all__ == ['a', 'wilson']\n"
             "assert stubpkg.a() == 1 and 'a' in vars(stubpkg) and 'stubpkg._impl' in sys.modules\n"
             "assert stubpkg.wilson is sys.modules['stubpkg.wilson'] and set(dir(stubpkg)) >= {'a', 'wilson'}\n"
             "assert stubpkg._impl.B == 2  # a submodule the stub does not name\n"
             "try:\n    stubpkg.nope\nexcept AttributeError as exc:\n"
             "    assert str(exc) == \"module 'stubpkg' has no attribute 'nope'\", exc\n"
             "else:\n    raise AssertionError('stubpkg.nope resolved')\n")
    assert _loaded_after(code, (), tmp_path) == []


def test_an_alias_is_the_same_object_and_a_plain_import_is_not_exported(tmp_path):
    # the typing spec's rule for stubs: only ``a as a`` and ``b = a`` export a name
    code = _package(tmp_path, "from ._impl import a as a\nfrom ._impl import B\nfrom ._impl import a as d\nb = a\nc = B\n")
    code += ("assert stubpkg.__all__ == ['a', 'b', 'c'], stubpkg.__all__\n"
             "assert stubpkg.b is stubpkg.a and stubpkg.c == 2\n"
             "assert not hasattr(stubpkg, 'B') and not hasattr(stubpkg, 'd')\n")
    assert _loaded_after(code, (), tmp_path) == []


def test_a_function_named_as_its_module_stays_the_function_once_the_module_is_imported(tmp_path):
    # importing stubpkg/wilson.py makes the import system set stubpkg.wilson to the module
    code = _package(tmp_path, "from .wilson import wilson as wilson\n")
    code += "import stubpkg.wilson\nassert stubpkg.wilson is sys.modules['stubpkg.wilson'].wilson, stubpkg.wilson\n"
    assert _loaded_after(code, (), tmp_path) == []


def test_a_stub_with_anything_else_fails_at_import_and_says_where(tmp_path):
    code = _package(tmp_path, "from ._impl import a as a\nX = 3\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode != 0
    assert "ImportError" in out.stderr and "__init__.pyi:2:" in out.stderr and "'X = 3'" in out.stderr
