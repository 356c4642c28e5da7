"""``wai datasets``: list, show, diff and save datasets in the local store."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, json_option, rows_argument, store_option
from whileai.cli._output import emit
from whileai.defaults import HOLDOUT_SHARE


@click.group()
def datasets() -> None:
    """Datasets in the local store: versions, lineage, content hashes (whileai.store)."""


@datasets.command("list")
@click.option("--name", default=None, help="Only this dataset's versions.")
@click.option("--purpose", type=click.Choice(["train", "holdout", "eval"]), default=None, help="Only this purpose.")
@store_option
@json_option
def list_(name: str | None, purpose: str | None, store_path: str | None, as_json: bool) -> None:
    """Every saved dataset version, newest first."""
    from whileai import store

    emit(store.open(store_path).datasets(name=name, purpose=purpose), as_json)  # type: ignore[arg-type]


@datasets.command()
@click.argument("ref")
@store_option
@json_option
def show(ref: str, store_path: str | None, as_json: bool) -> None:
    """One dataset version: REF is NAME (latest) or NAME@VERSION."""
    from whileai import store

    emit(store.open(store_path).dataset(ref), as_json)


@datasets.command()
@click.argument("a")
@click.argument("b")
@store_option
@json_option
def diff(a: str, b: str, store_path: str | None, as_json: bool) -> None:
    """What changed from dataset A to dataset B: content, rows, tasks, columns, lineage."""
    from whileai import store

    emit(store.open(store_path).diff_datasets(a, b), as_json)


@datasets.command()
@rows_argument()
@click.argument("name")
@click.option("--purpose", type=click.Choice(["train", "holdout", "eval"]), default="train", show_default=True,
              help="What the rows are for.")
@click.option("--parent", default=None, help="The dataset these rows were made from (default: NAME's previous version).")
@click.option("--holdout", "holdout", type=float, default=None,
              help=f"Split off this share of tasks as NAME-holdout by a stable task hash (e.g. {HOLDOUT_SHARE}).")
@store_option
@json_option
def save(file: Any, name: str, purpose: str, parent: str | None, holdout: float | None, store_path: str | None,
         as_json: bool) -> None:
    """Save FILE's rows as a new version of dataset NAME.

    With --holdout, split by task first and save NAME (train) and NAME-holdout.
    """
    from whileai import store

    target = store.open(store_path)
    if holdout is None:
        emit(target.save_dataset(file, name, purpose=purpose, parent=parent), as_json)  # type: ignore[arg-type]
    else:
        emit(target.save_split(file, name, holdout=holdout, parent=parent), as_json)


save.help = f"{save.help}\n\n{ROWS_HELP}"
