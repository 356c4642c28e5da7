"""The ``wai`` entry point: a lazily loaded click group and the one error handler."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from whileai._version import __version__
from whileai.cli._exits import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_NOT_COMPARABLE,
    EXIT_PASS,
    EXIT_REFUSED,
)

__all__ = ["EXAMPLES", "EXIT_BAD_INPUT", "EXIT_INTERNAL", "EXIT_NOT_COMPARABLE", "EXIT_PASS", "EXIT_REFUSED", "cli",
           "main"]

#: command name -> "module:attribute"; a module is imported only when its command runs (or help
#: lists it). A command is listed here once the library call it wraps exists.
COMMANDS: dict[str, str] = {
    "compare": "whileai.cli.compare:compare",
    "datasets": "whileai.cli.datasets:datasets",
    "decontaminate": "whileai.cli.decontaminate:decontaminate",
    "export": "whileai.cli.export:export",
    "failures": "whileai.cli.failures:failures",
    "gate": "whileai.cli.gate:gate",
    "hack-scan": "whileai.cli.hack_scan:hack_scan",
    "holdout-size": "whileai.cli.holdout_size:holdout_size",
    "inspect": "whileai.cli.inspect:inspect",
    "judge-trust": "whileai.cli.judge_trust:judge_trust",
    "keys": "whileai.cli.keys:keys",
    "login": "whileai.cli.login:login",
    "logout": "whileai.cli.login:logout",
    "pass-at": "whileai.cli.pass_at:pass_at",
    "quickstart": "whileai.cli.quickstart:quickstart",
    "record": "whileai.cli.record:record",
    "report": "whileai.cli.report:report",
    "records": "whileai.cli.records:records",
    "runs": "whileai.cli.tracked:runs",
    "select": "whileai.cli.select:select",
    "self-check": "whileai.cli.self_check:self_check",
    "server": "whileai.cli.server:server",
    "sql": "whileai.cli.sql:sql",
    "status": "whileai.cli.login:status",
}

#: The example each command's help ends with (as sqlite-utils' help does); a test walks every
#: command and fails on one without an example here.
EXAMPLES: dict[str, str] = {
    "compare": "wai compare before.jsonl after.jsonl --must-not-regress polite",
    "datasets": "wai datasets save rollouts.jsonl refunds --holdout 0.2",
    "datasets diff": "wai datasets diff refunds@1 refunds@2",
    "datasets list": "wai datasets list --json",
    "datasets save": "wai datasets save rollouts.jsonl refunds --holdout 0.2",
    "datasets show": "wai datasets show refunds@2",
    "decontaminate": "wai decontaminate train.jsonl --eval eval.jsonl",
    "export": "wai export selected.jsonl -o train.parquet --format trl",
    "failures": "wai failures graded.jsonl --by tier --by tools_used -o failures.csv",
    "gate": "wai gate selected.jsonl --mode rl",
    "hack-scan": "wai hack-scan graded.jsonl --json",
    "holdout-size": "wai holdout-size --effect 0.05 --base 0.6 --k 4",
    "inspect": "wai inspect logs/2026-12-01_refunds.eval",
    "judge-trust": "wai judge-trust graded.jsonl --labels labels.jsonl",
    "keys": "wai keys create alice",
    "keys create": "wai keys create alice --store .wai/store.duckdb",
    "keys list": "wai keys list --store .wai/store.duckdb",
    "keys revoke": "wai keys revoke 3f2a9c01de --store .wai/store.duckdb",
    "login": "wai login --server http://127.0.0.1:8484",
    "logout": "wai logout",
    "pass-at": "wai pass-at graded.jsonl --k 4 -o tasks.csv",
    "quickstart": "wai quickstart",
    "record": "wai record logs/refunds.eval --agent refund-bot --version v2",
    "report": "wai report base.jsonl sft.jsonl -o report.html",
    "records": "wai records diff r-1a2b r-3c4d",
    "records diff": "wai records diff r-1a2b r-3c4d",
    "records list": "wai records list --limit 5",
    "records show": "wai records show r-1a2b",
    "runs": "wai runs list --agent refund-agent --json",
    "runs agents": "wai runs agents",
    "runs archive": "wai runs archive tr-1a2b3c --yes",
    "runs brief": "wai runs brief refund-agent --markdown",
    "runs diff": "wai runs diff refund-agent refunds base sft-v1",
    "runs list": "wai runs list --agent refund-agent",
    "runs promote": "wai runs promote refund-agent sft-v1 --yes",
    "runs show": "wai runs show tr-1a2b3c",
    "runs verdict": "wai runs verdict refund-agent refunds",
    "select": "wai select graded.jsonl --mode rl -o selected.jsonl",
    "self-check": "wai self-check --json",
    "server": "wai server --port 8484",
    "sql": "wai sql \"SELECT scenario_id, avg(reward) FROM dataset_rows('refunds') GROUP BY 1\" --format csv",
    "status": "wai status",
}

#: Exit status after Ctrl-C (128 + SIGINT), the shell convention.
EXIT_INTERRUPTED = 130


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use (click docs, "Lazily Loading Subcommands")."""

    def __init__(self, *args: Any, lazy_subcommands: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_subcommands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy_subcommands.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        import importlib

        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        _add_examples(command, cmd_name)
        return command


def _add_examples(command: click.Command, path: str) -> None:
    """End the command's help (and each subcommand's) with its example from :data:`EXAMPLES`."""
    example = EXAMPLES.get(path)
    if example is not None and not command.epilog:
        command.epilog = f"\b\nExample:\n    {example}"
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            _add_examples(sub, f"{path} {name}")


@click.group(cls=LazyGroup, lazy_subcommands=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="wai")
@click.option("--debug", is_flag=True, help="Show the full traceback when a command fails.")
def cli(debug: bool) -> None:
    """Post-training checks on rollout files: measure, compare, select, guard, export, store.

    Every command reads JSONL, JSONL.gz, Parquet (a file or a folder), inspect_ai logs, or - for
    JSONL on stdin, prints the report a person reads, and with --json prints the report's JSON.
    Bad input prints one line, error: ..., and exits 2.

    \b
    Exit status (docs/cli.md):
      0  pass
      1  the check failed (a regression, a refused gate, an untrusted judge)
      2  usage or bad input
      3  not comparable (wai compare: too few paired tasks, an ungraded side)
      4  internal error (a bug: rerun with --debug and report it)
    """  # noqa: D301 - \b is click's keep-these-lines marker


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``wai``; return the exit status (0 pass, 1 a failed check, 2 bad input, 3 not comparable, 4 a bug).

    The only place a :class:`~whileai.errors.WaiError` is caught: it prints ``error: <message>``
    (the message says what to do) on stderr, with the traceback only under ``--debug``.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    from whileai.errors import WaiError

    sys.unraisablehook = _quiet_interrupt  # Ctrl-C inside a finaliser: "interrupted", not "Exception ignored"

    try:
        result = cli.main(args=args, prog_name="wai", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except WaiError as exc:
        if isinstance(exc.__cause__, BrokenPipeError):  # `wai ... -o - | head`: the reader had enough
            _silence_stdout()
            return 0
        _fail(exc, debug, " ".join(str(exc).split()))
        return EXIT_BAD_INPUT
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except BrokenPipeError:  # `wai ... | head`
        _silence_stdout()
        return 0
    except SystemExit:  # click answers a broken pipe (EPIPE) with sys.exit(1), even outside standalone mode,
        if type(sys.stdout).__name__ == "_PacifyFlushWrapper":  # after wrapping stdout to hush the flush at exit
            _silence_stdout()
            return 0
        raise
    except Exception as exc:  # a bug, not bad input: one line unless --debug
        _fail(exc, debug, f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())} "
                          "(rerun with --debug for the traceback, and report it)")
        return EXIT_INTERNAL


def _quiet_interrupt(unraisable: Any) -> None:
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _fail(exc: BaseException, debug: bool, line: str) -> None:
    if debug:
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    click.echo(f"error: {line}", err=True)


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
