"""The terminal: the verdict word coloured on a TTY, never with NO_COLOR or off a terminal."""

from __future__ import annotations

import io

import click

from whileai.cli._output import colour_enabled, styled
from whileai.grade import judge_trust
from whileai.report import Report


class Tty(io.StringIO):
    def isatty(self):
        return True


def _fail_report():
    rows = [{"scenario_id": f"t{i % 5}", "rollout_id": str(i), "prompt": "p", "final_text": "x",
             "reward": float(i % 2), "gold_reward": float((i // 2) % 2), "gold_kind": "human"} for i in range(60)]
    return judge_trust(rows)


def test_verdict_word_is_coloured_on_a_terminal():
    report = _fail_report()
    assert report.verdict_word() == ("FAIL", "bad")
    text = styled(report, colour=True)
    assert text.startswith(click.style("FAIL", fg="red", bold=True))
    assert click.unstyle(text) == str(report)


def test_no_colour_off_a_terminal_or_with_no_color(monkeypatch):
    report = _fail_report()
    assert styled(report, colour=False) == str(report)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour_enabled(Tty()) and not colour_enabled(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_enabled(Tty())


def test_a_report_without_a_verdict_prints_plain():
    class Plain(Report):
        def render(self):
            return "PASS but not a verdict"

    assert styled(Plain(), colour=True) == "PASS but not a verdict"


def test_cli_output_off_a_terminal_has_no_ansi(tmp_path):
    from click.testing import CliRunner

    from whileai.cli.main import cli
    from whileai.testing import rollout_table

    path = tmp_path / "r.parquet"
    rollout_table(20, 4).write_parquet(path)
    out = CliRunner().invoke(cli, ["pass-at", str(path), "--table"]).output
    assert "\x1b[" not in out and "What it says" in out
