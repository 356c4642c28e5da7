"""Which tool wrote a file: its shape, told from its name and first record, before any row is read.

A plain JSON document (promptfoo's ``-o results.json``, lm-eval's ``results_*.json``, an
inspect_ai ``.json`` log, a JSON array of LangSmith runs) is told apart from JSONL here, so it never
reaches the line reader (whose first error would be "line 1 is not valid JSON"). Each shape has
its reader module; each returns row dicts for ``frame``. A gzip-compressed file (``.gz``) is told
and read as the file it holds: by its name without ``.gz`` and its first record decompressed.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect as _pyinspect
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, NamedTuple

from whileai import _shapes
from whileai.errors import ArgumentError, InputFileError, SchemaError
from whileai.table._documents import (
    GZIP_ERRORS,
    HEAD_BYTES,
    LM_EVAL_SAMPLES,
    first_record,
    is_gzip,
    load_document,
    open_binary,
    plain_name,
)

__all__ = ["REFUSED", "RESPONSES_ITEM_TYPES", "SHAPES", "Probe", "check_shape", "folder_files", "forcing", "read",
           "refusal", "sniff"]

#: The shapes told apart, each with what wrote it (``whileai/_shapes.py`` is the registry;
#: docs/table.md has a section per shape).
SHAPES: dict[str, str] = {s.name: s.words for s in _shapes.SHAPES if s.name != _shapes.PLAIN}
#: Shapes that are recognised only to be refused with what they are and how to read them.
REFUSED = tuple(s.name for s in _shapes.SHAPES if s.refused)
#: The shape ``frame(..., shape=)`` forces for the read in progress (None: detect it).
_FORCED: ContextVar[str | None] = ContextVar("_FORCED", default=None)


class Probe(NamedTuple):
    """What a shape's ``detect`` sees: the path, its first JSON value, and whether that value is the whole file."""

    path: Path
    value: Any
    whole: bool


def check_shape(shape: str) -> str:
    """``shape`` when it names a registered shape.

    Raises:
        ArgumentError: Any other value, with the names.
    """
    if shape not in _shapes.names():
        raise ArgumentError(f"shape must be one of {', '.join(_shapes.names())}, got {shape!r}. Pass one of those, "
                            "or leave it out to tell the shape from the file.", argument="shape", value=shape)
    return shape


@contextlib.contextmanager
def forcing(shape: str | None) -> Iterator[None]:
    """Read every file inside the block as ``shape``; None leaves the shape an enclosing block forced, if any."""
    if shape is None:
        yield
        return
    token = _FORCED.set(check_shape(shape))
    try:
        yield
    finally:
        _FORCED.reset(token)


def _function(ref: str) -> Any:
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


#: inspect_ai's manifests in a log folder, which hold no samples: ``logs.json`` (the listing
#: ``inspect view`` writes) and ``eval-set.json`` (``inspect eval-set``'s id and task list,
#: inspect_ai ``_eval/evalset.py``).
INSPECT_MANIFESTS = frozenset({"logs.json", "eval-set.json"})
_FOLDER_SUFFIXES = (".eval", ".json", ".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz", ".json.gz", ".parquet", ".arrow")
#: What Hugging Face ``save_to_disk`` writes beside its Arrow files (no rows; ``table/_hf.py``).
_HF_META = frozenset({"state.json", "dataset_info.json", "dataset_dict.json"})
_LM_EVAL_RESULTS = re.compile(r"^results_.*\.json$")
#: Rows keys that mark lm-eval samples (lm_eval/loggers/evaluation_tracker.py writes them).
_LM_EVAL_KEYS = {"doc_id", "doc", "arguments", "resps", "filtered_resps"}
#: The keys of an OpenAI Batch API output line (https://platform.openai.com/docs/guides/batch,
#: "Retrieve the results": ``id``, ``custom_id``, ``response`` with ``status_code``, ``request_id``
#: and ``body``, and ``error``).
_BATCH_KEYS = {"id", "custom_id", "response", "error"}
#: The item types of the OpenAI Responses API that stand for a turn of a chat conversation
#: (https://platform.openai.com/docs/api-reference/responses/object, ``output`` items).
RESPONSES_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning"})
#: Row fields that make a line a rollout row (whose ``type`` is then its own field).
_ROW_KEYS = {"scenario_id", "task_id", "prompt", "messages"}


def _head_shape(path: Path) -> str | None:
    """A pretty-printed document's shape from its first bytes, so it is parsed once, by its reader."""
    with open_binary(path) as handle:
        head = handle.read(HEAD_BYTES)
    stripped = head.lstrip()
    if not stripped.startswith(b"{") or stripped.split(b"\n", 1)[0].rstrip().endswith(b"}"):
        return None  # not a pretty-printed object (or a one-line one, which the line parse reads)
    if b'"eval"' in head and (b'"samples"' in head or b'"version"' in head) and b'"task"' in head:
        return "inspect"
    if b'"evalId"' in head and b'"results"' in head:
        return "promptfoo"
    if _LM_EVAL_RESULTS.match(plain_name(path)) and b'"results"' in head:
        return "lm_eval_results"
    return None


def sniff(path: Path) -> str | None:
    """The shape of ``path`` (a name in ``whileai/_shapes.py``), or None for plain rows (JSONL, JSON array of rows).

    A shape forced with :func:`forcing` is the answer without a look (``rows``: None). Else each
    registered shape's ``detect`` is asked in registry order about the first record. A ``.gz``
    file is told by its name without ``.gz`` and its decompressed first record; one that cannot
    be decompressed is left to the line reader, which says so.
    """
    forced = _FORCED.get()
    if forced is not None:
        return None if forced == _shapes.PLAIN else forced
    name = plain_name(path).lower()
    if path.name.lower().endswith(".eval"):
        return "inspect"
    if not name.endswith((".json", ".jsonl", ".ndjson")):
        return None
    try:
        shape = _head_shape(path)
        if shape is not None:
            return shape
        value, whole = first_record(path)
    except GZIP_ERRORS:
        if is_gzip(path):
            return None
        raise
    if not isinstance(value, Mapping) and not (isinstance(value, list) and whole and value
                                               and isinstance(value[0], Mapping)):
        return None
    probe = Probe(path, value, whole)
    for entry in _shapes.SHAPES:
        if entry.detect is not None and _function(entry.detect)(probe):
            return entry.name
    return None


def is_inspect(probe: Probe) -> bool:
    """An inspect_ai JSON log: ``eval`` with ``samples`` or ``version``."""
    keys = set(probe.value) if isinstance(probe.value, Mapping) else set()
    return "eval" in keys and ("samples" in keys or "version" in keys)


def is_lm_eval_samples(probe: Probe) -> bool:
    """lm-eval samples: a line with doc_id, doc, arguments, resps and filtered_resps (a JSON array in 0.4.0-0.4.2)."""
    if isinstance(probe.value, list):  # lm-eval 0.4.0-0.4.2 wrote --log_samples as one JSON array
        return _LM_EVAL_KEYS <= set(probe.value[0])
    keys = set(probe.value)
    return _LM_EVAL_KEYS <= keys or (bool(LM_EVAL_SAMPLES.match(plain_name(probe.path))) and "doc_id" in keys)


def is_lm_eval_results(probe: Probe) -> bool:
    """lm-eval ``results_<date>.json``: ``results`` with ``configs``, ``versions`` or ``n-shot``."""
    keys = set(probe.value) if isinstance(probe.value, Mapping) else set()
    return "results" in keys and ("configs" in keys or "versions" in keys or "n-shot" in keys)


def is_promptfoo(probe: Probe) -> bool:
    """Promptfoo output: ``results`` holding ``outputs``, or beside ``evalId`` or ``config``."""
    value = probe.value
    return isinstance(value, Mapping) and "results" in value and isinstance(value.get("results"), Mapping) and (
        "outputs" in value["results"] or "evalId" in value or "config" in value)


def is_openai_evals(probe: Probe) -> bool:
    """An openai/evals event log: its first line is the ``spec`` with ``run_id`` or ``eval_name``."""
    spec = probe.value.get("spec") if isinstance(probe.value, Mapping) else None
    return isinstance(spec, Mapping) and ("run_id" in spec or "eval_name" in spec)


def is_langsmith_export(probe: Probe) -> bool:
    """A LangSmith run (a line, a JSON array's first item), or a document of ``runs``."""
    if isinstance(probe.value, list):
        return _is_langsmith(probe.value[0])
    return _is_langsmith(probe.value) or (probe.whole and isinstance(probe.value.get("runs"), list))


def is_braintrust_export(probe: Probe) -> bool:
    """A Braintrust event (a line, a JSON array's first item), or a document of ``events``."""
    if isinstance(probe.value, list):
        return _is_braintrust(probe.value[0])
    return _is_braintrust(probe.value) or (probe.whole and isinstance(probe.value.get("events"), list))


def is_verifiers(probe: Probe) -> bool:
    """vf-eval output: a 0.3 ``results.jsonl`` row (``example_id``, ``completion``) or a 0.4 episode."""
    value = probe.value
    if not isinstance(value, Mapping):
        return False
    return ("example_id" in value and "completion" in value) or (
        isinstance(value.get("traces"), list) and isinstance(value.get("task"), Mapping) and "env" in value)


def is_batch_file(probe: Probe) -> bool:
    """An OpenAI Batch API output line."""
    return isinstance(probe.value, Mapping) and _is_batch_output(probe.value)


def is_responses_file(probe: Probe) -> bool:
    """An OpenAI Responses API item or Response object."""
    return isinstance(probe.value, Mapping) and _is_responses_item(probe.value)


def is_document(probe: Probe) -> bool:
    """One JSON object that is not a row (no scenario_id, task_id, prompt or messages)."""
    return isinstance(probe.value, Mapping) and probe.whole and not (_ROW_KEYS & set(probe.value))


def _is_batch_output(row: Mapping[str, Any]) -> bool:
    """An OpenAI Batch API output line: the envelope keys, its ``response`` null (a failed request) or an HTTP reply."""
    response = row.get("response")
    return _BATCH_KEYS <= set(row) and not _ROW_KEYS & set(row) and (
        response is None or (isinstance(response, Mapping) and ("body" in response or "status_code" in response)))


def _is_responses_item(row: Mapping[str, Any]) -> bool:
    """An OpenAI Responses API item (a ``function_call``, its output, a typed message) or a whole Response object."""
    if _ROW_KEYS & set(row):
        return False
    if row.get("object") == "response" and isinstance(row.get("output"), list):
        return True
    kind = row.get("type")
    if kind in ("function_call", "function_call_output"):
        return "call_id" in row
    return kind in RESPONSES_ITEM_TYPES and ("role" in row or "summary" in row) and (
        kind != "message" or isinstance(row.get("content"), list))


def _is_langsmith(row: Mapping[str, Any]) -> bool:
    return "run_type" in row and "inputs" in row and bool({"trace_id", "dotted_order", "session_id", "id"} & set(row))


def _is_braintrust(row: Mapping[str, Any]) -> bool:
    return "input" in row and ("scores" in row) and bool({"root_span_id", "span_id", "_xact_id", "id"} & set(row))


def read(shape: str, path: Path, *, scorer: str | None = None) -> list[dict[str, Any]]:
    """Read ``path`` of a known ``shape`` into row dicts with the registry's reader (its docstring says how).

    A shape of :data:`REFUSED` raises the SchemaError that says what the file is and how to
    read it. A ``.gz`` file is read as the file it holds. ``scorer`` goes to a reader that takes it.
    """
    if shape in REFUSED:
        raise refusal(shape, f"file {str(path)!r}", path=str(path))
    entry = _shapes.by_name(check_shape(shape))
    if entry.read is None:
        raise SchemaError(f"shape must have a reader, got {shape!r}, which has none. This is a bug in the shape "
                          "registry (whileai/_shapes.py).")
    reader = _function(entry.read)
    if "scorer" in _pyinspect.signature(reader).parameters:
        return list(reader(path, scorer=scorer))
    return list(reader(path))


def refusal(shape: str, source: str, *, path: str | None = None, row: int | None = None) -> SchemaError:
    """The error for a file of a :data:`REFUSED` shape: what it is, and how to read it."""
    if shape == "openai_batch":
        return SchemaError(
            f"{source} is an OpenAI Batch API output file (lines of custom_id and response): it holds the model's "
            "replies, but not the requests they answer or a grade, so it is not a table of rollouts. Join it with the "
            "batch input file's messages by custom_id and grade the replies; or read the replies alone with "
            '--map task=custom_id --map final_text=response.body.choices.0.message.content (mapping={"task": '
            '"custom_id", "final_text": "response.body.choices.0.message.content"} in Python).',
            path=path, source=source, row=row, reason="openai_batch_output")
    return SchemaError(
        f"{source} holds OpenAI Responses API items (type message / function_call / function_call_output), not chat "
        "messages with a role. Convert them to chat messages: a message item to a message with its role and text, "
        "each function_call to an entry of the assistant message's tool_calls ({\"id\": call_id, \"type\": "
        "\"function\", \"function\": {\"name\", \"arguments\"}}), each function_call_output to a tool message "
        "(role tool, tool_call_id = call_id, content = output); one conversation per row under messages.",
        path=path, source=source, row=row, column=None if row is None else "messages", reason="openai_responses_items")


def document_rows(path: Path) -> list[dict[str, Any]]:
    """A JSON object holding its rows under one list-of-objects key (``rows``, ``data``...)."""
    data = load_document(path)
    lists = {k: v for k, v in data.items() if isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v)}
    if len(lists) == 1:
        return [dict(r) for r in next(iter(lists.values()))]
    raise SchemaError(
        f"file {str(path)!r} is one JSON object (keys: {', '.join(list(data)[:10])}), not rows in a shape whileai "
        f"knows. Pass JSONL (one row object per line), a JSON array of rows, or a file written by one of: "
        f"{'; '.join(v for k, v in SHAPES.items() if k != 'document' and k not in REFUSED)}.", path=str(path))


def _vf_run_config(path: Path) -> bool:
    """A file under the ``configs/`` folder verifiers 0.4's vf-eval writes beside ``traces.jsonl`` (no rollouts)."""
    for parent in path.parents:
        if parent.name == "configs":
            return (parent.parent / "traces.jsonl").is_file() or (parent.parent / "traces.jsonl.gz").is_file()
    return False


def folder_files(folder: Path) -> list[Path]:
    """The files of a folder to read as one table, in name order.

    Files that hold no rollouts are skipped: inspect_ai's manifests (``logs.json``, and
    ``eval-set.json`` in an ``inspect eval-set`` folder), Hugging Face ``save_to_disk``'s
    ``state.json`` / ``dataset_info.json`` beside its ``.arrow`` files, verifiers 0.4's ``configs/`` beside
    its ``traces.jsonl``, vf-eval's
    ``metadata.json`` beside its ``results.jsonl`` (or ``results.jsonl.gz``), hidden files and
    anything under a hidden folder (inspect_ai's ``.buffer/``), and lm-eval ``samples_*.jsonl`` files whose ``results_*.json`` is
    in the same folder (that file reads them, with the run's model).
    """
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name.lower().endswith(_FOLDER_SUFFIXES)
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts)
                   and p.name not in INSPECT_MANIFESTS
                   and not (p.name == "metadata.json" and ((p.parent / "results.jsonl").is_file()
                                                          or (p.parent / "results.jsonl.gz").is_file()))
                   and not _vf_run_config(p)
                   and not (p.name in _HF_META and (any(p.parent.glob("*.arrow")) or (p.parent / "dataset_dict.json").is_file())))
    if not files:
        raise InputFileError(
            f"folder {str(folder)!r} must hold .parquet, .jsonl, .json, .eval or .arrow files, got none. "
            "Point at a folder of logs or rows, or at one file.", path=str(folder))
    from whileai.table import _lmeval

    covered = {s for f in files if _LM_EVAL_RESULTS.match(plain_name(f)) for s in _lmeval.samples_of(f)}
    return [f for f in files if f not in covered]
