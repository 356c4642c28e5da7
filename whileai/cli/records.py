"""``wai records``: list, show and diff the eval records in the local store (what ``wai record`` writes).

Tracked runs (``wp.track``, the Runs page) are ``wai runs``; these are the store's eval records.
"""

from __future__ import annotations

import click

from whileai.cli._options import json_option, store_option
from whileai.cli._output import emit


@click.group()
def records() -> None:
    """Eval records in the local store (wai record): setup, pass rates with intervals (whileai.store)."""


@records.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the newest N runs.")
@store_option
@json_option
def list_(limit: int | None, store_path: str | None, as_json: bool) -> None:
    """Eval records, newest first."""
    from whileai import store

    emit(store.open(store_path).runs(limit=limit), as_json)


@records.command()
@click.argument("ref")
@store_option
@json_option
def show(ref: str, store_path: str | None, as_json: bool) -> None:
    """One record: REF is its id (a unique prefix is enough) or its name."""
    from whileai import store

    emit(store.open(store_path).run(ref), as_json)


@records.command()
@click.argument("a")
@click.argument("b")
@store_option
@json_option
def diff(a: str, b: str, store_path: str | None, as_json: bool) -> None:
    """Record A against record B: setup changes and each number's change."""
    from whileai import store

    emit(store.open(store_path).diff_runs(a, b), as_json)
