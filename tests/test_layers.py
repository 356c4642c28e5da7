"""The import graph of whileai/, read with ``ast``: arrows point down the layer table only, no cycle.

Every ``import`` and ``from ... import`` in every module counts, including those inside functions
(a lazy import is still a dependency); imports under ``if TYPE_CHECKING:`` do not (they never run).
The layer table is docs/architecture.md, "Layers".
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "whileai"

#: Layer of each unit (a top-level module or package of whileai), high to low. A unit imports only
#: units of a lower rank (or itself); equal ranks never import each other. The steps are ranked
#: in the order one may import another: grade reads simulate's tool schemas, guard reads nothing
#: of the steps, measure's self_check checks guard's hack_scan floor, select calls measure's
#: task_stats and guard's leak_report and hack_scan, export reads measure's group_stats and
#: simulate's tool(), store records measure's reports.
RANK: dict[str, int] = {
    "cli": 100,
    # apps
    "platform": 90,
    "train": 90,
    # the fluent layer
    "_loop": 81,
    "data": 80,
    # steps, in the order an earlier one may be imported by a later one
    "store": 57,
    "exporters": 56,
    "selection": 55,
    "measure": 54,
    "guard": 53,
    "grade": 52,
    "verify": 51,
    "simulation": 50,
    # test helpers over rows and kernels (a scripted policy's table); apps and tests use them
    "testing": 40,
    # a loopback stand-in for the Hugging Face Hub that whileai.testing hands out (stdlib only)
    "_fake_hub": 39,
    # the report base draws its figure with charts
    "report": 31,
    # rows, figures and kernels: none of them imports another
    "charts": 30,
    "table": 30,
    "stats": 30,
    # base
    "_checks": 12,
    "_cost": 12,
    "_timeouts": 12,
    "_progress": 12,
    "defaults": 10,
    "errors": 10,
    "_aliases": 10,
    "_lazy": 10,
    "_shapes": 10,
    "_version": 10,
}
DOOR = "whileai"  # whileai/__init__.py: lazy names only; nothing below imports it


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(target: str) -> str:
    while target not in MODULES and "." in target:
        target = target.rpartition(".")[0]
    return target


def imports_of(name: str, path: Path) -> list[tuple[str, int]]:
    """(whileai module imported, line) for every import in the module, TYPE_CHECKING ones excluded."""
    package = name if path.name in ("__init__.py", "__init__.pyi") else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit_node(other)
                continue
            visit_node(child)

    def visit_node(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend((_resolve(a.name), node.lineno) for a in node.names if a.name.split(".")[0] == "whileai")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module.split(".")[0] == "whileai":
                for alias in node.names:
                    found.append((_resolve(f"{module}.{alias.name}"), node.lineno))
        else:
            visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


#: A package's ``__init__.pyi`` names what its ``__getattr__`` imports on first use (whileai/_lazy.py):
#: its lines are the package's imports as much as the ``__init__.py``'s.
STUBS = {name: path.with_suffix(".pyi") for name, path in MODULES.items() if path.with_suffix(".pyi").exists()}

GRAPH: dict[str, set[str]] = defaultdict(set)
LINES: dict[tuple[str, str], str] = {}
for _name, _path in [*MODULES.items(), *STUBS.items()]:
    for _target, _line in imports_of(_name, _path):
        if _target != _name:
            GRAPH[_name].add(_target)
            LINES.setdefault((_name, _target), f"{_path.relative_to(ROOT.parent)}:{_line}")


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else DOOR


def test_every_unit_has_a_layer():
    units = {unit_of(m) for m in MODULES} - {DOOR}
    assert units - RANK.keys() == set(), "add the new module or package to RANK and to docs/architecture.md"


def test_arrows_point_down_only():
    wrong = []
    for source, targets in GRAPH.items():
        a = unit_of(source)
        for target in targets:
            b = unit_of(target)
            if a == b:
                continue
            if a == DOOR:
                continue  # the door's lazy table names every layer; its only runtime imports are base
            if b == DOOR or RANK[b] >= RANK[a]:
                wrong.append(f"{LINES[(source, target)]} {source} -> {target}")
    assert wrong == []


def test_the_door_imports_only_the_base_at_run_time():
    eager = {target for target, _ in imports_of(DOOR, MODULES[DOOR])}  # its stub's names load on first use
    assert {unit_of(t) for t in eager} <= {u for u, r in RANK.items() if r <= 12}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_cycle_among_modules():
    assert _cycles(GRAPH) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize(("code", "expected"), [
    ("def f():\n    from whileai.measure import task_stats\n", {"whileai.measure"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from whileai.data import Selection\n", set()),
    ("from whileai import table\nimport whileai.stats.wilson\n", {"whileai.table", "whileai.stats.wilson"}),
])
def test_imports_are_read_inside_functions_and_skip_type_checking(tmp_path, code, expected):
    path = tmp_path / "m.py"
    path.write_text(code)
    assert {t for t, _ in imports_of("whileai.x", path)} == expected


def test_the_layers_on_the_architecture_page():
    page = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for unit in RANK:
        if (ROOT / unit).exists() or (ROOT / f"{unit}.py").exists():
            assert f"`{unit}" in page or f"{unit}/" in page or f"{unit}.py" in page, unit


def test_other_packages_import_only_the_public_names_of_table():
    private = [f"{source} -> {target}" for source, targets in GRAPH.items() for target in targets
               if target.startswith("whileai.table._") and unit_of(source) != "table"]
    assert private == []


def test_code_and_docs_cite_papers_and_our_pages_not_planning_files():
    import re

    banned = re.compile(r"\([Ss]eeds[,:] [A-Za-z\"]|\b[Ss]eeds,? \"|\bSeeds[,:]|\bthe seeds\b|DESIGN\.md|CONVENTIONS\.md|/work/shared")
    repo = ROOT.parent
    found = []
    for folder in ("whileai", "docs", "recipes", "benchmarks", "tests"):
        for path in (repo / folder).rglob("*"):
            if path.suffix in (".py", ".md", ".txt") and path.name != "test_layers.py":
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if banned.search(line):
                        found.append(f"{path.relative_to(repo)}:{number}: {line.strip()}")
    found += [f"README.md: {line}" for line in (repo / "README.md").read_text(encoding="utf-8").splitlines()
              if banned.search(line)]
    assert found == []
