"""Write a Braintrust experiment export: scores from the braintrust SDK's own Eval, run offline.

    python make_export.py experiment.jsonl

``braintrust.Eval(..., no_send_logs=True)`` runs the task and the scorers locally (two trials of
three dataset records); nothing reaches a Braintrust server, so no server-side event is
created. Each result is then written as the experiment event an export gives back, with the
documented event fields (``id``, ``span_id``, ``root_span_id``, ``span_parents``, ``is_root``,
``experiment_id``, ``input``, ``output``, ``expected``, ``scores``, ``metadata``, ``error``,
``origin``): those fields are laid out by hand, their values come from the SDK's run.
"""

import json
import sys

from braintrust import Eval

RECORDS = [
    {"id": "rec-1", "input": "2+2", "expected": "4", "metadata": {"tier": "ordinary"}},
    {"id": "rec-2", "input": "capital of France", "expected": "Paris"},
    {"id": "rec-3", "input": "say please", "expected": "please"},
]
ANSWERS = {"2+2": "4", "capital of France": "Lyon"}


def exact(input, output, expected):
    return 1.0 if output == expected else 0.0


def polite(input, output, expected):
    return {"name": "polite", "score": 1.0 if "please" in (output or "") else 0.0}


def task(input):
    if input not in ANSWERS:
        raise RuntimeError("the model endpoint refused the request")
    return ANSWERS[input]


def main(out: str) -> None:
    result = Eval("whileai-fixture", data=lambda: [dict(r) for r in RECORDS], task=task, scores=[exact, polite],
                  trial_count=2, no_send_logs=True, experiment_name="fixture")
    lines = []
    for i, (record, item) in enumerate(zip([r for r in RECORDS for _ in range(2)],
                                           sorted(result.results, key=lambda r: str(r.input)))):
        span = f"span-{i:02d}"
        lines.append({
            "id": f"evt-{i:02d}", "span_id": span, "root_span_id": span, "span_parents": [], "is_root": True,
            "experiment_id": "exp-fixture", "project_id": "proj-fixture",
            "input": item.input, "output": item.output, "expected": item.expected,
            "scores": item.scores or {}, "metadata": item.metadata or {},
            "error": None if item.error is None else f"{type(item.error).__name__}: {item.error}",
            "origin": {"object_type": "dataset", "object_id": "ds-fixture", "id": record["id"]},
            "span_attributes": {"name": "eval", "type": "eval"},
        })
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("\n".join(json.dumps(line) for line in lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
