"""A write interrupted by SIGTERM or Ctrl-C leaves no temporary file and prints no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ._support import temp_files, write_rows

# A CLI run whose write phase is slow: each row written sleeps, so the signal lands mid-write.
_SLOW_CLI = textwrap.dedent("""
    import sys, time
    import whileai.table._write as w
    real = w.iter_rows
    def slow(df, **kw):
        for row in real(df, **kw):
            time.sleep(0.05)
            yield row
    w.iter_rows = slow
    import whileai.table
    real_open = w.open_binary
    class Slow:
        def __init__(self, handle):
            self.handle = handle
        def write(self, data):
            time.sleep(0.5)
            return self.handle.write(data)
        def __getattr__(self, name):
            return getattr(self.handle, name)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            self.handle.close()
    def slow_open(tmp, target, **kw):
        return Slow(real_open(tmp, target, **kw))
    w.open_binary = whileai.table.open_binary = slow_open
    from whileai.cli.main import main
    sys.exit(main(sys.argv[1:]))
""")


def _run_until_temp(tmp_path: Path, args: list[str], sig: int) -> subprocess.CompletedProcess:
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_CLI, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not temp_files(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert temp_files(tmp_path), "the write never started"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("output", ["clean.jsonl", "clean.jsonl.gz"])
def test_writes_sigterm_removes_the_temp_file(tmp_path, output):
    src, ev = _sources(tmp_path)
    (tmp_path / output).write_text("old\n")
    result = _run_until_temp(tmp_path, ["decontaminate", str(src), "--eval", str(ev), "-o", output], signal.SIGTERM)
    assert result.returncode == 128 + signal.SIGTERM
    assert temp_files(tmp_path) == []
    assert (tmp_path / output).read_text() == "old\n"  # the old file is untouched
    assert "Traceback" not in result.stderr


# A SIGTERM that lands the moment the temporary file is made (the earliest a watcher can see it):
# the handler is installed before the file exists, so the write still unwinds and removes it.
_TERM_AS_MADE = textwrap.dedent("""
    import os, signal, sys
    real = os.open
    def open_then_term(path, flags, mode=0o777, *args, **kwargs):
        fd = real(path, flags, mode, *args, **kwargs)
        if str(path).endswith(".wai-tmp"):
            os.kill(os.getpid(), signal.SIGTERM)
        return fd
    os.open = open_then_term
    from whileai import table
    table.write(table.frame([{"scenario_id": "t1", "prompt": "p", "reward": 1.0}]), sys.argv[1])
""")


@pytest.mark.parametrize("output", ["out.jsonl", "out.parquet", "-"])
def test_a_sigterm_as_the_temporary_file_is_made_leaves_nothing(tmp_path, output):
    result = subprocess.run([sys.executable, "-c", _TERM_AS_MADE, output], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert result.returncode == 128 + signal.SIGTERM, result.stderr  # unwound, not killed by the signal
    assert temp_files(tmp_path) == [] and not (tmp_path / output).exists()
    assert "Traceback" not in result.stderr


def test_writes_ctrl_c_removes_the_temp_file_without_a_traceback(tmp_path):
    from whileai.cli.main import EXIT_INTERRUPTED

    rows = [dict(r, scenario_id=f"x{i}") for i, r in enumerate(_many())]
    src = write_rows(tmp_path / "rows.jsonl", rows)
    result = _run_until_temp(tmp_path, ["export", str(src), "-o", "train.jsonl"], signal.SIGINT)
    assert result.returncode == EXIT_INTERRUPTED, result.stderr
    assert temp_files(tmp_path) == []
    assert not (tmp_path / "train.jsonl").exists()
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert result.stderr.strip() == "interrupted"


def test_writes_sigkill_leftover_is_swept_by_the_next_write(tmp_path, monkeypatch):
    src, ev = _sources(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_CLI, "decontaminate", str(src), "--eval", str(ev),
                             "-o", "clean.jsonl"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not temp_files(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    left = temp_files(tmp_path)
    assert len(left) == 1 and f".{proc.pid}." in left[0]  # names the writer, so it can be swept
    os.utime(tmp_path / left[0], (0, 0))  # older than STALE_TEMP_AGE_S
    from whileai import table

    table.write(table.frame(src), tmp_path / "clean.jsonl")
    assert temp_files(tmp_path) == []


def _sources(tmp_path: Path) -> tuple[Path, Path]:
    """Training rows and an eval set they do not overlap, so decontaminate writes every row."""
    from ._support import rows

    src = write_rows(tmp_path / "rows.jsonl", rows(n_tasks=40, k=2))
    ev = write_rows(tmp_path / "eval.jsonl", [{"scenario_id": "e1", "prompt": "an unrelated eval question entirely"}])
    return src, ev


def _many() -> list[dict]:
    from ._support import rows

    return rows(n_tasks=40, k=2)
