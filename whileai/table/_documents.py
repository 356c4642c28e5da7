"""The helpers every format reader shares: first records, JSON documents and lines, field readers.

A file's first record, whole JSON documents and lines, and the small field readers (text,
messages, scores, rollout order). Kept apart from ``_formats`` (which tells the shapes apart and dispatches to each reader) so the
readers and the dispatcher never import each other.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from whileai.errors import SchemaError

__all__ = ["GZIP_ERRORS", "HEAD_BYTES", "JSON_FILE_ERRORS", "LM_EVAL_SAMPLES", "as_map", "first_record", "is_gzip", "iter_json_lines",
           "lm_eval_samples_name", "load_document", "messages_of", "number", "open_binary", "open_text", "plain_name",
           "rollout_indices", "text_of"]

#: Bytes read after a file's first line to tell a document from JSONL.
HEAD_BYTES = 1 << 16
#: lm-eval's ``samples_<task>_<date>.jsonl`` file name.
LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
#: What reading a broken gzip stream raises (a bad header is an OSError, a cut stream an EOFError).
GZIP_ERRORS: tuple[type[Exception], ...] = (OSError, EOFError, zlib.error)
#: What reading a JSON file (gzipped or not) raises: a broken gzip stream, or text that is not JSON.
JSON_FILE_ERRORS: tuple[type[Exception], ...] = (*GZIP_ERRORS, ValueError)
#: Names that hold one JSON object per line, whatever the number of lines (https://jsonlines.org,
#: https://github.com/ndjson/ndjson-spec): one line is one row, never a whole document.
_LINE_SUFFIXES = (".jsonl", ".ndjson")


def is_gzip(path: Path) -> bool:
    """Whether ``path`` is named as gzip-compressed (``.gz``): every reader decompresses it as a stream."""
    return path.name.lower().endswith(".gz")


def plain_name(path: Path) -> str:
    """The file's name without a ``.gz`` suffix: what tells its shape (``results.jsonl.gz`` is ``results.jsonl``)."""
    return path.name[:-3] if is_gzip(path) else path.name


def open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed when it is named ``.gz``."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")  # type: ignore[return-value]


def open_text(path: Path, encoding: str = "utf-8-sig") -> IO[str]:
    """The file's text, decompressed when it is named ``.gz`` (a byte-order mark is dropped by default)."""
    return gzip.open(path, "rt", encoding=encoding) if is_gzip(path) else open(path, encoding=encoding)


def first_record(path: Path) -> tuple[Any, bool]:
    """The file's first JSON value and whether it is the whole file (a document, not JSONL).

    The first line is read whole (a JSONL row can be long); only when it is not a JSON value on
    its own (a pretty-printed document) is the whole file parsed. A ``.gz`` file is read through
    gzip. In a file named ``.jsonl`` or ``.ndjson`` (``.gz`` or not) a line holding an object is
    a row, so a file of one such line is not a document; a JSON array on it still is.
    """
    with open_binary(path) as handle:
        first_line = handle.readline()
        while first_line and not first_line.strip():
            first_line = handle.readline()
        more = handle.read(HEAD_BYTES).strip()
    if not first_line.strip():
        return None, False
    try:
        value = json.loads(first_line)
    except ValueError:
        pass
    else:
        lines = plain_name(path).lower().endswith(_LINE_SUFFIXES) and isinstance(value, Mapping)
        return value, not more and not lines
    try:
        with open_binary(path) as handle:
            return json.load(handle), True
    except ValueError:
        return None, False

def load_document(path: Path) -> Any:
    """The whole JSON document, or a SchemaError naming the file."""
    try:
        with open_text(path) as handle:
            return json.load(handle)
    except JSON_FILE_ERRORS as exc:
        raise SchemaError(f"file {str(path)!r} is not readable JSON ({exc}). Pass the file the tool wrote.",
                          path=str(path)) from exc

def iter_json_lines(path: Path) -> list[dict[str, Any]]:
    """Every JSON object of a JSONL file (``.gz`` read through gzip); a broken line raises SchemaError naming ``file:line``."""
    out: list[dict[str, Any]] = []
    lineno = 0
    try:
        with open_text(path) as handle:
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
    except (EOFError, zlib.error, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise SchemaError(f"file {str(path)!r} cannot be read past line {lineno} ({exc}). "
                          "Pass the file as the tool wrote it, whole (re-compress a cut .gz).",
                          path=str(path), line=lineno + 1) from exc
    return out

def lm_eval_samples_name(path: Path) -> re.Match[str] | None:
    """The (task, date) of an lm-eval ``samples_<task>_<date>.jsonl`` file name (``.jsonl.gz`` too)."""
    return LM_EVAL_SAMPLES.match(plain_name(path))

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
