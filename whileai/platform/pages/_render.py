"""The Jinja2 environment the pages and ``wai report`` render with: autoescape on, a few number filters."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from whileai.platform.pages._markdown import render_markdown

__all__ = ["STATIC", "TEMPLATES", "environment", "render"]

TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(__file__).with_name("static")


def _pts(value: Any, digits: int = 1) -> str:
    return "–" if value is None else f"{float(value):.{digits}f}"


def _signed(value: Any) -> str:
    return "–" if value is None else f"{float(value):+.1f}"


def _interval(ci: Any, digits: int = 1) -> str:
    if not ci:
        return "–"
    return f"{float(ci[0]):+.{digits}f}..{float(ci[1]):+.{digits}f}"


def _points(rate: Any, digits: int = 1) -> str:
    """A rate (0 to 1) as points out of 100, the page's one unit: ``0.62`` reads ``62.0``."""
    if rate is None or isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate != rate:
        return "–"
    return f"{100.0 * float(rate):.{digits}f}"


def _points_signed(rate: Any) -> str:
    """A difference of rates as signed points: ``0.131`` reads ``+13.1``."""
    if rate is None or isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate != rate:
        return "–"
    return f"{100.0 * float(rate):+.1f}"


def _points_interval(ci: Any) -> str:
    """An interval on a difference of rates, in signed points: ``(0.05, 0.2)`` reads ``+5.0..+20.0``."""
    if not ci or len(ci) != 2 or any(c is None for c in ci):
        return "–"
    return f"{100.0 * float(ci[0]):+.1f}..{100.0 * float(ci[1]):+.1f}"


def _value(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _json_script(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">`` ("<" escaped, so no tag can close it)."""
    from markupsafe import Markup

    text = json.dumps(value, default=str, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    """The shared ``jinja2.Environment`` over the package's templates (autoescaped, cached)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters.update(md=render_markdown, pts=_pts, signed=_signed, interval=_interval, value=_value,
                       json_script=_json_script, points=_points, points_signed=_points_signed,
                       points_interval=_points_interval)
    from whileai.defaults import PAGE_LONG_TEXT_CHARS

    env.globals["long_text_chars"] = PAGE_LONG_TEXT_CHARS
    return env


def render(template: str, **context: Any) -> str:
    """Render one template of the package with ``context``."""
    return str(environment().get_template(template).render(**context))
