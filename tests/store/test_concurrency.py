"""Two processes at once: both succeed or one is told the store is busy; a killed writer changes nothing."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal

import polars as pl
import pytest

import whileai as wai
from tests.store import _workers
from whileai.errors import StoreBusyError

# A fork server imports the library once and forks every writer from that clean, single-threaded
# process: real separate processes, without paying the import per writer.
CTX = mp.get_context("forkserver")
CTX.set_forkserver_preload(["tests.store._workers", "whileai.store", "whileai.store._db", "duckdb"])


def _start(target, *args):
    proc = CTX.Process(target=target, args=args)
    proc.start()
    return proc


def _kill(proc):
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    assert proc.exitcode == -signal.SIGKILL


def test_parallel_writers_all_succeed(tmp_path):
    path = str(tmp_path / "store.duckdb")
    start, results = CTX.Event(), CTX.Queue()
    procs = [_start(_workers.save_many, path, "shared", 3, start, results) for _ in range(2)]
    start.set()
    ids = [i for _ in procs for i in results.get(timeout=60)]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert sorted(ids) == sorted(f"shared@{v}" for v in range(1, 7))
    store = wai.store.open(path)
    assert sorted(d.id for d in store.datasets()) == sorted(ids)
    # every version's rows file is whole and readable
    assert all(store.load_dataset(i).height == 6 for i in ids)


def test_busy_store_raises_after_the_timeout_then_succeeds(tmp_path):
    path = str(tmp_path / "store.duckdb")
    wai.store.open(path).save_dataset([{"scenario_id": "t", "reward": 1.0}], "before")
    ready = CTX.Event()
    holder = _start(_workers.hold_lock, path, 1.5, ready)
    assert ready.wait(60)
    with pytest.raises(StoreBusyError, match="store is busy, retry"):
        wai.store.open(path, timeout=0.3).save_dataset([{"scenario_id": "t", "reward": 0.0}], "impatient")
    # a caller willing to wait gets through once the other writer is done
    info = wai.store.open(path, timeout=30).save_dataset([{"scenario_id": "t", "reward": 0.0}], "patient")
    holder.join(30)
    assert info.id == "patient@1"
    assert sorted(d.id for d in wai.store.open(path).datasets()) == ["before@1", "patient@1"]


def _snapshot(store):
    return (store.sql("SELECT * FROM datasets ORDER BY id"), store.sql("SELECT * FROM eval_sets ORDER BY id"),
            store.sql("SELECT * FROM runs ORDER BY id"))


@pytest.mark.parametrize("worker", [_workers.crash_before_commit, _workers.crash_mid_parquet])
def test_killed_writer_leaves_the_store_as_it_was(tmp_path, worker):
    path = str(tmp_path / "store.duckdb")
    store = wai.store.open(path)
    store.save_dataset([{"scenario_id": "t1", "reward": 1.0}], "victim")
    before = _snapshot(store)
    ready = CTX.Event()
    proc = _start(worker, path, ready)
    assert ready.wait(60)
    _kill(proc)
    after = _snapshot(wai.store.open(path))
    for a, b in zip(before, after):
        assert a.equals(b)
    # no half-written rows file under a real name, and the store takes the next write normally
    for name in os.listdir(store.data_dir):
        if not name.startswith("."):
            assert pl.read_parquet(store.data_dir / name).height >= 1
    info = wai.store.open(path).save_dataset([{"scenario_id": "t2", "reward": 0.0}], "victim")
    assert info.id == "victim@2" and info.parent == "victim@1"
