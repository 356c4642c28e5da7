"""The columnar normaliser of nested columns (``table/_columnar.py``) against the row path.

Each supported column must give the row path's cells byte for byte (``_cells.messages_rows``,
``_cells.json_rows``: ``normalize.normalize_messages``, ``normalize.dumps``, ``_rowdicts.drop_none``);
any other declines (None) and the reader runs the row path.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal, assert_series_equal

from whileai import defaults, table
from whileai.table import _cells as read
from whileai.table import _columnar

BENCH_ROWS = Path(__file__).parents[1] / "data" / "wai131" / "bench-rollouts-304.parquet"

#: Text that JSON escapes (quotes, backslashes, C0 controls) beside text it keeps (DEL, U+2028, é).
_CHARS = list("ab xyz09") + ['"', "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f",
                             "\u2028", "é", "ü", "漢", "😀", "{", "}", ":", ","]
_FLOATS = [0.0, -0.0, 1.0, -2.5, 0.1, 1e-05, 1e-4, 1e16, 1e15, 1.5e300, 5e-324, 123456789.123456789,
           math.nan, math.inf, -math.inf, 2.0**53, 1 / 3]
_NAMES = ["a", "b", "B", "z", "é", 'q"k', "back\\slash", "*", "^a$", "", "10", "2"]


def _text(rng: np.random.Generator) -> str:
    return "".join(_CHARS[i] for i in rng.integers(0, len(_CHARS), rng.integers(0, 9)))


def _dtype(rng: np.random.Generator, depth: int = 0) -> Any:
    leaves = [pl.String, pl.Int64, pl.Boolean, pl.Float64, pl.Null, pl.Int8, pl.UInt64, pl.Float32]
    pick = rng.integers(0, len(leaves) + (2 if depth < 3 else 0))
    if pick < len(leaves):
        return leaves[pick]
    if pick == len(leaves):
        return pl.List(_dtype(rng, depth + 1))
    names = [str(n) for n in rng.choice(_NAMES, rng.integers(0, 4), replace=False)]
    return pl.Struct({n: _dtype(rng, depth + 1) for n in names})


def _value(rng: np.random.Generator, dtype: Any, null: float = 0.2) -> Any:
    if dtype == pl.Null or rng.random() < null:
        return None
    if dtype == pl.String:
        return _text(rng)
    if dtype == pl.Boolean:
        return bool(rng.integers(0, 2))
    if dtype == pl.Int8:
        return int(rng.integers(-128, 128))
    if dtype == pl.UInt64:
        return [0, 1, 2**63 + 5, 2**64 - 1][rng.integers(0, 4)]
    if dtype == pl.Int64:
        return [0, -1, 7, 2**62, -(2**63)][rng.integers(0, 5)]
    if dtype in (pl.Float64, pl.Float32):
        return float(_FLOATS[rng.integers(0, len(_FLOATS))]) if rng.random() < 0.7 else float(rng.normal() * 10.0 ** rng.integers(-8, 20))
    if isinstance(dtype, pl.List):
        return [_value(rng, dtype.inner) for _ in range(rng.integers(0, 4))]
    return {f.name: _value(rng, f.dtype) for f in dtype.fields}


@pytest.mark.parametrize("seed", range(6))
def test_canonical_json_equals_the_row_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(40):
        dtype = _dtype(rng)
        series = pl.Series("c", [_value(rng, dtype) for _ in range(25)], dtype=dtype)
        for drop_none in (False, True):
            fast = _columnar.canonical_json(series, drop_none=drop_none)
            assert fast is not None, dtype
            assert_series_equal(fast, read.json_rows(series, drop_none=drop_none))


def test_canonical_json_sorts_escapes_and_formats_floats_as_python() -> None:
    series = pl.Series("c", [{"b": 1e-05, "a": [None, {"y": None, "x": 1.0}], "q": 'x"\\\n\x01é'}, None])
    want = '{"a":[null,{"x":1.0,"y":null}],"b":1e-05,"q":"x\\"\\\\\\n\\u0001é"}'
    assert _columnar.canonical_json(series).to_list() == [want, None]
    assert _columnar.canonical_json(series, drop_none=True).to_list() == [
        '{"a":[null,{"x":1.0}],"b":1e-05,"q":"x\\"\\\\\\n\\u0001é"}', None]


@pytest.mark.parametrize("dtype,value", [
    (pl.Datetime("us"), dt.datetime(2024, 1, 2, 3, 4, 5)),
    (pl.Date, dt.date(2024, 1, 2)),
    (pl.Decimal(10, 2), Decimal("1.50")),
    (pl.Binary, b"ab"),
    (pl.Categorical, "a"),
    (pl.Duration("us"), dt.timedelta(seconds=3)),
    (pl.Array(pl.Int64, 2), [1, 2]),
])
def test_canonical_json_declines_leaves_python_writes_through_str(dtype: Any, value: Any) -> None:
    series = pl.Series("c", [{"k": [value]}, None], dtype=pl.Struct({"k": pl.List(dtype)}))
    assert _columnar.canonical_json(series) is None
    assert_series_equal(read.json_column(series), read.json_rows(series))


# ------------------------------------------------------------------------------------------
# conversations
# ------------------------------------------------------------------------------------------

_ROLES = ["system", "user", "assistant", "tool", "developer"]


def _messages_case(rng: np.random.Generator, ids: str, args: str, function: bool) -> pl.Series:
    """A conversation column: ``ids`` none (no call id, no tool_call_id), all, or mixed."""
    arg_dtype = pl.String if args == "text" else pl.Struct(
        {n: _dtype(rng, 1) for n in rng.choice(["order_id", "q", "n", "deep", "*"], 3, replace=False)})
    extras = {n: _dtype(rng, 1) for n in rng.choice(["reasoning_content", "refusal", "meta", "extra"],
                                                    rng.integers(0, 3), replace=False)}
    call_fields: dict[str, Any] = {"type": pl.String} if function else {}
    inner = pl.Struct({"name": pl.String, "arguments": arg_dtype})
    if function:
        call_fields["function"] = inner
    else:
        call_fields.update(inner.to_schema())
    if ids != "none":
        call_fields = {"id": pl.String, **call_fields}
    message_fields: dict[str, Any] = {"role": pl.String, "content": pl.String, "name": pl.String,
                                      "tool_calls": pl.List(pl.Struct(call_fields)), **extras}
    if ids != "none":
        message_fields["tool_call_id"] = pl.String
    dtype = pl.List(pl.Struct(message_fields))

    def arguments() -> Any:
        if args == "text":
            pick = rng.integers(0, 6)
            if pick == 0:
                return None
            if pick == 1:
                return rng.choice(["", "  ", "not json", "[1, 2]", '"s"', "1.0"])
            value = {"b": float(rng.normal()), "a": _text(rng), "n": [1, None, 1e-05], "é": {"z": True}}
            return json.dumps(value, ensure_ascii=bool(rng.integers(0, 2)), indent=rng.choice([None, 1]))
        return _value(rng, arg_dtype, null=0.1)

    def conversation() -> Any:
        if rng.random() < 0.08:
            return None
        out: list[dict[str, Any]] = []
        counter = 0
        for _ in range(rng.integers(0, 9)):
            role = str(rng.choice(_ROLES)) if rng.random() > 0.02 else None
            message: dict[str, Any] = {"role": role, "content": _text(rng) if rng.random() < 0.8 else None,
                                       "name": _text(rng) if rng.random() < 0.2 else None}
            if (role == "assistant" and rng.random() < 0.6) or (role == "tool" and rng.random() < 0.1):
                calls = []
                for _ in range(rng.integers(0, 3)):
                    call: dict[str, Any] = {"name": _text(rng) if rng.random() < 0.95 else None, "arguments": arguments()}
                    if function:
                        call = {"type": "function", "function": call if rng.random() < 0.9 else None}
                    if ids == "all" or (ids == "mixed" and rng.random() < 0.5):
                        call["id"] = f"call_{counter:04d}" if rng.random() < 0.3 else f"c{rng.integers(0, 99)}"
                        counter += 1
                    calls.append(call)
                message["tool_calls"] = calls if calls or rng.random() < 0.5 else None
            if role == "tool" and (ids == "all" or (ids == "mixed" and rng.random() < 0.5)):
                message["tool_call_id"] = f"c{rng.integers(0, 99)}"
            for name, extra in extras.items():
                message[name] = _value(rng, extra, null=0.5)
            out.append(message)
        return out

    return pl.Series("messages", [conversation() for _ in range(30)], dtype=dtype)


@pytest.mark.parametrize("seed", range(8))
def test_messages_equal_the_row_path(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    fast_runs = 0
    for ids in ("none", "all", "mixed"):
        for args in ("struct", "text"):
            for function in (False, True):
                series = _messages_case(rng, ids, args, function)
                fast = _columnar.messages(series)
                if ids != "mixed":
                    assert fast is not None, (ids, args, function)
                if fast is not None:
                    fast_runs += 1
                    assert_series_equal(fast, read.messages_rows(series, "rows"))
    assert fast_runs >= 8


def test_tool_results_link_to_pending_calls_in_order() -> None:
    call = {"name": "f", "arguments": {"x": 1}}
    turns = [{"role": "tool", "content": "early"},  # no call pending: stays unlinked
             {"role": "assistant", "content": "", "tool_calls": [call, call]},
             {"role": "tool", "content": "r0"}, {"role": "assistant", "content": "", "tool_calls": [call]},
             {"role": "tool", "content": "r1"}, {"role": "tool", "content": "r2"}, {"role": "tool", "content": "late"}]
    # a tool message carrying a call answers it itself (its calls come first), in a later conversation too
    series = pl.Series("messages", [turns, [], None, turns[1:3], [{"role": "tool", "content": "r", "tool_calls": [call]}]])
    fast = _columnar.messages(series)
    assert fast is not None
    assert [m["tool_call_id"] for m in fast[0]] == [None, None, "call_0000", None, "call_0001", "call_0002", None]
    assert [c["id"] for m in fast[0] for c in m["tool_calls"]] == ["call_0000", "call_0001", "call_0002"]
    assert fast[4][0]["tool_call_id"] == "call_0000"
    assert_series_equal(fast, read.messages_rows(series, "rows"))


_DECLINED = {
    "content as parts": [[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]],
    "ShareGPT": [[{"from": "human", "value": "hi"}]],
    "tool_calls as JSON text": [[{"role": "assistant", "content": "", "tool_calls": "[]"}]],
    "a null message": [[{"role": "user", "content": "hi"}, None]],
    "a null call": [[{"role": "assistant", "content": "", "tool_calls": [None, {"name": "f", "arguments": "{}"}]}]],
    "given and missing call ids": [[{"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_0000", "name": "f", "arguments": "{}"}, {"id": None, "name": "g", "arguments": "{}"}]}]],
    "an unnamed result beside given ids": [[
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "f", "arguments": "{}"}]},
        {"role": "tool", "content": "r", "tool_call_id": None}]],
    "a named result beside missing ids": [[
        {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": "{}"}]},
        {"role": "tool", "content": "r", "tool_call_id": "x"}]],
    "a numeric name": [[{"role": "tool", "content": "r", "name": 3}]],
    "a datetime extra": [[{"role": "user", "content": "hi", "at": dt.datetime(2024, 1, 1)}]],
}


@pytest.mark.parametrize("case", list(_DECLINED))
def test_messages_decline_to_the_row_path(case: str) -> None:
    series = pl.Series("messages", _DECLINED[case])
    assert _columnar.messages(series) is None
    assert_series_equal(read.messages_column(series, "rows"), read.messages_rows(series, "rows"))


def test_messages_as_json_text_take_the_row_path() -> None:
    series = pl.Series("messages", ['[{"role": "user", "content": "hi"}]'])
    assert _columnar.messages(series) is None


# ------------------------------------------------------------------------------------------
# the generator's rows (whileai 0.131 shape, ../shared/bench/make_rollouts.py --n-tasks 38 --k 8
# --seed 3 --parquet: pyarrow's JSON reader and Parquet writer)
# ------------------------------------------------------------------------------------------


def test_generator_rows_fast_equal_row_path() -> None:
    df = pl.read_parquet(BENCH_ROWS)
    fast = _columnar.messages(df["messages"])
    assert fast is not None
    assert_series_equal(fast, read.messages_rows(df["messages"], "rows"))
    for name in ("steps", "scenario_dimensions", "faults", "judge_meta", "privileged"):
        drop_none = name == "steps"
        got = _columnar.canonical_json(df[name], drop_none=drop_none)
        assert got is not None, name
        assert_series_equal(got, read.json_rows(df[name], drop_none=drop_none))


@pytest.mark.parametrize("source", ["file", "frame"])
def test_generator_rows_frame_same_with_the_switch_off(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rows: Any = BENCH_ROWS if source == "file" else pl.read_parquet(BENCH_ROWS)
    fast = table.frame(rows)
    monkeypatch.setattr(defaults, "FAST_READ", False)
    assert_frame_equal(fast, table.frame(rows))
