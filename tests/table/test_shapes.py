"""One registry of shapes (whileai/_shapes.py): forcing a shape, and the lists made from it agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from whileai import _shapes, table
from whileai.cli._options import ROWS_HELP
from whileai.cli.main import main
from whileai.errors import ArgumentError, SchemaError

DATA = Path(__file__).parent.parent / "data"
DOCS = Path(__file__).parent.parent.parent / "docs" / "table.md"


def test_the_docs_list_is_the_registry():
    text = DOCS.read_text()
    listed = re.search(r"<!-- shapes:begin -->\n(.*?)\n<!-- shapes:end -->", text, re.S)
    assert listed is not None and listed.group(1) == _shapes.docs_list()


def test_the_frame_docstring_and_cli_help_name_every_shape(capsys):
    doc = " ".join((table.frame.__doc__ or "").split())
    for shape in _shapes.SHAPES:
        assert f"{shape.name} ({shape.words})" in doc
        if shape.name != _shapes.PLAIN and not shape.refused:
            assert shape.words in ROWS_HELP
    assert main(["pass-at", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert all(f"{s.name} ({' '.join(s.words.split())})" in out for s in _shapes.SHAPES)


def test_every_entry_resolves_to_code():
    from whileai.table._formats import _function

    for shape in _shapes.SHAPES:
        for ref in (shape.detect, shape.read):
            if ref is not None:
                assert callable(_function(ref)), ref
        assert (shape.read is None) == (shape.refused or shape.name == _shapes.PLAIN)


def test_a_forced_shape_reads_a_file_told_wrongly(tmp_path):
    """Plain rows whose first line looks like an OpenAI Batch output line: refused, unless forced to rows."""
    rows = [{"id": f"r{i}", "custom_id": f"t{i % 2}", "response": None, "error": None, "task_id": f"t{i % 2}",
             "reward": float(i % 2)} for i in range(4)]
    rows[0].pop("task_id")  # the first line alone decides the shape: it has no row key
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(SchemaError, match="OpenAI Batch API output"):
        table.frame(path)
    df = table.frame(path, shape="rows", mapping={"task": "custom_id"})
    assert df.height == 4 and df["task_key"].n_unique() == 2
    assert table.frame(DATA / "promptfoo" / "results.json", shape="promptfoo").height == 6
    with pytest.raises(ArgumentError, match=r"shape must be one of inspect, .*, got 'promptfo'\. Pass one of those"):
        table.frame(path, shape="promptfo")


def test_shape_option_on_the_cli(tmp_path, capsys):
    """``--shape`` forces the reader: a promptfoo file read as plain rows has no task identity."""
    code = main(["inspect", str(DATA / "promptfoo" / "results.json"), "--shape", "promptfoo", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["n_rows"] == 6
    code = main(["inspect", str(DATA / "promptfoo" / "results.json"), "--shape", "inspect"])
    assert code == 2 and "error:" in capsys.readouterr().err  # read as an inspect log, which it is not
    assert main(["inspect", str(DATA / "promptfoo" / "results.json"), "--shape", "nope"]) == 2
    assert "Invalid value for '--shape'" in capsys.readouterr().err
