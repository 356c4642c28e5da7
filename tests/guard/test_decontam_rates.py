"""decontaminate's two error rates on templated data, measured (docs/guard.md, "What the near rule costs").

Six templates with slots (names, ids, amounts, items, days; the last differs only in ids and
amounts); 200 tasks a template, drawn by seed, the first 50 the eval set, the other 150 training
tasks. A training task is *distinct* when it differs from every eval task of its template in at
least two slot values; one that differs from an eval task in one slot value only is that eval
prompt with one word changed, and is counted apart. The false-drop rate is the share of distinct
training tasks the rules drop; the miss rate the share of eval prompts with one word replaced
(anywhere, by a word from outside the templates) that they keep. Both are asserted under a bound
for the default rule and shown over it for the earlier rule (``near="eval_cover"``), so the test
fails on the old default.
"""

from __future__ import annotations

import numpy as np
import pytest

import whileai as wai

TEMPLATES = [
    "Customer {name} (account {id}) wants to return the {item} from order {id2} and asks for a refund of {amt} "
    "dollars to the original card before the end of the week.",
    "Please book a table for {n} people under the name {name} at {time} on {day}, and note that one guest is "
    "allergic to {item}.",
    "Order {id} shipped to {name} is late; check the tracking, tell the customer when the {item} will arrive and "
    "offer a {amt} dollar credit if it is more than three days late.",
    "Transfer {amt} dollars from account {id} to account {id2} for {name}, then confirm the new balance and email "
    "the receipt.",
    "The {item} that {name} bought on {day} stopped working; open a warranty claim under order {id} and tell them "
    "what happens next.",
    "Refund {amt} dollars on order {id} to the card on file, then email the customer a confirmation of the refund "
    "and close ticket {id2} as resolved.",
]
NAMES = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goro", "Hana", "Ivan", "Jo", "Kemal", "Lena", "Mo", "Nia"]
ITEMS = ["blender", "kettle", "jacket", "lamp", "phone", "desk", "chair", "printer", "peanuts", "shellfish"]
DAYS = ["Monday", "Tuesday", "Friday", "Sunday"]
EDIT_WORDS = ["purple", "seven", "quickly", "river", "maybe", "orange", "table", "north"]
SLOTS = ("name", "id", "id2", "item", "amt", "n", "time", "day")

FALSE_DROP_BOUND = 0.01  # distinct tasks of one template dropped, at most
MISS_BOUND = 0.05  # eval prompts with one word changed kept, at most


def _tasks(seed: int = 0):
    rng = np.random.default_rng(seed)

    def draw() -> dict:
        return {"name": str(rng.choice(NAMES)), "id": int(rng.integers(1000, 99999)),
                "id2": int(rng.integers(1000, 99999)), "item": str(rng.choice(ITEMS)), "amt": int(rng.integers(5, 500)),
                "n": int(rng.integers(2, 9)), "time": f"{rng.integers(5, 10)} pm", "day": str(rng.choice(DAYS))}

    ev, tr = [], []
    for j, t in enumerate(TEMPLATES):
        used = [s for s in SLOTS if "{" + s + "}" in t]
        values = [draw() for _ in range(200)]
        for i, v in enumerate(values[:50]):
            ev.append({"task_id": f"e{j}_{i}", "prompt": t.format(**v)})
        for i, v in enumerate(values[50:]):
            apart = min(sum(v[s] != w[s] for s in used) for w in values[:50])  # slot values changed, nearest eval task
            tr.append({"task_id": f"t{j}_{i}", "prompt": t.format(**v), "template": j, "apart": apart})
    return ev, tr, rng


def _one_word_changed(ev, rng):
    changed = []
    for e in ev:
        w = e["prompt"].split()
        w[int(rng.integers(len(w)))] = str(rng.choice(EDIT_WORDS))
        changed.append({"task_id": "c" + e["task_id"], "prompt": " ".join(w)})
    return changed


def _drops(near: str):
    ev, tr, _ = _tasks()
    clean, r = wai.decontaminate(tr, eval=ev, near=near)
    kept = {row["task_id"] for row in clean}
    dropped = np.array([row["task_id"] not in kept for row in tr])
    distinct = np.array([row["apart"] >= 2 for row in tr])
    template = np.array([row["template"] for row in tr])
    return dropped, distinct, template, r


def test_distinct_tasks_of_one_template_are_kept():
    dropped, distinct, template, r = _drops("template")
    assert distinct.sum() > 800  # the generator gives mostly distinct tasks
    rate = dropped[distinct].mean()
    per_template = [dropped[distinct & (template == j)].mean() for j in range(len(TEMPLATES))]
    assert rate <= FALSE_DROP_BOUND, (rate, per_template)  # 0.0 at seed 0
    assert max(per_template) <= 2 * FALSE_DROP_BOUND  # the ids-and-amounts template included
    # every drop is the near rule's (no task id or verbatim prompt is shared), and the report says which rule
    assert r["n_same_task"] == 0 and r["n_exact"] == 0 and r["n_near"] == int(dropped.sum())
    assert r["near_rule"] == "template" and "slot words" in r["rule_sources"]["near"]
    assert r["n_eval_templated"] == r["n_eval_texts"] == 300
    # a training task one slot value away from an eval task is that prompt with one word changed: dropped
    one_apart = ~distinct
    assert one_apart.sum() > 10 and dropped[one_apart].mean() == 1.0


def test_the_earlier_rule_drops_distinct_tasks_over_the_bound():
    """The same data under near='eval_cover' (exact 8-grams, no slot check): the bound above fails."""
    dropped, distinct, template, r = _drops("eval_cover")
    assert dropped[distinct].mean() > 0.25  # 0.285 at seed 0: templates with long fixed spans lose most tasks
    assert r["near_rule"] == "eval_cover" and r["n_eval_templated"] is None


@pytest.mark.parametrize(("near", "low", "high"), [("template", 0.0, MISS_BOUND), ("eval_cover", 0.15, 0.35)])
def test_one_word_changed_eval_prompts_miss_rate(near, low, high):
    """Default: 0 of 300 missed at seed 0; the earlier rule 21.3% (a word changed
    within 8 words of either end of a short prompt leaves those words in no shared exact 8-gram)."""
    ev, _, rng = _tasks()
    changed = _one_word_changed(ev, rng)
    clean, r = wai.decontaminate(changed, eval=ev, near=near)
    miss = len(clean) / len(changed)
    assert r["n_near"] + r["n_exact"] == len(changed) - len(clean)
    assert low <= miss <= high, miss


def test_rates_hold_on_other_seeds():
    """Three more draws of the same generator: both rates stay under their bounds."""
    for seed in (1, 2, 3):
        ev, tr, rng = _tasks(seed)
        clean, _ = wai.decontaminate(tr + _one_word_changed(ev, rng), eval=ev)
        kept = {row["task_id"] for row in clean}
        distinct = [row for row in tr if row["apart"] >= 2]
        false_drop = sum(row["task_id"] not in kept for row in distinct) / len(distinct)
        miss = sum(1 for row in clean if row["task_id"].startswith("c")) / len(ev)
        assert false_drop <= FALSE_DROP_BOUND and miss <= MISS_BOUND, (seed, false_drop, miss)
