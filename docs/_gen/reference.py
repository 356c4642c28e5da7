"""Build-time hook: the API reference and the defaults page, generated from the package.

mkdocs runs ``on_files`` before it builds the navigation, so the pages written here are in the
sidebar like any other. Each public name gets one mkdocstrings directive (``::: module.name``),
which renders its signature and docstring from the source on every build; nothing is copied by
hand, so the pages cannot drift from the package. ``tests/docs/test_api_reference.py`` checks that
every name in each package's ``__all__`` has an entry here and a docstring.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: The wai.* names, one page per defining module, in loop order: (page, title, module prefix).
WAI_PAGES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("loop", "The loop: simulate, grade, select", ("whileai.data", "whileai._loop")),
    ("simulate", "Simulate", ("whileai.simulation",)),
    ("grade", "Grade", ("whileai.grade",)),
    ("measure", "Measure", ("whileai.measure",)),
    ("select", "Select", ("whileai.selection",)),
    ("guard", "Guard", ("whileai.guard",)),
    ("export", "Export", ("whileai.exporters",)),
    ("table", "The rollout table", ("whileai.table",)),
    ("train", "Train", ("whileai.train",)),
    ("platform", "Platform", ("whileai.platform",)),
    ("errors", "Errors", ("whileai.errors",)),
    ("defaults", "Defaults", ("whileai.defaults",)),
    ("report", "Reports", ("whileai.report",)),
)

#: The packages documented whole, from their own ``__all__``: (page, import path).
PACKAGE_PAGES: tuple[tuple[str, str], ...] = (
    ("whileai.platform", "whileai.platform"),
    ("whileai.train", "whileai.train"),
    ("whileai.table", "whileai.table"),
    ("whileai.verify", "whileai.verify"),
)


def _directive(path: str) -> str:
    return f"::: {path}\n    options:\n      show_root_heading: true\n      show_root_full_path: false\n      heading_level: 3\n"


def wai_names() -> dict[str, str]:
    """Every ``wai.*`` public name (aliases and ``__version__`` excluded) and the module it comes from.

    Read from ``whileai/__init__.pyi``, the one list of them (``whileai._lazy.exports_of``).
    """
    from whileai._aliases import ALIASES
    from whileai._lazy import exports_of

    return {name: module for name, (module, _) in exports_of("whileai").items()
            if name not in ALIASES and name != "__version__"}


def wai_page_of(module: str) -> str:
    """The API page a ``wai.*`` name defined in ``module`` is documented on."""
    for page, _, prefixes in WAI_PAGES:
        if module in prefixes or any(module.startswith(p + ".") for p in prefixes):
            return page
    raise KeyError(f"no API page takes names from {module!r}: add it to WAI_PAGES in docs/_gen/reference.py")


#: Modules documented whole on a page of their own (besides PACKAGE_PAGES): module -> page under reference/.
WHOLE_MODULES: dict[str, str] = {"whileai.errors": "errors"}


def _package_page(name: str, module: str) -> str | None:
    """The package page that documents ``module.name`` whole, if one does."""
    import importlib

    if module in WHOLE_MODULES:
        return WHOLE_MODULES[module]
    for page, package in PACKAGE_PAGES:
        if module == package and name in importlib.import_module(package).__all__:
            return page
    return None


def _anchor(name: str, module: str) -> str:
    page = _package_page(name, module)
    return f"#{module}.{name}" if page is None else f"../{page}.md#{module}.{name}"


def pages() -> dict[str, str]:
    """Every generated page: its path under docs/ and its markdown."""
    import whileai
    from whileai._aliases import ALIASES

    out: dict[str, str] = {}
    by_page: dict[str, list[tuple[str, str]]] = {}
    for name, module in sorted(wai_names().items(), key=lambda kv: kv[0].lower()):
        by_page.setdefault(wai_page_of(module), []).append((name, module))
    for page, title, _ in WAI_PAGES:
        names = by_page.get(page, [])
        lines = [f"# {title}\n", "Generated from the package on every build: each entry is the signature and "
                 "the docstring of `wai.<name>` as the installed whileai has them.\n",
                 "| `wai.` name | defined in |", "|---|---|"]
        lines += [f"| [`{n}`]({_anchor(n, m)}) | `{m}` |" for n, m in names]
        lines.append("")
        if page == "loop":
            lines += ["## Aliases\n", "Kept spellings: each is the very object its preferred name is.\n",
                      "| alias | preferred | why |", "|---|---|---|"]
            lines += [f"| `wai.{a}` | `wai.{al.preferred}` | {al.why} |" for a, al in sorted(ALIASES.items())]
            lines += ["", f"`wai.__version__` is `{whileai.__version__}` for the package these pages were built from.", ""]
        here = [(n, m) for n, m in names if _package_page(n, m) is None]
        if here:
            lines += ["## Names\n"]
            lines += [_directive(f"{m}.{n}") for n, m in here]
        else:
            lines += [f"Each name above is documented with the rest of its package, `{names[0][1]}`.\n"]
        out[f"reference/api/{page}.md"] = "\n".join(lines)
    for page, package in PACKAGE_PAGES:
        import importlib

        mod = importlib.import_module(package)
        doc = (mod.__doc__ or "").strip().splitlines()[0] if mod.__doc__ else ""
        names = sorted(mod.__all__, key=str.lower)
        lines = [f"# `{package}`\n", f"{doc}\n", "Every name in the package's `__all__`, generated from the "
                 "package on every build.\n", "## Names\n"]
        lines += [_directive(f"{package}.{n}") for n in names]
        out[f"reference/{page}.md"] = "\n".join(lines)
    out["reference/defaults.md"] = defaults_page()
    return out


_SECTION = re.compile(r"^# -{10,}$")


def _segment(lines: list[str], node: ast.expr) -> str:
    """The source of ``node`` (ast.get_source_segment re-splits the whole file on every call)."""
    end = node.end_lineno or node.lineno
    chunk = lines[node.lineno - 1:end]
    chunk[-1] = chunk[-1][:node.end_col_offset]
    chunk[0] = chunk[0][node.col_offset:]
    return "\n".join(chunk)


def defaults_table() -> list[tuple[str, str, str]]:
    """Every constant in whileai/defaults.py: (name, value as written, the comment above it)."""
    src = (ROOT / "whileai" / "defaults.py").read_text(encoding="utf-8")
    lines = src.splitlines()
    tree = ast.parse(src)
    rows: list[tuple[str, str, str]] = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if not isinstance(target, ast.Name) or not target.id.isupper() or node.value is None:
                continue
            comment: list[str] = []
            i = node.lineno - 2
            while i >= 0 and lines[i].lstrip().startswith("#") and not _SECTION.match(lines[i].strip()):
                comment.insert(0, lines[i].lstrip()[1:].strip())
                i -= 1
            value = _segment(lines, node.value)
            rows.append((target.id, " ".join(value.split()), " ".join(comment)))
    return rows


def defaults_page() -> str:
    """The defaults page: every named constant, its value and its source, read from defaults.py."""
    rows = defaults_table()
    out = ["# Defaults and their sources\n",
           f"Every number whileai uses without being told: {len(rows)} constants, each read from "
           "`whileai/defaults.py` on every build with the comment beside it, which names its source. "
           "Each one takes an argument on the call that uses it.\n",
           "| constant | value | source and reason |", "|---|---|---|"]
    for name, value, comment in rows:
        value = value.replace("|", "\\|")
        comment = comment.replace("|", "\\|")
        out.append(f"| `{name}` | `{value}` | {comment} |")
    out.append("")
    return "\n".join(out)


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site (mkdocs hook)."""
    from mkdocs.structure.files import File

    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files


_CWD: list[str] = []


def on_config(config: Any) -> Any:
    """Resolve the snippets' base path against the repository, whatever folder the build runs in."""
    snippets = config["mdx_configs"].setdefault("pymdownx.snippets", {})
    snippets["base_path"] = [str(ROOT)]
    return config


def on_pre_build(config: Any) -> None:
    """Run the pages' programs (markdown-exec) in a fresh temp folder, as a reader would.

    The files a lesson writes (``train.jsonl``) land there, not in the repository.
    """
    import os
    import tempfile

    _CWD.append(os.getcwd())
    os.chdir(tempfile.mkdtemp(prefix="wai-docs-"))


def on_post_build(config: Any) -> None:
    """Back to the folder the build started in."""
    import os

    if _CWD:
        os.chdir(_CWD.pop())
