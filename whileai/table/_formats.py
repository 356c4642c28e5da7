"""Which tool wrote a file: its shape, told from its name and first record, before any row is read.

A plain JSON document (promptfoo's ``-o results.json``, lm-eval's ``results_*.json``, an
inspect_ai ``.json`` log, a JSON array of LangSmith runs) is told apart from JSONL here, so it never
reaches the line reader (whose first error would be "line 1 is not valid JSON"). Each shape has
its reader module; each returns row dicts for ``frame``. A gzip-compressed file (``.gz``) is told
and read as the file it holds: by its name without ``.gz`` and its first record decompressed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import InputFileError, SchemaError
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

__all__ = ["REFUSED", "RESPONSES_ITEM_TYPES", "SHAPES", "folder_files", "read", "refusal", "sniff"]

#: The shapes told apart, each with what wrote it (docs/table.md has a section per shape).
SHAPES: dict[str, str] = {
    "inspect": "an inspect_ai log (.eval or .json)",
    "lm_eval_samples": "lm-evaluation-harness samples_<task>_<date>.jsonl (--log_samples)",
    "lm_eval_results": "lm-evaluation-harness results_<date>.json",
    "promptfoo": "promptfoo eval -o results.json",
    "openai_evals": "an openai/evals JSONL event log",
    "langsmith": "a LangSmith run export",
    "braintrust": "a Braintrust experiment export",
    "verifiers": "vf-eval output: verifiers 0.4 traces.jsonl, 0.3 results.jsonl",
    "document": "one JSON document holding a list of rows",
    "openai_batch": "an OpenAI Batch API output file (refused: replies without their requests or a grade)",
    "openai_responses": "OpenAI Responses API items (refused: convert them to chat messages)",
}
#: Shapes that are recognised only to be refused with what they are and how to read them.
REFUSED = ("openai_batch", "openai_responses")

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
    """The shape of ``path`` (a key of :data:`SHAPES`), or None for plain rows (JSONL, JSON array of rows).

    A ``.gz`` file is told by its name without ``.gz`` and its decompressed first record; one
    that cannot be decompressed is left to the line reader, which says so.
    """
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
    if isinstance(value, Mapping):
        keys = set(value)
        if "eval" in keys and ("samples" in keys or "version" in keys):
            return "inspect"
        if _LM_EVAL_KEYS <= keys or (LM_EVAL_SAMPLES.match(plain_name(path)) and "doc_id" in keys):
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
        if isinstance(value.get("traces"), list) and isinstance(value.get("task"), Mapping) and "env" in keys:
            return "verifiers"  # a verifiers 0.4 traces.jsonl episode
        if _is_batch_output(value):
            return "openai_batch"
        if _is_responses_item(value):
            return "openai_responses"
        if whole and not ({"scenario_id", "task_id", "prompt", "messages"} & keys):
            return "document"
        return None
    if isinstance(value, list) and whole and value and isinstance(value[0], Mapping):
        if _LM_EVAL_KEYS <= set(value[0]):  # lm-eval 0.4.0-0.4.2 wrote --log_samples as one JSON array
            return "lm_eval_samples"
        if _is_langsmith(value[0]):
            return "langsmith"
        if _is_braintrust(value[0]):
            return "braintrust"
    return None


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
    """Read ``path`` of a known ``shape`` into row dicts (each reader's docstring says how).

    A shape of :data:`REFUSED` raises the SchemaError that says what the file is and how to
    read it. A ``.gz`` file is read as the file it holds.
    """
    if shape in REFUSED:
        raise refusal(shape, f"file {str(path)!r}", path=str(path))
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

        return _verifiers.read(path)
    if shape == "document":
        return _document_rows(path)
    raise SchemaError(f"shape must be one of {sorted(SHAPES)}, got {shape!r}. This is a bug in the reader table.")


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


def _document_rows(path: Path) -> list[dict[str, Any]]:
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
