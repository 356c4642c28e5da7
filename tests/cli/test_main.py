"""The entry point: help, version, one-line errors with exit 2, --debug, Ctrl-C, start-up time."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import time

import polars as pl
import pytest

from whileai.cli.main import COMMANDS, cli


def test_help_lists_every_command(wai):
    res = wai("--help")
    assert res.code == 0
    for name in COMMANDS:
        assert name in res.out


def test_every_command_has_help_text(wai):
    for name in COMMANDS:
        res = wai(name, "--help")
        assert res.code == 0 and "Usage: wai " + name in res.out, name
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command.help and len(command.help) > 20, name


def test_version(wai):
    res = wai("--version")
    assert res.code == 0 and "wai, version" in res.out


def test_unknown_command_is_a_usage_error(wai):
    res = wai("bogus")
    assert res.code == 2 and "No such command 'bogus'" in res.err


def _bad_inputs(tmp_path):
    folder = tmp_path / "empty_folder"
    folder.mkdir()
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1 this is not parquet PAR1")
    bad_line = tmp_path / "bad.jsonl"
    bad_line.write_text('{"scenario_id": "t1", "reward": 1}\n{"scenario_id": "t2", "reward": \n')
    wrong_type = tmp_path / "wrong.jsonl"
    wrong_type.write_text('{"scenario_id": "t1", "reward": "high"}\n')
    gz = tmp_path / "bad.jsonl.gz"
    with gzip.open(gz, "wt") as handle:
        handle.write('{"scenario_id": "t1"}\nnot json\n')
    wrong_parquet = tmp_path / "wrong.parquet"
    pl.DataFrame({"scenario_id": ["t1"], "reward": ["high"]}).write_parquet(wrong_parquet)
    return [
        (tmp_path / "missing.jsonl", "does not exist"),
        (wrong_parquet, "column 'reward' must hold Float64 values, got dtype String"),
        (folder, "must hold .parquet, .jsonl, .json, .eval or .arrow files"),
        (corrupt, "is not a readable Parquet file"),
        (bad_line, "bad.jsonl': line 2 is not valid JSON"),
        (wrong_type, "reward='high', which is not a number"),
        (gz, "bad.jsonl.gz': line 2 is not valid JSON"),
    ]


def test_bad_input_is_one_line_and_exit_2(wai, tmp_path):
    for path, fragment in _bad_inputs(tmp_path):
        res = wai("hack-scan", path)
        assert res.code == 2, (path, res)
        assert res.err.startswith("error: ") and fragment in res.err, (path, res.err)
        assert res.err.count("\n") == 1 and "Traceback" not in res.err
        assert res.out == ""


def test_bad_input_in_a_real_process(wai_process, tmp_path):
    proc = wai_process("hack-scan", tmp_path / "missing.jsonl")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: file ") and proc.stderr.count("\n") == 1


def test_debug_shows_the_traceback(wai, tmp_path):
    res = wai("--debug", "hack-scan", tmp_path / "missing.jsonl")
    assert res.code == 2 and "Traceback" in res.err and res.err.rstrip().splitlines()[-1].startswith("error: ")


def test_internal_error_is_one_line_exit_1(wai, monkeypatch, tmp_path):
    import whileai.cli._rows as common

    def boom(source, columns=None):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(common, "read_rows", boom)
    import whileai.cli.hack_scan as cmd

    monkeypatch.setattr(cmd, "read_rows", boom)
    res = wai("hack-scan", tmp_path / "x.jsonl")
    assert res.code == 4 and res.err.startswith("error: internal error: RuntimeError: kaboom")


def test_ctrl_c_exits_130(wai_process):
    # reading rows from stdin that never arrive: the process waits until interrupted
    proc = subprocess.Popen([wai_process.exe, "hack-scan", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err


def test_help_loads_no_library(wai_process):
    # What keeps --help fast is what it does not import; its time is in benchmarks/bench_cli.py.
    assert wai_process("--help").returncode == 0
    code = ("import sys; from whileai.cli.main import main; main(['--help']); "
            "print(sorted(m for m in ('polars', 'duckdb', 'numpy', 'scipy', 'pyarrow', 'httpx', 'whileai.table') "
            "if m in sys.modules), file=sys.stderr)")
    proc = subprocess.run([sys_executable(), "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr.strip() == "[]"


def sys_executable() -> str:
    import sys

    return sys.executable


def test_json_flag_prints_json(wai, tmp_path):
    res = wai("datasets", "list", "--json")
    assert res.code == 0 and json.loads(res.out) == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_modules_stay_thin(name):
    import importlib
    import inspect

    module = importlib.import_module(COMMANDS[name].split(":")[0])
    assert len(inspect.getsource(module).splitlines()) < 300


def test_shell_completion_as_docs_cli_md_says(wai_process):
    """docs/cli.md, "Shell completion": the bash script, and completing --shape's names."""
    env = dict(os.environ, _WAI_COMPLETE="bash_source")
    proc = subprocess.run([wai_process.exe], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "_wai_completion()" in proc.stdout
    env = dict(os.environ, _WAI_COMPLETE="bash_complete", COMP_WORDS="wai pass-at x --shape prom", COMP_CWORD="4")
    proc = subprocess.run([wai_process.exe], env=env, capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["plain,promptfoo"]
