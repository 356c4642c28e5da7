"""select's fetch decodes the message texts from the pages that hold kept rows (the offset index).

The texts are read from their pages alone (``whileai/selection/_pages.py``) and joined to the
other leaves, decoded whole; these tests pin that the rows are those of a whole decode for files
written by pyarrow (data pages v1 and v2, with and without dictionaries, compressed or not) and
by Polars, that a file without an offset index is read whole, and that an index whose pages do
not start where it says is caught by the check and read whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from tests.selection.test_same_rows import _selection, awkward_rows
from whileai import table
from whileai.selection import _common, _pages

TEXTS = "messages.list.element.content"


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rows = awkward_rows()
    rows[5]["messages"] = []  # an empty conversation
    for message in rows[9]["messages"]:
        message["content"] = None  # texts that are null
    for i, row in enumerate(rows):
        row.pop("privileged")  # the leak check reads every text: such a file is read whole
        for message in row["messages"]:  # texts of their own, so a dictionary fills and pages are many
            if message["content"] and message["role"] != "user":
                message["content"] += f" (row {i})"
        if i % 2 and row["messages"]:  # neighbours with different message counts
            row["messages"].append({**row["messages"][-1], "content": f"and one more thing (row {i})"})
    return table.frame(rows)


WRITERS: dict[str, dict[str, Any]] = {
    "pyarrow v1, dictionary": {"use_dictionary": True, "data_page_size": 256, "write_batch_size": 16},
    "pyarrow v1, plain, snappy": {"use_dictionary": False, "compression": "snappy"},
    "pyarrow v2, plain, zstd": {"use_dictionary": False, "compression": "zstd", "data_page_version": "2.0"},
    "pyarrow v2, dictionary, uncompressed": {"use_dictionary": True, "compression": "none", "data_page_version": "2.0",
                                             "data_page_size": 256, "write_batch_size": 16},
}


def _write(df: pl.DataFrame, path: Path, writer: str) -> Path:
    if writer == "polars":
        df.write_parquet(path, row_group_size=160, data_page_size=2048)
    elif writer == "pyarrow, no page index":
        pq.write_table(df.to_arrow(), path, row_group_size=160, data_page_size=2048)
    else:
        pq.write_table(df.to_arrow(), path, row_group_size=160, write_page_index=True,
                       **{"data_page_size": 2048, "write_batch_size": 16, **WRITERS[writer]})
    return path


def _count_joins(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"joined": 0, "declined": 0}
    join = _common._with_paged_leaf

    def counted(*args: Any, **kwargs: Any) -> Any:
        out = join(*args, **kwargs)
        counts["joined" if out is not None else "declined"] += 1
        return out

    monkeypatch.setattr(_common, "_with_paged_leaf", counted)
    return counts


CASES: dict[str, dict[str, Any]] = {
    "sft top": {"mode": "sft", "target": 6},
    "sft top k": {"mode": "sft", "select": "top_k_overall", "k": 9},
    "sft random": {"mode": "sft", "select": "random_per_prompt", "target": 4},
    "rl": {"mode": "rl", "target": 16},
}


@pytest.mark.parametrize("writer", [*WRITERS, "polars"])
@pytest.mark.parametrize("case", CASES)
def test_texts_from_their_pages_keep_the_rows_of_a_whole_read(frame: pl.DataFrame, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, writer: str, case: str) -> None:
    path = _write(frame, tmp_path / "rows.parquet", writer)
    counts = _count_joins(monkeypatch)
    assert _selection(path, **CASES[case]) == _selection(frame, **CASES[case])
    assert counts["joined"] > 0 and counts["declined"] == 0


def test_a_file_without_an_offset_index_is_read_whole(frame: pl.DataFrame, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(frame, tmp_path / "rows.parquet", "pyarrow, no page index")
    counts = _count_joins(monkeypatch)
    assert _selection(path, **CASES["sft top"]) == _selection(frame, **CASES["sft top"])
    assert counts == {"joined": 0, "declined": 0}


@pytest.mark.parametrize("kept", ["neighbours unlike", "neighbours alike"])
def test_pages_that_do_not_start_where_the_index_says_are_caught(frame: pl.DataFrame, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch, kept: str) -> None:
    # an index whose pages start a row later than it says (a page that begins inside a row): the
    # texts would land on their neighbours; the check against the other leaves sees the message
    # counts shifted and the group is decoded with every leaf. Where a kept row has as many
    # messages as the row before it, only the check over every decoded row sees the shift
    path = _write(frame, tmp_path / "rows.parquet", "pyarrow v1, plain, snappy")
    pages = _pages.leaf_pages

    def shifted(*args: Any) -> Any:
        found = pages(*args)
        return [None if p is None else _pages.LeafPages(np.r_[0, p.first_rows[1:] + 1], p.offsets, p.sizes, p.rows,
                                                        p.chunk_end) for p in found]

    monkeypatch.setattr(_pages, "leaf_pages", shifted)
    counts = _count_joins(monkeypatch)
    decisions = _common.parquet_decisions(path, ("prompt", "reward", "rollout_id", "final_text"))
    assert decisions is not None
    positions = pl.Series([60, 61, 250, 400])  # past each group's first page
    if kept == "neighbours alike":
        counts_of = frame["messages"].list.len().to_numpy()
        alike = [next(r for r in range(start + 40, start + 160) if counts_of[r] == counts_of[r - 1]) for start in (0, 160, 320)]
        positions = pl.Series(alike)
    assert decisions[1](positions).to_dicts() == table.frame(path)[positions.to_list()].to_dicts()
    assert counts == {"joined": 0, "declined": 3}


@pytest.mark.parametrize("writer", [*WRITERS, "polars"])
def test_read_leaf_rows_is_the_leaf_of_those_rows(frame: pl.DataFrame, tmp_path: Path, writer: str) -> None:
    # every shape of kept rows against a whole decode of the group: the first and last rows, a
    # run across pages, rows in the last page (the page after them is a copy of it) and none
    # past the first page
    path = _write(frame, tmp_path / "rows.parquet", writer)
    pf = pq.ParquetFile(path)
    column = [pf.schema.column(i).path for i in range(len(pf.schema))].index(TEXTS)
    plan = _pages.leaf_pages(path, pf.metadata, column)
    # a group whose index has two pages starting at one row (pyarrow splits a long row across
    # small pages) is declined; the others are read from their pages
    assert plan is not None and sum(p is not None for p in plan) >= 2
    for g, pages in enumerate(plan):
        if pages is None:
            assert (np.diff(_index_first_rows(path, g, column)) <= 0).any()
            continue
        assert pages.first_rows.size > 2  # small pages, so the choice matters
        whole = pf.read_row_group(g, columns=[TEXTS]).column(0).combine_chunks()
        rows = pages.rows
        for local in ([0], [rows - 1], list(range(3, 40)), [1, int(pages.first_rows[2]), rows - 2], [0, 1, 2]):
            found = _pages.read_leaf_rows(path, pf.metadata, g, TEXTS, pages, np.array(local), 1.0)
            assert found is not None
            kept, decoded, decoded_rows = found
            assert kept.to_pylist() == [whole[i].as_py() for i in local]
            assert decoded_rows.to_pylist() == [whole[int(i)].as_py() for i in decoded]


def _index_first_rows(path: Path, group: int, column: int) -> np.ndarray:
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    chunk = _pages._Compact(data[-8 - length:-8]).struct()[4][group][1][column]
    locations = _pages._Compact(data[chunk[4]:chunk[4] + chunk[5]]).struct()[1]
    return np.array([p[3] for p in locations])


def test_read_leaf_rows_declines_past_its_share(frame: pl.DataFrame, tmp_path: Path) -> None:
    path = _write(frame, tmp_path / "rows.parquet", "polars")
    pf = pq.ParquetFile(path)
    column = [pf.schema.column(i).path for i in range(len(pf.schema))].index(TEXTS)
    pages = _pages.leaf_pages(path, pf.metadata, column)[0]
    assert pages is not None
    every = np.arange(pages.rows)
    assert _pages.read_leaf_rows(path, pf.metadata, 0, TEXTS, pages, every, 0.5) is None
    assert _pages.read_leaf_rows(path, pf.metadata, 0, TEXTS, pages, every[:1], 0.5) is not None


def test_the_footer_reader_agrees_with_pyarrow(frame: pl.DataFrame, tmp_path: Path) -> None:
    # the compact-protocol reader against pyarrow's own footer: rows, row groups, their rows and
    # column counts; and a cut footer raises ValueError (never another error)
    path = _write(frame, tmp_path / "rows.parquet", "pyarrow v1, dictionary")
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer = data[-8 - length:-8]
    meta = pq.ParquetFile(path).metadata
    decoded = _pages._Compact(footer).struct()
    assert decoded[3] == meta.num_rows
    assert [g[3] for g in decoded[4]] == [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert [len(g[1]) for g in decoded[4]] == [meta.num_columns] * meta.num_row_groups
    for cut in range(0, length, 7):
        with pytest.raises(ValueError):
            _pages._Compact(footer[:cut]).struct()


def test_the_joined_conversations_have_the_whole_reads_type(frame: pl.DataFrame, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(frame, tmp_path / "rows.parquet", "polars")
    counts = _count_joins(monkeypatch)
    decisions = _common.parquet_decisions(path, ("prompt", "reward", "rollout_id", "final_text"))
    assert decisions is not None
    _, fetch = decisions
    positions = pl.Series([0, 3, 170, 400, frame.height - 1])
    got = fetch(positions)
    assert got.schema == table.frame(path).schema
    assert got.to_dicts() == table.frame(path)[positions.to_list()].to_dicts()
    assert counts["joined"] > 0 and counts["declined"] == 0  # the texts came from their pages
