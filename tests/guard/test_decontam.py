"""decontaminate: each rule against a plain reference, priority order, sources, embedder errors."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from whileai.errors import ArgumentError, ContaminationError
from whileai.guard import decontaminate


def test_rules_in_priority_order_each_row_once():
    sentence = "please check the status of my blue running shoes order from last week right now"
    train = [
        {"task_id": "e1", "prompt": "a different wording of eval task one"},          # same task
        {"task_id": "t2", "prompt": "Please  check the status of my blue running shoes order from last week right now"},  # exact
        {"task_id": "t3", "prompt": sentence + " thanks"},                            # near: all 15 eval words covered
        {"task_id": "t4", "prompt": "please check the status of my order"},           # under 8 words, not verbatim
        {"task_id": "t5", "prompt": "completely unrelated words about the weather in paris today and tomorrow"},
        {"task_id": "e1", "prompt": sentence},                                        # same task AND exact: counted once
    ]
    ev = [{"task_id": "e1", "prompt": sentence}]
    clean, r = decontaminate(train, eval=ev)
    assert (r.n_same_task, r.n_exact, r.n_near, r.n_semantic) == (2, 1, 1, 0)
    assert r.n_contaminated == 4 and r.n_kept == 2 == len(clean)
    assert [row["task_id"] for row in clean] == ["t4", "t5"]
    assert r.by_field["prompt"] == {"exact": 2, "near": 1, "semantic": 0}
    near = next(e for e in r.examples if e["rule"] == "near")
    assert near["coverage"] == pytest.approx(1.0)  # measured on the eval text's words
    assert "Llama 2" in r.rule_sources["near"] and "Llama 3" in r.rule_sources["near"]


def test_one_shared_ngram_is_not_enough():
    template = "you are a helpful support agent for an online shoe store and you answer briefly"
    train = [{"task_id": "t1", "prompt": template + " where is my order 55 it was due on monday and never came"}]
    ev = [{"task_id": "e1", "prompt": template + " can I return sandals bought in march without a receipt please"}]
    clean, r = decontaminate(train, eval=ev)
    assert r.n_near == 0 and len(clean) == 1


def test_fields_and_eval_answers():
    train = [{"task_id": "t1", "prompt": "short q", "final_text": "the answer is the forty second element of the list we built"}]
    ev = [{"task_id": "e1", "prompt": "other", "answer": "the answer is the forty second element of the list we built"}]
    _, r = decontaminate(train, eval=ev)
    assert r.n_contaminated == 0
    clean, r = decontaminate(train, eval=ev, fields=("prompt", "final_text"))
    assert r.n_exact == 1 and r.by_field["final_text"]["exact"] == 1 and clean == []


def test_sources_paths_tables_against_alias(tmp_path):
    ev_rows = [{"task_id": "e1", "prompt": "what is the boiling point of water at sea level in celsius"}]
    jl = tmp_path / "ev.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in ev_rows) + "\n")
    pq = tmp_path / "ev.parquet"
    pl.DataFrame(ev_rows).write_parquet(pq)
    train = pl.DataFrame([{"task_id": "t1", "prompt": ev_rows[0]["prompt"]}, {"task_id": "t2", "prompt": "hello there"}])
    for src in (str(jl), pq, [str(jl)], pl.DataFrame(ev_rows), [ev_rows, [{"prompt": "x y"}]]):
        clean, r = decontaminate(train, src)
        assert r.n_exact == 1 and isinstance(clean, pl.DataFrame) and clean.height == 1
    _, r = decontaminate(train, against=str(jl))
    assert r.n_exact == 1
    with pytest.raises(ArgumentError, match="once"):
        decontaminate(train, eval=str(jl), against=str(jl))
    with pytest.raises(ArgumentError, match="eval must"):
        decontaminate(train)


def test_unreadable_source_names_it(tmp_path):
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"prompt": "ok"}\n{not json\n')
    with pytest.raises(ContaminationError, match="broken.jsonl"):
        decontaminate([{"prompt": "x"}], eval=str(bad))
    with pytest.raises(ContaminationError, match="missing.jsonl"):
        decontaminate([{"prompt": "x"}], eval=[str(tmp_path / "missing.jsonl")])


def test_same_task_skipped_without_ids():
    _, r = decontaminate([{"task_id": "t1", "prompt": "x"}], eval=[{"prompt": "y"}])
    assert "same_task" in r.rules_skipped


def _bag_embedder(texts):
    """A deterministic offline embedder: hashed bag of words."""
    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, hash(w) % 64] += 1.0
    return out


def test_semantic_rule_across_tasks_and_p99_note():
    ev = [{"task_id": f"e{i}", "prompt": p} for i, p in enumerate([
        "cancel my hotel reservation for friday night",
        "what time does the pharmacy open on sunday",
        "how do I reset my router password",
    ])]
    train = [
        {"task_id": "t1", "prompt": "friday night hotel reservation cancel my"},   # reordered: no shared 8-gram
        {"task_id": "t2", "prompt": "teach me to bake sourdough bread at home"},
    ]
    clean, r = decontaminate(train, eval=ev, embedder=_bag_embedder, similarity=0.9)
    assert r.n_semantic == 1 and [row["task_id"] for row in clean] == ["t2"]
    ex = r.examples[0]
    assert ex["rule"] == "semantic" and ex["similarity"] >= 0.9 and "hotel" in ex["match"]
    assert r.eval_cross_task_p99 is not None
    _, r2 = decontaminate(train, eval=ev, embedder=_bag_embedder, similarity=0.01)
    assert any("below that percentile" in n for n in r2.notes)


def test_embedder_errors():
    ev = [{"task_id": "e1", "prompt": "a b c"}]
    with pytest.raises(ContaminationError, match=r"shape \(1, 3\) for 1 eval prompts, got shape \(2, 3\)"):
        decontaminate([{"prompt": "x"}], eval=ev, embedder=lambda t: np.zeros((len(t) + 1, 3)))
    with pytest.raises(ContaminationError, match="shape"):
        decontaminate([{"prompt": "x"}], eval=ev, embedder=lambda t: np.zeros(len(t)))
    calls = []

    def dims(texts):
        calls.append(len(texts))
        return np.ones((len(texts), 3 if len(calls) == 1 else 4))

    with pytest.raises(ContaminationError, match=r"shape \(1, 3\)"):
        decontaminate([{"prompt": "x"}], eval=ev, embedder=dims)

    def boom(texts):
        raise RuntimeError("model not loaded")

    with pytest.raises(ContaminationError, match="embedder raised RuntimeError: model not loaded"):
        decontaminate([{"prompt": "x"}], eval=ev, embedder=boom)


def test_real_small_offline_embedder():
    """With the optional extra installed and a local static model, the semantic rule runs end to end."""
    model2vec = pytest.importorskip("model2vec")
    import os

    path = os.environ.get("WAI_TEST_MODEL2VEC")
    if not path:
        pytest.skip("set WAI_TEST_MODEL2VEC to a local model2vec model folder (no downloads in tests)")
    model = model2vec.StaticModel.from_pretrained(path)
    ev = [{"task_id": "e1", "prompt": "cancel my hotel reservation for friday night"}]
    train = [{"task_id": "t1", "prompt": "please cancel the hotel booking I made for friday evening"}]
    _, r = decontaminate(train, eval=ev, embedder=lambda t: model.encode(t), similarity=0.5)
    assert r.n_semantic == 1


def test_an_inspect_log_is_an_eval_source_its_targets_lists_of_answers():
    """inspect_ai's target is a list of accepted answers; casting it to text raised (exit 4 in the CLI)."""
    from pathlib import Path

    log = Path(__file__).parents[1] / "data" / "inspect" / "greetings.json"
    rows = [{"scenario_id": "x1", "prompt": "Say hello", "reward": 1.0},
            {"scenario_id": "x2", "prompt": "goodbye", "reward": 1.0},  # an accepted answer, but one word
            {"scenario_id": "x3", "prompt": "tell me about the weather in Paris today", "reward": 0.0}]
    clean, report = decontaminate(rows, eval=str(log))
    assert report.n_eval_rows == 6 and report.n_eval_texts > 0
    # "Say hello" is the log's own input, copied whole: exact at any length; "goodbye", an accepted
    # answer of one word, is under the 8 words an answer needs to match exactly
    assert report.n_contaminated == 1 and [row["scenario_id"] for row in clean] == ["x2", "x3"]
    first, second = "the first accepted answer is a full sentence here", "the second accepted answer is a full sentence too"
    joined = decontaminate([{"scenario_id": "y", "prompt": f"{first}\n{second}"}],
                           eval=[{"scenario_id": "e", "target": [first, second]}])[1]
    assert joined.n_exact == 1  # the answers of one row are one text, a line each
