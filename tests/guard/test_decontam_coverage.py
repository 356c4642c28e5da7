"""decontaminate's text rules: near copies measured on the eval text's words, no exact match on short texts."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from whileai.guard import decontaminate
from whileai.guard._decontam import _eval_side, _text_rules

QUESTION = ("A train leaves Boston at 3pm travelling at 60 miles per hour toward New York which is "
            "200 miles away; when does it arrive?")
INSTRUCTION = ("You are a careful math tutor. Answer the following question and show every step of your "
               "reasoning before giving the final answer.")


def _eval_coverage_reference(row: str, ev: str, n: int = 8) -> float:
    """Plain Python: share of the eval text's words inside an n-gram it shares with the row."""
    rw, ew = row.lower().split(), ev.lower().split()
    grams = {tuple(rw[i:i + n]) for i in range(len(rw) - n + 1)}
    covered = set()
    for i in range(len(ew) - n + 1):
        if tuple(ew[i:i + n]) in grams:
            covered.update(range(i, i + n))
    return len(covered) / len(ew) if ew else 0.0


def test_an_eval_question_inside_a_longer_prompt_is_a_near_copy():
    """Few-shot and chat-template wrappers dilute the row's words, not the eval question's."""
    ev = [{"task_id": "e0", "prompt": QUESTION}]
    train = [
        {"task_id": "fewshot", "prompt": INSTRUCTION + " Question: " + QUESTION},
        {"task_id": "chatml", "prompt": "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n"
                                        + QUESTION + "<|im_end|>\n<|im_start|>assistant\n"},
        {"task_id": "other", "prompt": INSTRUCTION + " Question: how many legs does a spider have?"},
    ]
    clean, r = decontaminate(train, eval=ev)
    assert [row["task_id"] for row in clean] == ["other"]
    assert r.n_near == 2
    for ex in r.examples:
        assert ex["rule"] == "near" and ex["coverage"] == pytest.approx(1.0) and ex["match"] == QUESTION


def test_a_row_that_only_repeats_an_eval_prompts_instruction_is_kept():
    """The row is all instruction, but the instruction is a small part of the eval prompt: the eval
    question is not in the row, so training on it does not leak the eval item."""
    ev = [{"task_id": "e0", "prompt": INSTRUCTION + " Question: " + QUESTION}]
    train = [{"task_id": "t1", "prompt": INSTRUCTION}]
    clean, r = decontaminate(train, eval=ev)
    assert r.n_near == 0 and len(clean) == 1


def test_short_texts_are_not_matched_exactly():
    from whileai.defaults import DECONTAM_EXACT_MIN_WORDS, DECONTAM_NGRAM

    assert DECONTAM_EXACT_MIN_WORDS == DECONTAM_NGRAM
    # the floor is for answers: a seven-word eval answer is not matched, a seven-word eval prompt is
    ev = [{"task_id": "e0", "prompt": QUESTION, "answer": "Yes"},
          {"task_id": "e1", "answer": "one two three four five six seven"},
          {"task_id": "e2", "answer": "one two three four five six seven eight"},
          {"task_id": "e3", "prompt": "uno dos tres cuatro cinco seis siete"}]
    train = [{"task_id": "yes1", "prompt": "Is 9 odd?", "final_text": "Yes"},
             {"task_id": "yes2", "prompt": "Is 11 odd?", "final_text": "yes."},
             {"task_id": "seven", "prompt": "One two three four five six seven"},
             {"task_id": "eight", "prompt": "One, two, three, four, five, six, seven, eight!"},
             {"task_id": "siete", "prompt": "Uno dos tres cuatro cinco seis siete."}]
    clean, r = decontaminate(train, eval=ev, fields=("prompt", "final_text"))
    assert [row["task_id"] for row in clean] == ["yes1", "yes2", "seven"]
    assert (r.n_exact, r.n_near) == (2, 0)
    assert r.by_field == {"prompt": {"exact": 2, "near": 0, "semantic": 0},
                          "final_text": {"exact": 0, "near": 0, "semantic": 0}}
    assert "8 words" in r.rule_sources["exact"]


def test_the_probe_rows():
    """The reported case end to end: wrapped copies dropped, one-word replies kept."""
    ev = [{"task_id": "e0", "prompt": QUESTION, "answer": "Yes"}]
    train = [{"task_id": "fewshot", "prompt": INSTRUCTION + " Question: " + QUESTION},
             {"task_id": "chatml", "prompt": "<|im_start|>user\n" + QUESTION + "<|im_end|>\n<|im_start|>assistant\n"},
             {"task_id": "yes1", "prompt": "Is 9 odd?", "final_text": "Yes"},
             {"task_id": "yes2", "prompt": "Is 11 odd?", "final_text": "Yes"}]
    clean, r = decontaminate(train, eval=ev, fields=("prompt", "final_text"))
    assert [row["task_id"] for row in clean] == ["yes1", "yes2"]
    assert (r.n_exact, r.n_near) == (0, 2)


def test_eval_side_coverage_matches_plain_reference():
    rng = np.random.default_rng(4)
    vocab = [f"w{i}" for i in range(12)]  # small vocabulary: many partial overlaps
    evals = [" ".join(rng.choice(vocab, int(rng.integers(8, 30)))) for _ in range(40)]
    rows = []
    for _ in range(150):
        src = evals[int(rng.integers(0, len(evals)))].split()
        a = int(rng.integers(0, max(1, len(src) - 8)))
        piece = src[a:a + int(rng.integers(8, 25))]
        noise = list(rng.choice(vocab, int(rng.integers(0, 30))))  # wrappers up to 30 words
        rows.append(" ".join(noise[: len(noise) // 2] + piece + noise[len(noise) // 2:]))
    grams, exact_set = _eval_side(pl.Series(evals), 8)
    exact, cov, best = _text_rules(pl.Series(rows), grams, exact_set, n=8)
    assert exact.tolist() == [r.split() in [e.split() for e in evals] for r in rows]
    ref = np.array([[_eval_coverage_reference(r, e) for e in evals] for r in rows])
    np.testing.assert_allclose(cov, ref.max(axis=1), atol=1e-12)
    hit = cov > 0
    assert best[hit].tolist() == ref.argmax(axis=1)[hit].tolist()  # ties name the first eval text


@pytest.mark.parametrize("rare_fan", [0, 2, 1000])
def test_pruned_eval_side_coverage_is_exact_on_template_texts(monkeypatch, rare_fan):
    """Template sentences shared by many eval texts (frequent n-grams), eval texts that are
    mostly template, and the pruned search: the plain reference's coverage and eval text wherever
    the best coverage reaches overlap, and everywhere without overlap; at every frequency cut."""
    from whileai.guard import _decontam

    monkeypatch.setattr(_decontam, "DECONTAM_RARE_FAN", rare_fan)
    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(30)]
    templates = ["please look into the order for customer number", "i checked the order and could not finish it today"]

    def text() -> str:
        head = templates[int(rng.integers(0, 2))].split()
        tail = list(rng.choice(vocab, int(rng.integers(0, 12))))
        reps = ["detail"] * int(rng.integers(0, 14))  # a run of one repeated n-gram
        return " ".join(head + tail + reps)

    evals = [text() for _ in range(60)]
    rows = [text() for _ in range(120)]
    rows += [" ".join(evals[i].split()[1:]) for i in range(0, 60, 6)]  # near copies
    rows += ["intro words here " + evals[i] + " and a long tail of other words after it" for i in range(3, 60, 7)]
    grams, exact_set = _eval_side(pl.Series(evals), 8)
    ref = np.array([[_eval_coverage_reference(r, e) for e in evals] for r in rows])
    best_ref = ref.max(axis=1)
    for overlap in (None, 0.8, 0.5):
        _, cov, best = _text_rules(pl.Series(rows), grams, exact_set, n=8, overlap=overlap)
        sure = best_ref >= (overlap or 0.0) - 1e-12
        np.testing.assert_allclose(cov[sure], best_ref[sure], atol=1e-12)
        hit = sure & (best_ref > 0)
        assert best[hit].tolist() == ref.argmax(axis=1)[hit].tolist()
        assert (cov[~sure] <= best_ref[~sure] + 1e-12).all()  # below overlap: a lower bound


def test_a_short_eval_prompt_copied_whole_is_still_exact():
    """The 8-word floor is for answers ("Yes" shared with a reply); an eval question of 5 words
    copied whole into training is contamination, and was missed once the floor applied to prompts."""
    from whileai.guard import decontaminate

    ev = [{"task_id": "gsm-1", "prompt": "What is 17 times 23?", "final_text": "391"}]
    train = [{"task_id": "tr-1", "prompt": "What is 17 times 23?", "final_text": "391"},
             {"task_id": "tr-2", "prompt": "what is 17 TIMES 23", "final_text": "it is 391"},
             {"task_id": "tr-3", "prompt": "Is nine odd?", "final_text": "391"}]
    clean, report = decontaminate(train, eval=ev, fields=("prompt", "final_text"))
    assert report.n_exact == 2 and [row["task_id"] for row in clean] == ["tr-3"]  # a shared short answer is not enough
