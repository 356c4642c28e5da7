"""decontaminate's two error rates on templated data, measured (docs/guard.md, "What the near rule costs").

Five templates with slots (names, ids, amounts, items, days); 200 distinct tasks a template, the
first 50 the eval set, the other 150 distinct training tasks. The false-drop rate is the share of
distinct training tasks the rules drop; the miss rate the share of eval prompts with one word
replaced that they keep. Seeded; the numbers are the current rule's (8-grams covering at least 80%
of one eval text's words), pinned so a change to the rule shows here, per rule and per template.
"""

from __future__ import annotations

import numpy as np

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
]
NAMES = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goro", "Hana", "Ivan", "Jo", "Kemal", "Lena", "Mo", "Nia"]
ITEMS = ["blender", "kettle", "jacket", "lamp", "phone", "desk", "chair", "printer", "peanuts", "shellfish"]
DAYS = ["Monday", "Tuesday", "Friday", "Sunday"]


def _tasks(seed: int = 0):
    rng = np.random.default_rng(seed)

    def fill(t: str) -> str:
        return t.format(name=rng.choice(NAMES), id=rng.integers(1000, 99999), id2=rng.integers(1000, 99999),
                        item=rng.choice(ITEMS), amt=rng.integers(5, 500), n=rng.integers(2, 9),
                        time=f"{rng.integers(5, 10)} pm", day=rng.choice(DAYS))

    ev, tr = [], []
    for j, t in enumerate(TEMPLATES):
        prompts = [fill(t) for _ in range(200)]
        ev += [{"task_id": f"e{j}_{i}", "prompt": p} for i, p in enumerate(prompts[:50])]
        tr += [{"task_id": f"t{j}_{i}", "prompt": p, "template": j} for i, p in enumerate(prompts[50:])]
    return ev, tr, rng


def test_distinct_tasks_from_one_template_false_drop_rate_per_template():
    ev, tr, _ = _tasks()
    clean, r = wai.decontaminate(tr, eval=ev)
    kept = {row["task_id"] for row in clean}
    dropped = np.array([row["task_id"] not in kept for row in tr])
    per_template = [float(dropped[[row["template"] == j for row in tr]].mean()) for j in range(len(TEMPLATES))]
    # every drop is the near rule's (no task id or verbatim prompt is shared)
    assert r["n_same_task"] == 0 and r["n_exact"] == 0 and r["n_near"] == int(dropped.sum())
    # templates whose slots sit apart keep their distinct tasks; ones with long fixed spans lose most of them
    assert per_template[0] == per_template[3] == per_template[4] == 0.0
    assert per_template[1] > 0.5 and per_template[2] > 0.9
    assert 0.30 < dropped.mean() < 0.40  # 0.355 at seed 0


def test_one_word_changed_eval_prompts_miss_rate():
    ev, _, rng = _tasks()
    words = ["purple", "seven", "quickly", "river", "maybe", "orange", "table", "north"]
    changed = []
    for e in ev:
        w = e["prompt"].split()
        w[int(rng.integers(len(w)))] = str(rng.choice(words))
        changed.append({"task_id": "c" + e["task_id"], "prompt": " ".join(w)})
    clean, r = wai.decontaminate(changed, eval=ev)
    miss = len(clean) / len(changed)
    assert r["n_near"] + r["n_exact"] == len(changed) - len(clean)
    assert 0.20 < miss < 0.30  # 0.248 at seed 0: a word changed near either end of a short prompt leaves no 8-gram there
