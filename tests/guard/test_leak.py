"""leak_report: replies quoting their own privileged context."""

from __future__ import annotations

import polars as pl

from whileai.guard import leak_report

#: Two rows quoting their own privileged context (a reference, a hidden world state), one that does
#: not, one with nothing privileged (tests/guard/test_leak_typed.py pins the report on them too).
ROWS = [
    {"scenario_id": "s1", "rollout_index": 0, "prompt": "p", "final_text": "As noted: THE ENTITY DOES NOT EXIST here.",
     "privileged": {"reference": "the entity does not exist", "hidden_state": {"world_state": "entity missing"}}},
    {"scenario_id": "s1", "rollout_index": 1, "prompt": "p", "final_text": "I could not find it.",
     "privileged": {"reference": "the entity does not exist"}},
    {"scenario_id": "s2", "rollout_index": 0, "prompt": "q", "final_text": "World: entity missing, sorry.",
     "privileged": {"hidden_state": {"world_state": "entity missing"}}},
    {"scenario_id": "s3", "prompt": "r", "final_text": "nothing"},
]


def test_leaks_found_with_fields_and_indices():
    r = leak_report(ROWS)
    assert (r.n_rows, r.n_checked, r.n_leaked) == (4, 3, 2)
    assert r.rate == 2 / 3
    assert [(x["index"], x["field"]) for x in r.leaked] == [(0, "reference"), (2, "world_state")]
    assert r.leaked[0]["scenario_id"] == "s1" and r.leaked[0]["rollout_index"] == 0
    assert str(r).startswith("checked 3 of 4 rows: 2 quoted privileged context (67%)")
    short = leak_report(ROWS, min_len=30)
    assert short.n_leaked == 0


def test_nothing_to_check_says_so():
    r = leak_report([{"prompt": "x", "final_text": "y"}])
    assert r.n_checked == 0 and r.summary.endswith("so this says nothing about leaks")
    assert leak_report(pl.DataFrame({"prompt": ["x"]}), min_len=5).checked is False


def test_only_assistant_turns_count():
    row = {"prompt": "the reference answer is forty two exactly",
           "messages": [{"role": "user", "content": "the reference answer is forty two exactly"},
                        {"role": "assistant", "content": "ok"}],
           "privileged": {"reference": "the reference answer is forty two exactly"}}
    assert leak_report([row]).n_leaked == 0
