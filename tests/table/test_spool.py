"""``table.spooled``: a JSONL path spooled once to a temporary Parquet file that reads as the whole file.

Behind ``table.source`` (the switch ``whileai.defaults.FAST_READ``), a JSONL input is
spooled so select and export read it as Parquet. The spool must read as the whole file on both
row shapes (OpenAI messages, whileai 0.131 steps) and at awkward batch boundaries (a system turn
only in a late batch, a column only in the last batch, types that change between batches,
``.jsonl.gz``, a file smaller than one batch), and must decline where it cannot hold the rows
exactly (a bad row, a column nested in one batch and text in another). The rows, reports and
bytes of select and export on these files: tests/table/test_source_same_rows.py.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import whileai as wai
from tests.table._rows import awkward_rows
from whileai import defaults, table
from whileai.errors import WaiError
from whileai.table import _jsonl_plain

BATCH = 64  # rows a batch in these tests (CHUNK_ROWS at 1M rows)


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_jsonl_plain, "CHUNK_ROWS", BATCH)


@pytest.fixture
def whole_read(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The read path's switch turned off: no spool, every step reads the JSONL file whole."""

    def off() -> None:
        monkeypatch.setattr(defaults, "FAST_READ", False)

    return off


def _steps(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A conversation as whileai 0.131 steps: one {tool, arguments, result} per tool call."""
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    return [{"tool": call["name"], "arguments": json.loads(call["arguments"]), "result": results.get(call.get("id"))}
            for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or []]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _openai_rows(*, privileged: bool = True) -> list[dict[str, Any]]:
    """The awkward rows as JSON lines; without ``privileged`` select takes its decision-columns path."""
    return [{k: v for k, v in r.items() if (v is not None or k == "reward") and (privileged or k != "privileged")}
            for r in json.loads(json.dumps(awkward_rows(), default=str))]


def _plain() -> list[dict[str, Any]]:
    return _openai_rows(privileged=False)


def _w131_rows() -> list[dict[str, Any]]:
    out = []
    for r in _openai_rows():
        out.append({"scenario_id": r["scenario_id"], "rollout_index": r["rollout_index"], "prompt": r["prompt"],
                    "final_text": r["final_text"], "reward": r["reward"], "markers": r.get("markers"),
                    "steps": _steps(r["messages"]), "model_version": r.get("policy_version")})
    return out


def _late_system(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = copy.deepcopy(rows)
    for r in rows[-5:]:
        r["messages"].insert(0, {"role": "system", "content": "You are the refunds desk."})
    return rows


def _last_batch_column(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = copy.deepcopy(rows)
    for i, r in enumerate(rows[-BATCH // 2:]):
        r["judge_note"] = f"note {i}"
        r["late_score"] = i / 3
    return rows


def _mixed_dtypes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = copy.deepcopy(rows)
    for i, r in enumerate(rows):
        r["attempt"] = i if i < BATCH else i + 0.5  # ints in the first batch, floats later
        r["maybe"] = None if i < 2 * BATCH else f"v{i}"  # null for two batches, then text
    return rows


def _empty_conversations(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = copy.deepcopy(rows)
    for i in range(3, len(rows), 37):
        rows[i]["messages"] = []
    return rows


SHAPES = {
    "openai": _openai_rows,
    "openai no privileged": _plain,
    "w131": _w131_rows,
    "late system turn": lambda: _late_system(_plain()),
    "column in last batch": lambda: _last_batch_column(_plain()),
    "mixed dtypes": lambda: _mixed_dtypes(_plain()),
    "empty conversations": lambda: _empty_conversations(_plain()),
    "messages only": lambda: [{k: v for k, v in r.items() if k not in ("prompt", "final_text")} for r in _plain()],
    "smaller than a batch": lambda: _plain()[:40],
    "w131 smaller than a batch": lambda: _w131_rows()[:40],
}


@pytest.fixture(params=[*SHAPES, "openai gz", "openai no privileged gz", "w131 gz"])
def jsonl(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    name = request.param.removesuffix(" gz")
    suffix = ".jsonl.gz" if request.param.endswith(" gz") else ".jsonl"
    return _write(tmp_path / f"rows{suffix}", SHAPES[name]())


def test_spool_reads_as_the_whole_file(jsonl: Path) -> None:
    with table.spooled(jsonl) as source:
        assert source != jsonl and Path(source).suffix == ".parquet"  # these files are spooled, not passed on
        folder = Path(source).parent
        assert_frame_equal(table.frame(source), table.frame(jsonl))
    assert not folder.exists()  # the temporary folder goes with the block


def _bad_last_batch(rows: list[dict[str, Any]]) -> str:
    lines = [json.dumps(r) for r in rows]
    lines[-3] = lines[-3][:-9]  # a broken line in the last batch
    return "".join(line + "\n" for line in lines)


def _bad_role_last_batch(rows: list[dict[str, Any]]) -> str:
    rows = copy.deepcopy(rows)
    rows[-2]["messages"][0]["role"] = "narrator"
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.mark.parametrize("make", [_bad_last_batch, _bad_role_last_batch], ids=["broken line", "bad role"])
def test_bad_row_in_last_batch_same_error(tmp_path: Path, whole_read: Any, make: Any) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(make(_openai_rows()), encoding="utf-8")
    with table.spooled(path) as source:
        assert source == path  # no spool: the whole read raises
    with pytest.raises(WaiError) as spooled:
        wai.select(path, mode="rl")
    whole_read()
    with pytest.raises(WaiError) as whole:
        wai.select(path, mode="rl")
    assert type(spooled.value) is type(whole.value) and str(spooled.value) == str(whole.value)
    assert "line" in str(whole.value) or "row" in str(whole.value)


def test_nested_in_one_batch_text_in_another_reads_whole(tmp_path: Path) -> None:
    rows = _openai_rows()
    for i, r in enumerate(rows):
        r["detail"] = {"kind": "a", "n": i} if i < BATCH else f"text {i}"
    path = _write(tmp_path / "rows.jsonl", rows)
    with table.spooled(path) as source:
        assert source == path  # the whole read turns such a column into JSON text: no spool
    assert table.frame(path)["detail"].dtype == pl.String


def test_other_inputs_pass_through(tmp_path: Path) -> None:
    df = table.frame(_openai_rows()[:10])
    parquet = tmp_path / "rows.parquet"
    df.write_parquet(parquet)
    for rows in (df, parquet, str(parquet), "-", tmp_path / "missing.jsonl"):
        with table.spooled(rows) as source:
            assert source is rows


def test_another_writers_parquet_is_spooled_from_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """0.131's rows as pyarrow writes them (structs for arguments, steps a list): spooled to whileai's shape when large."""
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    raw = _write(tmp_path / "raw.jsonl", _w131_rows())
    path = tmp_path / "rows.parquet"
    pq.write_table(pj.read_json(raw), path, row_group_size=50)  # several row groups, each across batches
    n = pq.read_metadata(path).num_rows
    monkeypatch.setattr(defaults, "SPOOL_PARQUET_MIN_ROWS", n + 1)
    with table.spooled(path) as source:
        assert source is path  # smaller than the threshold: read whole
    monkeypatch.setattr(defaults, "SPOOL_PARQUET_MIN_ROWS", n)
    with table.spooled(path) as source:
        assert source != path and Path(source).suffix == ".parquet"
        assert_frame_equal(table.frame(source), table.frame(path))
    ours = tmp_path / "ours.parquet"
    table.write_parquet(table.frame(path), ours)
    with table.spooled(ours) as source:
        assert source is ours  # whileai's own shape is read decision columns first as it is
