"""The progress helper: tqdm.auto where a person watches, silent elsewhere, a callback when asked."""

from __future__ import annotations

import io
import sys

import pytest

from whileai._progress import Tracker, check_progress, in_notebook
from whileai.errors import ArgumentError


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_silent_off_a_terminal(capsys):
    with Tracker(10, desc="work") as bar:
        bar.update(10)
    assert not bar.active and capsys.readouterr().err == ""
    assert not in_notebook()


def test_a_bar_on_a_terminal_from_min_total(monkeypatch):
    pytest.importorskip("tqdm")
    stream = Tty()
    monkeypatch.setattr(sys, "stderr", stream)
    with Tracker(3, desc="work", min_total=5) as small:
        small.update(3)
    assert stream.getvalue() == ""
    with Tracker(6, desc="work", unit="rows", min_total=5) as bar:
        for _ in range(6):
            bar.update(1, lost=0)
    out = stream.getvalue()
    assert "work" in out and "6/6" in out


def test_false_turns_it_off_even_on_a_terminal(monkeypatch):
    stream = Tty()
    monkeypatch.setattr(sys, "stderr", stream)
    with Tracker(100, desc="work", progress=False) as bar:
        bar.update(100)
    assert stream.getvalue() == "" and not bar.active


def test_callable_gets_done_total_and_info():
    seen = []
    with Tracker(5, desc="work", progress=lambda d, t, i: seen.append((d, t, i))) as bar:
        bar.update(2, situations=1)
        bar.update(3, situations=2)
    assert seen == [(2, 5, {"situations": 1}), (5, 5, {"situations": 2})]


def test_progress_argument_is_checked():
    assert check_progress(None) is None and check_progress(True) is True
    with pytest.raises(ArgumentError, match="progress must be True, False, None or a callable"):
        check_progress(3)


def test_grade_reports_rows_judged_to_a_callback():
    import whileai as wai
    from whileai.testing import rollout_table

    seen = []
    wai.run_judge(rollout_table(30, 2).drop("reward"), lambda row: 1.0,
                  progress=lambda d, t, i: seen.append((d, t)))
    assert seen and seen[-1] == (60, 60) and all(t == 60 for _, t in seen)


def test_export_and_store_take_progress(tmp_path):
    import whileai as wai
    from whileai.store import Store
    from whileai.testing import rollout_table

    rows = rollout_table(8, 2)
    seen = []
    wai.export_dataset(rows, tmp_path / "t.jsonl", progress=lambda d, t, i: seen.append((d, t)))
    assert seen[-1] == (16, 16)
    hashed = []
    Store(tmp_path / "s.duckdb").save_dataset(rows, "d", progress=lambda d, t, i: hashed.append((d, t)))
    assert hashed[-1] == (16, 16)
    with pytest.raises(ArgumentError, match="progress must be"):
        wai.export_dataset(rows, tmp_path / "u.jsonl", progress="on")


def test_decontaminate_takes_progress():
    import whileai as wai

    seen = []
    train = [{"task_id": f"t{i}", "prompt": f"question number {i} about the capital of a country"} for i in range(20)]
    wai.decontaminate(train, eval=[{"task_id": "e", "prompt": "what is it"}], progress=lambda d, t, i: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1]


def test_judge_trust_rejudging_reports_to_a_callback():
    from tests.charts.reports import judge_rows
    from whileai.grade import judge_trust

    seen = []
    judge_trust(judge_rows(), judge=lambda row: 1.0, progress=lambda d, t, i: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1] > 0
