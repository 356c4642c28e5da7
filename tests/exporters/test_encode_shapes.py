"""The export's fast encoders write the same bytes as the expressions they stand in for.

``message_texts`` (one ``json_encode`` per message shape) against ``message_json`` (the per-key
concat); ``_objects`` (one ``json_encode`` per null pattern) against the struct-then-regex pass;
the per-task group keys, the loss-mask buffer, the group-id digits and the chunk buffer against
plain Python.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from whileai.exporters import _rows
from whileai.exporters._encode import message_json, message_texts
from whileai.table import TOOL_CALL

_AWKWARD = ['say "hi" \\ back', "a/b </script>", "tab\tnew\nline\x01\x1f\x7f", "é ü 中文 😀 \u2028 \u2029", "", "{}"]


def _flat_messages() -> pl.DataFrame:
    """Messages of every shape: name / tool_call_id / tool calls present or not, extra keys, odd text."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(400):
        text = _AWKWARD[i % len(_AWKWARD)] + str(i)
        calls = []
        if rng.random() < 0.4:
            for c in range(int(rng.integers(1, 3))):
                calls.append({
                    "id": None if rng.random() < 0.1 else f"call_{i}_{c}",
                    "name": None if rng.random() < 0.1 else f"tool/{c}",
                    "arguments": [None, '{"q": "x/y"}', "{bad", '  {"a": [1, 2.0]}', '"str"', "{}"][int(rng.integers(0, 6))],
                })
        rows.append({
            "role": ["user", "assistant", "tool", "system"][i % 4],
            "content": None if rng.random() < 0.1 else text,
            "name": f"n{i}é" if rng.random() < 0.3 else None,
            "tool_call_id": f"call_{i}" if rng.random() < 0.3 else None,
            "tool_calls": calls,
            "extra": [None, None, None, '{"reasoning_content": "r\\u00e9"}', "{}", " {} ", " { } ", "[1]"][i % 8],
        })
    schema = {"role": pl.String, "content": pl.String, "name": pl.String, "tool_call_id": pl.String,
              "tool_calls": pl.List(TOOL_CALL), "extra": pl.String}
    return pl.DataFrame(rows, schema=schema)


@pytest.mark.parametrize("encoding", ["json_string", "dict"])
def test_message_texts_match_message_json(encoding) -> None:
    flat = _flat_messages()
    texts, where = message_texts(flat, encoding)  # type: ignore[arg-type]
    expected = flat.select(message_json(encoding).alias("m"))["m"].to_list()  # type: ignore[arg-type]
    assert texts.gather(where).to_list() == expected
    for line in expected:
        json.loads(line)  # each is one JSON object


def test_message_texts_of_no_messages() -> None:
    texts, where = message_texts(_flat_messages().head(0), "json_string")
    assert texts.len() == 0 and where.size == 0


def _regex_objects(values: pl.DataFrame) -> list[str]:
    """The struct-then-regex pass the export runs where a nested value holds a null."""
    text = values.select(pl.struct(pl.all()).struct.json_encode().alias("o"))["o"]
    return (text.str.replace_all(_rows._NULL_FIELD, "").str.replace_all(r'\{"[^"\\]*":null,', "{")
            .str.replace_all(r'\{"[^"\\]*":null\}', "{}")).to_list()


def _python_objects(values: pl.DataFrame) -> list[str]:
    """Plain Python: each row's non-null (and finite) keys, in order."""
    def keep(v: object) -> bool:
        return v is not None and not (isinstance(v, float) and not math.isfinite(v))

    return [json.dumps({k: v for k, v in row.items() if keep(v)}, ensure_ascii=False, separators=(",", ":"))
            for row in values.iter_rows(named=True)]


def test_objects_leave_out_null_keys_like_the_pattern_pass() -> None:
    rng = np.random.default_rng(3)
    n = 300
    values = pl.DataFrame({
        "schema_version": ["1"] * n,
        "reward": [None if rng.random() < 0.2 else round(float(rng.random()), 3) for _ in range(n)],
        "prompt": [None if rng.random() < 0.3 else _AWKWARD[i % len(_AWKWARD)] for i in range(n)],
        "k": [None if rng.random() < 0.2 else int(rng.integers(0, 9)) for _ in range(n)],
        "ok": [None if rng.random() < 0.2 else bool(rng.random() < 0.5) for _ in range(n)],
        "unroll": [{"turn": i, "turns": i + 1} for i in range(n)],  # nested, never null
    })
    got = _rows._objects(values)
    assert got is not None
    assert got.to_list() == _regex_objects(values)
    assert got.to_list() == _python_objects(values)


def test_objects_treat_nan_and_inf_as_null() -> None:
    values = pl.DataFrame({"schema_version": ["1"] * 4, "x": [1.0, float("nan"), float("inf"), None], "y": [0.5] * 4})
    got = _rows._objects(values)
    assert got is not None
    assert got.to_list() == _regex_objects(values)
    assert got.to_list()[1] == '{"schema_version":"1","y":0.5}'


def test_objects_defer_nested_nulls_and_many_patterns() -> None:
    nested = pl.DataFrame({"schema_version": ["1", "1"], "s": [{"a": 1, "b": None}, {"a": 2, "b": "x"}]})
    assert _rows._objects(nested) is None  # a null inside a struct: the pattern passes handle it
    width = 6  # 2**6 null patterns, more than EXPORT_NULL_SHAPES
    rows = [{"schema_version": "1", **{f"c{b}": (None if code >> b & 1 else b) for b in range(width)}}
            for code in range(2 ** width)]
    many = pl.DataFrame(rows, schema={"schema_version": pl.String, **{f"c{b}": pl.Int64 for b in range(width)}})
    assert 2 ** width > _rows.EXPORT_NULL_SHAPES
    assert _rows._objects(many) is None
    assert _regex_objects(many) == _python_objects(many)


def test_group_json_per_task_matches_per_row_keys() -> None:
    df = pl.DataFrame({"task_key": ["a", "a", "b", "c", "c"], "reward": [1.0, 0.0, None, 0.25, 0.25]})
    stats = _rows.with_group_json(_rows.group_stats(df))
    expected = _python_objects(stats.select(_rows._group_fields(stats.schema)))
    assert stats["_group_json"].to_list() == expected
    assert '"reward_mean"' not in stats.filter(pl.col("task_key") == "b")["_group_json"].item()


def test_mask_texts_match_python() -> None:
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 7, 200)
    offsets = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    mask = rng.integers(0, 2, int(offsets[-1]))
    got = _rows._mask_texts(mask, offsets).to_list()
    want = ['],"loss_mask":[' + ",".join(str(int(d)) for d in mask[offsets[i]:offsets[i + 1]]) + ""
            for i in range(sizes.size)]
    assert got == want


def test_hex_prefix_matches_format() -> None:
    values = np.random.default_rng(11).integers(0, 2 ** 63, 1000, dtype=np.uint64) * np.uint64(2)
    values[:3] = [0, 2 ** 64 - 1, 0xABC]
    assert _rows._hex_prefix(values, 12).to_list() == [f"{int(v):016x}"[:12] for v in values]


def test_line_bytes_are_the_pieces_back_to_back() -> None:
    pieces = pl.DataFrame({"piece": ['{"a":', "1", "é😀", "}\n", "", "x" * 40] * 50})
    for frame in (pieces, pieces.slice(7, 101), pieces.head(0)):
        assert bytes(_rows.line_bytes(frame)) == "".join(frame["piece"].to_list()).encode("utf-8")


def test_mask_texts_through_the_buffer_too(monkeypatch) -> None:
    """Long conversations and many distinct masks take the byte buffer: the same texts."""
    rng = np.random.default_rng(9)
    sizes = np.r_[rng.integers(1, 7, 300), [60, 1, 49]]
    offsets = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    mask = rng.integers(0, 2, int(offsets[-1]))
    want = ['],"loss_mask":[' + ",".join(str(int(d)) for d in mask[offsets[i]:offsets[i + 1]]) for i in range(sizes.size)]
    assert _rows._mask_texts(mask, offsets).to_list() == want  # a 60-message sample: the buffer
    monkeypatch.setattr(_rows, "EXPORT_MASK_KINDS", 2)
    short = offsets[:301]
    assert _rows._mask_texts(mask[: short[-1]], short).to_list() == want[:300]  # too many kinds: the buffer
