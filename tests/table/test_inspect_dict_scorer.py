"""A dict-valued inspect_ai scorer of several keys is no reward by itself: refused, with its keys as the choices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai import table
from whileai.errors import SchemaError
from whileai.table._inspect import read_inspect_log


def _log(tmp_path: Path, *, keys: tuple[str, ...] = ("correct", "polite")) -> Path:
    values = {"correct": "C", "polite": 1, "style": "I"}
    samples = [{"id": i, "epoch": e, "input": f"q{i}", "target": "x",
                "messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "x"}],
                "scores": {"letter": {"value": "I"}, "dict_scorer": {"value": {k: values[k] for k in keys}}}}
               for i in (1, 2) for e in (1, 2)]
    log = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"},
           "results": {"scores": [{"name": "letter", "scorer": "letter"},
                                  *({"name": k, "scorer": "dict_scorer"} for k in keys)]},
           "samples": samples}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    return path


def test_a_dict_scorer_as_the_reward_is_refused_with_its_keys(tmp_path):
    path = _log(tmp_path)
    with pytest.raises(SchemaError, match=r"dict-valued scorer 'dict_scorer', one of "
                                          r"\['dict_scorer.correct', 'dict_scorer.polite'\], got 'dict_scorer'"):
        read_inspect_log(path, scorer="dict_scorer")
    with pytest.raises(SchemaError, match="dict_scorer.correct"):
        table.frame(path, scorer="dict_scorer")


def test_the_unknown_scorer_refusal_lists_the_dotted_names_not_the_dict(tmp_path):
    with pytest.raises(SchemaError) as info:
        read_inspect_log(_log(tmp_path), scorer="nope")
    assert "['dict_scorer.correct', 'dict_scorer.polite', 'letter']" in str(info.value)
    with pytest.raises(SchemaError, match="got 'dict_scorer.nope'"):  # a key the dict does not have
        read_inspect_log(_log(tmp_path), scorer="dict_scorer.nope")


def test_one_key_of_a_dict_scorer_is_the_reward(tmp_path):
    rows = read_inspect_log(_log(tmp_path), scorer="dict_scorer.correct")
    assert {(r["reward"], r["judge_name"], r["judge_status"]) for r in rows} == {(1.0, "dict_scorer.correct", "ok")}
    assert rows[0]["markers"] == {"letter": 0.0, "dict_scorer.polite": 1.0}
    polite = read_inspect_log(_log(tmp_path), scorer="dict_scorer.polite")
    assert {r["reward"] for r in polite} == {1.0}


def test_a_dict_scorer_of_one_key_still_works_by_its_name(tmp_path):
    rows = read_inspect_log(_log(tmp_path, keys=("style",)), scorer="dict_scorer")
    assert {(r["reward"], r["judge_name"]) for r in rows} == {(0.0, "dict_scorer.style")}


def test_the_cli_exits_nonzero_for_a_dict_scorer(tmp_path, capsys):
    from whileai.cli.main import main

    code = main(["pass-at", str(_log(tmp_path)), "--scorer", "dict_scorer"])
    err = capsys.readouterr().err
    assert code != 0 and err.startswith("error: scorer must name one key of the dict-valued scorer 'dict_scorer'")
    assert main(["pass-at", str(_log(tmp_path)), "--scorer", "dict_scorer.correct"]) == 0
