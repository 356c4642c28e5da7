"""The commands that read rows take several FILEs, a folder of logs, --map and --scorer."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).parent.parent / "data"
ORDERS = DATA / "inspect" / "orders.eval"
GREETINGS = DATA / "inspect" / "greetings.json"


def test_several_files_are_one_table(wai):
    result = wai("inspect", ORDERS, GREETINGS, "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["n_rows"] == 12 and report["n_tasks"] == 6


def test_scorer_option(wai):
    result = wai("pass-at", ORDERS, "--scorer", "rubric.polite", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["pass_at_1"] == 2 / 3
    bad = wai("pass-at", ORDERS, "--scorer", "politeness")
    assert bad.code == 2 and bad.err.startswith("error: scorer must be one of the log's scorers")


def test_map_option(wai, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"doc_id": d % 3, "text": f"q{d % 3}", "acc": d % 2}) for d in range(6)))
    result = wai("inspect", rows, "--map", "task=doc_id", "--map", "reward=acc", "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["n_tasks"] == 3 and report["n_graded"] == 6
    bad = wai("inspect", rows, "--map", "task")
    assert bad.code == 2 and "a mapping must be COLUMN=SOURCE, got 'task'" in bad.err


def test_agent_errors_are_reported_as_such(wai):
    result = wai("pass-at", GREETINGS)
    assert result.code == 0, result.err
    assert "agent or harness error" in result.out and "Re-run the judge" not in result.out


def test_compare_keeps_inspect_tasks_apart(wai):
    # two tasks whose samples are both numbered 1, 2, 3 share no task: nothing to pair
    result = wai("compare", ORDERS, GREETINGS)
    assert result.code == 3, result.out  # EXIT_NOT_COMPARABLE
    assert result.out.startswith("NOT COMPARABLE")


def test_lm_eval_folder_with_scorer(wai):
    result = wai("inspect", DATA / "lm_eval" / "run", "--scorer", "acc_norm", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["n_graded"] == 4
