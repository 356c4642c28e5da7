"""``--engine ray``: standard output carries the report alone, whatever else prints while Ray runs.

Ray's driver prints the cluster's error messages (``(raylet) A worker died ...``) on ``sys.stdout``
from a thread of its own, looking ``sys.stdout`` up at each print, with ``log_to_driver`` on or off
(``ray._private.worker.listen_error_messages``). A CI run of ``wai hack-scan --engine ray --json``
once got that line in front of its JSON. The command here prints the way that thread does, so the
check needs no Ray; ``tests/engines`` runs the same check through Ray's own printer.
"""

from __future__ import annotations

import json
import sys
import threading

import click
import pytest
from click.testing import CliRunner

from whileai.cli._options import engine_option, json_option
from whileai.cli._output import emit, report_stream
from whileai.measure import pass_at

NOISE = "(raylet) A worker died or was killed while executing a task by an unexpected system error."


def _rows():
    return [{"scenario_id": f"t{i % 4}", "reward": float(i % 3 == 0)} for i in range(16)]


@click.command()
@engine_option
@click.option("--table", "as_table", is_flag=True)
@json_option
def _command(engine: str, as_table: bool, as_json: bool) -> None:
    def chatter() -> None:  # Ray's listener: sys.stdout looked up at the time of the print
        print(NOISE, file=sys.stdout, flush=True)

    thread = threading.Thread(target=chatter)
    thread.start()
    thread.join()
    print("a progress line from the step itself")
    if as_table:  # as wai pass-at --table prints its table
        click.echo(pass_at(_rows(), k=2).table(style="text"), file=report_stream())
        return
    emit(pass_at(_rows(), k=2), as_json)


@pytest.mark.parametrize("as_json", [True, False])
def test_with_engine_ray_stdout_is_the_report_alone(as_json):
    args = ["--engine", "ray"] + (["--json"] if as_json else [])
    res = CliRunner().invoke(_command, args)
    assert res.exit_code == 0, res.output
    report = pass_at(_rows(), k=2)
    if as_json:
        assert json.loads(res.stdout) == json.loads(report.to_json())
    else:
        assert res.stdout.strip() == str(report).strip()
    assert NOISE in res.stderr and "a progress line" in res.stderr


def test_with_engine_ray_a_table_goes_to_stdout_too():
    res = CliRunner().invoke(_command, ["--engine", "ray", "--table"])
    assert res.exit_code == 0, res.output
    assert res.stdout == pass_at(_rows(), k=2).table(style="text") + "\n" and NOISE in res.stderr


def test_the_local_engine_prints_as_it_always_did():
    res = CliRunner().invoke(_command, ["--json"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(NOISE) and "a progress line" in res.stdout


def test_stdout_is_restored_after_a_ray_command(capsys):
    before = sys.stdout
    CliRunner().invoke(_command, ["--engine", "ray", "--json"])
    assert sys.stdout is before
    print("after")
    assert capsys.readouterr().out == "after\n"


@pytest.mark.parametrize("extra", [["--map", "task=doc_id"], ["--scorer", "acc"]])
def test_engine_ray_refuses_map_and_scorer_before_any_work(wai, tmp_path, extra):
    rows = tmp_path / "rows.parquet"
    rows.write_text("never read")
    for args in (["pass-at", rows], ["compare", rows, rows], ["hack-scan", rows]):
        res = wai(*args, "--engine", "ray", *extra)
        assert res.code == 2 and res.out == ""
        assert "--map, --scorer and --shape must be left off with --engine ray" in res.err and len(res.err.splitlines()) == 1


def test_engine_ray_refuses_stdin(wai):
    res = wai("pass-at", "-", "--engine", "ray", stdin="{}\n")
    assert res.code == 2 and "got - (stdin)" in res.err
