"""Read inspect_ai eval logs (``.eval`` zip and ``.json``) as rollout rows.

A sample of one inspect task is a task (``scenario_id`` = ``<inspect task>/<sample id>``, so two
tasks whose samples are both numbered 1, 2, 3 stay six tasks), its epochs are the rollouts
(``rollout_index`` = epoch - 1), the chosen scorer's value is the reward, and the sample's
messages and tool calls become our conversation. The log format is inspect_ai's documented
``EvalLog`` / ``EvalSample`` (inspect_ai ``log/_log.py``); the reader needs no inspect_ai install
for ``.json`` logs or deflate-compressed ``.eval`` logs, and the ``zstandard`` package (which
inspect_ai installs) for the zstd-compressed ``.eval`` logs recent inspect_ai versions write.

Score values map onto a reward in [0, 1]: the letter grades C (correct) = 1, I (incorrect) = 0,
P (partial) = 0.5, N (no answer) = 0; ``True``/``False`` = 1/0; numbers and numeric strings are
kept; anything else leaves the reward null. The other scorers' values land on ``markers`` under
the scorer's name; a dict-valued score (``{"correct": "C", "polite": 1}``) lands as one marker per
key, ``<scorer>.<key>``, and ``scorer="<scorer>.<key>"`` makes one key the reward (a dict
scorer of several keys named alone is refused, its keys listed: it is no single reward). A tool that
raised keeps its error text as the tool message; the tool definitions the model saw become
``tools``; a sample that errored is an agent or harness error (``judge_status`` ``agent_error``),
not a judge failure.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import SchemaError, missing_extra
from whileai.table import _documents

__all__ = ["LETTER_GRADES", "read_inspect_log", "score_to_reward"]

#: inspect_ai's letter grades (scorer/_metric.py: CORRECT, INCORRECT, PARTIAL, NOANSWER) as rewards.
LETTER_GRADES: dict[str, float] = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}

_ATTACHMENT = "attachment://"
_ZSTD_METHOD = 93  # ZIP compression method id of Zstandard
_FINISH = {"stop": "stop", "max_tokens": "length", "model_length": "length", "tool_calls": "tool",
           "content_filter": "content_filter", "unknown": None}


def read_inspect_log(path: str | os.PathLike[str], *, scorer: str | None = None) -> list[dict[str, Any]]:
    """Read an inspect_ai eval log into rollout row dicts, one per sample epoch.

    Args:
        path: A ``.eval`` log (zip) or a ``.json`` log.
        scorer: The scorer whose value is the reward: a scorer's name, or ``<scorer>.<key>`` for
            one key of a dict-valued score. Default: the log's headline score
            (``results.scores[0]``), else the first scorer on each sample.

    Returns:
        Row dicts for ``table.frame``: scenario_id, sample_id, rollout_index, rollout_id, prompt,
        messages, tools, reward, judge_name, judge_status, reason, judge_meta, markers,
        truncated, finish_reason, model_version, target (a list of strings), metadata, lineage.

    Raises:
        SchemaError: The file is not an inspect_ai log, a sample cannot be read, or ``scorer``
            names no scorer of the log, or names a dict-valued scorer of several keys without
            its ``.<key>``.

    Examples:
        >>> import json, tempfile, os
        >>> log = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"},
        ...        "samples": [{"id": 1, "epoch": 1, "input": "hi", "target": "x",
        ...                     "messages": [{"role": "user", "content": "hi"},
        ...                                  {"role": "assistant", "content": "x"}],
        ...                     "scores": {"match": {"value": "C"}}}]}
        >>> p = os.path.join(tempfile.mkdtemp(), "log.json")
        >>> _ = open(p, "w").write(json.dumps(log))
        >>> row = read_inspect_log(p)[0]
        >>> row["scenario_id"], row["rollout_index"], row["reward"]
        ('t/1', 0, 1.0)
    """
    path = Path(path)
    source = f"file {str(path)!r}"
    if path.name.lower().endswith(".eval"):
        header, samples = _read_eval_zip(path, source)
    else:
        header, samples = _read_json_log(path, source)
    spec: Mapping[str, Any] = header["eval"] if isinstance(header.get("eval"), Mapping) else {}
    chosen = _headline_scorer(header)
    if scorer:
        whole = any(isinstance(x.get("scores"), Mapping) and scorer in x["scores"] for x in samples)
        chosen = (scorer, None) if whole else _parse_scorer(scorer)
        _check_scorer(chosen, samples, source, scorer)
    order = {str(s): i for i, s in enumerate((spec.get("dataset") or {}).get("sample_ids") or [])}
    samples.sort(key=lambda s: (order.get(str(s.get("id")), len(order)), str(s.get("id")), _int(s.get("epoch"), 1)))
    lineage = {k: v for k, v in {
        "source": "inspect_ai",
        "log": str(path),
        "task": spec.get("task"),
        "task_version": None if spec.get("task_version") is None else str(spec.get("task_version")),
        "run_id": spec.get("run_id"),
        "eval_id": spec.get("eval_id"),
    }.items() if v is not None}
    task = str(spec.get("task") or path.stem)
    return [_row(sample, i, chosen, spec, lineage, source, task) for i, sample in enumerate(samples)]


# ------------------------------------------------------------------------------------------
# files
# ------------------------------------------------------------------------------------------


def _read_json_log(path: Path, source: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        with _documents.open_text(path, encoding="utf-8") as handle:  # a .json.gz log through gzip
            data = json.load(handle)
    except _documents.JSON_FILE_ERRORS as exc:
        raise SchemaError(f"{source} is not a readable inspect_ai JSON log ({exc}). "
                          "Pass the .json or .eval file inspect_ai wrote.", path=str(path)) from exc
    if not isinstance(data, dict) or "eval" not in data:
        raise SchemaError(f"{source} must be an inspect_ai log (an object with 'eval' and 'samples'), "
                          f"got keys {sorted(data)[:8] if isinstance(data, dict) else type(data).__name__}. "
                          "Pass the log inspect_ai wrote.", path=str(path))
    samples = data.get("samples") or []
    if not isinstance(samples, list):
        raise SchemaError(f"{source}: 'samples' must be a list, got {type(samples).__name__}.", path=str(path))
    return data, [s for s in samples if isinstance(s, dict)]


def _read_eval_zip(path: Path, source: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if "header.json" in names:
                header = _member_json(archive, path, "header.json", source)
            elif "_journal/start.json" in names:  # a log still being written
                header = _member_json(archive, path, "_journal/start.json", source)
            else:
                raise SchemaError(f"{source} is a zip without header.json, so not an inspect_ai .eval log. "
                                  "Pass the .eval file inspect_ai wrote.", path=str(path))
            samples = [_member_json(archive, path, n, source) for n in names
                       if n.startswith("samples/") and n.endswith(".json")]
    except zipfile.BadZipFile as exc:
        raise SchemaError(f"{source} is not a readable .eval log ({exc}). Pass the .eval file inspect_ai wrote.",
                          path=str(path)) from exc
    return header, samples


def _member_json(archive: zipfile.ZipFile, path: Path, name: str, source: str) -> dict[str, Any]:
    info = archive.getinfo(name)
    try:
        raw = _zstd_member(path, info) if info.compress_type == _ZSTD_METHOD else archive.read(name)
        value = json.loads(raw)
    except (ValueError, OSError, zipfile.BadZipFile, NotImplementedError) as exc:
        raise SchemaError(f"{source}: member {name!r} cannot be read ({exc}). The log may be damaged.",
                          path=str(path)) from exc
    if not isinstance(value, dict):
        raise SchemaError(f"{source}: member {name!r} must be a JSON object, got {type(value).__name__}.",
                          path=str(path))
    return value


def _zstd_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    """Decompress a Zstandard zip member (method 93), which the standard zipfile cannot read."""
    try:
        import zstandard
    except ImportError as exc:
        raise missing_extra("zstandard", "inspect", "Reading a zstd-compressed inspect_ai .eval log") from exc
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)
        if local[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for {info.filename!r}")
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        handle.seek(info.header_offset + 30 + name_len + extra_len)
        compressed = handle.read(info.compress_size)
    reader = zstandard.ZstdDecompressor().stream_reader(compressed, read_across_frames=True)
    return bytes(reader.read())


# ------------------------------------------------------------------------------------------
# samples -> rows
# ------------------------------------------------------------------------------------------


def _parse_scorer(text: str) -> tuple[str, str | None]:
    """``"name"`` or ``"name.key"`` as (scorer, key); a scorer whose own name has a dot wins later."""
    name, _, key = text.partition(".")
    return (name, key or None) if key else (text, None)


def _check_scorer(chosen: tuple[str, str | None] | None, samples: list[dict[str, Any]], source: str,
                  asked: str) -> None:
    """Raise unless ``asked`` names a scorer (or a scorer's key) on at least one sample.

    A dict-valued scorer of several keys (``{"correct": "C", "polite": 1}``) is no reward by itself:
    it is refused with its keys, ``<scorer>.<key>``, as the choices (one key of its own would do).
    """
    plain: set[str] = set()
    keyed: dict[str, set[str]] = {}
    for sample in samples:
        scores = sample.get("scores")
        if not isinstance(scores, Mapping):
            continue
        for name, score in scores.items():
            value = score.get("value") if isinstance(score, Mapping) else None
            if isinstance(value, Mapping):
                keyed.setdefault(str(name), set()).update(str(k) for k in value)
            else:
                plain.add(str(name))
    several = {name: keys for name, keys in keyed.items() if len(keys) > 1}
    if chosen is not None and chosen[1] is None and chosen[0] in several:
        choices = sorted(f"{chosen[0]}.{k}" for k in several[chosen[0]])
        raise SchemaError(f"scorer must name one key of the dict-valued scorer {chosen[0]!r}, one of {choices}, "
                          f"got {asked!r}. Pass one of those (<scorer>.<key>); every key is on markers either way.",
                          path=source)
    dotted = {f"{name}.{k}" for name, keys in keyed.items() for k in keys}
    one_key = {name for name, keys in keyed.items() if len(keys) == 1}  # its one key is the reward
    if chosen is not None and (f"{chosen[0]}.{chosen[1]}" in dotted if chosen[1] is not None
                               else chosen[0] in plain | one_key):
        return
    raise SchemaError(f"scorer must be one of the log's scorers {sorted(plain | dotted)}, got {asked!r}. "
                      "Pass one of those (a dict-valued score as <scorer>.<key>).", path=source)


def _headline_scorer(header: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """The log's first reported score as (scorer, key): a dict-valued scorer reports one entry per key."""
    results = header.get("results")
    if isinstance(results, Mapping):
        scores = results.get("scores")
        if isinstance(scores, list) and scores and isinstance(scores[0], Mapping):
            name = scores[0].get("name")
            owner = scores[0].get("scorer") or name
            if owner is None:
                return None
            key = None if name in (None, owner) else str(name)
            return str(owner), key
    return None


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def score_to_reward(value: Any) -> float | None:
    """An inspect_ai score value as a reward: C/I/P/N letters, booleans and numbers.

    Examples:
        >>> [score_to_reward(v) for v in ("C", "I", "P", "N", True, 0.25, "0.7", [1], None)]
        [1.0, 0.0, 0.5, 0.0, 1.0, 0.25, 0.7, None, None]
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        letter = value.strip()
        if letter.upper() in LETTER_GRADES:
            return LETTER_GRADES[letter.upper()]
        try:
            return float(letter)
        except ValueError:
            return None
    return None


def _resolve(value: Any, attachments: Mapping[str, Any]) -> Any:
    """Replace ``attachment://<hash>`` strings with the attachment's content, at any depth."""
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            return attachments.get(value[len(_ATTACHMENT):], value)
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _content(content: Any) -> tuple[Any, str | None]:
    """Message content: text parts joined; reasoning parts split out; other parts kept as parts."""
    if not isinstance(content, list):
        return content, None
    reasoning = [str(p.get("reasoning", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "reasoning"]
    rest = [p for p in content if not (isinstance(p, Mapping) and p.get("type") == "reasoning")]
    if all(isinstance(p, Mapping) and p.get("type") == "text" for p in rest):
        text: Any = "".join(str(p.get("text", "")) for p in rest)
    else:
        text = rest
    return text, ("\n".join(reasoning) if reasoning else None)


def _message(message: Any) -> dict[str, Any]:
    if not isinstance(message, Mapping):
        return {"role": "user", "content": None if message is None else str(message)}
    content, reasoning = _content(message.get("content"))
    out: dict[str, Any] = {"role": message.get("role") or "user", "content": content}
    if reasoning:
        out["reasoning_content"] = reasoning
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [
            {"id": c.get("id"), "type": "function",
             "function": {"name": c.get("function"), "arguments": c.get("arguments")}}
            if isinstance(c, Mapping) else c
            for c in calls
        ]
    if message.get("tool_call_id") is not None:
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("role") == "tool" and message.get("function") is not None:
        out["name"] = message["function"]
    error = message.get("error")
    if error is not None:
        out["error"] = error
        if message.get("role") == "tool" and not out["content"]:
            # what the model was shown: inspect sends a raised tool's message as "Error: ..."
            text = error.get("message") if isinstance(error, Mapping) else str(error)
            out["content"] = f"Error: {text}"
    return out


def _tools(sample: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The tool definitions the model was given (model events' ``tools``), in the OpenAI tools shape."""
    seen: dict[str, dict[str, Any]] = {}
    for event in sample.get("events") or []:
        if not isinstance(event, Mapping) or event.get("event") != "model":
            continue
        for info in event.get("tools") or []:
            if isinstance(info, Mapping) and info.get("name") and str(info["name"]) not in seen:
                function = {"name": str(info["name"]), "description": info.get("description") or "",
                            "parameters": info.get("parameters") or {"type": "object", "properties": {}}}
                seen[str(info["name"])] = {"type": "function", "function": function}
    return list(seen.values()) or None


def _score_parts(scores: Mapping[str, Any]) -> dict[str, float]:
    """Every score as markers: a plain value under the scorer's name, a dict value as ``<scorer>.<key>``."""
    out: dict[str, float] = {}
    for name, score in scores.items():
        value = score.get("value") if isinstance(score, Mapping) else None
        if isinstance(value, Mapping):
            for key, part in value.items():
                reward = score_to_reward(part)
                if reward is not None:
                    out[f"{name}.{key}"] = reward
        else:
            reward = score_to_reward(value)
            if reward is not None:
                out[str(name)] = reward
    return out


def _target(value: Any) -> list[str] | None:
    """Inspect's ``str | list[str]`` target as one type: a list of strings."""
    if value is None:
        return None
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def _row(sample: Mapping[str, Any], index: int, chosen: tuple[str, str | None] | None, spec: Mapping[str, Any],
         lineage: Mapping[str, Any], source: str, task: str) -> dict[str, Any]:
    if sample.get("id") is None:
        raise SchemaError(f"{source}: sample {index} has no id, so it belongs to no task. "
                          "Re-run the eval with sample ids, or pass rows with scenario_id.", row=index)
    attachments = sample.get("attachments") or {}
    sample_id = str(sample["id"])
    epoch = _int(sample.get("epoch"), 1)
    messages = [_message(_resolve(m, attachments)) for m in sample.get("messages") or []]
    raw_input = _resolve(sample.get("input"), attachments)
    if not messages:
        messages = ([_message(m) for m in raw_input] if isinstance(raw_input, list)
                    else [{"role": "user", "content": raw_input}])
        completion = (sample.get("output") or {}).get("completion")
        if completion:
            messages.append({"role": "assistant", "content": completion})
    prompt = raw_input if isinstance(raw_input, str) else next(
        (m["content"] for m in messages if m["role"] == "user" and isinstance(m["content"], str)), None)
    scores: Mapping[str, Any] = sample["scores"] if isinstance(sample.get("scores"), Mapping) else {}
    name, key = chosen if chosen is not None and chosen[0] in scores else (next(iter(scores), None), None)
    score = scores.get(name) if name is not None else None
    value = score.get("value") if isinstance(score, Mapping) else None
    if isinstance(value, Mapping) and key is None and len(value) == 1:
        key = str(next(iter(value)))
    reward = score_to_reward(value.get(key) if isinstance(value, Mapping) and key is not None else value)
    judge = None if name is None else (f"{name}.{key}" if key is not None and isinstance(value, Mapping) else name)
    error = sample.get("error")
    if error is not None and reward is None:
        status = "agent_error"  # the sample itself failed (model, tool or harness), not its scorer
    elif score is None:
        status = "missing_reward"
    else:
        status = "ok" if reward is not None else "invalid_result"
    markers = {n: r for n, r in _score_parts(scores).items() if n != judge}
    meta: dict[str, Any] = {}
    if isinstance(score, Mapping):
        meta.update({k: score[k] for k in ("value", "answer", "metadata") if score.get(k) is not None})
    explanations = {str(n): s["explanation"] for n, s in scores.items()
                    if n != name and isinstance(s, Mapping) and s.get("explanation")}
    if explanations:
        meta["explanations"] = explanations
    if error is not None:
        meta["error"] = error.get("message") if isinstance(error, Mapping) else str(error)
    output: Mapping[str, Any] = sample["output"] if isinstance(sample.get("output"), Mapping) else {}
    choices = output.get("choices") or []
    stop = output.get("stop_reason") or (choices[0].get("stop_reason") if choices and isinstance(choices[0], Mapping)
                                         else None)
    limit = sample.get("limit")
    row: dict[str, Any] = {
        "scenario_id": f"{task}/{sample_id}",
        "sample_id": sample_id,
        "rollout_index": epoch - 1,
        "rollout_id": sample.get("uuid") or f"{task}/{sample_id}#{epoch - 1}",
        "prompt": prompt,
        "messages": messages,
        "tools": _tools(sample),
        "reward": reward,
        "judge_name": judge,
        "judge_status": status,
        "reason": score.get("explanation") if isinstance(score, Mapping) else None,
        "judge_meta": meta or None,
        "markers": markers or None,
        "truncated": bool(limit) or stop in ("max_tokens", "model_length"),
        "finish_reason": "error" if error is not None else _FINISH.get(str(stop), None) if stop else None,
        "model_version": output.get("model") or spec.get("model"),
        "target": _target(sample.get("target")),
        "metadata": sample.get("metadata") or None,
        "lineage": dict(lineage),
    }
    return row
