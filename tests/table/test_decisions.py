"""The decision-columns-first read of a Parquet file (``whileai.table._decisions``), behind ``table.source``.

Select reads a Parquet file's decision columns first (the conversations reduced to their tool
calls) and the kept rows' conversations last, checking every message's role on the way. These
pin where that path is taken, and that every way it can meet a file (small batches, many row
groups, roles coded as dictionaries, a role the whole read renames or refuses, pyarrow failing
on a leaf, an interrupted read) ends in the rows, report or error of the whole read.
tests/table/test_source_same_rows.py compares every input kind with the switch on and off.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import whileai as wai
from tests.table._rows import awkward_rows
from whileai import table
from whileai.errors import TrainingSelectionError


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, Path]:
    df = table.frame(awkward_rows())
    path = tmp_path_factory.mktemp("same") / "rows.parquet"
    pq.write_table(df.to_arrow(), path, row_group_size=100)  # row groups smaller than a chunk
    return df, path


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _selection(source: Any, **options: Any) -> dict[str, Any]:
    sel = wai.select(source, **options)
    report = sel.report.to_dict()
    rows = sel.df.drop("calibration", strict=False).to_dicts()
    return {"ids": sel.df["rollout_id"].to_list() if "rollout_id" in sel.df.columns else None, "rows": _digest(rows), "report": _digest(report),
            "calibration": _digest(sel.df["calibration"].to_list()) if "calibration" in sel.df.columns else None}


SELECT_CASES: dict[str, dict[str, Any]] = {
    "rl": {"mode": "rl", "target": 120},
    "rl all keep middle": {"mode": "rl", "target": None, "truncated": "keep", "order": "middle"},
    "rl penalize no band": {"mode": "rl", "target": 200, "truncated": "penalize", "enforce_band": False},
    "sft top": {"mode": "sft", "target": 25},
    "sft top k": {"mode": "sft", "select": "top_k_overall", "k": 40, "min_reward": 0.5},
    "sft random": {"mode": "sft", "select": "random_per_prompt", "target": 30, "seed": 5},
    "sft random k": {"mode": "sft", "select": "random_k_overall", "k": 33, "min_reward": 0.25},
}

#: Digests of the selections, taken from the in-memory path before the path readers existed.
#: The SFT pins are taken after the tie-break became a seeded hash of rollout_id (the same rows
#: whatever the row order or engine, docs/select.md). The rl calibration pins were re-taken when
#: headroom became pass@k minus c / n (these rows have partial credit; the rows are unchanged).
@pytest.fixture(scope="module")
def lean_sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, Path]:
    """The same rows without the privileged column (select then reads decisions first), a few
    conversations opening with a system turn (the whole table gains system_prompt)."""
    rows = awkward_rows()
    for i, row in enumerate(rows):
        row.pop("privileged")
        if i % 97 == 50:
            row["messages"] = [{"role": "system", "content": "Be brief.", "name": None, "tool_call_id": None,
                                "tool_calls": [], "extra": None}, *row["messages"]]
    df = table.frame(rows)
    path = tmp_path_factory.mktemp("lean") / "rows.parquet"
    pq.write_table(df.to_arrow(), path, row_group_size=100)
    return df, path


@pytest.mark.parametrize("case", [c for c in SELECT_CASES if c.startswith("rl")])
def test_rl_reads_decisions_first_and_keeps_the_same_rows(lean_sources: tuple[pl.DataFrame, Path], case: str) -> None:
    from whileai.selection._rl import _DECISION_COLUMNS
    from whileai.table._decisions import parquet_decisions

    df, path = lean_sources
    assert "system_prompt" in df.columns
    decided = parquet_decisions(path, _DECISION_COLUMNS)
    assert decided is not None, "a whileai Parquet file without privileged context is read decisions first"
    assert "content" not in decided[0].schema["messages"].inner.fields[0].name  # type: ignore[union-attr]
    assert _selection(path, **SELECT_CASES[case]) == _selection(df, **SELECT_CASES[case])


def test_decisions_first_only_where_the_rows_are_the_same(sources: tuple[pl.DataFrame, Path], tmp_path: Path) -> None:
    from whileai.table._decisions import parquet_decisions

    df, path = sources
    # privileged context is read decisions first too: the leak check reads the texts itself, a chunk at a time
    assert parquet_decisions(path, ["reward"]) is not None
    assert parquet_decisions(df, ["reward"]) is None
    aliased = tmp_path / "aliased.parquet"
    df.drop("privileged").rename({"rollout_index": "epoch"}).write_parquet(aliased)
    assert parquet_decisions(aliased, ["reward"]) is None


@pytest.mark.parametrize("case", [c for c in SELECT_CASES if c.startswith("sft")])
def test_sft_reads_decisions_first_and_keeps_the_same_rows(lean_sources: tuple[pl.DataFrame, Path], case: str) -> None:
    from whileai.selection._sft import _DECISION_COLUMNS
    from whileai.table._decisions import parquet_decisions

    df, path = lean_sources
    decided = parquet_decisions(path, _DECISION_COLUMNS, calls=("name",))
    assert decided is not None, "a whileai Parquet file without privileged context is read decisions first"
    message = decided[0].schema["messages"].inner  # type: ignore[union-attr]
    assert [f.name for f in message.fields] == ["tool_calls"]  # no message text read; the roles checked, not kept
    assert _selection(path, **SELECT_CASES[case]) == _selection(df, **SELECT_CASES[case])


def _awkward_file(tmp_path: Path, name: str, shape: str) -> tuple[pl.DataFrame, Path]:
    """The lean rows reshaped, written as whileai writes Parquet (derived columns dropped), small row groups."""
    rows = awkward_rows()
    for i, row in enumerate(rows):
        row.pop("privileged")
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
    path = tmp_path / f"{name}.parquet"
    pq.write_table(df.drop([c for c in ("task_key", "system_prompt") if c in df.columns]).to_arrow(), path,
                   row_group_size=70)
    return table.frame(path), path


AWKWARD_SHAPES = ["system turns", "some ids missing", "empty conversations", "no scenario_id",
                  "replies in the conversation only", "no rollout_id",
                  "no rollout ids at all", "no prompt", "categorical extra", "all ungraded but one task"]


@pytest.mark.parametrize("shape", AWKWARD_SHAPES)
@pytest.mark.parametrize("mode", ["rl", "sft"])
def test_every_awkward_file_but_one_without_prompts_is_read_decisions_first(tmp_path: Path, shape: str, mode: str) -> None:
    # the rows, reports and bytes of these files: tests/table/test_source_same_rows.py ("parquet: ...")
    from whileai.selection import _rl, _sft
    from whileai.selection._rows import read_columns
    from whileai.table._decisions import parquet_decisions

    _, path = _awkward_file(tmp_path, "rows", shape)
    columns, calls = (_rl._DECISION_COLUMNS, ("name", "arguments")) if mode == "rl" else (_sft._DECISION_COLUMNS, ("name",))
    read_first = parquet_decisions(path, read_columns(columns), calls=calls) is not None
    assert read_first == (shape != "no prompt"), "every shape but a file without prompts is read decisions first"
    with table.source(path) as src:
        decided = src.read(read_columns(columns), calls=calls)
        assert (src._fetch is not None) == read_first
        assert decided.height == pl.scan_parquet(path).select(pl.len()).collect().item()


@pytest.mark.parametrize("mode", ["rl", "sft"])
def test_a_bad_role_in_a_row_no_one_keeps_still_raises(tmp_path: Path, mode: str) -> None:
    from whileai.errors import SchemaError

    df, _ = _awkward_file(tmp_path, "rows", "system turns")
    # the last row: the rows around it decide nothing about it
    bad = _with_role(df, tmp_path / "bad.parquet", "robot", [df.height - 1], 70)
    with pytest.raises(SchemaError, match="role 'robot'"):
        wai.select(bad, mode=mode)


@pytest.mark.parametrize("mode", ["rl", "sft"])
def test_no_graded_row_raises_the_same_from_a_file(tmp_path: Path, mode: str) -> None:
    df, path = _awkward_file(tmp_path, "rows", "system turns")
    ungraded = tmp_path / "ungraded.parquet"
    pq.write_table(df.drop("task_key", "system_prompt").with_columns(pl.lit(None, pl.Float64).alias("reward")).to_arrow(),
                   ungraded, row_group_size=70)
    found = []
    for source in (table.frame(ungraded), ungraded):
        with pytest.raises(TrainingSelectionError, match="needs graded rows") as info:
            wai.select(source, mode=mode)
        found.append(str(info.value))
    assert found[0] == found[1]


@pytest.mark.parametrize("case", ["rl", "rl all keep middle", "sft top", "sft random k"])
def test_fetch_in_small_batches_keeps_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    import whileai.table._decisions as common

    df, path = _awkward_file(tmp_path, "rows", "system turns")
    expected = _selection(df, **SELECT_CASES[case])
    for rows in (1, 7, 64):  # batches smaller than a row group: kept rows cut out of each, roles checked in each
        monkeypatch.setattr(common, "FETCH_BATCH_ROWS", rows)
        assert _selection(path, **SELECT_CASES[case]) == expected


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("case", ["rl", "sft top"])
def test_many_row_groups_read_in_runs_by_one_reader_a_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           threads: int, case: str) -> None:
    # the conversations are read in FETCH_THREADS runs of row groups, one reader a run, none of which
    # parses the footer again: a reader per row group made a file of 1,000 groups of 100 rows take
    # 17 s instead of 1 s (each reader parsed the whole footer)
    import whileai.table._decisions as common

    df, path = _awkward_file(tmp_path, "rows", "system turns")
    many = tmp_path / "many.parquet"
    pq.write_table(pq.read_table(path), many, row_group_size=3)
    assert pq.ParquetFile(many).num_row_groups > 20
    expected = _selection(df, **SELECT_CASES[case])
    opened: list[bool] = []
    real = pq.ParquetFile

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            opened.append(kwargs.get("metadata") is None)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", Counting)
    monkeypatch.setattr(common, "FETCH_THREADS", threads)
    assert _selection(many, **SELECT_CASES[case]) == expected
    assert sum(opened) == 1  # the footer is parsed once
    assert len(opened) <= 1 + 2 * threads  # the decision read and the fetch: a reader a run


@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("case", ["rl", "sft top"])
def test_roles_written_with_or_without_dictionary_pages_keep_the_same_rows(
        tmp_path: Path, dictionary: bool, case: str) -> None:
    df, path = _awkward_file(tmp_path, "rows", "system turns")
    expected = _selection(df, **SELECT_CASES[case])
    plain = tmp_path / "plain.parquet"
    pq.write_table(pq.read_table(path), plain, row_group_size=40, use_dictionary=dictionary)
    assert _selection(plain, **SELECT_CASES[case]) == expected


def _with_role(df: pl.DataFrame, path: Path, role: str, rows: list[int], row_group_size: int) -> Path:
    """The file of ``df`` with the first message of ``rows`` given ``role``."""
    raw = df.drop([c for c in ("task_key", "system_prompt") if c in df.columns]).to_arrow()
    msgs = raw.column("messages").to_pylist()
    for i in rows:
        msgs[i][0]["role"] = role
    pq.write_table(raw.set_column(raw.schema.get_field_index("messages"), "messages",
                                  pa.array(msgs, type=raw.schema.field("messages").type)), path,
                   row_group_size=row_group_size)
    return path


@pytest.mark.parametrize(("row_group_size", "batch_rows", "where"), [
    (10, 7, "last"),  # the last row sits in a group no one keeps: its roles read alone
    (100_000, 7, "last"),  # one group, the batches stop at the last kept row: the roles read alone
    (100_000, 256, "first"),  # two batches reach the group's end: the roles checked in them
])
@pytest.mark.parametrize("case", ["rl", "sft top", "sft top k"])
def test_a_bad_role_anywhere_raises_the_whole_reads_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          row_group_size: int, batch_rows: int, where: str,
                                                          case: str) -> None:
    # the roles are checked while the kept rows are fetched, wherever the bad one sits
    import whileai.table._decisions as common
    from whileai.errors import SchemaError

    monkeypatch.setattr(common, "FETCH_BATCH_ROWS", batch_rows)
    df, _ = _awkward_file(tmp_path, "rows", "system turns")
    bad = _with_role(df, tmp_path / "bad.parquet", "robot", [df.height - 1 if where == "last" else 5], row_group_size)
    with pytest.raises(SchemaError, match="role 'robot'") as info:
        _selection(bad, **SELECT_CASES[case])
    assert info.value.__context__ is None or info.value.__suppress_context__
    with pytest.raises(SchemaError, match="role 'robot'"):
        table.frame(bad)


@pytest.mark.parametrize("mode", ["rl", "sft"])
def test_a_bad_role_comes_before_a_selection_error(tmp_path: Path, mode: str) -> None:
    # read in memory the file raises at the read, before anything is decided; from the path the
    # decision errors (here: no graded row) wait for the role check and give way to it
    from whileai.errors import SchemaError

    df, _ = _awkward_file(tmp_path, "rows", "system turns")
    ungraded = df.with_columns(pl.lit(None, pl.Float64).alias("reward"))
    bad = _with_role(ungraded, tmp_path / "bad.parquet", "robot", [5], 70)
    with pytest.raises(SchemaError, match="role 'robot'") as info:
        wai.select(bad, mode=mode)
    assert info.value.__suppress_context__  # the selection error it replaced is not shown
    good = _with_role(ungraded, tmp_path / "good.parquet", "user", [5], 70)
    with pytest.raises(TrainingSelectionError, match="needs graded rows"):
        wai.select(good, mode=mode)


@pytest.mark.parametrize("case", ["rl", "sft top", "sft random k"])
def test_a_role_the_whole_read_renames_keeps_the_whole_reads_rows(tmp_path: Path, case: str) -> None:
    # OpenAI's `developer` turn reads as `system` (table.schema.ROLE_ALIASES): the fetch hands the
    # file to the whole read, and the rows and report are those of the table in memory
    df, _ = _awkward_file(tmp_path, "rows", "system turns")
    renamed = _with_role(df, tmp_path / "developer.parquet", "developer", list(range(3, df.height, 29)), 64)
    in_memory = table.frame(renamed)
    assert "system_prompt" in in_memory.columns
    assert _selection(renamed, **SELECT_CASES[case]) == _selection(in_memory, **SELECT_CASES[case])


@pytest.mark.parametrize("case", ["rl", "sft top", "sft top k"])
def test_roles_stored_as_an_arrow_dictionary_keep_the_same_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    # a role column of dictionary type (a pandas categorical, or pyarrow's dictionary_encode) is
    # read back as a dictionary array: the fetch checks it in the fast path, not by the whole read
    import whileai.table._decisions as common

    df, path = _awkward_file(tmp_path, "rows", "system turns")
    raw = pq.read_table(path)
    kind = raw.schema.field("messages").type
    element = pa.struct([pa.field(f.name, pa.dictionary(pa.int32(), pa.string())) if f.name == "role" else f
                         for f in kind.value_type])
    cast = raw.column("messages").cast(pa.large_list(element) if pa.types.is_large_list(kind) else pa.list_(element))
    coded = tmp_path / "coded.parquet"
    pq.write_table(raw.set_column(raw.schema.get_field_index("messages"), "messages", cast), coded, row_group_size=64)
    assert pa.types.is_dictionary(pq.ParquetFile(coded).schema_arrow.field("messages").type.value_type.field("role").type)

    def no_whole_read(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the fetch took the whole read")

    expected = _selection(df, **SELECT_CASES[case])
    monkeypatch.setattr(common, "take_rows", no_whole_read)
    assert _selection(coded, **SELECT_CASES[case]) == expected


@pytest.mark.parametrize("stage", ["decision read", "fetch"])
@pytest.mark.parametrize("case", ["rl", "sft top"])
def test_a_leaf_pyarrow_cannot_decode_falls_back_to_the_whole_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str, case: str) -> None:
    # pyarrow failing on a conversation leaf Polars reads (or reports) must not surface as a raw
    # ArrowInvalid: the decision read declines, the fetch takes the whole read's rows
    import whileai.table._decisions as common

    df, path = _awkward_file(tmp_path, "rows", "system turns")
    expected = _selection(df, **SELECT_CASES[case])
    real = pq.ParquetFile

    class Broken(real):  # type: ignore[misc, valid-type]
        def read_row_group(self, *args: Any, **kwargs: Any) -> Any:
            if stage == "decision read":
                raise pa.ArrowInvalid("Couldn't deserialize thrift: TProtocolException: Invalid data")
            return super().read_row_group(*args, **kwargs)

        def read_row_groups(self, *args: Any, **kwargs: Any) -> Any:
            return self.read_row_group(*args, **kwargs)

        def iter_batches(self, *args: Any, **kwargs: Any) -> Any:
            if stage == "fetch":
                raise pa.ArrowInvalid("Couldn't deserialize thrift: TProtocolException: Invalid data")
            return super().iter_batches(*args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", Broken)
    decided = common.parquet_decisions(path, ("reward", "final_text", "messages"), calls=("name",))
    assert (decided is None) == (stage == "decision read")
    assert _selection(path, **SELECT_CASES[case]) == expected


@pytest.mark.parametrize("textless", ["none", "with a call", "junk"])
@pytest.mark.parametrize("case", ["sft top", "sft top k", "sft random"])
def test_sft_reads_tool_calls_only_where_a_reply_has_no_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, textless: str, case: str) -> None:
    # the junk flag counts calls only for a reply with no letter or digit: a file without one is
    # decided without decoding a call leaf, and one with them decodes the calls and keeps what the
    # whole read keeps (a textless reply after a tool call is a demonstration, without one it is junk)
    rows = [r for r in awkward_rows() if any(ch.isalnum() for ch in r["final_text"] or "")]
    for row in rows:
        row.pop("privileged")
    if textless != "none":
        with_calls = [i for i, r in enumerate(rows) if any(m["tool_calls"] for m in r["messages"])]
        for i in with_calls[::40][:3]:  # three rollouts that called tools, passing
            row = rows[i]
            row["reward"], row["final_text"] = 1.0, "  "
            if textless == "junk":
                row["messages"] = [row["messages"][0], {"role": "assistant", "content": "  ", "name": None,
                                                        "tool_call_id": None, "tool_calls": [], "extra": None}]
            assert any(m["tool_calls"] for m in row["messages"]) == (textless == "with a call")
    df = table.frame(rows)
    path = tmp_path / "rows.parquet"
    pq.write_table(df.drop("task_key").to_arrow(), path, row_group_size=64)
    expected = _selection(df, **SELECT_CASES[case])
    real = pq.ParquetFile
    leaves: list[str] = []

    class Recording(real):  # type: ignore[misc, valid-type]
        def read_row_group(self, i: int, columns: Any = None, **kwargs: Any) -> Any:
            leaves.extend(columns or [])
            return super().read_row_group(i, columns=columns, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", Recording)
    assert _selection(path, **SELECT_CASES[case]) == expected
    call_leaf = "messages.list.element.tool_calls.list.element.name"
    assert (call_leaf in leaves) == (textless != "none")
    if textless == "junk":
        assert wai.select(df, **SELECT_CASES[case]).report.n_junk == 3


def test_calls_where_decides_whether_the_frame_holds_the_tool_calls(lean_sources: tuple[pl.DataFrame, Path]) -> None:
    from whileai.table._decisions import parquet_decisions

    _, path = lean_sources
    columns = ("reward", "final_text", "messages")
    never = parquet_decisions(path, columns, calls=("name",), calls_where=lambda df: pl.lit(False))
    always = parquet_decisions(path, columns, calls=("name",), calls_where=lambda df: pl.col("reward").is_not_null())
    plain = parquet_decisions(path, columns, calls=("name",))
    assert never is not None and always is not None and plain is not None
    assert "messages" not in never[0].columns
    assert always[0].equals(plain[0])
    assert never[0].equals(plain[0].drop("messages"))


@pytest.mark.parametrize("case", ["sft top", "sft random k"])
def test_sft_from_a_file_whose_replies_are_in_the_conversation_only(tmp_path: Path, case: str) -> None:
    # a null final_text makes the narrow read take the whole conversations to fill it; with no
    # textless reply the decision frame still holds no messages, and the rows are the whole read's
    from whileai.selection._rows import reply_without_text
    from whileai.selection._sft import _DECISION_COLUMNS
    from whileai.table._decisions import parquet_decisions

    rows = [r for r in awkward_rows() if any(ch.isalnum() for ch in r["final_text"] or "")]
    for i, row in enumerate(rows):
        row.pop("privileged")
        last = row["messages"][-1]
        if i % 3 == 0 and last["role"] == "assistant" and any(ch.isalnum() for ch in last["content"] or ""):
            row["final_text"] = None
    df = table.frame(rows)
    path = tmp_path / "rows.parquet"
    pq.write_table(df.drop("task_key").with_columns(
        pl.Series("final_text", [r["final_text"] for r in rows], dtype=pl.String)).to_arrow(), path, row_group_size=64)
    assert pl.read_parquet(path, columns=["final_text"])["final_text"].null_count() > 10
    decided = parquet_decisions(path, _DECISION_COLUMNS, calls=("name",), calls_where=reply_without_text)
    assert decided is not None and "messages" not in decided[0].columns
    assert decided[0]["final_text"].null_count() == 0
    assert _selection(path, **SELECT_CASES[case]) == _selection(table.frame(path), **SELECT_CASES[case])


@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
def test_an_interrupted_narrow_read_does_not_leave_the_reader_waiting(
        lean_sources: tuple[pl.DataFrame, Path], monkeypatch: pytest.MonkeyPatch, error: type[BaseException]) -> None:
    # the reader thread waits for the narrow columns' answer on the tool calls: an error or a ^C in
    # the narrow read must still answer it, or leaving the thread pool would wait forever
    import threading

    import whileai.table._decisions as common

    _, path = lean_sources

    def failing(source: Any, *args: Any, **kwargs: Any) -> Any:
        raise error("stop")

    monkeypatch.setattr(common._read, "frame", failing)
    raised: list[BaseException] = []

    def call() -> None:
        try:
            common.parquet_decisions(path, ("reward", "final_text", "messages"), calls=("name",),
                                     calls_where=lambda df: pl.lit(True))
        except BaseException as exc:  # noqa: BLE001 - the test inspects what came out
            raised.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "parquet_decisions hung waiting for its reader thread"
    assert len(raised) == 1 and isinstance(raised[0], error)


@pytest.mark.parametrize("batch_rows", [7, 256])
@pytest.mark.parametrize("case", ["rl", "sft top"])
def test_system_turns_seen_by_the_fetch_add_system_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         batch_rows: int, case: str) -> None:
    # one row group: in batches of 256 the fetch reaches its end and sees the system turns in
    # them; in batches of 7 it stops at the last kept row and reads the group's roles alone
    import whileai.table._decisions as common

    monkeypatch.setattr(common, "FETCH_BATCH_ROWS", batch_rows)
    df, path = _awkward_file(tmp_path, "rows", "system turns")
    one = tmp_path / "one.parquet"
    pq.write_table(pq.read_table(path), one, row_group_size=100_000)
    assert "system_prompt" in df.columns
    selected = wai.select(one, **SELECT_CASES[case])
    assert "system_prompt" in selected.df.columns
    assert _selection(one, **SELECT_CASES[case]) == _selection(df, **SELECT_CASES[case])


@pytest.mark.parametrize("arrow_type", ["string", "large_string", "string_view"])
def test_string_codes_match_python_membership(arrow_type: str) -> None:
    # the fetch's role check compares raw bytes eight at a time: against Python's own membership,
    # over strings that share every prefix with a value, cross the 8- and 16-byte words, hold
    # multibyte characters, nulls and empty strings, whole and sliced
    import numpy as np

    from whileai.table._decisions import _string_codes

    values = ["system", "user", "assistant", "tool", "", "x" * 8, "y" * 16, "z" * 17, "tóol", "user"]  # the first of equal values wins
    near = [v[:cut] + c for v in values for cut in range(len(v) + 1) for c in ("", "s", "\x00", "é")]
    rng = np.random.default_rng(20261203)
    strings: list[str | None] = [*values, *near, None]
    strings += [strings[i] for i in rng.integers(0, len(strings), 2_000)]
    array = pa.array(strings, type=getattr(pa, arrow_type)())
    for start, stop in [(0, len(strings)), (3, 900), (len(strings) - 1, len(strings)), (5, 5)]:
        part = array.slice(start, stop - start)
        expected = [values.index(s) if s is not None and s in values else -1 for s in strings[start:stop]]
        assert _string_codes(part, values).tolist() == expected
