"""A call loads what it uses: the packages' lazy exports, and what a cold call leaves unloaded.

Not a clock test: a fresh interpreter makes the call and prints which heavy modules it loaded
(docs/performance.md, "Cold start"). Each package's names are written once, in its
``__init__.pyi`` stub (whileai/_lazy.py): the tests below hold every ``__init__.py`` to the three
lines that read it and every name of every stub to the object it says, read with ``ast`` as a type
checker reads it.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from whileai import _lazy

ROOT = Path(__file__).resolve().parents[1] / "whileai"

#: Every package's __init__.py: whileai's and each subpackage's.
INITS = [ROOT / "__init__.py", *sorted(ROOT.glob("*/__init__.py"))]

#: The packages that export names, each from its stub.
STUB_PACKAGES = [".".join(p.parent.relative_to(ROOT.parent).parts) for p in INITS if p.with_suffix(".pyi").exists()]

#: What an __init__.py beside a stub holds besides its docstring.
LOADER = ["from whileai._lazy import attach_stub", "__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)"]

#: Heavy or unrelated modules neither cold call below may load: extras, the server, other steps.
NEVER = ("scipy", "scipy.stats", "pandas", "pyarrow.compute", "ray", "duckdb", "jinja2", "httpx", "starlette",
         "asyncio", "whileai.simulation", "whileai.grade", "whileai.exporters", "whileai.store", "whileai.platform",
         "whileai.table.raydata", "whileai.measure._compare", "whileai.measure._delta", "whileai.measure._selfcheck",
         "whileai.measure._variance", "whileai.measure._holdout", "whileai.measure._stream")

#: Besides those, pass_at on a DataFrame in memory reads no Arrow, writes and selects nothing.
NEVER_FOR_PASS_AT = (*NEVER, "pyarrow", "whileai.table._write", "whileai.data", "whileai.selection",
                     "whileai.guard", "whileai.charts", "whileai.measure._failures")


def _stub_by_ast(package: str) -> dict[str, tuple[str, str | None]]:
    """Name -> (module, attribute) the package's stub exports, read with ast by the typing spec's rule.

    ``from M import a as a`` exports ``a``; ``from M import a`` or ``as b`` only binds, and ``b = a``
    exports ``b``. The reference for whileai._lazy's line reader, written separately.
    """
    path = ROOT.parent.joinpath(*package.split("."), "__init__.pyi")
    out: dict[str, tuple[str, str | None]] = {}
    bound: dict[str, tuple[str, str | None]] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for a in node.names:
                target = (f"{module}.{a.name}", None) if module == package else (module, a.name)
                bound[a.asname or a.name] = target
                if a.asname == a.name:
                    out[a.name] = target
        else:
            assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Name), ast.dump(node)
            out[node.targets[0].id] = bound[node.targets[0].id] = bound[node.value.id]
    return out


def test_every_package_init_is_the_loader_and_its_docstring():
    """One source per package: no __init__.py lists a name (cli's exports nothing, so has no stub)."""
    for init in INITS:
        tree = ast.parse(init.read_text(encoding="utf-8"))
        body = [ast.unparse(n) for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        assert body == (LOADER if init.with_suffix(".pyi").exists() else []), init
        assert ast.get_docstring(tree), f"{init} has no docstring"


@pytest.mark.parametrize("package", STUB_PACKAGES)
def test_the_loader_reads_the_stub_as_a_type_checker_does(package):
    assert _lazy.exports_of(package) == _stub_by_ast(package)


@pytest.mark.parametrize("package", STUB_PACKAGES)
def test_every_stub_name_is_in_all_and_dir_and_is_the_object_the_stub_names(package):
    module = importlib.import_module(package)
    stub = _stub_by_ast(package)
    assert module.__all__ == sorted(stub)
    assert set(stub) <= set(dir(module))
    for name, (source, attribute) in stub.items():
        expected = importlib.import_module(source)
        if attribute is not None:
            expected = getattr(expected, attribute)
        assert getattr(module, name) is expected, f"{package}.{name} is not {source}.{attribute}"
        assert name in vars(module), f"{package}.{name} is not kept after its first lookup"


def test_a_submodule_resolves_as_an_attribute_and_a_typo_does_not():
    import whileai.measure

    assert whileai.measure._ray.__name__ == "whileai.measure._ray"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        whileai.measure.nope  # noqa: B018


def test_whileai_stats_wilson_is_the_function_after_its_module_is_imported(tmp_path):
    # whileai.stats.wilson is the function of whileai/stats/wilson.py: importing that module (as
    # whileai.measure._common does) must not leave the module in the function's place
    code = ("import whileai.stats.wilson, whileai.stats\n"
            "assert whileai.stats.wilson is sys.modules['whileai.stats.wilson'].wilson, whileai.stats.wilson")
    assert _loaded_after(code, (), tmp_path) == []


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
