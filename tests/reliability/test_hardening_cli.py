"""CLI writes and silent reads: read-only folders, a full disk, closed pipes, devices, and reads that misled.

Destructive cases run on a small tmpfs in a private mount namespace (``unshare -rm``), skipped
with the reason where the kernel forbids it.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from whileai.errors import ArgumentError, SchemaError

from ._support import WAI, rows, wai, wai_process, write_rows

DATA = Path(__file__).resolve().parents[1] / "data"


def _private_mount(tmp_path: Path, script: str, *, size: str, read_only: bool = False) -> subprocess.CompletedProcess:
    """Run ``script`` (sh) with ``$DISK`` a fresh tmpfs of ``size`` (read-only if asked) in its own mount namespace."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("user and mount namespaces are not available here (unshare -rm failed)")
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = f"mount -t tmpfs -o size={size} none {disk}"
    if read_only:
        mount += f" && mount -o remount,ro {disk}"
    done = subprocess.run([unshare, "-rm", "sh", "-c", f"{mount} && DISK={disk} && export DISK && {script}"],
                          capture_output=True, text=True, timeout=180)
    if "mount" in done.stderr and "permission denied" in done.stderr.lower():
        pytest.skip(f"tmpfs cannot be mounted here: {done.stderr.strip()}")
    return done


def test_writes_table_outputs_into_a_read_only_folder_exit_2(tmp_path):
    src = write_rows(tmp_path / "g.jsonl")
    script = " ; ".join(f"{WAI} {cmd} {src} -o $DISK/{out}; echo rc=$?" for cmd, out in
                        (("pass-at", "t.csv"), ("failures --by scenario_id", "f.csv"), ("export", "x.parquet")))
    done = _private_mount(tmp_path, script, size="1m", read_only=True)
    assert done.stdout.count("rc=2") == 3, done.stdout + done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("cannot be written") == 3, done.stderr
    assert "Read-only file system" in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a 0555 folder anyway")
def test_writes_table_outputs_into_a_0555_folder_exit_2(tmp_path, capsys, monkeypatch):
    src = write_rows(tmp_path / "g.jsonl")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    for cmd, out in (("pass-at", "t.csv"), ("failures", "f.csv")):
        result = wai(capsys, monkeypatch, cmd, src, *(["--by", "scenario_id"] if cmd == "failures" else []),
                     "-o", locked / out)
        assert result.code == 2 and "Permission denied" in result.err, result


def test_writes_parquet_export_on_a_full_disk_keeps_the_old_file(tmp_path):
    random_rows = [{**r, "messages": [{"role": "user", "content": secrets.token_hex(4000)},
                                      {"role": "assistant", "content": secrets.token_hex(4000)}]}
                   for r in rows(n_tasks=60, k=2)]
    src = write_rows(tmp_path / "g.jsonl", random_rows)  # about 2 MB that does not compress
    script = f"printf old > $DISK/x.parquet && {WAI} export {src} -o $DISK/x.parquet; echo rc=$?; cat $DISK/x.parquet"
    done = _private_mount(tmp_path, script, size="512k")
    assert "rc=2" in done.stdout, done.stdout + done.stderr
    assert "No space left on device" in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.stdout.rstrip().endswith("old")  # the old file is intact


def test_writes_stdout_closed_early_exits_cleanly(tmp_path):
    """``wai ... -o - | head -1``: the reader closing the pipe is not an error."""
    src = write_rows(tmp_path / "g.jsonl", rows(n_tasks=3000, k=2))
    for args in (("export", src, "-o", "-"), ("pass-at", src, "-o", "-")):
        proc = subprocess.Popen([WAI, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0, (args, err)
        assert "nothing was written" not in err and "error" not in err, (args, err)


def test_writes_dev_null_for_table_outputs(tmp_path, capsys, monkeypatch):
    src = write_rows(tmp_path / "g.jsonl")
    for args in (("pass-at", src), ("failures", src, "--by", "scenario_id")):
        result = wai(capsys, monkeypatch, *args, "-o", os.devnull)
        assert result.code == 0, result
    assert Path(os.devnull).is_char_device()


def test_store_full_disk_says_the_disk_is_full():
    """DuckDB reports a full disk through several exception classes; each is said as a full disk."""
    import duckdb

    from whileai.store._db import store_error

    for exc in (duckdb.FatalException("Could not write to WAL: No space left on device"),
                duckdb.InvalidInputException("database has been invalidated: IO Error: No space left on device"),
                OSError(28, "No space left on device")):
        err = store_error(Path("/tmp/s.duckdb"), exc)
        assert "the disk is full" in err.message and "move it aside" not in err.message, err.message


# ---- reads that misled -------------------------------------------------------------------------


def test_inputs_lm_eval_repeated_doc_id_is_refused(tmp_path):
    from whileai import table

    original = next((DATA / "lm_eval" / "run").glob("samples_wai_mc_*.jsonl"))
    twice = tmp_path / original.name
    twice.write_bytes(original.read_bytes() * 2)
    with pytest.raises(SchemaError, match="lists doc_id .* more than once under filter"):
        table.frame(twice)
    assert table.frame(original).height == 4


def test_inputs_judge_trust_conflicting_labels_are_refused(tmp_path, capsys, monkeypatch):
    graded = write_rows(tmp_path / "g.jsonl", [{**r, "rollout_id": f"r{i}"} for i, r in enumerate(rows(4, 2))])
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"key": f"r{i}", "label": i % 2}) + "\n" for i in range(8))
                      + json.dumps({"key": "r0", "label": 1}) + "\n" + json.dumps({"key": "r0", "label": 1}) + "\n")
    result = wai(capsys, monkeypatch, "judge-trust", graded, "--labels", labels)
    assert result.code == 2, result
    assert "1 row(s) labeled both 0 and 1" in result.err


def test_inputs_gzip_on_stdin_is_read(tmp_path):
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in rows(3, 2)).encode())
    done = subprocess.run([WAI, "pass-at", "-", "--json"], input=data, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n_tasks"] == 3


def test_inputs_compare_stdin_twice_is_refused(tmp_path):
    src = write_rows(tmp_path / "g.jsonl")
    done = wai_process("compare", "-", "-", stdin=open(src))  # noqa: SIM115
    assert done.returncode == 2, done.stderr
    assert "stdin can be read only once" in done.stderr


def test_inputs_record_counts_nan_rewards_as_not_graded(tmp_path):
    from whileai import store

    items = [{**r, "reward": float("nan")} for r in rows(8, 2)] + rows(2, 2)
    info = store.open(tmp_path / "s.duckdb").record_run(items, name="nan")
    assert info.n_rows == 20 and info.n_graded == 4
    assert "20% graded" in str(info)
    assert not math.isnan(info.pass_at_1)


def test_inputs_save_dataset_meta_refuses_non_json_values(tmp_path):
    from whileai import store

    s = store.open(tmp_path / "s.duckdb")
    for meta in ({"f": object()}, {"x": float("nan")}, {"when": __import__("datetime").date(2026, 1, 1)}):
        with pytest.raises(ArgumentError, match="meta must hold JSON values"):
            s.save_dataset(rows(), "d", meta=meta)
    assert s.save_dataset(rows(), "d", meta={"note": "ok", "n": 1}).version == 1  # the refused calls saved nothing


