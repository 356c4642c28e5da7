"""The store: datasets with versions, lineage, hashes and Parquet; eval sets; SQL; migrations."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import whileai as wai
from whileai import table
from whileai.errors import ArgumentError, EmptyInputError, StoreError
from whileai.store import _migrations
from whileai.testing import rollout_table


@pytest.fixture
def store():
    return wai.store.open()


@pytest.fixture
def df():
    return rollout_table(20, 4, seed=1)


def test_open_uses_wai_store_and_creates_nothing_until_a_write(store, tmp_path):
    assert store.path == tmp_path / ".wai" / "store.duckdb"
    assert not store.exists
    assert len(store.datasets()) == 0 and len(store.runs()) == 0
    assert "no datasets" in str(store.datasets())
    assert not store.path.exists()


def test_default_path_is_in_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("WAI_STORE")
    monkeypatch.chdir(tmp_path)
    assert wai.store.open().path == tmp_path / ".wai" / "store.duckdb"
    assert wai.store.open(tmp_path / "x.duckdb").path == tmp_path / "x.duckdb"


def test_save_and_load_round_trip(store, df):
    info = store.save_dataset(df, "refunds")
    assert (info.id, info.name, info.version, info.purpose) == ("refunds@1", "refunds", 1, "train")
    assert (info.n_rows, info.n_tasks, info.k, info.n_graded) == (80, 20, 4, 80)
    assert info.content_hash == wai.store.content_hash(table.frame(df))
    assert os.path.exists(info.path) and info.path.endswith(".parquet")
    assert_frame_equal(store.load_dataset("refunds"), table.frame(df))
    narrow = store.load_dataset("refunds@1", columns=["reward"])
    assert "reward" in narrow.columns and "markers" not in narrow.columns
    assert store.scan_dataset("refunds").select(pl.len()).collect().item() == 80
    # DuckDB and Polars read the Parquet file directly
    assert pl.read_parquet(info.path).height == 80


def test_versions_lineage_and_reuse(store, df):
    first = store.save_dataset(df, "refunds")
    again = store.save_dataset(df.reverse(), "refunds")  # same content, other order
    assert again.reused and again.id == "refunds@1"
    second = store.save_dataset(df.head(40), "refunds")
    assert second.id == "refunds@2" and second.parent == "refunds@1" and not second.reused
    other = store.save_dataset(df.head(8), "small", parent="refunds@2")
    assert other.parent == "refunds@2"
    assert store.dataset("refunds").id == "refunds@2"
    assert store.dataset("refunds@1").content_hash == first.content_hash
    assert [d.id for d in store.datasets(name="refunds")] == ["refunds@2", "refunds@1"]
    diff = store.diff_datasets("refunds@1", "small")
    assert (diff.shared_tasks, diff.only_a, diff.only_b, diff.same_content) == (2, 18, 0, False)
    assert diff.related == "small@1 descends from refunds@1 (2 steps)"
    assert "2 shared" in str(diff)


def test_same_content_under_two_names_shares_one_file(store, df):
    a = store.save_dataset(df, "a")
    b = store.save_dataset(df, "b")
    assert a.path == b.path and a.id != b.id


def test_listing_prints_and_dumps(store, df):
    store.save_dataset(df, "refunds")
    store.save_dataset(df.head(12), "refunds-eval", purpose="eval")
    listing = store.datasets()
    text = str(listing)
    assert "refunds@1" in text and "refunds-eval@1" in text and "eval" in text
    data = json.loads(listing.to_json())
    assert {d["id"] for d in data} == {"refunds@1", "refunds-eval@1"}
    assert listing.to_frame().height == 2
    assert [d.id for d in store.datasets(purpose="eval")] == ["refunds-eval@1"]


def test_eval_purpose_pins_an_eval_set(store, df):
    info = store.save_dataset(df.head(12), "heldout-eval", purpose="eval")
    pinned = store.eval_set("heldout-eval")
    assert pinned.dataset == info.id and pinned.n_tasks == 3
    assert pinned.task_keys == sorted(df.head(12)["scenario_id"].unique().to_list())


def test_pin_eval_set_by_ids_versions_and_reuse(store):
    a = store.pin_eval_set(["t2", "t1", "t1"], "core")
    assert (a.id, a.n_tasks, a.task_keys) == ("core@1", 2, ["t1", "t2"])
    assert store.pin_eval_set(["t1", "t2"], "core").reused
    b = store.pin_eval_set([{"scenario_id": "t3", "reward": 1}], "core")
    assert b.id == "core@2" and store.eval_set("core@1").task_keys == ["t1", "t2"]
    assert [e.id for e in store.eval_sets()] == ["core@2", "core@1"]
    with pytest.raises(ArgumentError, match="eval set must name a pinned eval set"):
        store.eval_set("nope")


def test_save_split_saves_both_sides(store):
    df = rollout_table(60, 2, seed=2, messages=False)
    result = store.save_split(df, "loop", holdout=0.3)
    assert result.train.id == "loop@1" and result.holdout.id == "loop-holdout@1"
    assert result.train.purpose == "train" and result.holdout.purpose == "holdout"
    assert result.train.n_tasks + result.holdout.n_tasks == 60
    tr = set(store.load_dataset("loop")["task_key"])
    ho = set(store.load_dataset("loop-holdout")["task_key"])
    assert not tr & ho and tr | ho == set(df["scenario_id"])


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"name": "bad name"}, "dataset name must be"),
    ({"name": "x@1"}, "dataset name must be"),
    ({"name": "ok", "purpose": "test"}, "purpose must be one of train, holdout, eval"),
    ({"name": "ok", "parent": "missing"}, "parent must name a dataset in the store"),
    ({"name": "ok", "meta": [1]}, "meta must be a dict"),
])
def test_bad_arguments_write_nothing(store, df, kwargs, match):
    store.save_dataset(df.head(4), "seed-ds")
    files = sorted(os.listdir(store.data_dir))
    with pytest.raises(ArgumentError, match=match):
        store.save_dataset(df, **kwargs)
    assert sorted(os.listdir(store.data_dir)) == files
    assert [d.id for d in store.datasets()] == ["seed-ds@1"]


def test_empty_rows_raise(store):
    with pytest.raises(EmptyInputError):
        store.save_dataset([], "empty")


def test_unknown_dataset_names_the_known_ones(store, df):
    store.save_dataset(df, "refunds")
    with pytest.raises(ArgumentError, match=r"got 'nope'.*datasets: refunds"):
        store.load_dataset("nope")
    with pytest.raises(ArgumentError, match="got 'refunds@7'"):
        store.dataset("refunds@7")


def test_missing_rows_file_is_a_store_error(store, df):
    info = store.save_dataset(df, "refunds")
    os.remove(info.path)
    with pytest.raises(StoreError, match="rows file .* is missing"):
        store.load_dataset("refunds")


def test_sql_reads_records_and_rows(store, df):
    store.save_dataset(df, "refunds")
    store.save_dataset(df.head(8), "refunds")
    out = store.sql("SELECT count(*) AS n, avg(reward) AS r FROM dataset_rows('refunds@1')")
    assert out["n"].item() == 80
    assert out["r"].item() == pytest.approx(df["reward"].mean())
    assert store.sql("SELECT count(*) AS n FROM dataset_rows('refunds')")["n"].item() == 8
    assert store.sql("SELECT id FROM datasets WHERE n_rows > ? ORDER BY id", [10])["id"].to_list() == ["refunds@1"]
    with pytest.raises(StoreError, match="the query failed"):
        store.sql("SELECT * FROM no_such_table")


def test_migrations_are_recorded_and_run_once(store, df, monkeypatch):
    store.save_dataset(df.head(4), "a")
    names = store.sql("SELECT name FROM _wai_migrations ORDER BY name")["name"].to_list()
    assert names == [m.__name__ for m in _migrations.MIGRATIONS]
    calls = []

    def m999_add_note(con):
        calls.append(1)
        con.execute("ALTER TABLE datasets ADD COLUMN note VARCHAR")

    monkeypatch.setattr(_migrations, "MIGRATIONS", [*_migrations.MIGRATIONS, m999_add_note])
    store.datasets()
    store.datasets()
    assert calls == [1]
    assert "note" in store.sql("SELECT * FROM datasets").columns
    assert store.dataset("a").id == "a@1"


def test_migration_names_are_checked():
    with pytest.raises(ValueError, match="already registered"):
        _migrations.migration(_migrations.m001_initial)
    with pytest.raises(ValueError, match="look like m001_what"):
        _migrations.migration(lambda con: None)


def test_a_file_that_is_not_a_store(tmp_path):
    bad = tmp_path / "junk.duckdb"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot be opened"):
        wai.store.open(bad).save_dataset([{"scenario_id": "t", "reward": 1}], "x")


def test_store_path_that_is_a_folder(tmp_path):
    with pytest.raises(StoreError, match="must be a file"):
        wai.store.open(tmp_path)


def test_store_path_named_like_the_store_folder_is_refused(tmp_path, monkeypatch):
    """``open('.wai')`` means the folder: refused with the file to pass, no file named ``.wai`` created."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=r"must be the store file, got '\.wai'.*\.wai/store\.duckdb"):
        wai.store.open(".wai")
    assert not (tmp_path / ".wai").exists()


def test_import_whileai_store_does_not_load_duckdb():
    code = "import sys, whileai.store; print('duckdb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_small_holdout_warns_with_holdout_size(store):
    from whileai.measure import holdout_size

    needed = holdout_size(0.05, k=4).n_tasks
    small = rollout_table(20, 4, seed=1, messages=False)
    info = store.save_dataset(small, "tiny-holdout", purpose="holdout")
    assert len(info.warnings) == 1
    assert f"holdout has 20 tasks; proving a 5-point gain at 80% power needs about {needed:,} at k=4" in info.warnings[0]
    assert "tiny-holdout@1" in str(info) and "! holdout has 20 tasks" in str(info)
    assert store.save_dataset(small, "tiny-train").warnings == []
    big = rollout_table(needed, 4, seed=2, messages=False)
    assert store.save_dataset(big, "big-holdout", purpose="holdout").warnings == []
    sides = store.save_split(small, "loop", holdout=0.3)
    assert sides.warnings and sides.warnings == sides.holdout.warnings
