"""The fenced code blocks of the README and docs/, as a reader would paste them.

Parsed with markdown-it-py (the CommonMark parser pytest-markdown-docs also uses). pytest-markdown-docs
itself runs Python fences only, each in its own namespace and the test's own folder; a page here
mixes Python and terminal blocks that share files (a program writes ``train.jsonl``, the next
terminal block reads it), so each page runs top to bottom in one fresh temp folder instead
(``run_page.py``).

A block runs unless the HTML comment right above it says otherwise (invisible on the site, visible
in the source, and the text around the block says the same to the reader):

``<!-- docs-test: needs="model-server" -->``  runs against a loopback fake OpenAI server: every
    ``http://localhost:8000/v1`` in the block is replaced by the fake's address.
``<!-- docs-test: needs="ray" -->`` (or another extra's import name)  runs where that import works,
    else is counted as skipped with the reason.
``<!-- docs-test: skip="why" -->``  not run (a `make` target of this repository, a cluster address);
    counted and printed with the reason.
A line ``--8<-- "recipes/..."`` inside a fence is the whole file there (pymdownx.snippets includes it
on the site the same way), so a lesson's page shows and runs its program under recipes/.

``<!-- docs-test: output -->`` above a plain fence: the fence is output the blocks before it print,
    and the run must print it verbatim (so a pasted output on a page cannot drift from the code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]

PYTHON = frozenset({"python", "py", "python3", "pycon"})
SHELL = frozenset({"sh", "bash", "shell", "console"})
_MARK = re.compile(r"<!--\s*docs-test:\s*(?P<key>needs|skip)\s*=\s*\"(?P<value>[^\"]*)\"\s*-->")
_SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+)"$', re.MULTILINE)
_OUTPUT = re.compile(r"<!--\s*docs-test:\s*output\s*-->")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, first line (1-based), language, code and mark."""

    page: str
    line: int
    lang: str
    code: str
    needs: str | None = None
    skip: str | None = None
    options: dict[str, str] = field(default_factory=dict)


def pages() -> list[Path]:
    """The README and every docs/ page, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _lang(info: str) -> str:
    info = info.strip()
    if info.startswith("{"):  # superfences' brace form {.python title="x"}
        first = info.strip("{}").split()[0] if info.strip("{}").split() else ""
        return first.lstrip(".").lower()
    return info.split()[0].lower() if info.split() else ""


def blocks(path: Path) -> list[Block]:
    """The Python and terminal blocks of one page, in order."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    out: list[Block] = []
    for i, tok in enumerate(tokens):
        if tok.type != "fence" or tok.map is None:
            continue
        lang = _lang(tok.info)
        kind = "python" if lang in PYTHON else "sh" if lang in SHELL else None
        before = tokens[i - 1].content if i > 0 and tokens[i - 1].type == "html_block" else ""
        if kind is None:
            if _OUTPUT.search(before):
                out.append(Block(page=str(path.relative_to(ROOT)), line=tok.map[0] + 1, lang="output", code=tok.content))
            continue
        mark = _MARK.search(before)
        code = _SNIPPET.sub(lambda m: (ROOT / m["path"]).read_text(encoding="utf-8"), tok.content)
        out.append(Block(
            page=str(path.relative_to(ROOT)), line=tok.map[0] + 1, lang=kind, code=code,
            needs=mark["value"] if mark and mark["key"] == "needs" else None,
            skip=mark["value"] if mark and mark["key"] == "skip" else None,
        ))
    return out


def shell_commands(code: str) -> str:
    """A terminal block as bash runs it: ``$ `` prompts stripped, output lines of a console dropped."""
    lines = code.splitlines()
    if any(line.startswith("$ ") for line in lines):
        return "\n".join(line[2:] for line in lines if line.startswith("$ "))
    return code
