"""Read lm-evaluation-harness output (``--log_samples``) as rollout rows.

``samples_<task>_<date>.jsonl`` holds one line per document and filter (lm_eval
``EvaluationTracker.save_results_samples``): ``doc_id``, ``doc``, ``target``, ``arguments``
(the requests), ``resps`` (the model's answers), ``filtered_resps``, ``filter``, ``metrics`` (the
metric names) and one field per metric. The lm-eval task comes from the file name, so a document
is the task ``<lm-eval task>/<doc_id>``. A generation task run with ``repeats: N`` has N
responses per document: each is a rollout. lm-eval scores only the filtered response (the first
one, under the default filter), so a response gets the document's metric when its text is the
scored text and a null reward otherwise (a deterministic metric gives equal texts equal scores;
nothing else is known). A log-likelihood task (multiple choice) has one rollout whose reply is
the choice the model ranked first. The first metric is the reward and every metric is a marker
(another filter's as ``<metric>,<filter>``, lm-eval's own naming); ``frame(..., scorer=NAME)``
picks another.

``results_<date>.json`` reads the samples files of the same run beside it and adds the model
name; without them it holds only aggregates, which are not rollouts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import SchemaError
from whileai.table import _documents

__all__ = ["read_results", "read_samples", "samples_of"]


def _task_of(path: Path) -> str:
    """The task a samples file holds: from lm-eval's ``samples_<task>_<date>.jsonl`` name, else the file's stem.

    lm-eval 0.4.0-0.4.2 named the file ``<model args>_<task>.jsonl``, where neither part is
    delimited (task names hold ``_`` too), and a renamed file keeps no task: the stem keeps one
    file's documents apart from another's.
    """
    match = _documents.lm_eval_samples_name(path)
    return match.group("task") if match is not None else path.name.split(".", 1)[0]


#: Keys of an lm-eval sample that are not metric values (lm_eval/evaluator.py writes them).
_SAMPLE_KEYS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                          "doc_hash", "prompt_hash", "target_hash", "task_name"})


def _metric_names(sample: Mapping[str, Any]) -> list[str]:
    """The sample's metric names: its ``metrics`` list (lm-eval 0.4.3 on), else its numeric fields (0.4.0-0.4.2)."""
    listed = sample.get("metrics")
    if isinstance(listed, list):
        return [str(m) for m in listed]
    return [k for k, v in sample.items() if k not in _SAMPLE_KEYS and _number(v) is not None]


def _number(value: Any) -> float | None:
    number = _documents.number(value)
    if number is None and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return number


def _requests(arguments: Any) -> list[tuple[Any, Any]]:
    if not isinstance(arguments, Mapping):
        return []
    out = []
    for key in sorted(arguments, key=lambda k: int(str(k).rsplit("_", 1)[-1]) if str(k).rsplit("_", 1)[-1].isdigit() else 0):
        request = arguments[key]
        if isinstance(request, Mapping):
            out.append((request.get("arg_0"), request.get("arg_1")))
    return out


def _choice(requests: list[tuple[Any, Any]], resps: list[Any]) -> str | None:
    """The continuation the model ranked first (highest log-likelihood) in a multiple-choice doc."""
    scores = []
    for resp in resps:
        first = resp[0] if isinstance(resp, list) and resp and isinstance(resp[0], list) else resp
        scores.append(_number(first[0]) if isinstance(first, list) and first else None)
    if not scores or any(s is None for s in scores) or len(scores) != len(requests):
        return None
    best = max(range(len(scores)), key=lambda i: scores[i])  # type: ignore[arg-type, return-value]
    text = requests[best][1]
    return text.strip() if isinstance(text, str) else None


def read_samples(path: str | Path, *, model: str | None = None) -> list[dict[str, Any]]:
    """One lm-eval ``samples_<task>_<date>.jsonl`` file as row dicts.

    Returns:
        Rows with scenario_id (``<task>/<doc_id>``), task_id (the doc_id), rollout_index,
        rollout_id, prompt, final_text, reward, judge_name, judge_status, markers, target,
        metadata (the doc), model_version, lineage.
    """
    path = Path(path)
    task = _task_of(path)
    value, whole = _documents.first_record(path)
    lines = [v for v in value if isinstance(v, dict)] if whole and isinstance(value, list) \
        else _documents.iter_json_lines(path)
    docs: dict[str, list[dict[str, Any]]] = {}
    for number, line in enumerate(lines, 1):
        seen = docs.setdefault(str(line.get("doc_id")), [])
        if any(v.get("filter") == line.get("filter") for v in seen):  # lm-eval writes one line per doc and filter
            raise SchemaError(f"lm-eval samples must hold one line per doc_id and filter, got doc_id "
                              f"{line.get('doc_id')!r} (filter {line.get('filter')!r}) again on record {number} of "
                              f"{str(path)!r}. Two runs or a file concatenated twice: keep one run per file.",
                              path=str(path), row=number)
        seen.append(line)
    rows: list[dict[str, Any]] = []
    for doc_id, variants in docs.items():
        base = variants[0]
        names = [m for m in _metric_names(base) if m in base]
        markers: dict[str, float] = {}
        for variant in variants:
            for name in _metric_names(variant):
                value = _number(variant.get(name))
                if value is not None:
                    markers[str(name) if variant is base else f"{name},{variant.get('filter')}"] = value
        judge = names[0] if names else None
        score = markers.get(judge) if judge is not None else None
        requests = _requests(base.get("arguments"))
        prompt = requests[0][0] if requests and isinstance(requests[0][0], str) else None
        resps = base.get("resps") or []
        generated = bool(requests) and isinstance(requests[0][1], Mapping)
        filtered = base.get("filtered_resps")
        scored = filtered[0] if isinstance(filtered, list) and filtered else filtered
        if generated and resps and isinstance(resps[0], list):
            replies = [r if isinstance(r, str) else json.dumps(r) for r in resps[0]]
        else:
            replies = [_choice(requests, resps)]  # type: ignore[list-item]
        for index, reply in enumerate(replies):
            same = len(replies) == 1 or (isinstance(scored, str) and reply == scored)
            reward = score if same else None
            rows.append({
                "scenario_id": f"{task}/{doc_id}",
                "task_id": doc_id,
                "rollout_index": index,
                "rollout_id": f"{task}/{doc_id}#{index}",
                "prompt": prompt,
                "final_text": reply,
                "reward": reward,
                "judge_name": judge if reward is not None else None,
                "judge_status": "ok" if reward is not None else "missing_reward",
                "markers": (markers or None) if same else None,
                "target": None if base.get("target") is None else str(base["target"]),
                "metadata": base.get("doc") if isinstance(base.get("doc"), Mapping) else None,
                "model_version": model,
                "lineage": {"source": "lm_eval", "log": str(path), "task": task, "filter": str(base.get("filter"))},
            })
    return rows


def samples_of(results: Path) -> list[Path]:
    """The ``samples_<task>_<date>.jsonl`` files of the same run as ``results_<date>.json`` (either gzipped)."""
    date = _documents.plain_name(results)[len("results_"):-len(".json")]
    return sorted(p for p in results.parent.glob(f"samples_*_{date}.jsonl*")
                  if p.is_file() and _documents.plain_name(p).endswith(".jsonl"))


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """lm-eval ``results_<date>.json``: the rows of the run's samples files beside it, with its model name."""
    path = Path(path)
    data = _documents.load_document(path)
    files = samples_of(path)
    if not files:
        tasks = sorted(data.get("results") or {}) if isinstance(data, Mapping) else []
        raise SchemaError(
            f"file {str(path)!r} holds lm-eval aggregates only (tasks {tasks}), not one row per document, and no "
            "samples_<task>_<date>.jsonl of the same run is beside it. Re-run lm-eval with --log_samples and pass "
            "the output folder or the samples files.", path=str(path))
    config = data.get("config") if isinstance(data.get("config"), Mapping) else {}
    model = config.get("model") or data.get("model_name")
    args = config.get("model_args")
    if model and isinstance(args, str) and "pretrained=" in args:
        model = args.split("pretrained=", 1)[1].split(",", 1)[0]
    rows: list[dict[str, Any]] = []
    for file in files:
        rows.extend(read_samples(file, model=None if model is None else str(model)))
    return rows
