"""The store from plain DuckDB: the statements docs/store.md gives ("The store outside wai"), run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import whileai as wai
from whileai.errors import StoreError
from whileai.store._db import check_duckdb

DOC = Path(__file__).parent.parent.parent / "docs" / "store.md"


def _doc_sql() -> list[str]:
    text = DOC.read_text()
    section = text[text.index("### The store outside wai"):]
    block = re.search(r"```sql\n(.*?)```", section, re.S)
    assert block is not None
    lines = [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("--")]
    return [s.strip() for s in " ".join(lines).split(";") if s.strip()]


def test_plain_duckdb_reads_the_store_as_the_docs_say(tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    monkeypatch.chdir(tmp_path)
    store = wai.store.open(".wai/store.duckdb")
    rows = [{"scenario_id": f"t{i % 3}", "reward": float(i % 2)} for i in range(6)]
    store.save_dataset(rows, "refunds")
    store.save_dataset(rows[:4], "refunds")  # the latest version is the one read
    want = store.sql("SELECT scenario_id, avg(reward) AS pass_rate FROM dataset_rows('refunds') GROUP BY 1 ORDER BY 1")
    files = store.sql("SELECT id, name, version, path FROM dataset_files ORDER BY id")
    con = duckdb.connect()  # no whileai on this connection: what a notebook or BI tool has
    *setup, listing, variable, query = _doc_sql()
    for statement in setup:
        con.execute(statement)
    listed = con.execute(listing).fetchall()
    assert [(i, n, v, str(Path(p).resolve())) for i, n, v, p in listed] == list(files.iter_rows())
    con.execute(variable)
    assert con.execute(query).fetchall() == list(want.iter_rows())
    con.close()


def test_an_old_duckdb_is_refused_with_the_floor():
    with pytest.raises(StoreError, match=r"duckdb must be 1\.1 or newer .* got duckdb 1\.0\.0 .*pip install 'duckdb>=1\.1'"):
        check_duckdb("1.0.0")
    assert check_duckdb("1.1.0") is None
