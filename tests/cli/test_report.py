"""``wai report``: rollout files as one self-contained HTML file."""

from __future__ import annotations

import re

from whileai.testing import rollout_table


def _files(tmp_path):
    a, b = tmp_path / "base.parquet", tmp_path / "sft.parquet"
    rollout_table(40, 4, seed=2, policy_version="base").write_parquet(a)
    rollout_table(40, 4, seed=2, shift=0.2, replica=1, policy_version="sft").write_parquet(b)
    return a, b


def test_report_writes_one_self_contained_file(wai, tmp_path):
    from whileai.measure import pass_at

    a, b = _files(tmp_path)
    out = tmp_path / "report.html"
    r = wai("report", a, b, "-o", out, "--label", "base", "--label", "sft")
    assert r.code == 0 and f"wrote {out}" in r.err
    page = out.read_text()
    assert "<script src=" not in page and "Plotly" in page and len(page) > 1_000_000  # the bundle is inline
    for section in ("pass-rates", "failures-0", "failures-1", "delta", "hack-0", "hack-1"):
        assert f'id="{section}"' in page
    want = pass_at(b)
    row = re.search(r"<tr><td>sft</td><td>([0-9.]+)</td><td>([0-9.]+)\.\.([0-9.]+)</td>", page)
    assert float(row.group(1)) == round(want.pass_at_1, 3)
    assert (float(row.group(2)), float(row.group(3))) == (round(want.ci95[0], 3), round(want.ci95[1], 3))
    assert not list(tmp_path.glob(".*wai-tmp"))


def test_report_refuses_bad_input_with_one_line(wai, tmp_path):
    a, _ = _files(tmp_path)
    r = wai("report", a, "-o", tmp_path / "r.html", "--label", "x", "--label", "y")
    assert r.code == 2 and r.err.startswith("error: labels must give one name per file (1), got 2")
    r = wai("report", tmp_path / "missing.jsonl", "-o", tmp_path / "r.html")
    assert r.code == 2 and r.err.count("\n") == 1 and not (tmp_path / "r.html").exists()
    for name in ("r.txt", "r.json", "report"):  # was exit 0 with HTML in a .txt file
        r = wai("report", a, "-o", tmp_path / name)
        assert r.code == 2 and r.err.startswith("error: output must be an HTML file (.html)") and not (tmp_path / name).exists()
    assert wai("report", a, "-o", tmp_path / "r.HTM").code == 0


def test_report_shape_forces_the_reader(wai, tmp_path):
    """--shape reaches every file the page reads: a promptfoo file read as an inspect log is refused."""
    from pathlib import Path

    promptfoo = Path(__file__).parent.parent / "data" / "promptfoo" / "results.json"
    r = wai("report", promptfoo, "-o", tmp_path / "r.html", "--shape", "inspect")
    assert r.code == 2 and r.err.startswith("error:") and not (tmp_path / "r.html").exists()
    assert wai("report", promptfoo, "-o", tmp_path / "r.html", "--shape", "promptfoo").code == 0
