"""Posted markdown as safe HTML: every character escaped first, then a small markdown subset applied.

The experiment block, notes and captions are text a coding agent posted, so nothing in them may
become markup the browser runs: the text is HTML-escaped before any markdown is read, so a
``<script>`` arrives as the visible text ``&lt;script&gt;`` (OWASP XSS Prevention Cheat Sheet, rule
1: encode before inserting into HTML content). The subset: paragraphs, line breaks, ``-``/``*``
and numbered lists, ``#`` headings, fenced and inline code, ``**bold**``, ``*em*``, and links
whose target is http(s), mailto or a same-site path (a ``javascript:`` link stays text).
"""

from __future__ import annotations

import html
import re

from markupsafe import Markup

__all__ = ["render_markdown"]

_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EM = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_SAFE_URL = re.compile(r"^(https?://|mailto:|/(?!/)|#)", re.IGNORECASE)
_BULLET = re.compile(r"^\s*[-*]\s+")
_NUMBER = re.compile(r"^\s*\d+[.)]\s+")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


def _inline(text: str) -> str:
    """One escaped line with inline code, bold, em and safe links (code spans are left alone)."""
    out, last = [], 0
    for m in _CODE.finditer(text):
        out.append(_marks(html.escape(text[last:m.start()], quote=True)))
        out.append(f"<code>{html.escape(m.group(1), quote=True)}</code>")
        last = m.end()
    out.append(_marks(html.escape(text[last:], quote=True)))
    return "".join(out)


def _marks(escaped: str) -> str:
    def link(m: re.Match[str]) -> str:
        label, url = m.group(1), html.unescape(m.group(2))
        if not _SAFE_URL.match(url):
            return m.group(0)
        return f'<a href="{html.escape(url, quote=True)}" rel="noopener noreferrer">{label}</a>'

    escaped = _LINK.sub(link, escaped)
    escaped = _BOLD.sub(r"<strong>\1</strong>", escaped)
    return _EM.sub(r"<em>\1</em>", escaped)


def render_markdown(text: str | None) -> Markup:
    """``text`` as safe HTML (see the module docstring); None or empty gives an empty string.

    Examples:
        >>> str(render_markdown("**hi** <script>alert(1)</script>"))
        '<p><strong>hi</strong> &lt;script&gt;alert(1)&lt;/script&gt;</p>'
        >>> str(render_markdown("[x](javascript:alert(1))"))
        '<p>[x](javascript:alert(1))</p>'
    """
    if not text:
        return Markup("")
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[str] = []
    para: list[str] = []
    items: list[str] = []
    kind = ""

    def flush() -> None:
        nonlocal kind
        if para:
            blocks.append("<p>" + "<br>".join(_inline(p) for p in para) + "</p>")
            para.clear()
        if items:
            blocks.append(f"<{kind}>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + f"</{kind}>")
            items.clear()
        kind = ""

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("```"):
            flush()
            code = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code.append(lines[i])
                i += 1
            blocks.append("<pre><code>" + html.escape("\n".join(code), quote=True) + "</code></pre>")
            i += 1
            continue
        if not line.strip():
            flush()
        elif (h := _HEADING.match(line)) is not None:
            flush()
            level = min(len(h.group(1)) + 2, 6)  # the page's own headings are h1-h3
            blocks.append(f"<h{level}>{_inline(h.group(2))}</h{level}>")
        elif _BULLET.match(line) or _NUMBER.match(line):
            want = "ul" if _BULLET.match(line) else "ol"
            if para or (kind and kind != want):
                flush()
            kind = want
            items.append((_BULLET if want == "ul" else _NUMBER).sub("", line, count=1))
        elif items and line.startswith(("  ", "\t")):
            items[-1] += " " + line.strip()
        else:
            if items:
                flush()
            para.append(line)
        i += 1
    flush()
    return Markup("".join(blocks))
