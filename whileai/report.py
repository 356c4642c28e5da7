"""The report base: a pydantic model that prints itself, indexes like a dict and dumps to JSON.

Every measure, select and guard call returns a subclass. ``str(report)`` is the line or table a
person reads; ``report["ok"]`` reads a field; ``report.to_json()`` is what the CLI's ``--json``
prints. Warnings are data on the report (``report.warnings``), named after what to do.
"""

from __future__ import annotations

import ast
import html
import inspect
import json
import linecache
import math
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from whileai.defaults import REPR_CHARS

__all__ = ["ChartedReport", "Documented", "NanFloat", "Part", "ROWS_GIVEN", "Report", "Tone", "align_rows", "fmt_ci", "fmt_num", "html_table", "markdown_table", "md_escape"]

#: How a verdict word reads: good (green), bad (red), warn (yellow), neutral (no colour).
Tone = Literal["good", "bad", "warn", "neutral"]

#: How "rows given" validates: ``n_rows``, the one name (whileai 0.131's reports), or ``n``, the old
#: name some reports wrote, so a report stored under it still loads (issue 41).
ROWS_GIVEN = AliasChoices("n_rows", "n")


def _null_as_nan(value: Any) -> Any:
    return math.nan if value is None else value


#: A statistic that is NaN when undefined. JSON writes NaN as null (and ``to_dict`` as None), so
#: null reads back as NaN: a report dumped to JSON, stored and loaded is the report it was.
NanFloat = Annotated[float, BeforeValidator(_null_as_nan)]


class _AttributeDocs(ast.NodeVisitor):
    """A string statement right after an annotated assignment documents that name.

    The rule of pydantic's ``use_attribute_docstrings`` (PEP 257's attribute docstrings, PEP 224):
    the text is ``inspect.cleandoc``-ed; nested classes and functions are not entered.
    """

    def __init__(self) -> None:
        super().__init__()
        self.target: str | None = None
        self.docs: dict[str, str] = {}
        self.previous: type[ast.AST] | None = None

    def visit(self, node: ast.AST) -> Any:
        out = super().visit(node)
        self.previous = type(node)
        return out

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        if isinstance(node.target, ast.Name):
            self.target = node.target.id

    def visit_Expr(self, node: ast.Expr) -> Any:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) and self.previous is ast.AnnAssign:
            if self.target:
                self.docs[self.target] = inspect.cleandoc(node.value.value)
            self.target = None

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        pass

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        pass

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        pass


def _class_lines(cls: type) -> list[str] | None:
    """The lines of ``cls``'s own ``class`` block, from its module's cached source.

    Found by name and indentation, when the module defines that name once and not inside a
    function; else None (the caller asks ``inspect.getsource``).
    """
    if "<locals>" in cls.__qualname__:
        return None
    module = sys.modules.get(cls.__module__)
    lines = linecache.getlines(getattr(module, "__file__", None) or "")
    head = re.compile(rf"\s*class\s+{re.escape(cls.__name__)}\b")
    found = [i for i, line in enumerate(lines) if head.match(line)]
    if len(found) != 1:
        return None
    start = found[0]
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines):
        text = lines[end].strip()
        if text and not text.startswith("#") and len(lines[end]) - len(lines[end].lstrip()) <= indent:
            break
        end += 1
    return lines[start:end]


def _docs_in(cls: type, lines: list[str]) -> dict[str, str] | None:
    """The attribute docstrings of the ``class`` block in ``lines``; None when it does not parse as ``cls``."""
    text = textwrap.dedent("".join(lines))
    if text.startswith((" ", "\t")):  # a string less indented than the class: parse it inside a function
        text = "def _block():\n" + text
    try:
        stmt = ast.parse(text).body[0]
    except SyntaxError:  # cut inside a string or a bracket
        return None
    if isinstance(stmt, ast.FunctionDef) and stmt.name == "_block":
        stmt = stmt.body[0]
    if not (isinstance(stmt, ast.ClassDef) and stmt.name == cls.__name__):
        return None
    visitor = _AttributeDocs()
    visitor.generic_visit(stmt)
    return visitor.docs


def attribute_docs(cls: type) -> dict[str, str]:
    """Each attribute docstring in the body of ``cls``, by name (what ``use_attribute_docstrings`` reads).

    Read from the module's cached source, else through ``inspect.getsource``; empty when the
    source cannot be read (a class made in a REPL).
    """
    lines = _class_lines(cls)
    docs = _docs_in(cls, lines) if lines is not None else None
    if docs is not None:
        return docs
    try:
        lines = inspect.getsource(cls).splitlines(keepends=True)
    except (OSError, TypeError):
        return {}
    return _docs_in(cls, lines) or {}


class Documented(BaseModel):
    """A pydantic model whose fields take their descriptions from their attribute docstrings.

    The descriptions (and so the JSON schema) that ``use_attribute_docstrings=True`` gives, read
    from each class's own lines in its module's cached source and set on the fields before
    pydantic collects them, instead of pydantic's walk of the call stack and the tokenizer for
    every class: about 0.2 s of a cold ``import whileai`` over the library's hundred models. A
    description given with ``Field(description=...)`` wins, as it does in pydantic.

    Each model builds its validator on first use (``defer_build``), not when its module loads:
    a call pays for the reports it makes, not for every model of the modules it imports
    (docs/performance.md, "Cold start").
    """

    model_config = ConfigDict(defer_build=True)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        own = cls.__dict__.get("__annotations__", {})
        for name, doc in (attribute_docs(cls) if own else {}).items():
            if name not in own or name.startswith("_") or "ClassVar" in str(own[name]):
                continue
            value = cls.__dict__.get(name, PydanticUndefined)
            if isinstance(value, FieldInfo):
                if value.description is None:  # as Field(..., description=doc) would have set it
                    value.description = doc
                    getattr(value, "_attributes_set", {})["description"] = doc
            elif value is PydanticUndefined:
                setattr(cls, name, Field(description=doc))
            else:
                setattr(cls, name, Field(value, description=doc))
        super().__init_subclass__(**kwargs)


class Part(Documented):
    """A fixed-shape block inside a report (a trust report's ``floors``, a training run's ``reward``).

    Typed where the report once held a ``dict[str, Any]``, and read as that dict was
    (``part["key"]``, ``part.get("key")``, ``"key" in part``). It serialises to the keys it was
    given, in the order its fields are declared: a block built or stored with fewer keys (a
    ``skipped`` form, an empty default) dumps as it did before it was typed, so the JSON stays
    what it was and a stored report loads back to the same JSON.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    #: Old key names that still read (``part["n"]``), each mapped to the field that replaced it.
    renamed: ClassVar[dict[str, str]] = {}

    @model_serializer(mode="wrap")
    def _given_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        given = self.model_fields_set
        return {k: v for k, v in out.items() if k in given}

    def __getitem__(self, key: str) -> Any:
        key = self.renamed.get(key, key)
        if key in self.model_fields_set:
            return getattr(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.model_fields_set

    def get(self, key: str, default: Any = None) -> Any:
        """Read a key like ``dict.get`` (an old name in ``renamed`` reads its field)."""
        key = self.renamed.get(key, key)
        return getattr(self, key) if key in self.model_fields_set else default

    def keys(self) -> list[str]:
        """The keys it serialises, as a dict's keys (a block that allows extra keys lists them last)."""
        return [k for k in type(self).model_fields if k in self.model_fields_set] + list(self.__pydantic_extra__ or {})

    def __bool__(self) -> bool:
        return bool(self.model_fields_set)  # an empty block is falsy, as the empty dict it replaces was

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):  # equal to the dict it stands for, as code written for that dict compares
            return bool(self.model_dump() == dict(other))
        return super().__eq__(other)


class Report(Documented):
    """Base of every typed report.

    Subclasses declare their fields (with attribute docstrings) and override :meth:`render`. An
    undeclared field is refused (``extra="forbid"``), so a misspelt key fails where it is written.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    warnings: list[str] = Field(default_factory=list)
    """What to look at or do, one sentence each."""

    #: Old field names that still read (``report["n"]``), each mapped to the field that replaced it.
    renamed: ClassVar[dict[str, str]] = {}

    def render(self) -> str:
        """The text a person reads; subclasses override."""
        lines = [f"{type(self).__name__}"]
        for key, value in self.to_dict().items():
            if key != "warnings":
                lines.append(f"  {key}: {value}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    # --- displays: one line, aligned text, notebook HTML and Markdown ----------------------

    def display_line(self) -> str:
        """The first line of :meth:`render`: the verdict or the headline numbers."""
        lines = [line for line in self.render().split("\n") if line and not line.startswith("! ")]
        if not lines:
            return type(self).__name__
        # a headline with no number (a bare verdict, "PASS") reads with the line that carries them
        has_number = any(ch.isdigit() for ch in lines[0])
        return f"{lines[0].strip()} · {lines[1].strip()}" if not has_number and len(lines) > 1 else lines[0]

    def verdict_word(self) -> tuple[str, Tone] | None:
        """The verdict word the headline opens with and how it reads, or None (no verdict)."""
        return None

    def table_rows(self) -> list[tuple[str, ...]] | None:
        """The report's table form, header row first, or None when it prints as lines only.

        A report with a 'What it says' column includes it.
        """
        return None

    def figure_spec(self) -> dict[str, Any] | None:
        """The report's figure as Plotly figure JSON, or None when it has no figure."""
        return None

    def _body_lines(self) -> list[str]:
        lines = [line for line in self.render().split("\n") if not line.startswith("! ")]
        first = self.display_line()
        return lines[2:] if " · " in first and not lines[0].count(" · ") else lines[1:]

    def __repr__(self) -> str:
        line = self.display_line()
        if len(line) > REPR_CHARS:
            line = line[: REPR_CHARS - 3] + "..."
        return f"{type(self).__name__}({line})"

    def _repr_html_(self) -> str:
        """A compact HTML table: the headline, the table form (or the lines), warnings as a list."""
        parts = [f'<div class="wai-report"><p><b>{html.escape(self.display_line())}</b></p>']
        rows = self.table_rows()
        if rows:
            parts.append(html_table(rows[0], rows[1:]))
        else:
            body = self._body_lines()
            if body:
                parts.append("<pre>" + html.escape("\n".join(body)) + "</pre>")
        if self.warnings:
            parts.append("<ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in self.warnings) + "</ul>")
        parts.append("</div>")
        return "".join(parts)

    def _repr_markdown_(self) -> str:
        """The same display as Markdown."""
        parts = [f"**{md_escape(self.display_line())}**"]
        rows = self.table_rows()
        if rows:
            parts.append(markdown_table(rows[0], rows[1:]))
        else:
            body = self._body_lines()
            if body:  # a fence longer than any run of backticks in the text, so none can close it (CommonMark 4.5)
                text = "\n".join(body)
                fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
                parts.append(f"{fence}\n{text}\n{fence}")
        if self.warnings:
            parts.append("\n".join(f"- {md_escape(w)}" for w in self.warnings))
        return "\n\n".join(parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Plain text, HTML, Markdown and, when the report has a figure, the Plotly mime type."""
        bundle: dict[str, Any] = {"text/plain": repr(self), "text/html": self._repr_html_(),
                                  "text/markdown": self._repr_markdown_()}
        spec = self.figure_spec()
        if spec is not None:
            bundle["application/vnd.plotly.v1+json"] = spec
        return bundle

    def __getitem__(self, key: str) -> Any:
        fields = type(self).model_fields
        if key in fields:
            return getattr(self, key)
        if key in self.renamed and self.renamed[key] in fields:  # an old name reads the field that replaced it
            return getattr(self, self.renamed[key])
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in type(self).model_fields or key in self.renamed)

    def get(self, key: str, default: Any = None) -> Any:
        """Read a field like ``dict.get``."""
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        """The field names, as a dict's keys."""
        return list(self.to_dict().keys())

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return iter(self.keys())

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data (NaN becomes None)."""
        return _jsonable(self.model_dump(mode="python"))

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON text, what ``--json`` prints."""
        return json.dumps(self.to_dict(), indent=indent, default=str)


class ChartedReport(Report):
    """A report with a figure: :meth:`figure` draws :meth:`figure_spec` (whileai.charts)."""

    def figure(self) -> Any:
        """The report's figure: a ``plotly.graph_objects.Figure`` with plotly installed, else the dict.

        The dict is Plotly figure JSON (scatter, bar and pie traces only), the same one the Runs
        page and ``_repr_mimebundle_`` draw (docs/notebook.md).
        """
        from whileai.charts import figure

        spec = self.figure_spec()
        if spec is None:  # a subclass that draws nothing for these numbers
            spec = {"data": [{"type": "scatter", "x": [], "y": []}],
                    "layout": {"title": {"text": f"{type(self).__name__}: nothing to draw"}}}
        return figure(spec)


def md_escape(text: str) -> str:
    """Text safe inside Markdown: emphasis, pipes and HTML tags read as plain characters."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")


def html_table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    """An HTML table, every cell escaped.

    Examples:
        >>> html_table(["a"], [["<b>"]])
        '<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>&lt;b&gt;</td></tr></tbody></table>'
    """
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def markdown_table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    r"""A Markdown table, pipes in cells escaped.

    Examples:
        >>> print(markdown_table(["a", "b"], [[1, "x|y"]]))
        | a | b |
        |---|---|
        | 1 | x\|y |
    """
    def cell(c: Any) -> str:
        return str(c).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)
    return "\n".join(lines)


def align_rows(rows: Sequence[Sequence[Any]], *, gap: int = 2) -> str:
    """Rows as aligned plain-text columns (the terminal's table form); the last column is not padded.

    Examples:
        >>> print(align_rows([["Metric", "Value"], ["pass@1", "0.50"]]))
        Metric  Value
        pass@1  0.50
    """
    text = [[str(c) for c in row] for row in rows]
    if not text:
        return ""
    ncol = max(len(r) for r in text)
    widths = [max((len(r[i]) for r in text if i < len(r)), default=0) for i in range(ncol)]
    out = []
    for r in text:
        cells = [c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)]
        out.append((" " * gap).join(cells).rstrip())
    return "\n".join(out)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, BaseModel):
        return _jsonable(value.model_dump(mode="python"))
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _jsonable(value.item())
    return value


def fmt_num(value: float | None, digits: int = 2) -> str:
    """A number for a report line; NaN or None prints as ``n/a``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def fmt_ci(ci: tuple[float, float] | None, digits: int = 2) -> str:
    """An interval as ``[lo..hi]``; a missing one prints ``[n/a]``."""
    if ci is None or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in ci):
        return "[n/a]"
    return f"[{ci[0]:.{digits}f}..{ci[1]:.{digits}f}]"
