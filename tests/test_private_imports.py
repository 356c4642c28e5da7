"""Private names stay private: no module imports another package's private module or private name.

A name another package needs is exported by its package's door (``whileai/<package>/__init__.py``)
and imported from there, so a package can rename or split its ``_private`` modules without
breaking another (docs/architecture.md, "Layers"). Read with ``ast``: every ``import`` and
``from ... import`` counts, inside functions and under ``if TYPE_CHECKING:`` too. Top-level
private modules (``whileai._checks``, ``whileai._lazy``) are the library's own shared helpers
and may be imported anywhere.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "whileai"

#: (importing file, imported module or module:name) pairs allowed to reach inside, with the reason.
#: Empty: every package exposes a public door for what the others use.
ALLOWED: dict[tuple[str, str], str] = {}


def _private_reaches(path: Path, source: str) -> list[str]:
    """What ``source`` (the file at ``path`` under whileai/) imports from inside another package."""
    parts = path.relative_to(ROOT).parts
    own = parts[0] if len(parts) > 1 else ""  # a top-level module (data.py) belongs to no package
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("whileai."):
            mods = (node.module or "").split(".")[1:]
            if mods[0] == own:
                continue
            if len(mods) >= 2 and any(m.startswith("_") for m in mods[1:]):
                hits.append(node.module or "")
            elif len(mods) >= 2 or (mods and not mods[0].startswith("_")):
                names = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                hits.extend(f"{node.module}:{name}" for name in names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                mods = alias.name.split(".")[1:]
                if alias.name.startswith("whileai.") and len(mods) >= 2 and mods[0] != own \
                        and any(m.startswith("_") for m in mods[1:]):
                    hits.append(alias.name)
    return hits


def test_no_module_imports_another_packages_private_names():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(ROOT.parent))
        found.extend(f"{rel} -> {hit}" for hit in _private_reaches(path, path.read_text(encoding="utf-8"))
                     if (rel, hit) not in ALLOWED)
    assert found == [], "import these from the package's door (its __init__), exporting them there:\n" + "\n".join(found)


def test_the_check_sees_a_private_module_a_private_name_and_a_plain_import():
    cli = ROOT / "cli" / "x.py"
    assert _private_reaches(cli, "from whileai.guard._hack import hack_scan") == ["whileai.guard._hack"]
    assert _private_reaches(cli, "def f():\n    from whileai.selection import _rl") == ["whileai.selection:_rl"]
    assert _private_reaches(ROOT / "data.py", "import whileai.store._db") == ["whileai.store._db"]
    # its own package, a public door and the library's shared helpers are fine
    assert _private_reaches(cli, "from whileai.cli._common import emit") == []
    assert _private_reaches(cli, "from whileai.guard import hack_scan") == []
    assert _private_reaches(cli, "from whileai._checks import check_int") == []
