"""The helpers every format reader shares: first records, JSON documents and lines, field readers.

A file's first record, whole JSON documents and lines, and the small field readers (text,
messages, scores, rollout order). Kept apart from ``_formats`` (which tells the shapes apart and dispatches to each reader) so the
readers and the dispatcher never import each other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import SchemaError

__all__ = ["HEAD_BYTES", "LM_EVAL_SAMPLES", "as_map", "first_record", "iter_json_lines", "lm_eval_samples_name",
           "load_document", "messages_of", "number", "rollout_indices", "text_of"]

#: Bytes read after a file's first line to tell a document from JSONL.
HEAD_BYTES = 1 << 16
#: lm-eval's ``samples_<task>_<date>.jsonl`` file name.
LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")


def first_record(path: Path) -> tuple[Any, bool]:
    """The file's first JSON value and whether it is the whole file (a document, not JSONL).

    The first line is read whole (a JSONL row can be long); only when it is not a JSON value on
    its own (a pretty-printed document) is the whole file parsed.
    """
    with open(path, "rb") as handle:
        first_line = handle.readline()
        while first_line and not first_line.strip():
            first_line = handle.readline()
        more = handle.read(HEAD_BYTES).strip()
    if not first_line.strip():
        return None, False
    try:
        return json.loads(first_line), not more
    except ValueError:
        pass
    try:
        with open(path, "rb") as handle:
            return json.load(handle), True
    except ValueError:
        return None, False

def load_document(path: Path) -> Any:
    """The whole JSON document, or a SchemaError naming the file."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise SchemaError(f"file {str(path)!r} is not readable JSON ({exc}). Pass the file the tool wrote.",
                          path=str(path)) from exc

def iter_json_lines(path: Path) -> list[dict[str, Any]]:
    """Every JSON object of a JSONL file; a broken line raises SchemaError naming ``file:line``."""
    out: list[dict[str, Any]] = []
    with open(path, encoding="utf-8-sig") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise SchemaError(f"file {str(path)!r}: line {lineno} is not valid JSON ({exc}). "
                                  "Fix or remove that line.", path=str(path), line=lineno) from exc
            if isinstance(value, dict):
                out.append(value)
    return out

def lm_eval_samples_name(path: Path) -> re.Match[str] | None:
    """The (task, date) of an lm-eval ``samples_<task>_<date>.jsonl`` file name."""
    return LM_EVAL_SAMPLES.match(path.name)

def text_of(value: Any) -> str | None:
    """The text a tool recorded for an input or output: a string, or a dict's first text field.

    Looks under the names tools use (``input``, ``question``, ``prompt``, ``output``, ``answer``,
    ``text``, ``content``...) before any other string field.
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("input", "question", "prompt", "query", "output", "answer", "text", "content", "completion",
                    "response", "result"):
            if isinstance(value.get(key), str):
                return value[key]
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
        nested = [text_of(v) for v in value.values() if isinstance(v, Mapping)]
        found = [n for n in nested if n is not None]
        if len(found) == 1:
            return found[0]
    if isinstance(value, (int, float, bool)):
        return json.dumps(value)
    return None


def messages_of(value: Any) -> list[Any] | None:
    """A chat conversation a tool recorded (``{"messages": [...]}`` or a list of role dicts), else None."""
    if isinstance(value, Mapping):
        for key in ("messages", "input", "prompt"):
            found = messages_of(value.get(key)) if key in value and value.get(key) is not value else None
            if found:
                return found
        return None
    if isinstance(value, list) and value and all(isinstance(m, Mapping) and "role" in m for m in value):
        return list(value)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        return messages_of(value[0])  # LangChain chat model inputs: a batch of one conversation
    return None


def number(value: Any) -> float | None:
    """A score as a float: numbers and booleans; anything else is None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return None


def rollout_indices(keys: list[str]) -> list[int]:
    """0, 1, 2... within each task, in file order: the repeats of one task are its rollouts."""
    seen: dict[str, int] = {}
    out = []
    for key in keys:
        out.append(seen.get(key, 0))
        seen[key] = out[-1] + 1
    return out


def as_map(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one (a field a tool may leave out or null)."""
    return value if isinstance(value, Mapping) else {}
