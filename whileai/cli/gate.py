"""``wai gate``: the publish gate (whileai.selection.publish_gate)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, json_option, rows_argument
from whileai.cli._output import emit
from whileai.cli._rows import source_words


@click.command()
@rows_argument()
@click.option("--mode", type=click.Choice(["rl", "sft"]), default=None,
              help="What the set is for (default: rl when tasks repeat).")
@click.option("--endorsed", multiple=True, metavar="FEATURE",
              help="Run the hack scan with this endorsed feature; repeatable.")
@click.option("--strict-hacks", is_flag=True, help="Refuse when the hack scan says reward_hack.")
@json_option
@click.pass_context
def gate(ctx: click.Context, file: Any, mode: str | None, endorsed: tuple[str, ...], strict_hacks: bool,
         as_json: bool) -> None:
    """Check a training set before it is published; exit 1 when the gate refuses it."""
    from whileai.selection import publish_gate

    report = publish_gate(file, mode=mode, endorsed=list(endorsed) or None, strict_hacks=strict_hacks,  # type: ignore[arg-type]
                          strict=False)
    if report.n_rows == 0:  # a step upstream that wrote nothing must not pass the gate of a pipeline
        from whileai.errors import EmptyInputError

        raise EmptyInputError(f"{source_words(file)} must hold the rows to publish, got no rows. Check the step that wrote it; "
                              "the gate checks nothing in an empty set.", source=file if isinstance(file, str) else None)
    emit(report, as_json)
    ctx.exit(0 if report.ok else 1)


gate.help = f"{gate.help}\n\n{ROWS_HELP}"
