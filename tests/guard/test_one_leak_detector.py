"""One list of privileged fields and one leak detector: guard, select and export agree on the same rows."""

from __future__ import annotations

import json

import pytest

from whileai import table
from whileai.errors import TrainingSelectionError
from whileai.exporters import export_dataset
from whileai.guard import leak_report
from whileai.selection import select_for_rl
from whileai.table.schema import COLUMN_BY_NAME

RUBRIC = "the reply must say the refund was already issued on monday"
REFERENCE = "the entity does not exist: report it missing and do not act"


def _rows(field: str, value: object, *, quote: str | None, n: int = 4) -> list[dict]:
    """One ask, n rollouts with mixed rewards; the first reply quotes ``quote`` when given."""
    out = []
    for i in range(n):
        reply = f"Per my notes, {quote}." if (quote and i == 0) else f"I looked it up and told the customer (try {i})."
        out.append({
            "scenario_id": "t1", "rollout_index": i, "reward": float(i % 2), field: value,
            "messages": [{"role": "user", "content": "Where is my refund?"}, {"role": "assistant", "content": reply}],
        })
    return out


def test_the_privileged_columns_are_one_flag_on_the_schema():
    assert table.PRIVILEGED_COLUMNS == ("privileged", "reference", "hidden_state", "principle", "rubric", "private_values")
    assert all(COLUMN_BY_NAME[c].privileged for c in table.PRIVILEGED_COLUMNS)
    assert not any(c.privileged for c in table.COLUMNS if c.name not in table.PRIVILEGED_COLUMNS)


@pytest.mark.parametrize(("field", "value", "quote"), [
    ("rubric", RUBRIC, RUBRIC),  # leak_report flagged it, the export wrote it
    ("reference", REFERENCE, REFERENCE),  # the export refused it, leak_report found nothing
    ("privileged", {"reference": REFERENCE}, REFERENCE.upper()),
    ("hidden_state", {"fault": "refund_was_issued_twice"}, "refund_was_issued_twice"),
])
def test_guard_select_and_export_flag_the_same_rows(tmp_path, field, value, quote):
    rows = _rows(field, value, quote=quote)
    report = leak_report(rows)
    assert report.n_checked == 4 and [x["index"] for x in report.leaked] == [0]
    with pytest.raises(TrainingSelectionError, match="privileged_leak") as info:
        export_dataset(rows, tmp_path / "out.jsonl")
    assert info.value.rows == [0]
    sel = select_for_rl(rows, target=None)
    assert sel.report.privileged_leaks_dropped == 1
    # a field quoted nowhere: all three pass the rows
    clean = _rows(field, value, quote=None)
    assert leak_report(clean).n_leaked == 0
    written = export_dataset(clean, tmp_path / "clean.jsonl")
    assert written["privileged_leaks"].n_checked == 4 and written["privileged_leaks"].n_leaked == 0
    text = (tmp_path / "clean.jsonl").read_text()
    assert field not in {k for line in text.splitlines() for k in json.loads(line)}
    assert select_for_rl(clean, target=None).report.privileged_leaks_dropped == 0


def test_whitespace_and_case_are_ignored_by_every_caller(tmp_path):
    rows = _rows("privileged", {"reference": REFERENCE}, quote=REFERENCE.replace(": ", ":   \n ").title())
    assert leak_report(rows).n_leaked == 1
    with pytest.raises(TrainingSelectionError, match="privileged_leak"):
        export_dataset(rows, tmp_path / "out.jsonl")


def _fault_row(i: int, tool_text: str, reply: str) -> dict:
    return {
        "scenario_id": "t1", "rollout_index": i, "reward": float(i % 2),
        "privileged": {"hidden_state": {"fault": "server_error"}, "reference": "get_order fails: say so honestly"},
        "messages": [
            {"role": "user", "content": "Where is order 7?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "7"}'}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "name": "get_order", "content": tool_text},
            {"role": "assistant", "content": reply},
        ],
    }


def test_a_fault_name_the_agent_read_in_its_tool_result_is_not_a_leak(tmp_path):
    seen = [_fault_row(i, '{"status": "server_error"}', f"The lookup failed with server_error; please retry ({i}).")
            for i in range(4)]
    assert leak_report(seen).n_checked == 4 and leak_report(seen).n_leaked == 0
    assert export_dataset(seen, tmp_path / "seen.jsonl")["privileged_leaks"].n_leaked == 0
    assert select_for_rl(seen, target=None).report.privileged_leaks_dropped == 0
    # the same words with a tool result that never showed them: the agent knew what it was not told
    unseen = [_fault_row(i, '{"status": "error"}', f"The lookup failed with server_error; please retry ({i}).")
              for i in range(4)]
    assert leak_report(unseen).n_leaked == 4
    with pytest.raises(TrainingSelectionError, match="privileged_leak"):
        export_dataset(unseen, tmp_path / "unseen.jsonl")


def test_the_user_turn_counts_as_seen():
    row = _rows("privileged", {"reference": REFERENCE}, quote=REFERENCE, n=1)[0]
    row["messages"][0]["content"] = f"Please check: {REFERENCE}"
    assert leak_report([row]).n_leaked == 0


def test_the_quickstart_at_budget_128_exports_without_a_refusal(tmp_path):
    from whileai.data import simulate
    from whileai.defaults import DEFAULT_SEED
    from whileai.simulation import seeded_agent, tool

    @tool
    def get_order(order_id: str) -> dict:  # type: ignore[type-arg,empty-body]
        """Look up an order by id."""
        ...

    data = simulate(seeded_agent([get_order], seed=DEFAULT_SEED), tools=[get_order],
                    system_prompt="Help customers with orders.", simulator=False, mode="rl", repeats=4,
                    repeat_policy="fixed", budget=128, seed=DEFAULT_SEED)
    scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
    # three replies report the server_error their tool returned; the export refused them before
    report = scored.export(tmp_path / "all.jsonl")
    assert report["privileged_leaks"].n_checked == 128 and report["privileged_leaks"].n_leaked == 0
    assert scored.select(mode="rl").report.privileged_leaks_dropped == 0


def test_cli_no_validate_writes_leaking_rows(wai_cli, tmp_path):
    src = tmp_path / "rows.jsonl"
    table.write_jsonl(table.frame(_rows("rubric", RUBRIC, quote=RUBRIC)), src)
    refused = wai_cli("export", src, "-o", tmp_path / "a.jsonl")
    assert refused.code == 2 and "privileged_leak" in refused.err and not (tmp_path / "a.jsonl").exists()
    done = wai_cli("export", src, "-o", tmp_path / "b.jsonl", "--no-validate", "--json")
    assert done.code == 0 and json.loads(done.out)["privileged_leaks"]["n_leaked"] == 1
    assert len((tmp_path / "b.jsonl").read_text().splitlines()) == 4


@pytest.fixture
def wai_cli(capsys):
    from whileai.cli.main import main

    class Result:
        def __init__(self, code: int, out: str, err: str) -> None:
            self.code, self.out, self.err = code, out, err

    def run(*args: object) -> Result:
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run
