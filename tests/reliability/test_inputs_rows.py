"""Rows the library used to accept silently, giving wrong results: each is now refused or warned about."""

from __future__ import annotations

import json

import polars as pl
import pytest

import whileai as wai
from whileai import table
from whileai.errors import SchemaError

from ._support import rows, write_rows


def _row(i=0, **messages_override):
    return {"scenario_id": f"t{i}", "rollout_index": 0, "reward": 1.0,
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello", **messages_override}]}


def test_inputs_duplicate_task_and_rollout_index_warns(tmp_path):
    src = rows(n_tasks=3, k=4)
    report = wai.measure.pass_at(src + src)
    assert any("repeat a (task, rollout_index) pair" in w and "'t0' rollout 0 appears 2 times" in w
               for w in report.warnings), report.warnings
    assert not any("repeat a" in w for w in wai.measure.pass_at(src).warnings)


def test_inputs_duplicate_warning_in_compare_and_cli(tmp_path, capsys, monkeypatch):
    from ._support import wai as run

    doubled = write_rows(tmp_path / "doubled.jsonl", rows(3, 4) * 2)
    result = run(capsys, monkeypatch, "pass-at", doubled)
    assert result.code == 0 and "repeat a (task, rollout_index) pair" in result.out
    delta = wai.measure.delta_report(rows(3, 4), rows(3, 4) * 2)
    assert any("repeat a (task, rollout_index)" in w for w in delta.warnings)


def test_inputs_separate_runs_are_not_duplicates():
    a = [dict(r, lineage={"eval_run": 1}) for r in rows(3, 4)]
    b = [dict(r, lineage={"eval_run": 2}) for r in rows(3, 4)]
    assert not any("repeat a" in w for w in wai.measure.pass_at(a + b).warnings)


@pytest.mark.parametrize("source", ["list", "jsonl", "frame"])
def test_inputs_tool_calls_as_a_string_is_refused(tmp_path, source):
    bad = [_row(0), _row(1, tool_calls="oops")]
    data = {"list": bad, "jsonl": write_rows(tmp_path / "r.jsonl", bad), "frame": pl.DataFrame(bad)}[source]
    with pytest.raises(SchemaError, match=r"row 1 has a message whose tool_calls must be a list.*'oops'"):
        table.frame(data)


def test_inputs_tool_calls_as_json_text_of_a_list_still_reads():
    calls = json.dumps([{"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{}"}}])
    df = table.frame([_row(0, tool_calls=calls)])
    assert df["messages"][0][1]["tool_calls"][0]["name"] == "get"


@pytest.mark.parametrize("source", ["list", "jsonl", "frame"])
@pytest.mark.parametrize(("role", "shown"), [(None, "None"), ("wizard", "'wizard'")])
def test_inputs_role_null_or_unknown_is_refused_naming_the_row(tmp_path, source, role, shown):
    bad = [_row(0), _row(1), {**_row(2), "messages": [{"role": "user", "content": "hi"}, {"role": role, "content": "x"}]}]
    data = {"list": bad, "jsonl": write_rows(tmp_path / "r.jsonl", bad), "frame": pl.DataFrame(bad)}[source]
    with pytest.raises(SchemaError, match=rf"row 2 has a message with role {shown}; role must be one of system, user, "
                                          "assistant, tool"):
        table.frame(data)


def test_inputs_role_missing_key_is_refused():
    with pytest.raises(SchemaError, match="row 0 has a message with role None"):
        table.frame([{"scenario_id": "t", "messages": [{"content": "hi"}]}])


def test_inputs_unknown_role_is_never_exported(tmp_path):
    from whileai.exporters import export_dataset

    bad = [_row(0), {**_row(1), "messages": [{"role": "user", "content": "hi"}, {"role": "wizard", "content": "x"}]}]
    with pytest.raises(SchemaError, match="role 'wizard'"):
        export_dataset(bad, tmp_path / "train.jsonl")
    assert not (tmp_path / "train.jsonl").exists()
