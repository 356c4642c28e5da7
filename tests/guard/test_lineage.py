"""Stage lineage and the spec object."""

from __future__ import annotations

import json

import polars as pl
import pytest

from whileai.data import Selection
from whileai.errors import StageError
from whileai.guard import (
    STAGES,
    Spec,
    SpecError,
    load_spec,
    spec_version,
    stage_of,
    stage_report,
    stamp_spec,
    stamp_stage,
)


def test_stamp_stage_keeps_lineage_and_kinds():
    rows = [{"task_id": "a", "prompt": "x", "lineage": {"source": "grade", "run": "r1"}}, {"task_id": "b", "prompt": "y"}]
    out = stamp_stage(rows, "rl")
    assert [stage_of(r) for r in out] == ["rl", "rl"]
    assert out[0]["lineage"] == {"source": "grade", "run": "r1", "stage": "rl"}
    assert "stage" not in rows[0]["lineage"]  # input untouched
    df = stamp_stage(pl.DataFrame(rows), stage="sft")
    assert isinstance(df, pl.DataFrame) and df["lineage"].struct.field("stage").to_list() == ["sft", "sft"]
    sel = stamp_stage(Selection(pl.DataFrame(rows), meta={"mode": "rl"}), "rm")
    assert isinstance(sel, Selection) and sel.meta == {"mode": "rl"}
    with pytest.raises(StageError, match="stage must be one of sft, rm, rl, eval, mid, got 'train'"):
        stamp_stage(rows, "train")
    assert STAGES == ("sft", "rm", "rl", "eval", "mid")


def test_stage_report_flags_eval_train_overlap():
    train = stamp_stage([{"task_id": t, "prompt": t} for t in ("a", "b", "c", "c")], "rl")
    ev = stamp_stage([{"task_id": t, "prompt": t} for t in ("c", "d")], "eval")
    old = [{"task_id": "b", "prompt": "b", "lineage": {"source": "eval"}}, {"task_id": "z", "prompt": "z"}]
    r = stage_report(train + ev + old)
    assert r.counts == {"rl": 4, "eval": 3}
    assert r.tasks_per_stage == {"rl": 3, "eval": 3}
    assert r.n_unstamped == 1
    assert r.eval_train_leaks == ["b", "c"] and r.n_leaks == 2
    assert "2 task(s) used in both eval and training" in str(r)
    assert stage_of({"stage": "mid"}) == "mid" and stage_of({"lineage": json.dumps({"stage": "sft"})}) == "sft"


def test_spec_version_is_a_content_hash(tmp_path):
    c = {"source": "character recipe", "traits": [
        {"id": "warm", "name": "Warmth", "principle": "Be warm.", "authority": "should"},
        {"id": "honest", "principle": "Never invent facts.", "authority": "must"}]}
    s = load_spec(c)
    assert isinstance(s, Spec) and s.behaviors() == ["warm", "honest"] and len(s.version) == 12
    assert load_spec(json.loads(json.dumps(c))).version == s.version  # same content, same version
    edited = json.loads(json.dumps(c))
    edited["traits"][1]["principle"] = "Never invent facts or numbers."
    assert load_spec(edited).version != s.version
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(c))
    assert load_spec(p).version == s.version and load_spec(p).id == "spec"
    bare = load_spec(["Be kind.", "Be brief."])
    assert bare.behaviors() == ["trait_0", "trait_1"] and bare.id == "spec"
    assert spec_version(c) == s.version


def test_spec_errors_and_stamp():
    with pytest.raises(SpecError, match="load_spec needs a dict, a list of traits, or a path"):
        load_spec(42)
    with pytest.raises(TypeError):
        load_spec(42)
    with pytest.raises(SpecError, match="unique"):
        load_spec([{"id": "a"}, {"id": "a"}])
    with pytest.raises(SpecError, match="at least one trait"):
        load_spec([])
    out = stamp_spec([{"prompt": "p", "lineage": {"stage": "eval"}}], {"id": "kind", "traits": ["Be kind."]})
    assert out[0]["lineage"]["stage"] == "eval"
    assert out[0]["lineage"]["spec_id"] == "kind"
    assert out[0]["lineage"]["spec_version"] == load_spec({"id": "kind", "traits": ["Be kind."]}).version
