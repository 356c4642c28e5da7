"""``wai judge-trust``: the judge against gold labels (whileai.grade.attach_labels + judge_trust)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, json_option, rows_argument
from whileai.cli._output import emit


@click.command("judge-trust")
@rows_argument()
@click.option("--labels", required=True, type=str, metavar="LABELS",
              help='JSONL of {"key": ..., "label": 0 or 1} records (key: rollout_id, scenario_id#rollout_index or prompt).')
@click.option("--kind", type=click.Choice(["human", "program", "verifier", "model"]), default="human", show_default=True,
              help="Who wrote the labels; model labels do not count as gold.")
@json_option
@click.pass_context
def judge_trust(ctx: click.Context, file: Any, labels: str, kind: str, as_json: bool) -> None:
    """Agreement and kappa of the judge's rewards with gold labels; exit 1 when the judge is not trusted."""
    from whileai.errors import JudgeError
    from whileai.grade import attach_labels
    from whileai.grade import judge_trust as trust

    labeled, attached = attach_labels(file, labels, kind=kind)  # type: ignore[arg-type]
    if attached.conflicts:  # a judge is checked against one answer per row, not a vote
        raise JudgeError(f"labels must give each row one answer, got {attached.conflicts} row(s) labeled both 0 and 1 "
                         f"in {labels!r}. Resolve the disagreements (or keep one label per key) and run it again.",
                         path=labels, counts={"conflicting_rows": attached.conflicts})
    report = trust(labeled)
    emit(report, as_json)
    ctx.exit(0 if report.ok else 1)


judge_trust.help = f"{judge_trust.help}\n\n{ROWS_HELP}"
