"""Read promptfoo's ``promptfoo eval -o results.json`` as rollout rows.

The file is promptfoo's output (``version: 3``): ``results.results`` holds one
``EvaluateResult`` per test case, prompt and provider, and per repeat (``--repeat N`` writes the
test case N times). A test case under one prompt is a task: its ``testCase.description`` (else
``t-`` plus a hash of its vars), with ``/t-<hash of its vars>`` added when several test cases
share the description, and ``/p<promptIdx>`` when the eval has several prompts; its repeats and
providers are the rollouts (``model_version`` is the provider id, so filter on it
to compare providers). ``success`` (promptfoo's PASS or FAIL, which weighs the assertions and
the test's ``threshold``) is the reward, 1.0 or 0.0, so pass@k and pass^k count what promptfoo
counts; ``score`` (the weighted assertion score in [0, 1], which can be 0.5 on a FAILED test) is
kept as the ``score`` marker beside ``namedScores``, and ``gradingResult.reason`` is the reason.
A result that failed with an error (``failureReason`` 2, or ``error`` set without a grade) is
an agent or provider error, not a grading failure: it has no reward, so it is left out of the
graded rows and counted apart, as promptfoo's ``stats.errors`` counts it beside
``successes`` and ``failures`` (promptfoo ``src/evaluator.ts``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.errors import SchemaError
from whileai.table import _documents
from whileai.table.normalize import dumps

__all__ = ["read_promptfoo"]

#: promptfoo's ResultFailureReason.ERROR (src/types: NONE 0, ASSERT 1, ERROR 2).
_FAILURE_ERROR = 2


def _vars_of(result: Mapping[str, Any]) -> Mapping[str, Any]:
    return _documents.as_map(result.get("vars")) or _documents.as_map(_documents.as_map(result.get("testCase")).get("vars"))


def _test_name(result: Mapping[str, Any]) -> tuple[str, str]:
    """A result's test case: its description (else its vars hash), and ``t-`` plus its vars hash.

    The vars, not ``testIdx``, identify a test case: promptfoo numbers each ``--repeat`` copy with
    its own ``testIdx``, while the copies and the providers of one test share its vars.
    """
    vars_hash = "t-" + hashlib.sha256(dumps(_vars_of(result)).encode()).hexdigest()[:12]
    description = _documents.as_map(result.get("testCase")).get("description")
    return (str(description) if description else vars_hash), vars_hash


def _passed(result: Mapping[str, Any], grading: Mapping[str, Any]) -> float | None:
    """The verdict promptfoo gave a graded result, as a reward: ``success`` (else ``gradingResult.pass``), 1.0 or 0.0."""
    verdict = result.get("success")
    if not isinstance(verdict, bool):
        verdict = grading.get("pass")
    return (1.0 if verdict else 0.0) if isinstance(verdict, bool) else None


def read_promptfoo(path: str | Path) -> list[dict[str, Any]]:
    """Read promptfoo eval results as row dicts.

    Returns:
        Rows with scenario_id, rollout_index, rollout_id, prompt, final_text, reward,
        judge_name, judge_status, reason, markers, finish_reason, model_version, metadata
        (the test's vars and metadata), lineage.
    """
    path = Path(path)
    data = _documents.load_document(path)
    block = data.get("results") if isinstance(data, Mapping) else None
    results = block.get("results") if isinstance(block, Mapping) else None
    if not isinstance(results, list):
        raise SchemaError(f"file {str(path)!r} must be promptfoo output with results.results, got keys "
                          f"{sorted(data)[:8] if isinstance(data, Mapping) else type(data).__name__}. "
                          "Pass the file `promptfoo eval -o results.json` wrote.", path=str(path))
    results = [r for r in results if isinstance(r, Mapping)]
    many_prompts = len({r.get("promptIdx") for r in results}) > 1
    names = [_test_name(r) for r in results]
    tests_named: dict[str, set[str]] = {}
    for name, vars_hash in names:
        tests_named.setdefault(name, set()).add(vars_hash)
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for result, (name, vars_hash) in zip(results, names):
        test = _documents.as_map(result.get("testCase"))
        variables = _vars_of(result)
        if len(tests_named[name]) > 1:
            name = f"{name}/{vars_hash}"  # several test cases share one description: their vars tell them apart
        key = f"{name}/p{result.get('promptIdx', 0)}" if many_prompts else name
        keys.append(key)
        prompt = _documents.as_map(result.get("prompt"))
        response = _documents.as_map(result.get("response"))
        grading = _documents.as_map(result.get("gradingResult"))
        provider = result.get("provider")
        provider_id = provider.get("id") if isinstance(provider, Mapping) else provider
        errored = result.get("failureReason") == _FAILURE_ERROR or bool(result.get("error") and not grading)
        reward = None if errored else _passed(result, grading)
        markers = {str(k): v for k, v in ((k, _documents.number(v)) for k, v in (result.get("namedScores") or {}).items())
                   if v is not None}
        score = _documents.number(result.get("score"))
        if not errored and score is not None:
            markers.setdefault("score", score)
        output = response.get("output")
        row: dict[str, Any] = {
            "scenario_id": key,
            "rollout_id": result.get("id"),
            "prompt": prompt.get("raw") if isinstance(prompt.get("raw"), str) else _documents.text_of(prompt.get("raw")),
            "final_text": output if isinstance(output, str) or output is None else dumps(output),
            "reward": reward,
            "judge_name": "promptfoo" if reward is not None else None,
            "judge_status": "agent_error" if errored else ("ok" if reward is not None else "missing_reward"),
            "reason": grading.get("reason") or (result.get("error") if errored else None),
            "markers": markers or None,
            "finish_reason": "error" if errored else None,
            "model_version": None if provider_id is None else str(provider_id),
            "metadata": {"vars": dict(variables), **(test.get("metadata") or {})} or None,
            "lineage": {k: str(v) for k, v in {"source": "promptfoo", "log": str(path),
                                               "eval_id": data.get("evalId"),
                                               "prompt_label": prompt.get("label")}.items() if v is not None},
        }
        if errored:
            row["judge_meta"] = {"error": str(result.get("error") or grading.get("reason"))}
        rows.append(row)
    for row, index in zip(rows, _documents.rollout_indices(keys)):
        row["rollout_index"] = index
    return rows
