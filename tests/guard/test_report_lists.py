"""The guard reports' row lists are typed and dump the JSON the dicts did (issue 41).

``RefusalReport.examples`` (RefusedRow), ``ContaminationReport.examples`` (ContaminatedRow) and
``GroundingReport.invented`` (InventedArgument). ``tests/data/blocks_pin/guard.json`` holds, per
scenario below, ``model_dump_json()``, ``to_json()``, ``repr(model_dump())`` and ``render()`` as
the code before the entries were typed wrote them (pinned by running these scenarios on it): refused
and clean replies, each contamination rule (same task, exact, near with coverage, semantic with
similarity, whose entries carry different keys), and invented and grounded arguments.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from whileai.guard import decontaminate, grounding_report, refusal_report
from whileai.guard._decontam import ContaminatedRow
from whileai.guard._grounding import InventedArgument
from whileai.guard._style import RefusedRow

PINNED = json.loads((Path(__file__).parents[1] / "data" / "blocks_pin" / "guard.json").read_text())
TRAIN = [{"task_id": "t1", "prompt": "What is the capital of France? Answer in one word please."},
         {"task_id": "t2", "prompt": "what is the capital of France?  Answer in one word please."},
         {"task_id": "t3", "prompt": "Name a prime number larger than ten."},
         {"task_id": "t4", "prompt": "Answer briefly. Question: What is the capital of France? Answer in one word please."},
         {"task_id": "e1", "prompt": "anything"}]
EVAL = [{"task_id": f"e{i}", "prompt": p} for i, p in enumerate(["cancel my hotel reservation for friday night",
        "what time does the pharmacy open on sunday", "how do I reset my router password"])]
REWORDED = [{"task_id": "t1", "prompt": "friday night hotel reservation cancel my"},
            {"task_id": "t2", "prompt": "teach me to bake sourdough bread at home"}]


def _replies(texts):
    return [{"scenario_id": f"t{i // 2}", "prompt": f"q{i}", "final_text": t} for i, t in enumerate(texts)]


def _call(prompt, args, reward, sid):
    msgs = [{"role": "user", "content": prompt},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "assistant", "content": "done"}]
    return {"prompt": prompt, "messages": msgs, "final_text": "done", "scenario_id": sid, "reward": reward}


def _bag(texts):
    """A word-count embedder over every text of the scenario (cosine of word bags)."""
    vocab = sorted({w for t in [*texts, *(e["prompt"] for e in EVAL), *(t["prompt"] for t in REWORDED)]
                    for w in t.lower().split()})
    return np.array([[t.lower().split().count(w) for w in vocab] for t in texts], dtype=float)


def _scenario(name: str):
    calls = [_call(f"Where is ORD-{i}?", {"order_id": f"ORD-{i}" if i % 4 else "ORD-000"}, float(i % 2), f"t{i}")
             for i in range(12)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "refusal": lambda: refusal_report(_replies(["I can't help with that.", "Sure thing.", "I'm unable to do it.", "Done."])),
            "refusal_none": lambda: refusal_report(_replies(["ok", "fine"])),
            "grounding": lambda: grounding_report(calls),
            "grounding_clean": lambda: grounding_report(calls[1:4]),
            "decontam": lambda: decontaminate(TRAIN, eval=[{"task_id": "e1", "prompt": TRAIN[0]["prompt"]}])[1],
            "decontam_semantic": lambda: decontaminate(REWORDED, eval=EVAL, embedder=_bag, similarity=0.9)[1],
        }[name]()


#: The float32 similarities of the semantic rule (embeddings, a dot product) move in their last bits
#: between NumPy releases; at the NumPy floor (make test-floor) the pins' numbers are compared at 6
#: significant digits, the text around them exactly. Elsewhere the pins are byte for byte.
_FLOOR_NUMPY = tuple(int(p) for p in np.__version__.split(".")[:2]) < (2, 1)


def _pinned_text(text: str) -> str:
    if not _FLOOR_NUMPY:
        return text
    return re.sub(r"-?\d+\.\d+(?:e-?\d+)?", lambda m: f"{float(m.group()):.6g}", text)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_report_dumps_what_it_did_and_loads_back(name):
    report = _scenario(name)
    pinned = {k: _pinned_text(v) for k, v in PINNED[name].items()}
    assert _pinned_text(report.model_dump_json()) == pinned["json"]
    assert _pinned_text(report.to_json(indent=None)) == pinned["to_json"]
    assert _pinned_text(repr(report.model_dump())) == pinned["repr"] and _pinned_text(report.render()) == pinned["render"]
    entries, kind = {"refusal": (getattr(report, "examples", []), RefusedRow),
                     "grounding": (getattr(report, "invented", []), InventedArgument),
                     "decontam": (getattr(report, "examples", []), ContaminatedRow)}[name.split("_")[0]]
    assert all(isinstance(e, kind) for e in entries)
    back = type(report).model_validate_json(PINNED[name]["json"])  # a stored report loads and dumps the same
    assert back.model_dump_json() == PINNED[name]["json"]


def test_the_entries_read_as_the_dicts_did():
    rows = _scenario("decontam").examples
    assert [(e["rule"], e.get("task"), "coverage" in e) for e in rows] == [
        ("exact", None, False), ("exact", None, False), ("near", None, True), ("same_task", "e1", False)]
    assert rows[3] == {"index": 4, "rule": "same_task", "field": "task", "task": "e1"}
    assert _scenario("grounding").invented[0] == {"argument": "get_order.order_id", "rows": 3, "example": "ORD-000"}
    assert [e["index"] for e in _scenario("refusal").examples] == [0, 2]
