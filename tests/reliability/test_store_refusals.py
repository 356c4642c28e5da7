"""The store refuses what it cannot read, never downloads anything, and says every failure as a StoreError."""

from __future__ import annotations

import errno
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import duckdb
import pytest

import whileai as wai
from whileai.errors import StoreBusyError, StoreError
from whileai.store import _db
from whileai.table import _write

from ._support import rows


@pytest.fixture
def store(tmp_path):
    return wai.store.open(tmp_path / "store.duckdb", timeout=0.5)


def _future(path, version="9.0.0"):
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO _wai_migrations VALUES ('m900_from_the_future', now())")
    con.execute("INSERT OR REPLACE INTO _wai_meta VALUES ('written_by', ?)", [version])
    con.close()


def test_store_written_by_a_newer_version_is_refused(store):
    store.save_dataset(rows(), "a")
    _future(store.path)
    before = store.path.read_bytes()
    for call in (store.datasets, store.runs, lambda: store.dataset("a"), lambda: store.sql("SELECT 1"),
                 lambda: store.save_dataset(rows(3), "b"), lambda: store.record_run(rows())):
        with pytest.raises(StoreError, match=r"written by whileai 9\.0\.0; upgrade"):
            call()
    assert store.path.read_bytes() == before  # nothing was written to it


def test_store_written_by_a_newer_version_cli_exits_2(store, capsys):
    from whileai.cli.main import main

    store.save_dataset(rows(), "a")
    _future(store.path, "2.3.1")
    assert main(["datasets", "list", "--store", str(store.path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: store file") and "written by whileai 2.3.1; upgrade" in err


def test_store_new_version_records_which_whileai_wrote_it(store):
    store.save_dataset(rows(), "a")
    con = duckdb.connect(str(store.path), read_only=True)
    assert con.execute("SELECT value FROM _wai_meta WHERE key = 'written_by'").fetchone()[0] == wai.__version__
    con.close()


def test_store_sqlite_file_is_refused_without_downloading_an_extension(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    lite = sqlite3.connect(path)
    lite.execute("CREATE TABLE t (x)")
    lite.commit()
    lite.close()
    assert _db._config()["autoinstall_known_extensions"] is False
    assert _db._config()["autoload_known_extensions"] is False
    store = wai.store.open(path)
    for call in (store.datasets, lambda: store.save_dataset(rows(), "a")):
        with pytest.raises(StoreError, match="must be a DuckDB database, got a SQLite file") as info:
            call()
        assert "download" not in str(info.value).lower() and "INSTALL" not in str(info.value)
    assert not (tmp_path / ".duckdb").exists()


def test_store_unwritable_wai_store_is_a_store_error(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's folder should be")
    monkeypatch.setenv("WAI_STORE", str(blocker / "store.duckdb"))
    with pytest.raises(StoreError, match=r"store file .*not-a-folder.*Not a directory.*WAI_STORE to a writable"):
        wai.store.open().save_dataset(rows(), "a")
    with pytest.raises(StoreError, match=r"store folder .*not-a-folder.* cannot be created.*Set WAI_STORE"):
        wai.store.open().record_run(rows())


def test_store_disk_full_while_saving_rows_is_a_store_error(store, monkeypatch):
    def disk_full(src, dst, *a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_write.os, "replace", disk_full)
    with pytest.raises(StoreError, match=r"store file .*store\.duckdb.*No space left.*Free space on the disk"):
        store.save_dataset(rows(), "a")
    assert not list(store.data_dir.glob("*.parquet"))


_IN_SMALL_DISK = textwrap.dedent("""
    import subprocess, sys
    import whileai as wai
    from whileai.errors import StoreError
    folder, mode = sys.argv[1], sys.argv[2]
    store = wai.store.open(folder + "/store.duckdb")
    if mode == "full":
        many = [{"scenario_id": f"t{i}", "reward": 1.0, "prompt": "x" * 2000 + str(i)} for i in range(3000)]
        calls = [lambda i=i: store.save_dataset(many[i * 10:], f"d{i}") for i in range(50)]
    else:
        store.save_dataset([{"scenario_id": "t", "reward": 1.0}], "d")
        subprocess.run(["mount", "-o", "remount,ro", folder], check=True)
        assert len(store.datasets()) == 1  # reads still work on a read-only disk
        calls = [lambda: store.record_run([{"scenario_id": "u", "reward": 0.0}]),
                 lambda: store.save_dataset([{"scenario_id": "u", "reward": 0.0}], "e")]
    try:
        for call in calls:
            call()
    except StoreError as exc:
        print("StoreError:", exc)
        sys.exit(0)
    sys.exit("no StoreError")
""")


@pytest.mark.parametrize(("mode", "fix"), [("full", "Free space on the disk"), ("readonly", "Make it writable")])
def test_store_real_disk_full_and_read_only_disk(tmp_path, mode, fix):
    """A small tmpfs in a private mount namespace: a real ENOSPC and a real EROFS."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("user and mount namespaces are not available here (unshare -rm failed)")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    size = "600k" if mode == "full" else "5m"
    script = f"mount -t tmpfs -o size={size} none {mnt} && exec {sys.executable} -c \"$0\" {mnt} {mode}"
    result = subprocess.run([unshare, "-rm", "sh", "-c", script, _IN_SMALL_DISK], capture_output=True, text=True,
                            timeout=180)
    if "mount" in result.stderr and "permission denied" in result.stderr.lower():
        pytest.skip(f"tmpfs cannot be mounted here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "StoreError: store file" in result.stdout and fix in result.stdout
    assert "Traceback" not in result.stderr


def test_store_changed_schema_binder_error_is_a_store_error(store):
    store.record_run(rows())
    con = duckdb.connect(str(store.path))
    con.execute("ALTER TABLE runs DROP COLUMN warnings")
    con.close()
    with pytest.raises(StoreError, match=r"must have the tables this whileai .* made.*changed outside whileai"):
        store.record_run(rows())
    with pytest.raises(StoreError, match="changed outside whileai"):
        store.runs()


def test_store_changed_schema_constraint_error_is_a_store_error(store):
    store.record_run(rows(), name="nightly")
    con = duckdb.connect(str(store.path))
    con.execute("CREATE UNIQUE INDEX one_per_name ON runs (name)")
    con.close()
    with pytest.raises(StoreError, match=r"Constraint Error.*Restore it from a copy, or move it aside"):
        store.record_run(rows(), name="nightly")


_HOLD_READ_ONLY = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    con.execute("SELECT count(*) FROM datasets").fetchall()
    print("open", flush=True)
    time.sleep(60)
""")


def test_store_reads_run_beside_a_users_read_only_session(store):
    store.save_dataset(rows(), "a")
    store.record_run(rows(), name="base")
    user = subprocess.Popen([sys.executable, "-c", _HOLD_READ_ONLY, str(store.path)], stdout=subprocess.PIPE, text=True)
    try:
        assert user.stdout.readline().strip() == "open"
        assert [d.id for d in store.datasets()] == ["a@1"]
        assert store.dataset("a").n_rows == 4
        assert store.run("base").name == "base"
        assert len(store.runs()) == 1
        assert store.sql("SELECT count(*) AS n FROM datasets")["n"].item() == 1
        assert store.load_dataset("a").height == 4
        # each read above would have waited out the timeout and raised StoreBusyError had it asked for a write lock
        with pytest.raises(StoreBusyError, match="store is busy, retry"):  # a write still waits, then says so
            store.record_run(rows())
        with pytest.raises(StoreBusyError, match=rf"another process \(PID {user.pid}, .*python.*\) has held"):
            store.record_run(rows())
    finally:
        user.kill()
        user.wait()
    assert len(store.runs()) == 1


def test_store_sql_cannot_change_the_records(store):
    store.save_dataset(rows(), "a")
    with pytest.raises(StoreError, match="read-only"):
        store.sql("DELETE FROM datasets")
    assert len(store.datasets()) == 1


@pytest.mark.parametrize("statement", [
    "COPY (SELECT 1 AS a) TO '{out}'",
    "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{out}'",
    "explain  analyse copy (select 1 as a) to '{out}'",
    "SELECT 1; COPY (SELECT 1 AS a) TO '{out}'",
    "EXPORT DATABASE '{out}'",
    "ATTACH '{out}' AS other",
])
def test_store_sql_writes_no_file(store, tmp_path, statement):
    """The read-only connection keeps the store file; the statement check keeps the files around it."""
    store.save_dataset(rows(), "a")
    out = tmp_path / "written"
    with pytest.raises(StoreError, match="queried read-only, so a statement must be a SELECT"):
        store.sql(statement.format(out=out))
    assert not out.exists()


def test_store_sql_cannot_overwrite_a_datasets_file(store):
    store.save_dataset(rows(), "a")
    path = store.sql("SELECT path FROM dataset_files WHERE id = 'a@1'")["path"][0]
    with pytest.raises(StoreError, match="got COPY"):
        store.sql(f"COPY (SELECT 'x' AS scenario_id) TO '{path}' (FORMAT parquet)")
    assert store.sql("SELECT count(*) AS n FROM dataset_rows('a@1')")["n"][0] == len(rows())


@pytest.mark.parametrize("query", ["SHOW TABLES", "DESCRIBE runs", "SUMMARIZE datasets", "EXPLAIN SELECT 1",
                                   "EXPLAIN ANALYZE SELECT count(*) FROM runs", "FROM datasets", "VALUES (1)",
                                   "WITH a AS (SELECT 1 AS x) SELECT x FROM a", "SELECT 1; SELECT 2"])
def test_store_sql_reads_run(store, query):
    store.save_dataset(rows(), "a")
    assert store.sql(query).height >= 1


def test_store_old_store_is_migrated_on_first_read(tmp_path, monkeypatch):
    """A store made before the newest migration gets it on a read, then is read read-only."""
    from whileai.store import _migrations

    path = tmp_path / "old.duckdb"
    monkeypatch.setattr(_migrations, "MIGRATIONS", _migrations.MIGRATIONS[:1])
    wai.store.open(path).save_dataset(rows(), "a")
    monkeypatch.undo()
    store = wai.store.open(path)
    assert [d.id for d in store.datasets()] == ["a@1"]
    names = store.sql("SELECT name FROM _wai_migrations ORDER BY name")["name"].to_list()
    assert names == [m.__name__ for m in _migrations.MIGRATIONS]


def test_store_sql_names_an_unknown_dataset(store):
    """dataset_rows('nope') said: read_parquet cannot take NULL list as parameter."""
    store.record_run(rows(), name="base")  # a store with no dataset: the macro was not made at all
    with pytest.raises(StoreError, match=r"dataset_rows\(nope\) must name a dataset in the store \(datasets: none saved yet\)"):
        store.sql("SELECT * FROM dataset_rows('nope')")
    store.save_dataset(rows(), "a")
    for ref in ("nope", "a@2"):
        with pytest.raises(StoreError, match=rf"dataset_rows\({ref}\) must name a dataset in the store \(datasets: a\)\. "
                                             "List them with wai datasets list"):
            store.sql(f"SELECT * FROM dataset_rows('{ref}')")
    assert store.sql("SELECT count(*) AS n FROM dataset_rows('a@1')")["n"][0] == len(rows())
