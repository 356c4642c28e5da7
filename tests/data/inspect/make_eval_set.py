"""Write a real ``inspect eval-set`` folder under tests/data/inspect/eval_set/ (offline, mockllm model).

Run with inspect-ai 0.3.285 installed (see README.md here):

    python tests/data/inspect/make_eval_set.py tests/data/inspect/eval_set

Two tasks of three samples, two epochs each, run by ``inspect_ai.eval_set``, which writes its
``eval-set.json`` manifest (and ``logs.json``) beside the logs; ``counts.json`` keeps what
inspect's own log reader says of the folder (samples and tasks per log), for the test to compare.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from inspect_ai import Task, eval_set
from inspect_ai.dataset import Sample
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


def task(name: str) -> Task:
    return Task(name=name, dataset=[Sample(id=i, input=f"{name} {i}", target="Default" if i != 2 else "nope")
                                    for i in (1, 2, 3)],
                solver=generate(), scorer=includes(), epochs=2)


def reply() -> ModelOutput:
    # token usage given up front, so mockllm does not fetch a tokenizer (offline)
    output = ModelOutput.from_content(model="mockllm/model", content="Default answer")
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def main(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    model = get_model("mockllm/model", custom_outputs=[reply() for _ in range(12)])
    ok, logs = eval_set([task("alpha"), task("beta")], log_dir=str(out), model=model, display="none",
                        log_format="eval", max_samples=1)
    assert ok, logs
    counts = {"logs": {}, "files": sorted(p.name for p in out.iterdir())}
    for info in list_eval_logs(str(out)):
        log = read_eval_log(info)
        counts["logs"][log.eval.task] = {"samples": len(log.samples or []), "dataset": log.eval.dataset.samples}
    (out.parent / "eval_set_counts.json").write_text(json.dumps(counts, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
