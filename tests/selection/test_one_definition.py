"""One "longer" for preference pairs, one spec version, one canonical JSON: callers agree on the same input."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.selection._helpers import row
from whileai import stats, table
from whileai.exporters import export_preference
from whileai.guard import load_spec
from whileai.selection import build_preference_pairs

PACKAGE = Path(__file__).resolve().parents[2] / "whileai"


def _pairs_rows() -> list[dict]:
    """Five asks, one pair each. Chosen's final reply is longer in two; in a third it is shorter, but
    chosen's tool call carries a long argument (counting every assistant character said longer)."""
    get = (("get_order", {"id": "A1"}),)
    rows = []
    for t, (good, bad, calls) in enumerate([
        ("the order shipped on monday and arrives friday", "no", get),
        ("it was refunded to your card this morning", "no", get),
        ("ok", "I could not find that order anywhere", (("get_order", {"id": "A1", "note": "x" * 200}),)),
        ("ok", "I could not find that order anywhere", get),
        ("done", "I could not find that order anywhere", get),
    ]):
        rows.append(row(f"t{t}", 1.0, reply=good, calls=calls, index=0, prompt=f"Q {t}"))
        rows.append(row(f"t{t}", 0.0, reply=bad, calls=get, index=1, prompt=f"Q {t}"))
    return rows


@pytest.mark.parametrize("fmt", ["openai", "trl", "fireworks"])
def test_the_pairs_report_and_their_export_count_the_same_longer_side(tmp_path, fmt):
    pairs = build_preference_pairs(_pairs_rows())
    assert pairs.report.pairs == 5
    assert pairs.report.length["chosen_longer"] == 2 and pairs.report.chosen_longer_frac == pytest.approx(0.4)
    exported = export_preference(pairs, tmp_path / "p.jsonl", format=fmt)
    assert exported.chosen_longer_frac == pytest.approx(0.4)  # the openai export said 0.6


def test_the_length_confound_rule_is_shared():
    assert stats.length_confound(12, 12) and not stats.length_confound(7, 10) and not stats.length_confound(0, 0)
    # the binomial test against a fair half, by exact enumeration: P(X >= 9 | n=10) = 11 / 1024
    from whileai.stats import binomial_greater_p

    assert binomial_greater_p(9, 10) == pytest.approx(11 / 1024)


def test_load_spec_gives_one_version_for_a_dict_and_its_file(tmp_path):
    constitution = {"source": "character recipe", "traits": [
        {"id": "warm", "principle": "Be warm.", "authority": "should"},
        {"id": "honest", "principle": "Never claim a write that failed.", "authority": "must"}]}
    path = tmp_path / "constitution.json"
    path.write_text(json.dumps(constitution, indent=4), encoding="utf-8")
    from_dict, from_file = load_spec(constitution), load_spec(path)
    assert from_dict.id == "spec" and from_file.id == "constitution"  # names differ, content does not
    assert from_dict.version == from_file.version
    assert load_spec(list(constitution["traits"])).version == from_dict.version
    edited = {**constitution, "traits": [constitution["traits"][0], {"id": "honest", "principle": "Be honest."}]}
    assert load_spec(edited).version != from_dict.version
    assert from_dict.hash_algorithm == f"sha256/{table.CANONICAL_JSON}/traits"


def test_canonical_json_is_one_function():
    value = {"b": [1, {"d": None, "c": "é"}], "a": 1.5}
    assert table.canonical_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    from whileai.simulation._util import canonical

    assert canonical(value) == table.canonical_json(value)
    # every other module calls it: no json.dumps with sort_keys in the package, except the generated
    # environment module, which runs where whileai is not installed
    allowed = {"table/normalize.py", "exporters/_env_template.py"}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel not in allowed and "sort_keys=True" in path.read_text(encoding="utf-8"):
            offenders.append(rel)
    assert offenders == []


def _compares_with_half(node: ast.AST) -> bool:
    if not isinstance(node, ast.Compare):
        return False
    return any(isinstance(c, ast.Constant) and c.value == 0.5 for c in [node.left, *node.comparators])


def test_no_reward_is_compared_with_a_literal_half():
    # PASS_THRESHOLD is the pass line; the majority-vote tie of annotator labels is a mean of votes
    allowed = {"grade/_labels.py"}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in allowed:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{rel}:{n.lineno}" for n in ast.walk(tree) if _compares_with_half(n)]
    assert offenders == []
