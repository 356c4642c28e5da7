"""The error tree: typed context on the base, and the one translation boundary for foreign errors."""

from __future__ import annotations

import errno
import json

import polars as pl
import pyarrow as pa
import pydantic
import pytest

import whileai as wai
from whileai import errors, table
from whileai.errors import (
    ArgumentError,
    InputFileError,
    PublishGateError,
    SchemaError,
    SpecError,
    StoreBusyError,
    StoreError,
    UnknownArgumentError,
    WaiError,
    translate,
)


def test_context_is_typed_keyword_only_and_recorded():
    exc = ArgumentError("band must be a pair, got 3. Pass band=(0.2, 0.8).", argument="band", value=3)
    assert (exc.argument, exc.value, exc.path, exc.row) == ("band", 3, None, None)
    assert exc.context == {"argument": "band", "value": 3}
    assert str(exc) == exc.message
    with pytest.raises(TypeError, match="parameter"):
        ArgumentError("x", parameter="band")  # the one name is argument=
    with pytest.raises(TypeError):
        ArgumentError("x", "band")  # context is keyword-only


def test_subclasses_keep_their_builtin_and_their_own_fields():
    assert issubclass(SpecError, ArgumentError) and issubclass(SpecError, TypeError)
    assert issubclass(UnknownArgumentError, ArgumentError) and issubclass(UnknownArgumentError, TypeError)
    from whileai.guard import SpecError as from_guard
    from whileai.simulation import UnknownArgumentError as from_simulation

    assert from_guard is SpecError and from_simulation is UnknownArgumentError
    missing = errors.missing_extra("datasets", "trl", "trl_dataset")
    assert isinstance(missing, ImportError) and (missing.package, missing.extra, missing.name) == ("datasets", "trl", "datasets")
    assert "pip install 'whileai[trl]'" in str(missing)
    gate = PublishGateError("ungraded_rl_rows: grade first.", reason="ungraded_rl_rows")
    assert gate.refusal == gate.reason == "ungraded_rl_rows"


def _raise(exc: BaseException) -> None:
    raise exc


def _duckdb_error() -> BaseException:
    duckdb = pytest.importorskip("duckdb", reason="the store extra is not installed")
    try:
        duckdb.connect(":memory:").execute("select * from no_such_table")
    except duckdb.Error as exc:
        return exc
    raise AssertionError("duckdb accepted a missing table")


def _pydantic_error() -> BaseException:
    class Model(pydantic.BaseModel):
        n: int

    try:
        Model(n="many")
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("pydantic accepted text for an int")


def _arrow_error() -> BaseException:
    try:
        pa.array([1, "a"])
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        return exc
    raise AssertionError("pyarrow mixed an int and a str")


def _polars_error() -> BaseException:
    try:
        pl.DataFrame({"a": [1]}).select(pl.col("reward"))
    except pl.exceptions.ColumnNotFoundError as exc:
        return exc
    raise AssertionError("polars found a missing column")


@pytest.mark.parametrize(("make", "expected"), [
    (_polars_error, SchemaError),
    (_arrow_error, SchemaError),
    (_pydantic_error, ArgumentError),
    (lambda: FileNotFoundError(errno.ENOENT, "No such file", "runs.jsonl"), InputFileError),
    (lambda: PermissionError(errno.EACCES, "Permission denied", "runs.jsonl"), InputFileError),
    (_duckdb_error, StoreError),
])
def test_translate_maps_foreign_errors_to_ours_from_the_original(make, expected):
    original = make()
    with pytest.raises(expected, match=r"^reading the rows failed: \w+") as info:
        with translate("reading the rows"):
            _raise(original)
    assert info.value.__cause__ is original
    assert info.value.reason == type(original).__name__


def test_translate_names_the_path_and_maps_os_errors_in_the_store_to_store_errors():
    with pytest.raises(StoreError, match="the store failed: PermissionError") as info:
        with translate("the store", path="/x/store.duckdb", store=True):
            _raise(PermissionError(errno.EACCES, "Permission denied", "/x/store.duckdb"))
    assert info.value.path == "/x/store.duckdb"


def test_translate_maps_a_held_lock_to_store_busy():
    class IOException(Exception):
        __module__ = "duckdb"

    with pytest.raises(StoreBusyError, match="retry"):
        with translate("the store", store=True):
            _raise(IOException('Could not set lock on file "s.duckdb": Conflicting lock is held'))


def test_a_layer_words_the_errors_it_knows_and_leaves_the_rest_to_translate():
    def mapper(exc):
        return StoreError("store file 's' cannot be read. Check the disk.") if isinstance(exc, OSError) else None

    with pytest.raises(StoreError, match="cannot be read") as info:
        with translate("the store", mapper=mapper):
            _raise(OSError("disk"))
    assert isinstance(info.value.__cause__, OSError)
    with pytest.raises(SchemaError, match="the store failed: ColumnNotFoundError"):
        with translate("the store", mapper=mapper):
            _raise(_polars_error())


@pytest.mark.parametrize("exc", [ArgumentError("ours"), KeyError("a bug"), ZeroDivisionError()])
def test_translate_passes_our_errors_and_unknown_ones_through(exc):
    with pytest.raises(type(exc)) as info:
        with translate("anything"):
            _raise(exc)
    assert info.value is exc


def test_the_table_boundary_translates_a_failing_lazy_frame():
    lazy = pl.LazyFrame({"prompt": ["a"]}).select(pl.col("prompt").cast(pl.Int64, strict=True))
    with pytest.raises(SchemaError, match="reading rows from the LazyFrame given failed") as info:
        table.frame(lazy)
    assert isinstance(info.value.__cause__, pl.exceptions.PolarsError)


def test_the_writer_boundary_translates_an_os_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputFileError) as info:  # a folder under a plain file cannot be made
        table.write(pl.DataFrame({"prompt": ["a"]}), blocker / "out.jsonl")
    assert isinstance(info.value.__cause__, OSError) and not isinstance(info.value.__cause__, WaiError)


def test_the_store_boundary_translates_a_duckdb_error(tmp_path):
    pytest.importorskip("duckdb", reason="the store extra is not installed")
    from whileai.store._db import connect

    with pytest.raises(StoreError, match=r"must have the tables .* a query failed \(Catalog Error") as info:
        with connect(tmp_path / "s.duckdb", timeout=1.0) as con:
            con.execute("select * from no_such_table")
    assert type(info.value.__cause__).__module__.lstrip("_").startswith("duckdb")


def test_the_step_boundary_translates_inside_a_fluent_call(monkeypatch):
    # data first: importing data.py builds wai.select_for_rl from _rl's, which the patch replaces
    from whileai import data
    from whileai.selection import _rl

    def broken(rows, /, **options):
        return pl.DataFrame({"a": [1]}).select(pl.col("reward"))

    monkeypatch.setattr(_rl, "select_for_rl", broken)

    step = data._fluent(_rl.select_for_rl, data.Selection)
    with pytest.raises(SchemaError, match="broken failed: ColumnNotFoundError"):
        step([{"prompt": "a"}])
    assert wai.select_for_rl is data.select_for_rl
    assert json.dumps(ArgumentError("x", argument="a").context) == '{"argument": "a"}'
