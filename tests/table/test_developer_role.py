"""OpenAI's ``developer`` role (the system message of its o-series and newer models) reads as
``system`` from every source; it was refused ("role must be one of ..."), so current OpenAI logs
could not be read at all."""

from __future__ import annotations

import json

import polars as pl
import pytest

from whileai import table


def _rows() -> list[dict]:
    return [{"scenario_id": f"t{i}", "reward": float(i % 2), "messages": [
        {"role": "developer", "content": "Be brief."}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": f"hello {i}"}]} for i in range(2)]


@pytest.mark.parametrize("source", ["rows", "jsonl", "frame", "parquet"])
def test_developer_reads_as_system(tmp_path, source):
    src: object = _rows()
    if source == "jsonl":
        src = tmp_path / "r.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    elif source == "frame":
        src = pl.DataFrame(_rows())
    elif source == "parquet":
        src = tmp_path / "r.parquet"
        pl.DataFrame(_rows()).write_parquet(src)
    df = table.frame(src)
    assert [m["role"] for m in df["messages"][0].to_list()] == ["system", "user", "assistant"]
    assert df["system_prompt"].to_list() == ["Be brief.", "Be brief."]
    assert df["final_text"].to_list() == ["hello 0", "hello 1"]


def test_an_unknown_role_is_still_refused():
    rows = _rows()
    rows[1]["messages"][0]["role"] = "narrator"
    with pytest.raises(Exception, match="role 'narrator'"):
        table.frame(pl.DataFrame(rows))
