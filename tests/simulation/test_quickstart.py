"""The landing page's quickstart runs verbatim (recipes/01-quickstart/quickstart.py) and prints its line.

Grade, measure, select and export are other steps of the loop; these tests skip until each of them
has landed, then must pass.
"""

from __future__ import annotations

import importlib
import json
import re
import runpy
from pathlib import Path

import pytest

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "01-quickstart" / "quickstart.py"
README = Path(__file__).resolve().parents[2] / "README.md"
NUM = r"(\d\.\d\d)"
CI = rf"\[{NUM}\.\.{NUM}\]"
LINE = re.compile(rf"^pass@1 {NUM} {CI} \| pass\^4 \(pass_pow_k\) {NUM} {CI} \| pass@4 {NUM} {CI} "
                  rf"\| headroom {NUM} \(16 groups, k=4\)$")


@pytest.fixture()
def loop_ready():
    for module, name in (("whileai.grade", "run_judge"), ("whileai.measure", "pass_at"),
                         ("whileai.selection", "optimize"), ("whileai.exporters", "export_dataset")):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            pytest.skip(f"{module} has not landed yet")
        if not hasattr(mod, name):
            pytest.skip(f"{module}.{name} has not landed yet")


def test_the_recipe_is_the_readme_program_verbatim():
    page = README.read_text(encoding="utf-8")
    program = RECIPE.read_text()
    assert program.strip() in page
    assert program.startswith("import whileai as wai") and program.rstrip().endswith('rows.export("train.jsonl")')


def _check_line(line: str) -> float:
    match = LINE.match(line)
    assert match, line
    pass1, lo, hi = (float(match.group(i)) for i in (1, 2, 3))
    pass_pow, pass_k, headroom = float(match.group(4)), float(match.group(7)), float(match.group(10))
    assert 0.5 <= pass1 <= 0.8  # "about two thirds": the seeded share is near 0.35
    assert lo <= pass1 <= hi
    assert pass_pow <= pass1 <= pass_k
    assert abs(headroom - (pass_k - pass1)) <= 0.011
    return pass1


def test_the_quickstart_runs_verbatim(loop_ready, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(RECIPE), run_name="__main__")
    out = capsys.readouterr().out
    _check_line(out.splitlines()[0])
    rows = [json.loads(line) for line in (tmp_path / "train.jsonl").read_text().splitlines()]
    assert rows and all("messages" in r and "loss_mask" in r for r in rows)


def test_quickstart_function(loop_ready, tmp_path):
    from whileai import quickstart

    result = quickstart(out=tmp_path / "train.jsonl")
    pass1 = _check_line(result["line"])
    assert result["rows"] == 64 and result["tasks"] == 16 and (tmp_path / "train.jsonl").exists()
    assert result["out"] == str(tmp_path / "train.jsonl")
    # with that judge, pass@1 is exactly the unseeded share (every task has k=4)
    assert result["pass_at"]["pass_at_1"] == pytest.approx(pass1, abs=0.006)
