"""decontaminate's template-aware near rule against a brute-force reference on small cases.

The reference enumerates, in plain Python, every n-gram window of the eval text and every
masked position, every window of the row, and every 3-word context of every eval word across
the other eval tasks (docs/guard.md, "Decontamination"). Small vocabularies make matches,
skips and slots frequent.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from whileai.defaults import DECONTAM_SLOT_CONTEXT
from whileai.guard import decontaminate
from whileai.guard._decontam import _eval_side, _template_rules, template_side
from whileai.guard._tokens import tokenize

N = 4  # n-gram size in the reference cases (the kernel takes any n)


def _slots_reference(texts: list[list[str]], tasks: list[str], ctx: int = DECONTAM_SLOT_CONTEXT) -> list[set[int]]:
    """Positions p of text e where a ctx-word context around p, p masked, occurs in a text of another task
    with a different word at p."""
    out = []
    for e, words in enumerate(texts):
        slots = set()
        for q in range(len(words) - ctx + 1):
            for k in range(ctx):
                for f, other in enumerate(texts):
                    if tasks[f] == tasks[e]:
                        continue
                    for r in range(len(other) - ctx + 1):
                        if other[r + k] != words[q + k] and all(other[r + i] == words[q + i] for i in range(ctx) if i != k):
                            slots.add(q + k)
        out.append(slots)
    return out


def _cover_reference(row: list[str], ev: list[str], n: int = N) -> set[int]:
    """Positions of ev inside an n-gram the row holds with at most one word different (that word not covered)."""
    covered = set()
    for s in range(len(ev) - n + 1):
        for t in range(len(row) - n + 1):
            diff = [k for k in range(n) if row[t + k] != ev[s + k]]
            if len(diff) <= 1:
                covered.update(s + k for k in range(n) if k not in diff)
    return covered


def _verdict_reference(row, texts, slots, overlap=0.8, n=N):
    """(coverage, best eval text, slot-weight share) of the best near-copied eval text, or (0, -1, nan).

    A slot word weighs ln(eval texts / eval texts holding the word); the row may miss slot weight up
    to the heavier of the eval text's heaviest slot and (1 - overlap) of its slot weight."""
    held = {}
    for ev in texts:
        for w in set(ev):
            held[w] = held.get(w, 0) + 1
    best = (0.0, -1, float("nan"))
    for e, ev in enumerate(texts):
        if len(ev) < n:
            continue
        cov = _cover_reference(row, ev, n)
        weight = {p: math.log(len(texts) / held[ev[p]]) for p in slots[e]}
        total = sum(weight.values())
        missing = sum(w for p, w in weight.items() if p not in cov)
        allowed = max(max(weight.values(), default=0.0), (1 - overlap) * total)
        if len(cov) >= overlap * len(ev) - 1e-9 and missing <= allowed + 1e-9 * max(total, 1.0):
            share = len(cov) / len(ev)
            if share > best[0]:
                best = (share, e, (total - missing) / total if total > 0 else float("nan"))
    return best


def _case(rng: np.random.Generator):
    vocab = ["a", "b", "c", "d"]
    texts, tasks = [], []
    for i in range(6):
        texts.append([str(w) for w in rng.choice(vocab, size=int(rng.integers(5, 12)))])
        tasks.append(f"t{i // 2}" if rng.random() < 0.3 else f"t{i}")
    texts = [list(t) for t in dict.fromkeys(tuple(t) for t in texts)]  # distinct texts, as the index holds them
    tasks = tasks[:len(texts)]
    rows = []
    for _ in range(12):
        base = list(texts[int(rng.integers(len(texts)))])
        for _ in range(int(rng.integers(0, 3))):
            base[int(rng.integers(len(base)))] = str(rng.choice(vocab))
        if rng.random() < 0.3:
            base = [str(w) for w in rng.choice(vocab, size=int(rng.integers(1, 4)))] + base
        rows.append(base)
    return texts, tasks, rows


@pytest.mark.parametrize("seed", range(25))
def test_slots_and_cover_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    texts, tasks, rows = _case(rng)
    frame = pl.DataFrame({"text": [" ".join(t) for t in texts], "task": tasks, "is_prompt": [True] * len(texts)})
    side = template_side(frame, N)
    slots = _slots_reference(texts, tasks)
    got = [set(np.flatnonzero(side.is_slot[side.offsets[e]:side.offsets[e + 1]]).tolist()) for e in range(len(texts))]
    assert got == slots
    _, exact = _eval_side(frame["text"], N, frame["is_prompt"])
    _, cov, best, share = _template_rules(pl.Series([" ".join(r) for r in rows]), side, exact, n=N, overlap=0.8)
    for i, row in enumerate(rows):
        ref_cov, ref_best, ref_share = _verdict_reference(row, texts, slots)
        assert cov[i] == pytest.approx(ref_cov) and best[i] == ref_best, (row, i)
        assert (np.isnan(share[i]) and np.isnan(ref_share)) or share[i] == pytest.approx(ref_share)


def test_masked_hashes_match_on_one_word_only():
    """Two n-grams share the j-th masked hash exactly when they agree on every other word."""
    from whileai.guard._tokens import masked_ngram_hashes

    toks = tokenize(pl.Series(["a b c d", "a x c d", "a x y d"]))
    start, j, h = masked_ngram_hashes(toks, 4)
    by_text = {int(toks.row[s]): {} for s in start}
    for s, jj, hh in zip(start, j, h):
        by_text[int(toks.row[s])][int(jj)] = int(hh)
    assert by_text[0][1] == by_text[1][1]  # differ only at position 1
    assert all(by_text[0][k] != by_text[1][k] for k in (0, 2, 3))
    assert all(by_text[0][k] != by_text[2][k] for k in range(4))  # two words apart: no masked n-gram shared


def test_one_word_changed_near_the_start_is_caught_and_a_sibling_task_is_kept():
    """The cases behind the measured rates, by hand: an 8-gram window can skip the changed word; a
    training task of the same template that changes its ids reproduces too little of its slot weight."""
    t = "Transfer {amt} dollars from account {id} to account {id2} for {name}, then confirm the new balance and email the receipt."
    ev = [{"task_id": f"e{i}", "prompt": t.format(amt=10 * i + 5, id=1000 + i, id2=2000 + i, name=n)}
          for i, n in enumerate(["Ana", "Ben", "Chen", "Dara"])]
    edited = ev[0]["prompt"].replace(" to account", " into account")  # word 6: no exact 8-gram holds words 0-6
    sibling = t.format(amt=5, id=7777, id2=8888, name="Ana")  # the amount and name of e0, other ids
    clean, r = decontaminate([{"task_id": "x", "prompt": edited}, {"task_id": "y", "prompt": sibling}], eval=ev)
    assert [row["task_id"] for row in clean] == ["y"] and r.n_near == 1
    assert r.examples[0]["coverage"] == pytest.approx(19 / 20)  # every word but the changed one
    _, old = decontaminate([{"task_id": "x", "prompt": edited}], eval=ev, near="eval_cover")
    assert old.n_near == 0  # the earlier rule: 13 of 20 words in shared exact 8-grams


def test_near_must_be_a_known_rule():
    from whileai.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"near must be one of template, eval_cover, got 'fuzzy'"):
        decontaminate([{"prompt": "x"}], eval=[{"prompt": "y"}], near="fuzzy")  # type: ignore[arg-type]
