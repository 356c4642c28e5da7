"""Every step reads rows through ``table.source``: the same rows, reports and bytes from every input kind.

One parametrised test over the input kinds a user has (a frame in memory, a Parquet file, a
folder of Parquet files, JSONL, JSONL.gz), the row shapes (whileai's rollouts with leaked answer
keys, the same without privileged context so select reads decisions first, whileai 0.131's
``steps`` rows with privileged context and lineage, rows our own writer wrote) and the one switch
of the read path (``whileai.defaults.FAST_READ``) on and off. Each compares select (rl and
sft, every rule) and export (both formats, masks, unrolled, the leak refusal) against the frame
in memory with the switch off, the path every other one must match. Awkward Parquet files
(columns missing, ids missing, conversations empty or opening with a system turn) and awkward
JSONL batches (a column only in the last batch, types that change between batches) run the
same comparison on the kinds they are about. The digests of the whileai rows were taken from
the in-memory path before any path reader existed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.json as pj
import pyarrow.parquet as pq
import pytest

import whileai as wai
from tests.table._rows import awkward_rows, json_rows, late_system, w131_rows
from whileai import defaults, table
from whileai.errors import WaiError
from whileai.table import _jsonl_plain

BATCH = 64  # rows a spool batch in these tests, so batch boundaries fall inside every file


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


SELECT_CASES: dict[str, dict[str, Any]] = {
    "rl": {"mode": "rl", "target": 120},
    "rl all keep middle": {"mode": "rl", "target": None, "truncated": "keep", "order": "middle"},
    "rl penalize no band": {"mode": "rl", "target": 200, "truncated": "penalize", "enforce_band": False},
    "sft top": {"mode": "sft", "target": 25},
    "sft top k": {"mode": "sft", "select": "top_k_overall", "k": 40, "min_reward": 0.5},
    "sft random": {"mode": "sft", "select": "random_per_prompt", "target": 30, "seed": 5},
    "sft random k": {"mode": "sft", "select": "random_k_overall", "k": 33, "min_reward": 0.25},
}
EXPORT_CASES: dict[str, dict[str, Any]] = {
    "openai": {"format": "openai", "validate": False},
    "trl": {"format": "trl", "validate": False},
    "openai final cut": {"format": "openai", "validate": False, "mask_mode": "final", "max_tool_output_chars": 12},
    "trl unroll": {"format": "trl", "validate": False, "unroll": True},
    "validated": {"format": "openai"},  # the leak check refuses whileai rows that quote their answer key
}

#: Digests (kept ids, rows, report) of the whileai rows' selections, taken from the in-memory path
#: before the path readers existed. The SFT pins are taken after the tie-break became a seeded hash
#: of rollout_id; the rl calibration pins were re-taken when headroom became pass@k minus c / n.
#: The report pins were re-taken when rows given became n_rows (issue 41): renamed back to n, each
#: report gives its old pin.
SELECT_PINNED: dict[str, tuple[str, str, str]] = {
    "rl": ("db58eb513bc3aaee", "52a42db6139dcf8d", "d1713eac003bd853"),
    "rl all keep middle": ("8207dd781245f9f7", "6809962afec428d3", "1938609a5440a202"),
    "rl penalize no band": ("de425e9eef95638a", "83f84ab2b8f43b4a", "33887f7244755e7e"),
    "sft top": ("fb7e22155620b057", "e8cd8ab93f734ebf", "ebfb53edb3a81db9"),
    "sft top k": ("e13716ac7e36ca48", "541ecbe8a0003546", "6be4dbd2b4092b38"),
    "sft random": ("5646e5d22af9507d", "7ec8fe8d2c508beb", "50de64f4a7e3c35b"),
    "sft random k": ("eaa380a28a68b4e1", "235b8d17fc1e0e6f", "1cd6a841a4847cb1"),
}
#: Digests (file, report) of the whileai rows' exports, from the in-memory path likewise (the report
#: pins re-taken for n_rows as above; the file pins are the first ones).
EXPORT_PINNED: dict[str, tuple[str, str]] = {
    "openai": ("f589c5f113f316fc", "378269130faf339c"),
    "trl": ("87e398c2b09f5db9", "251963957e91a1d2"),
    "openai final cut": ("a1119d5d97e9c3b4", "08578dd318e0802e"),
    "trl unroll": ("c711409ed1b1d571", "476009f0836e8988"),
}


def _select(source: Any, options: dict[str, Any]) -> Any:
    try:
        sel = wai.select(source, **options)
    except WaiError as exc:
        return f"{type(exc).__name__}: {exc}"
    return {"ids": sel.df["rollout_id"].to_list() if "rollout_id" in sel.df.columns else None,
            "columns": sel.df.columns,
            "rows": _digest(sel.df.drop("calibration", strict=False).to_dicts()),
            "report": _digest(sel.report.to_dict()),
            "calibration": _digest(sel.df["calibration"].to_list()) if "calibration" in sel.df.columns else None}


def _export(source: Any, out: Path, options: dict[str, Any]) -> Any:
    try:
        report = wai.export(source, out, **options).to_dict()
    except WaiError as exc:
        assert not out.exists()  # a refusal writes nothing
        return f"{type(exc).__name__}: {exc}"
    report.pop("path", None)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()[:16]
    out.unlink()
    return digest, _digest(report)


def _outcomes(source: Any, folder: Path, selects: list[str], exports: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {case: _select(source, SELECT_CASES[case]) for case in selects}
    out.update({case: _export(source, folder / "out.jsonl", EXPORT_CASES[case]) for case in exports})
    return out


# ---- the shapes ---------------------------------------------------------------------------------

def _lean() -> list[dict[str, Any]]:
    """The rows without privileged context (select reads decisions first), a few opening with a system turn."""
    return late_system(json_rows(privileged=False))


def _ours() -> list[dict[str, Any]]:
    """The lean rows as our writer stamps them (``table.write_jsonl`` adds ``schema_version``)."""
    return [{**r, "schema_version": defaults.SCHEMA_VERSION} for r in _lean()]


def _awkward_parquet(shape: str) -> Callable[[], pl.DataFrame]:
    """The lean rows reshaped as a frame, for a Parquet file of that shape."""
    def make() -> pl.DataFrame:
        rows = [{k: v for k, v in r.items() if k != "privileged"} for r in awkward_rows()]
        for i, row in enumerate(rows):
            if shape == "system turns" and i % 37 == 5:
                row["messages"] = [{"role": "system", "content": "Be brief.", "name": None, "tool_call_id": None,
                                    "tool_calls": [], "extra": None}, *row["messages"]]
            if shape == "some ids missing" and i % 5 == 2:
                row["rollout_id"] = None
            if shape == "empty conversations" and i % 17 == 3:
                row["messages"] = [] if i % 2 else None
            if shape == "no scenario_id" and i % 3 == 0:
                row["scenario_id"] = None  # the task falls back to the prompt hash
            if shape == "replies in the conversation only" and i % 4 == 1:
                row["final_text"] = None  # the whole read takes the last assistant message's text
        df = table.frame(rows)
        if shape == "no rollout_id":
            df = df.drop("rollout_id")
        if shape == "no rollout ids at all":
            df = df.drop("rollout_id", "rollout_index")
        if shape == "no prompt":
            df = df.drop("prompt")
        if shape == "categorical extra":
            df = df.with_columns(pl.col("fault_kind").cast(pl.Categorical).alias("kind_cat"))
        if shape == "all ungraded but one task":
            df = df.with_columns(pl.when(pl.col("scenario_id") == df["scenario_id"][0]).then(pl.col("reward"))
                                 .otherwise(None).alias("reward"))
        return df.drop([c for c in ("task_key", "system_prompt") if c in df.columns])
    return make


def _last_batch_column() -> list[dict[str, Any]]:
    rows = json_rows(privileged=False)
    for i, r in enumerate(rows[-BATCH // 2:]):
        r["judge_note"] = f"note {i}"
        r["late_score"] = i / 3
    return rows


def _mixed_dtypes() -> list[dict[str, Any]]:
    rows = json_rows(privileged=False)
    for i, r in enumerate(rows):
        r["attempt"] = i if i < BATCH else i + 0.5  # ints in the first batch, floats later
        r["maybe"] = None if i < 2 * BATCH else f"v{i}"  # null for two batches, then text
    return rows


def _empty_conversations() -> list[dict[str, Any]]:
    rows = json_rows(privileged=False)
    for i in range(3, len(rows), 37):
        rows[i]["messages"] = []
    return rows


ALL_KINDS = ("frame", "parquet", "parquet folder", "jsonl", "jsonl.gz")
MAIN = (list(SELECT_CASES), list(EXPORT_CASES))
SELECTS = (list(SELECT_CASES), [])
SPOOL = (["rl", "sft top k"], ["openai", "trl unroll"])
NEWER = (["rl", "rl penalize no band", "sft top", "sft top k"], ["openai", "trl unroll", "validated"])

#: shape -> (rows or frame maker, writer, kinds, (select cases, export cases)). The reference of
#: each is its first kind with the switch off: the frame in memory, or the JSONL file read whole.
SHAPES: dict[str, tuple[Callable[[], Any], str, tuple[str, ...], tuple[list[str], list[str]]]] = {
    "whileai rows": (awkward_rows, "dicts", ALL_KINDS, MAIN),
    "no privileged": (_lean, "dicts", ALL_KINDS, MAIN),
    "0.131 rows": (w131_rows, "dicts", ALL_KINDS, NEWER),
    "our writer": (_ours, "ours", ALL_KINDS, NEWER),
    **{f"parquet: {s}": (_awkward_parquet(s), "frame", ("frame", "parquet"), SELECTS) for s in (
        "system turns", "some ids missing", "empty conversations", "no scenario_id",
        "replies in the conversation only", "no rollout_id", "no rollout ids at all", "no prompt",
        "categorical extra", "all ungraded but one task")},
    "jsonl: column in last batch": (_last_batch_column, "dicts", ("jsonl",), SPOOL),
    "jsonl: mixed dtypes": (_mixed_dtypes, "dicts", ("jsonl",), SPOOL),
    "jsonl: empty conversations": (_empty_conversations, "dicts", ("jsonl", "jsonl.gz"), SPOOL),
    "jsonl: messages only": (lambda: [{k: v for k, v in r.items() if k not in ("prompt", "final_text")}
                                      for r in json_rows(privileged=False)], "dicts", ("jsonl",), SPOOL),
    "jsonl: smaller than a batch": (lambda: json_rows(privileged=False)[:40], "dicts", ("jsonl",), SPOOL),
    "jsonl: 0.131 smaller than a batch": (lambda: w131_rows()[:40], "dicts", ("jsonl", "jsonl.gz"), SPOOL),
}


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(r, default=str) + "\n" for r in rows)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _source(shape: str, kind: str, folder: Path) -> Any:
    """The shape's rows as ``kind``: in memory, or a file written as its writer writes it."""
    make, writer, _, _ = SHAPES[shape]
    rows = make()
    if kind == "frame":
        return table.frame(rows)
    if kind in ("jsonl", "jsonl.gz"):
        path = folder / f"rows.{kind}"
        if writer == "ours":
            return table.write_jsonl(table.frame(rows), path)
        return _jsonl(path, rows)
    df = table.frame(rows) if writer != "frame" else rows
    raw = df.drop([c for c in ("task_key", "system_prompt") if c in df.columns])
    if shape == "0.131 rows":  # as the generator writes its Parquet: pyarrow's JSON reader, then its writer
        raw_rows = _jsonl(folder / "raw.jsonl", rows)
        arrow = pj.read_json(raw_rows)
        parts = [arrow.slice(0, 200), arrow.slice(200)]
    else:
        parts = [raw.slice(0, 200).to_arrow(), raw.slice(200).to_arrow()]
    if kind == "parquet":
        path = folder / "rows.parquet"
        if writer == "ours":
            return table.write_parquet(df, path)
        pq.write_table(parts[0].__class__.from_batches(parts[0].to_batches() + parts[1].to_batches()), path,
                       row_group_size=70)  # row groups smaller than a chunk
        return path
    parquet_folder = folder / "rows"
    parquet_folder.mkdir()
    if writer == "ours":
        table.write_parquet(df.slice(0, 200), parquet_folder / "part-0.parquet")
        table.write_parquet(df.slice(200), parquet_folder / "part-1.parquet")
    else:
        for i, part in enumerate(parts):
            pq.write_table(part, parquet_folder / f"part-{i}.parquet", row_group_size=70)
    return parquet_folder


_REFERENCES: dict[str, dict[str, Any]] = {}


def _reference(shape: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The shape's outcomes from its first kind with the switch off (kept for the module)."""
    if shape not in _REFERENCES:
        _, _, kinds, (selects, exports) = SHAPES[shape]
        with monkeypatch.context() as m:
            m.setattr(defaults, "FAST_READ", False)
            if shape.startswith("jsonl:"):
                m.setattr(_jsonl_plain, "CHUNK_ROWS", BATCH)
            (folder / "reference").mkdir()
            found = _outcomes(_source(shape, kinds[0], folder / "reference"), folder / "reference", selects, exports)
        if shape == "whileai rows":  # the pins: the in-memory path as it was before any path reader
            for case, pin in SELECT_PINNED.items():
                got = found[case]
                assert (_digest(got["ids"]), got["rows"], got["report"]) == pin, case
            for case, pin in EXPORT_PINNED.items():
                assert found[case] == pin, case
            assert "privileged_leak" in found["validated"]
        _REFERENCES[shape] = found
    return _REFERENCES[shape]


#: Every kind of every shape with the switch on and off, but for the reference itself (a frame
#: too: the switch also governs how its nested columns are normalised).
CELLS = [(shape, kind, switch) for shape, (_, _, kinds, _) in SHAPES.items() for kind in kinds
         for switch in (True, False) if not (kind == kinds[0] and not switch)]


@pytest.mark.parametrize(("shape", "kind", "switch"), CELLS,
                         ids=[f"{s}-{k}-{'fast read' if on else 'plain read'}" for s, k, on in CELLS])
def test_every_input_kind_gives_the_same_rows_reports_and_bytes(
        shape: str, kind: str, switch: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _reference(shape, tmp_path, monkeypatch)
    _, _, _, (selects, exports) = SHAPES[shape]
    monkeypatch.setattr(defaults, "FAST_READ", switch)
    monkeypatch.setattr(defaults, "SPOOL_PARQUET_MIN_ROWS", 0)  # another writer's Parquet spooled too, at any size
    if shape.startswith("jsonl:"):  # spool batches small, so batch boundaries fall inside the file
        monkeypatch.setattr(_jsonl_plain, "CHUNK_ROWS", BATCH)
    got = _outcomes(_source(shape, kind, tmp_path), tmp_path, selects, exports)
    assert list(got) == list(expected)
    for case in got:
        assert got[case] == expected[case], case
    assert any(not isinstance(v, str) for v in got.values()), "some case must keep or write rows"
