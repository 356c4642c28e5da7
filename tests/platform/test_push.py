"""Datasets into the platform's store: push_rows / push_file, with lineage and the publish gate."""

from __future__ import annotations

import polars as pl
import pytest

import whileai.platform as wp
from whileai import store as wai_store
from whileai.errors import PlatformError, PublishGateError
from whileai.testing import rollout_table


def test_push_rows_keeps_lineage_and_gates_on_request(tmp_path):
    path = tmp_path / "s.duckdb"
    first = wp.push_rows(rollout_table(20, 4, seed=1), "refunds", store=path)
    assert first["id"] == "refunds@1" and first["n_tasks"] == 20 and first["gate"] is None
    second = wp.push_rows(rollout_table(20, 4, seed=2), "refunds", store=path, gate=True)
    assert second["id"] == "refunds@2" and second["parent"] == "refunds@1"
    assert second["gate"]["rl_shaped"] is True and second["meta"]["gate"]["ok"] == second["gate"]["ok"]
    ungraded = rollout_table(10, 4, seed=3).with_columns(pl.lit(None, dtype=pl.Float64).alias("reward"))
    with pytest.raises(PublishGateError):
        wp.push_rows(ungraded, "refunds", store=path, gate=True)
    assert [d.id for d in wai_store.open(path).datasets()] == ["refunds@2", "refunds@1"]


def test_push_file_over_http_gates_by_default(server, tmp_path):
    from whileai.table import write_jsonl

    file = tmp_path / "train-set.jsonl"
    write_jsonl(rollout_table(12, 4, seed=4), file)
    entry = wp.push_file(file, base_url=server.url)
    assert entry["id"] == "train-set@1" and entry["n_rows"] == 48 and entry["gate"] is not None
    run = wp.track("agent", name="a", base_url=server.url).run("v0")  # the server's store is still writable
    assert run.id


def test_push_with_a_parent_over_http(server):
    """The server holds its store read-write; a push with parent= read the parent on a read-only
    connection in the same process, which DuckDB refuses ("different configuration"): every such
    push answered 422 with 'move it aside'."""
    first = wp.push_rows(rollout_table(8, 2, seed=1), "base", base_url=server.url)
    child = wp.push_rows(rollout_table(8, 2, seed=2), "child", parent=first["id"], base_url=server.url)
    assert child["id"] == "child@1" and child["parent"] == "base@1"
    assert wp.push_rows(rollout_table(8, 2, seed=3), "child", parent="base", base_url=server.url)["parent"] == "base@1"
    with pytest.raises(PlatformError, match="parent must name a dataset in the store, got 'nope'"):
        wp.push_rows(rollout_table(8, 2, seed=4), "other", parent="nope", base_url=server.url)


def test_a_read_in_a_process_that_holds_the_store_for_writing(tmp_path):
    from whileai.store._db import connect

    path = tmp_path / "s.duckdb"
    store = wai_store.open(path)
    store.save_dataset(rollout_table(8, 2, seed=1), "base")
    with connect(path, timeout=1.0) as held:  # as a server or a tracked run holds it
        assert [d.id for d in store.datasets()] == ["base@1"]
        assert store.save_dataset(rollout_table(8, 2, seed=2), "child", parent="base").parent == "base@1"
        assert store.sql("SELECT count(*) AS n FROM datasets")["n"][0] == 2
        assert held.execute("SELECT count(*) FROM datasets").fetchone()[0] == 2
