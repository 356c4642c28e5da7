"""Read lm-evaluation-harness output (``--log_samples``) as rollout rows.

``samples_<task>_<date>.jsonl`` holds one line per document and filter (lm_eval
``EvaluationTracker.save_results_samples``): ``doc_id``, ``doc``, ``target``, ``arguments``
(the requests), ``resps`` (the model's answers), ``filtered_resps``, ``filter``, ``metrics`` (the
metric names) and one field per metric. The lm-eval task comes from the file name, so a document
is the task ``<lm-eval task>/<doc_id>``. A generation task run with ``repeats: N`` has N
responses per document, but lm-eval scores only the filtered one (``ConfigurableTask.
process_results`` takes ``results[0]``: the first response under the default ``none`` filter,
``take_first``). Where the metric is lm-eval's ``exact_match`` under the ``none`` filter, each
response is its own rollout scored with that metric and the task's options (``ignore_case``,
``ignore_punctuation``, ``ignore_numbers``, ``regexes_to_ignore`` from the run's
``results_<date>.json`` config; lm_eval ``api/metrics.py`` ``exact_match_hf_evaluate``), once the
score it gives the first response equals the one lm-eval recorded on every document. Otherwise
the file holds one score per document: each document is one rollout (the scored response) and a
warning says that pass@k and pass^k for k > 1 cannot be read from it. A log-likelihood task
(multiple choice) has one rollout whose reply is the choice the model ranked first. The first
metric is the reward and every metric is a marker (another filter's as ``<metric>,<filter>``,
lm-eval's own naming); ``frame(..., scorer=NAME)`` picks another. A document listed twice under
one filter (two runs joined into one file) is refused: it would merge two runs' rollouts.

``results_<date>.json`` reads the samples files of the same run beside it and adds the model
name; without them it holds only aggregates, which are not rollouts.
"""

from __future__ import annotations

import json
import re
import string
import warnings
from collections.abc import Mapping, Sequence
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


#: lm-eval's exact_match options (lm_eval ``api/metrics.py`` ``exact_match_hf_evaluate``).
_EXACT_MATCH_OPTIONS = ("regexes_to_ignore", "ignore_case", "ignore_punctuation", "ignore_numbers")


def exact_match(prediction: str, target: str, options: Mapping[str, Any]) -> float:
    """lm-eval's ``exact_match`` of one response: 1.0 when it equals the target after the options, else 0.0.

    The steps and their order follow lm_eval ``api/metrics.py`` ``exact_match_hf_evaluate``
    (ported there from Hugging Face ``evaluate``): each of ``regexes_to_ignore`` removed, then
    lower case, then punctuation, then digits removed, from both texts.

    Examples:
        >>> exact_match("Paris.", "paris", {"ignore_case": True, "ignore_punctuation": True})
        1.0
        >>> exact_match("Paris", "paris", {})
        0.0
    """
    texts = [prediction, target]
    for pattern in options.get("regexes_to_ignore") or ():
        texts = [re.sub(pattern, "", t) for t in texts]
    if options.get("ignore_case"):
        texts = [t.lower() for t in texts]
    if options.get("ignore_punctuation"):
        texts = [t.translate(str.maketrans("", "", string.punctuation)) for t in texts]
    if options.get("ignore_numbers"):
        texts = [t.translate(str.maketrans("", "", string.digits)) for t in texts]
    return 1.0 if texts[0] == texts[1] else 0.0


def _metric_options(path: Path, task: str, metric: str) -> dict[str, Any] | None:
    """The options the run's config gives ``metric`` of ``task`` (``results_<date>.json`` beside the file).

    ``{}`` when no config is beside the file (lm-eval's defaults); None when the config gives the
    metric an option this reader does not apply, so its per-response scores cannot be recomputed.
    """
    match = _documents.lm_eval_samples_name(path)
    date = match.group("date") if match is not None else None
    config: Any = None
    if date:
        for name in (f"results_{date}.json", f"results_{date}.json.gz"):
            if (path.parent / name).is_file():
                data = _documents.load_document(path.parent / name)
                config = (data.get("configs") or {}).get(task) if isinstance(data, Mapping) else None
                break
    if not isinstance(config, Mapping):
        return {}
    for entry in config.get("metric_list") or ():
        if isinstance(entry, Mapping) and entry.get("metric") == metric:
            options = {k: v for k, v in entry.items() if k not in ("metric", "aggregation", "higher_is_better")}
            return options if set(options) <= set(_EXACT_MATCH_OPTIONS) else None
    return {}


def _repeat_scores(variants: Sequence[Mapping[str, Any]], replies: list[str], judge: str | None,
                   options: dict[str, Any] | None) -> list[float] | None:
    """Each response's own score, where lm-eval's metric can be applied to it as lm-eval did; else None.

    Only ``exact_match`` under the ``none`` filter (which scores the first response as it is),
    with options this reader applies, and only when its score of the first response is the one
    lm-eval recorded.
    """
    base = variants[0]
    target = base.get("target")
    recorded = _number(base.get(judge)) if judge else None
    if judge != "exact_match" or options is None or base.get("filter") != "none" or not isinstance(target, str) \
            or recorded is None or not replies:
        return None
    scores = [exact_match(reply, target, options) for reply in replies]
    return scores if scores[0] == recorded else None


def read_samples(path: str | Path, *, model: str | None = None) -> list[dict[str, Any]]:
    """One lm-eval ``samples_<task>_<date>.jsonl`` file as row dicts.

    Returns:
        Rows with scenario_id (``<task>/<doc_id>``), task_id (the doc_id), rollout_index,
        rollout_id, prompt, final_text, reward, judge_name, judge_status, markers, target,
        metadata (the doc), model_version, lineage.

    Raises:
        SchemaError: A document is listed twice under one filter.
    """
    path = Path(path)
    task = _task_of(path)
    value, whole = _documents.first_record(path)
    lines = [v for v in value if isinstance(v, dict)] if whole and isinstance(value, list) \
        else _documents.iter_json_lines(path)
    docs: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        variants = docs.setdefault(str(line.get("doc_id")), [])
        if any(v.get("filter") == line.get("filter") for v in variants):
            raise SchemaError(
                f"file {str(path)!r} lists doc_id {line.get('doc_id')!r} more than once under filter "
                f"{line.get('filter')!r}: lm-eval writes one line per document and filter, so this file joins "
                "several runs (or a task with repeated doc ids), and their rollouts would merge. Pass each run's "
                "samples file on its own (one output folder per run).", path=str(path))
        variants.append(line)
    options_by_metric: dict[str, dict[str, Any] | None] = {}
    parsed: list[tuple[str, list[dict[str, Any]], str | None, dict[str, float], list[str], Any, list[float] | None]] = []
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
        requests = _requests(base.get("arguments"))
        resps = base.get("resps") or []
        generated = bool(requests) and isinstance(requests[0][1], Mapping)
        filtered = base.get("filtered_resps")
        scored = filtered[0] if isinstance(filtered, list) and filtered else filtered
        if generated and resps and isinstance(resps[0], list):
            replies = [r if isinstance(r, str) else json.dumps(r) for r in resps[0]]
        else:
            replies = [_choice(requests, resps)]  # type: ignore[list-item]
        own = None
        if len(replies) > 1:
            if judge is not None and judge not in options_by_metric:
                options_by_metric[judge] = _metric_options(path, task, judge)
            own = _repeat_scores(variants, replies, judge, options_by_metric.get(judge) if judge else None)
        parsed.append((doc_id, variants, judge, markers, replies, scored, own))
    # every repeated document scored on its own, or none: the file's tasks keep one group size
    per_repeat = all(own is not None for *_, replies, _, own in parsed if len(replies) > 1)
    unscored = 0
    rows: list[dict[str, Any]] = []
    for doc_id, variants, judge, markers, replies, scored, own in parsed:
        base = variants[0]
        requests = _requests(base.get("arguments"))
        prompt = requests[0][0] if requests and isinstance(requests[0][0], str) else None
        score = markers.get(judge) if judge is not None else None
        rewards: list[float | None] = [score]
        if len(replies) > 1 and per_repeat and own is not None:
            rewards = list(own)
        elif len(replies) > 1:  # one score per document: the scored response alone is a rollout
            unscored += len(replies) - 1
            replies = [scored if isinstance(scored, str) else replies[0]]
        for index, (reply, reward) in enumerate(zip(replies, rewards)):
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
                "markers": (markers or None) if index == 0 else ({judge: reward} if judge and reward is not None
                                                                 else None),
                "target": None if base.get("target") is None else str(base["target"]),
                "metadata": base.get("doc") if isinstance(base.get("doc"), Mapping) else None,
                "model_version": model,
                "lineage": {"source": "lm_eval", "log": str(path), "task": task, "filter": str(base.get("filter"))},
            })
    if unscored:
        warnings.warn(
            f"file {str(path)!r} holds one score per document for lm-eval task {task!r} (run with repeats): lm-eval "
            f"scored only the filtered response, and its metric cannot be applied to the other {unscored} responses "
            "here (only exact_match under the 'none' filter can), so each document is one rollout and pass@k and "
            "pass^k for k > 1 cannot be read from this file. Score every response (a metric per repeat) to get them.",
            UserWarning, stacklevel=2)
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
