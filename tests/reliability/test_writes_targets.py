"""Writes never clobber: devices and FIFOs stay what they are, links stay links, modes stay."""

from __future__ import annotations

import gzip
import os
import stat
import subprocess
import threading

import polars as pl
import pytest

from whileai import table
from whileai.errors import ArgumentError, InputFileError
from whileai.table import _write

from ._support import WAI, rows, temp_files, wai, wai_process, write_rows


@pytest.fixture
def df() -> pl.DataFrame:
    return table.frame(rows())


@pytest.fixture
def no_rename_onto_dev(monkeypatch):
    """Fail loudly (and harmlessly) if a write tries to rename a file over anything under /dev."""
    real = os.replace
    calls: list[tuple[str, str]] = []

    def guarded(src, dst, *a, **kw):
        calls.append((str(src), str(dst)))
        if str(os.path.realpath(dst)).startswith("/dev/") or str(dst).startswith("/dev/"):
            raise AssertionError(f"renamed {src} over {dst}")
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(_write.os, "replace", guarded)
    return calls


def test_writes_dev_null_is_written_in_place(df, no_rename_onto_dev):
    table.write(df, "/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert no_rename_onto_dev == []


def test_writes_dev_full_fails_with_a_clear_error(df, no_rename_onto_dev):
    if not os.path.exists("/dev/full"):
        pytest.skip("this system has no /dev/full")
    with pytest.raises(InputFileError, match=r"/dev/full.*cannot be written \(No space left"):
        table.write(df, "/dev/full")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_writes_dev_full_cli_exits_2(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("this system has no /dev/full")
    src = write_rows(tmp_path / "rows.jsonl")
    result = wai_process("export", src, "-o", "/dev/full")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: output '/dev/full' cannot be written")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_writes_dev_stdout_goes_to_stdout(tmp_path, df, no_rename_onto_dev, capsysbinary):
    table.write(df, "/dev/stdout")
    out = capsysbinary.readouterr().out.decode()
    assert out.count("\n") == df.height and '"scenario_id": "t0"' in out
    assert os.path.islink("/dev/stdout") or stat.S_ISCHR(os.stat("/dev/stdout").st_mode)


def test_writes_dev_stdout_cli_appends_and_keeps_report_off_stdout(tmp_path):
    src = write_rows(tmp_path / "rows.jsonl")
    log = tmp_path / "log.jsonl"
    log.write_text('{"first": 1}\n')
    with open(log, "a") as handle:
        result = subprocess.run([WAI, "export", str(src), "-o", "/dev/stdout"], stdout=handle,
                                stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "export (openai)" in result.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == '{"first": 1}' and len(lines) == 1 + 4  # appended, not truncated or replaced
    assert all(line.startswith("{") for line in lines)  # the report went to stderr


def test_writes_dash_is_stdout(tmp_path, capsys, monkeypatch):
    src = write_rows(tmp_path / "rows.jsonl")
    result = wai(capsys, monkeypatch, "select", src, "--mode", "rl", "-o", "-")
    assert result.code == 0, result.err
    assert not (tmp_path / "-").exists() and not os.path.exists("-")
    assert result.out.count('"scenario_id"') == 4  # two mixed groups of two
    assert "select" in result.err.lower() or "kept" in result.err.lower()


def test_writes_fifo_is_written_in_place(tmp_path, df):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    try:
        table.write(df, fifo)
        reader.join(10)
        assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced by a regular file"
        assert got and got[0].count(b"\n") == df.height
    finally:
        if reader.is_alive() and stat.S_ISFIFO(os.stat(fifo).st_mode):  # release the reader
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_writes_symlink_target_is_replaced_and_link_kept(tmp_path, df):
    real = tmp_path / "data" / "rows.jsonl"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(real)
    table.write(df, link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text().count("\n") == df.height
    assert temp_files(tmp_path) == [] and temp_files(real.parent) == []


def test_writes_keep_the_old_file_mode(tmp_path, df):
    target = tmp_path / "secret.jsonl"
    target.write_text("old\n")
    target.chmod(0o600)
    table.write(df, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    export_target = tmp_path / "train.jsonl"
    export_target.write_text("old\n")
    export_target.chmod(0o640)
    from whileai.exporters import export_dataset

    export_dataset(rows(), export_target)
    assert stat.S_IMODE(export_target.stat().st_mode) == 0o640


def test_writes_new_file_gets_umask_mode(tmp_path, df):
    old = os.umask(0o027)
    try:
        table.write(df, tmp_path / "new.jsonl")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.jsonl").stat().st_mode) == 0o640


def test_writes_refuse_a_folder_and_a_socket(tmp_path, df):
    with pytest.raises(InputFileError, match="is a folder"):
        table.write(df, tmp_path)
    import socket

    path = tmp_path / "s.jsonl"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        with pytest.raises(InputFileError, match="must be a regular file.*got a socket"):
            table.write(df, path)
    finally:
        sock.close()


def test_writes_jsonl_gz_header_records_the_final_name(tmp_path, df):
    def header_name(path):
        data = path.read_bytes()
        assert data[:2] == b"\x1f\x8b" and data[3] & 0x08, "no FNAME field"
        return data[10:data.index(b"\x00", 10)].decode()

    table.write(df, tmp_path / "rows.jsonl.gz")
    assert header_name(tmp_path / "rows.jsonl.gz") == "rows.jsonl"
    from whileai.exporters import export_dataset

    export_dataset(rows(), tmp_path / "train.jsonl.gz")
    assert header_name(tmp_path / "train.jsonl.gz") == "train.jsonl"
    with gzip.open(tmp_path / "train.jsonl.gz", "rt") as handle:
        assert len(handle.readlines()) == 4


def test_writes_temp_names_are_sweepable_and_stale_ones_swept(tmp_path, df):
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".rows.jsonl.{dead.pid}.deadbeef.wai-tmp"
    stale.write_text("half a file")
    os.utime(stale, (0, 0))
    mine = tmp_path / f".rows.jsonl.{os.getpid()}.cafecafe.wai-tmp"  # a live writer's: kept
    mine.write_text("in progress")
    os.utime(mine, (0, 0))
    fresh = tmp_path / f".rows.jsonl.{dead.pid}.0badf00d.wai-tmp"  # recent: kept (maybe another machine's)
    fresh.write_text("recent")
    seen: list[str] = []
    real_replace = os.replace

    def spy(src, dst, *a, **kw):
        seen.append(os.path.basename(src))
        return real_replace(src, dst, *a, **kw)

    import unittest.mock

    with unittest.mock.patch.object(_write.os, "replace", spy):
        table.write(df, tmp_path / "rows.jsonl")
    assert not stale.exists() and mine.exists() and fresh.exists()
    assert seen and seen[0].startswith(".rows.jsonl.") and seen[0].endswith(".wai-tmp")


def test_writes_unknown_suffix_is_refused(tmp_path, df):
    for name in ("rows.csv", "rows.json", "rows"):
        with pytest.raises(ArgumentError, match=r"output must end in \.jsonl"):
            table.write(df, tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_writes_every_writer_uses_the_one_atomic_writer():
    """No module but the table writer renames files or opens gzip for writing on its own."""
    import pathlib
    import re

    import whileai

    root = pathlib.Path(whileai.__file__).parent
    pattern = re.compile(r"os\.replace\(|os\.rename\(|mkstemp\(|mkdtemp\(|gzip\.open\([^)]*['\"]w")
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel == "table/_write.py" or rel.startswith("verify/"):  # verify: the code sandbox's own temp folder
            continue
        code = "\n".join(line for line in path.read_text().splitlines() if ">>>" not in line)  # doctests may
        if pattern.search(code):
            offenders.append(rel)
    assert offenders == []
