"""``wai runs``: list, show and diff the runs recorded in the local store."""

from __future__ import annotations

import click

from whileai.cli._common import emit, json_option, store_option


@click.group()
def runs() -> None:
    """Runs recorded in the local store: setup, pass rates with intervals, verdicts (whileai.store)."""


@runs.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the newest N runs.")
@store_option
@json_option
def list_(limit: int | None, store_path: str | None, as_json: bool) -> None:
    """Recorded runs, newest first."""
    from whileai import store

    emit(store.open(store_path).runs(limit=limit), as_json)


@runs.command()
@click.argument("ref")
@store_option
@json_option
def show(ref: str, store_path: str | None, as_json: bool) -> None:
    """One run: REF is its id (a unique prefix is enough) or its name."""
    from whileai import store

    emit(store.open(store_path).run(ref), as_json)


@runs.command()
@click.argument("a")
@click.argument("b")
@store_option
@json_option
def diff(a: str, b: str, store_path: str | None, as_json: bool) -> None:
    """Run A against run B: setup changes and each number's change."""
    from whileai import store

    emit(store.open(store_path).diff_runs(a, b), as_json)
