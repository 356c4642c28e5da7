"""Which tool wrote a file: its shape, told from its name and first record, before any row is read.

A plain JSON document (promptfoo's ``-o results.json``, lm-eval's ``results_*.json``, an
inspect_ai ``.json`` log, a JSON array of LangSmith runs) is told apart from JSONL here, so it never
reaches the line reader (whose first error would be "line 1 is not valid JSON"). Each shape has
its reader module; each returns row dicts for ``frame``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import InputFileError, SchemaError

__all__ = ["SHAPES", "folder_files", "read", "sniff"]

#: The shapes told apart, each with what wrote it (docs/table.md has a section per shape).
SHAPES: dict[str, str] = {
    "inspect": "an inspect_ai log (.eval or .json)",
    "lm_eval_samples": "lm-evaluation-harness samples_<task>_<date>.jsonl (--log_samples)",
    "lm_eval_results": "lm-evaluation-harness results_<date>.json",
    "promptfoo": "promptfoo eval -o results.json",
    "openai_evals": "an openai/evals JSONL event log",
    "langsmith": "a LangSmith run export",
    "braintrust": "a Braintrust experiment export",
    "verifiers": "vf-eval results.jsonl",
    "document": "one JSON document holding a list of rows",
}

_HEAD_BYTES = 1 << 16
_FOLDER_SUFFIXES = (".eval", ".json", ".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz", ".json.gz", ".parquet")
_LM_EVAL_RESULTS = re.compile(r"^results_.*\.json$")
_LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
#: Rows keys that mark lm-eval samples (lm_eval/loggers/evaluation_tracker.py writes them).
_LM_EVAL_KEYS = {"doc_id", "doc", "arguments", "resps", "filtered_resps"}


def _first_record(path: Path) -> tuple[Any, bool]:
    """The file's first JSON value and whether it is the whole file (a document, not JSONL).

    The first line is read whole (a JSONL row can be long); only when it is not a JSON value on
    its own (a pretty-printed document) is the whole file parsed.
    """
    with open(path, "rb") as handle:
        first_line = handle.readline()
        while first_line and not first_line.strip():
            first_line = handle.readline()
        more = handle.read(_HEAD_BYTES).strip()
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


def _head_shape(path: Path) -> str | None:
    """A pretty-printed document's shape from its first bytes, so it is parsed once, by its reader."""
    with open(path, "rb") as handle:
        head = handle.read(_HEAD_BYTES)
    stripped = head.lstrip()
    if not stripped.startswith(b"{") or stripped.split(b"\n", 1)[0].rstrip().endswith(b"}"):
        return None  # not a pretty-printed object (or a one-line one, which the line parse reads)
    if b'"eval"' in head and (b'"samples"' in head or b'"version"' in head) and b'"task"' in head:
        return "inspect"
    if b'"evalId"' in head and b'"results"' in head:
        return "promptfoo"
    if _LM_EVAL_RESULTS.match(path.name) and b'"results"' in head:
        return "lm_eval_results"
    return None


def sniff(path: Path) -> str | None:
    """The shape of ``path`` (a key of :data:`SHAPES`), or None for plain rows (JSONL, JSON array of rows)."""
    name = path.name.lower()
    if name.endswith(".eval"):
        return "inspect"
    if name.endswith(".gz") or not name.endswith((".json", ".jsonl", ".ndjson")):
        return None
    shape = _head_shape(path)
    if shape is not None:
        return shape
    value, whole = _first_record(path)
    if isinstance(value, Mapping):
        keys = set(value)
        if "eval" in keys and ("samples" in keys or "version" in keys):
            return "inspect"
        if _LM_EVAL_KEYS <= keys or (_LM_EVAL_SAMPLES.match(path.name) and "doc_id" in keys):
            return "lm_eval_samples"
        if "results" in keys and ("configs" in keys or "versions" in keys or "n-shot" in keys):
            return "lm_eval_results"
        if "results" in keys and isinstance(value.get("results"), Mapping) and (
                "outputs" in value["results"] or "evalId" in keys or "config" in keys):
            return "promptfoo"
        if "spec" in keys and isinstance(value.get("spec"), Mapping) and ("run_id" in value["spec"] or "eval_name" in value["spec"]):
            return "openai_evals"
        if _is_langsmith(value) or (whole and isinstance(value.get("runs"), list)):
            return "langsmith"
        if _is_braintrust(value) or (whole and isinstance(value.get("events"), list)):
            return "braintrust"
        if "example_id" in keys and "completion" in keys:
            return "verifiers"
        if whole and not ({"scenario_id", "task_id", "prompt", "messages"} & keys):
            return "document"
        return None
    if isinstance(value, list) and whole and value and isinstance(value[0], Mapping):
        if _is_langsmith(value[0]):
            return "langsmith"
        if _is_braintrust(value[0]):
            return "braintrust"
    return None


def _is_langsmith(row: Mapping[str, Any]) -> bool:
    return "run_type" in row and "inputs" in row and bool({"trace_id", "dotted_order", "session_id", "id"} & set(row))


def _is_braintrust(row: Mapping[str, Any]) -> bool:
    return "input" in row and ("scores" in row) and bool({"root_span_id", "span_id", "_xact_id", "id"} & set(row))


def read(shape: str, path: Path, *, scorer: str | None = None) -> list[dict[str, Any]]:
    """Read ``path`` of a known ``shape`` into row dicts (each reader's docstring says how)."""
    if shape == "inspect":
        from whileai.table import _inspect

        return _inspect.read_inspect_log(path, scorer=scorer)
    if shape == "lm_eval_samples":
        from whileai.table import _lmeval

        return _lmeval.read_samples(path)
    if shape == "lm_eval_results":
        from whileai.table import _lmeval

        return _lmeval.read_results(path)
    if shape == "promptfoo":
        from whileai.table import _promptfoo

        return _promptfoo.read_promptfoo(path)
    if shape == "openai_evals":
        from whileai.table import _oaievals

        return _oaievals.read_event_log(path)
    if shape == "langsmith":
        from whileai.table import _langsmith

        return _langsmith.read_runs(path)
    if shape == "braintrust":
        from whileai.table import _braintrust

        return _braintrust.read_experiment(path)
    if shape == "verifiers":
        from whileai.table import _verifiers

        return _verifiers.read_results(path)
    if shape == "document":
        return _document_rows(path)
    raise SchemaError(f"shape must be one of {sorted(SHAPES)}, got {shape!r}. This is a bug in the reader table.")


def load_document(path: Path) -> Any:
    """The whole JSON document, or a SchemaError naming the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise SchemaError(f"file {str(path)!r} is not readable JSON ({exc}). Pass the file the tool wrote.",
                          path=str(path)) from exc


def iter_json_lines(path: Path) -> list[dict[str, Any]]:
    """Every JSON object of a JSONL file; a broken line raises SchemaError naming ``file:line``."""
    out: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as handle:
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


def _document_rows(path: Path) -> list[dict[str, Any]]:
    """A JSON object holding its rows under one list-of-objects key (``rows``, ``data``...)."""
    data = load_document(path)
    lists = {k: v for k, v in data.items() if isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v)}
    if len(lists) == 1:
        return [dict(r) for r in next(iter(lists.values()))]
    raise SchemaError(
        f"file {str(path)!r} is one JSON object (keys: {', '.join(list(data)[:10])}), not rows in a shape whileai "
        f"knows. Pass JSONL (one row object per line), a JSON array of rows, or a file written by one of: "
        f"{'; '.join(v for k, v in SHAPES.items() if k != 'document')}.", path=str(path))


def folder_files(folder: Path) -> list[Path]:
    """The files of a folder to read as one table, in name order.

    inspect_ai's ``logs.json`` listing is skipped, and so are lm-eval ``samples_*.jsonl`` files
    whose ``results_*.json`` is in the same folder (that file reads them, with the run's model).
    """
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name.lower().endswith(_FOLDER_SUFFIXES)
                   and not p.name.startswith(".") and p.name != "logs.json")
    if not files:
        raise InputFileError(
            f"folder {str(folder)!r} must hold .parquet, .jsonl, .json or .eval files, got none. "
            "Point at a folder of logs or rows, or at one file.", path=str(folder))
    from whileai.table import _lmeval

    covered = {s for f in files if _LM_EVAL_RESULTS.match(f.name) for s in _lmeval.samples_of(f)}
    return [f for f in files if f not in covered]


def lm_eval_samples_name(path: Path) -> re.Match[str] | None:
    """The (task, date) of an lm-eval ``samples_<task>_<date>.jsonl`` file name."""
    return _LM_EVAL_SAMPLES.match(path.name)


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
