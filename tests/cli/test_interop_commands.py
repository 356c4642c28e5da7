"""wai sql, wai record, -o FILE.csv for tables, the exit codes, and an example at the end of every help."""

from __future__ import annotations

import csv
import json

import click
import polars as pl
import pytest

from whileai import store
from whileai.cli.compare import exit_status
from whileai.cli.main import COMMANDS, EXAMPLES, cli
from whileai.testing import rollout_table


@pytest.fixture()
def graded(tmp_path):
    path = tmp_path / "graded.parquet"
    rollout_table(8, 4, seed=3).write_parquet(path)
    return path


def _walk(group: click.Group, ctx: click.Context, prefix: str = ""):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        path = f"{prefix}{name}"
        yield path, command
        if isinstance(command, click.Group):
            yield from _walk(command, ctx, f"{path} ")


def test_every_command_help_ends_with_an_example(wai):
    ctx = click.Context(cli)
    walked = dict(_walk(cli, ctx))
    assert set(COMMANDS) <= set(walked)
    for path in walked:
        res = wai(*path.split(), "--help")
        assert res.code == 0, (path, res)
        tail = res.out.rstrip().splitlines()[-2:]
        assert tail[0].strip() == "Example:", (path, tail)
        assert tail[1].strip() == EXAMPLES[path] and tail[1].strip().startswith(f"wai {path.split()[0]}"), (path, tail)


def test_top_help_documents_the_exit_codes(wai):
    out = wai("--help").out
    for line in ("0  pass", "1  the check failed", "2  usage or bad input", "3  not comparable", "4  internal error"):
        assert line in out


def test_exit_status_by_headline():
    assert exit_status("PASS: pass@1 up") == 0 and exit_status("NO DIFFERENCE") == 0
    assert exit_status("FAIL: regressed") == 1
    assert exit_status("NOT COMPARABLE (3 tasks pair)") == 3
    assert exit_status("SOMETHING NEW") == 4


def test_internal_error_exits_4(wai, monkeypatch, tmp_path):
    import whileai.cli.hack_scan as cmd

    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cmd, "read_rows", boom)
    res = wai("hack-scan", str(tmp_path / "x.jsonl"))
    assert res.code == 4 and res.err.startswith("error: internal error: RuntimeError: kaboom")


def test_pass_at_writes_the_per_task_table_as_csv(wai, graded, tmp_path):
    out = tmp_path / "tasks.csv"
    res = wai("pass-at", str(graded), "-o", str(out))
    assert res.code == 0, res
    rows = list(csv.DictReader(out.open()))
    df = pl.read_parquet(graded)
    expected = df.group_by("scenario_id").agg((pl.col("reward") >= 0.5).mean().alias("rate"))
    assert len(rows) == expected.height
    rate = dict(zip(expected["scenario_id"].to_list(), expected["rate"].to_list()))
    for row in rows:
        assert float(row["pass_rate"]) == pytest.approx(rate[row["task_key"]])


def test_failures_writes_its_table_as_csv(wai, graded, tmp_path):
    from whileai.measure import failure_table

    out = tmp_path / "failures.csv"
    res = wai("failures", str(graded), "--by", "tier", "-o", str(out))
    assert res.code == 0, res
    rows = list(csv.DictReader(out.open()))
    report = failure_table(str(graded), by=("tier",))
    assert [r["group"] for r in rows] == [g.group for g in report.groups]
    for row, g in zip(rows, report.groups):
        assert int(row["failures"]) == g.failures and float(row["pass_rate"]) == pytest.approx(g.pass_rate)
    df = pl.read_parquet(graded)
    for row in rows:  # an independent count per tier
        sub = df.filter(pl.col("tier").cast(pl.String) == row["group"])
        assert int(row["failures"]) == int((sub["reward"] < 0.5).sum())
    assert wai("failures", str(graded), "-o", str(tmp_path / "f.txt")).code == 2


def test_unknown_output_suffix_is_an_error_before_any_work(wai, graded, tmp_path):
    res = wai("pass-at", str(graded), "-o", str(tmp_path / "tasks.xlsx"))
    assert res.code == 2 and res.err.startswith("error: output must end in .csv, .json, .jsonl")
    assert not (tmp_path / "tasks.xlsx").exists()


def test_record_then_sql_over_the_store(wai, graded, tmp_path):
    db = str(tmp_path / "s.duckdb")
    res = wai("record", str(graded), "--agent", "refund-bot", "--version", "v2", "--save-as", "refunds",
              "--store", db, "--json")
    assert res.code == 0, res
    run = json.loads(res.out)
    assert run["name"] == "refund-bot" and run["policy"] == "v2" and run["meta"]["source"] == str(graded)
    info = store.open(db).run(run["id"])
    assert info.pass_at_1 == pytest.approx(run["pass_at_1"])
    res = wai("sql", "SELECT name, policy FROM runs", "--store", db, "--format", "json")
    assert json.loads(res.out) == [{"name": "refund-bot", "policy": "v2"}]
    res = wai("sql", "SELECT scenario_id, count(*) AS n FROM dataset_rows('refunds') GROUP BY 1 ORDER BY 1",
              "--store", db, "--format", "csv")
    lines = res.out.strip().splitlines()
    assert lines[0] == "scenario_id,n" and len(lines) == 9 and all(line.endswith(",4") for line in lines[1:])
    res = wai("sql", "SELECT path FROM dataset_files", "--store", db, "--format", "json")
    path = json.loads(res.out)[0]["path"]
    assert path.startswith("/") and pl.read_parquet(path).height == 32  # readable from anywhere
    res = wai("sql", "SELECT count(*) AS n FROM runs", "--store", db)
    assert res.code == 0 and "1" in res.out
    out = tmp_path / "runs.csv"
    assert wai("sql", "SELECT name FROM runs", "--store", db, "-o", str(out)).code == 0
    assert out.read_text().splitlines() == ["name", "refund-bot"]


def test_record_takes_several_files_as_one_run(wai, tmp_path):
    db = str(tmp_path / "s.duckdb")
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    df = rollout_table(8, 4, seed=3)
    df.filter(pl.col("scenario_id") < "sc-00000004").write_parquet(a)
    df.filter(pl.col("scenario_id") >= "sc-00000004").write_parquet(b)
    res = wai("record", str(a), str(b), "--agent", "bot", "--version", "v1", "--store", db, "--json")
    assert res.code == 0, res
    run = json.loads(res.out)
    assert run["n_tasks"] == 8 and run["n_rows"] == 32 and "source" not in run["meta"]


def test_sql_is_read_only_and_says_what_went_wrong(wai, graded, tmp_path):
    db = str(tmp_path / "s.duckdb")
    assert wai("record", str(graded), "--agent", "a", "--version", "v1", "--store", db).code == 0
    res = wai("sql", "DELETE FROM runs", "--store", db)
    assert res.code == 2 and res.err.startswith("error: the query failed")
    res = wai("sql", "SELECT count(*) AS n FROM runs", "--store", db, "--format", "json")
    assert json.loads(res.out) == [{"n": 1}]  # still there
    res = wai("sql", "SELECT 1", "--store", str(tmp_path / "none.duckdb"))
    assert res.code == 2 and "store must exist" in res.err
    assert not (tmp_path / "none.duckdb").exists()


def test_record_refuses_an_empty_version(wai, graded, tmp_path):
    """--version '' recorded the policy read from the rows instead of the version the user gave."""
    db = tmp_path / "s.duckdb"
    for version in ("", "  "):
        res = wai("record", str(graded), "--agent", "a", "--version", version, "--store", str(db))
        assert res.code == 2 and res.err.startswith("error: --version must name the agent version") and not db.exists()
