"""The shapes of files other tools write, in one registry: name, words, detect, read.

A shape is one entry here plus one reader module: ``detect`` and ``read`` are named as
``"module:function"`` and imported only when a file is read, so this module imports nothing
(``wai --help`` lists the shapes without loading a library). ``detect(probe)`` is asked, in
registry order, whether a file's first record (``whileai.table._formats.Probe``: the path, the
first JSON value, whether it is the whole document) is of its shape; ``read(path, scorer=...)``
returns the file's row dicts (``scorer`` passed to a reader that takes it). A shape marked
``refused`` is recognised only to be refused with what the file is and how to read it.

``table.frame(rows, shape=NAME)`` and ``--shape NAME`` force a shape instead of detecting one;
``rows`` forces plain rollout rows (no tool's shape). The ``frame`` docstring, the CLI help and
docs/table.md ("Forcing a shape") list the shapes from :data:`SHAPES`; a test checks they agree.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["PLAIN", "SHAPES", "Shape", "by_name", "docs_list", "names", "summary"]


class Shape(NamedTuple):
    """One file shape: its ``name``, the ``words`` saying what wrote it, and where its code is."""

    name: str
    """What ``shape=`` and ``--shape`` take."""
    words: str
    """What writes it, for help text and docs."""
    detect: str | None
    """``"module:function"`` telling it from a file's first record; None: told some other way."""
    read: str | None
    """``"module:function"`` reading a file of this shape into row dicts; None for plain rows."""
    refused: bool = False
    """Recognised only to be refused, with what to do instead."""


_F = "whileai.table._formats"
#: Plain rollout rows: JSONL, a JSON array of rows, Parquet (what ``shape="rows"`` forces).
PLAIN = "rows"

#: Every shape, in the order detection asks them (a more specific shape before a looser one).
SHAPES: tuple[Shape, ...] = (
    Shape("inspect", "an inspect_ai log (.eval or .json)", f"{_F}:is_inspect",
          "whileai.table._inspect:read_inspect_log"),
    Shape("lm_eval_samples", "lm-evaluation-harness samples_<task>_<date>.jsonl (--log_samples)",
          f"{_F}:is_lm_eval_samples", "whileai.table._lmeval:read_samples"),
    Shape("lm_eval_results", "lm-evaluation-harness results_<date>.json", f"{_F}:is_lm_eval_results",
          "whileai.table._lmeval:read_results"),
    Shape("promptfoo", "promptfoo eval -o results.json", f"{_F}:is_promptfoo",
          "whileai.table._promptfoo:read_promptfoo"),
    Shape("openai_evals", "an openai/evals JSONL event log", f"{_F}:is_openai_evals",
          "whileai.table._oaievals:read_event_log"),
    Shape("langsmith", "a LangSmith run export", f"{_F}:is_langsmith_export", "whileai.table._langsmith:read_runs"),
    Shape("braintrust", "a Braintrust experiment export", f"{_F}:is_braintrust_export",
          "whileai.table._braintrust:read_experiment"),
    Shape("verifiers", "vf-eval output: verifiers 0.4 traces.jsonl, 0.3 results.jsonl", f"{_F}:is_verifiers",
          "whileai.table._verifiers:read"),
    Shape("openai_batch", "an OpenAI Batch API output file (refused: replies without their requests or a grade)",
          f"{_F}:is_batch_file", None, refused=True),
    Shape("openai_responses", "OpenAI Responses API items (refused: convert them to chat messages)",
          f"{_F}:is_responses_file", None, refused=True),
    Shape("document", "one JSON document holding a list of rows", f"{_F}:is_document", f"{_F}:document_rows"),
    Shape(PLAIN, "plain rollout rows: JSONL, a JSON array of rows, Parquet (no tool's shape)", None, None),
)


def names() -> list[str]:
    """The shape names ``shape=`` and ``--shape`` take, in registry order."""
    return [s.name for s in SHAPES]


def by_name(name: str) -> Shape:
    """The shape called ``name``.

    Raises:
        KeyError: No shape has that name (callers turn it into their own error).
    """
    for shape in SHAPES:
        if shape.name == name:
            return shape
    raise KeyError(name)


def summary() -> str:
    """One line listing every shape as ``name (words)``, for help text and docstrings."""
    return "; ".join(f"{s.name} ({s.words})" for s in SHAPES)


def docs_list() -> str:
    """The Markdown list docs/table.md shows under "Forcing a shape" (a test keeps the page equal to it)."""
    return "\n".join(f"- `{s.name}`: {s.words}" for s in SHAPES)
