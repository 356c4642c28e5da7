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


def test_scorer_and_map_keep_the_cause_the_file_states(wai, tmp_path):
    """An errored run stays an agent error after --scorer or --map, not "the judge failed ... re-run the judge"."""
    runs = DATA / "langsmith" / "runs.jsonl"
    for extra in (["--scorer", "polite"], ["--map", "reward=markers.polite"]):
        result = wai("pass-at", runs, *extra)
        assert result.code == 0, result.err
        assert "1 row(s) ended in an agent or harness error" in result.out, extra
        assert "Re-run the judge" not in result.out, extra
    rows = tmp_path / "rows.jsonl"  # a plain file whose rows say their own status
    rows.write_text("\n".join(json.dumps({"task": f"t{i % 3}", "acc": None if i == 0 else 1.0,
                                          "judge_status": "agent_error" if i == 0 else "ok"}) for i in range(6)))
    result = wai("pass-at", rows, "--map", "task=task", "--map", "reward=acc")
    assert "1 row(s) ended in an agent or harness error" in result.out and "Re-run the judge" not in result.out


def test_per_task_tables_go_to_stdout_with_o_dash(wai):
    """pass-at, failures and sql take -o -: the table as JSONL on stdout, the report on stderr."""
    result = wai("pass-at", GREETINGS, "-o", "-")
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert len(lines) == 3 and {"task_key", "n"} <= set(lines[0]) and result.err.startswith("pass@1")
    result = wai("failures", GREETINGS, "--by", "finish_reason", "-o", "-", "--json")
    assert result.code == 0, result.err
    assert all(json.loads(line) for line in result.out.splitlines()) and json.loads(result.err)["groups"]
    assert wai("datasets", "save", ORDERS, "orders").code == 0
    result = wai("sql", "select name, n_rows from datasets", "-o", "-")
    assert result.code == 0, result.err
    assert [json.loads(line) for line in result.out.splitlines()] == [{"name": "orders", "n_rows": 6}]


def test_no_task_identity_names_the_file_columns_and_the_map(wai, tmp_path):
    """pass-at reads a projection; the error still lists the file's own columns (it said 'columns: reward')."""
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"question_id": i % 2, "passed": i % 2}) for i in range(4)))
    result = wai("pass-at", rows)
    assert result.code == 2
    assert "(columns: question_id, passed)" in result.err and "--map task=COLUMN" in result.err
