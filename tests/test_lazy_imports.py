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
