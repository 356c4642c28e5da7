"""The options every command shares: rows, ``--json``, ``--store``, ``--engine``.

The rows argument comes with ``--map``, ``--scorer`` and ``--shape`` (docs/cli.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from whileai import _shapes
from whileai.cli._output import reports_kept_from_ray
from whileai.cli._rows import ray_paths, rows_source

__all__ = ["ROWS_HELP", "engine_option", "json_option", "read_options", "rows_argument", "store_option"]


F = TypeVar("F", bound=Callable[..., Any])


#: How a FILE argument is described in help text (the shapes from the registry, whileai/_shapes.py).
ROWS_HELP = ("FILE is JSONL, JSONL.gz, Parquet (file or folder), - for JSONL on stdin, a Hugging Face save_to_disk "
             "folder or .arrow file, or what another tool wrote, told by its shape: "
             + "; ".join(s.words for s in _shapes.SHAPES if s.name != _shapes.PLAIN and not s.refused)
             + ". Several FILEs (or a folder of logs) are read as one table. --map COLUMN=SOURCE names the source "
             "column of a table column (task=doc_id, reward=acc); --scorer NAME picks which score is the reward; "
             "--shape NAME reads the files as that shape instead of telling it from them.")


def read_options(fn: F) -> F:
    """``--map COLUMN=SOURCE`` (repeatable), ``--scorer NAME`` and ``--shape NAME``, for every command that reads rows."""
    fn = click.option("--shape", default=None, type=click.Choice(_shapes.names()), metavar="NAME",
                      help="Read the files as this shape instead of telling it from them: "
                           f"{_shapes.summary()}.")(fn)
    fn = click.option("--scorer", default=None, metavar="NAME",
                      help="Which score is the reward: an inspect scorer (SCORER.KEY for a dict score) or a marker.")(fn)
    return click.option("--map", "mapping", multiple=True, metavar="COLUMN=SOURCE",
                        help="Fill table column COLUMN from source column SOURCE (task=doc_id); repeatable.")(fn)


def rows_argument(name: str = "file") -> Callable[[F], F]:
    """A positional rows source: one or more paths (or ``-`` for stdin), with ``--map``, ``--scorer`` and ``--shape``.

    The command receives one value under ``name``: the path, or the table read from them all.
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            files = kwargs.pop(name)
            mapping, scorer, shape = kwargs.pop("mapping", ()), kwargs.pop("scorer", None), kwargs.pop("shape", None)
            if kwargs.get("engine") == "ray":  # Ray reads the paths (a list is one dataset)
                kwargs[name] = ray_paths(files, mapping, scorer, shape)
            else:
                kwargs[name] = rows_source(files, mapping, scorer, shape)
            return fn(*args, **kwargs)

        decorated = read_options(wrapper)
        return click.argument(name, metavar=f"{name.upper()}...", nargs=-1, required=True, type=str)(decorated)  # type: ignore[return-value]

    return decorate


def json_option(fn: F) -> F:
    """``--json``: print the report's JSON instead of its text."""
    return click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")(fn)


def store_option(fn: F) -> F:
    """``--store PATH``: the store file (default ``$WAI_STORE``, else ``.wai/store.duckdb``)."""
    return click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
                        help="Store file (default: $WAI_STORE, else .wai/store.duckdb here).")(fn)


def engine_option(fn: F) -> F:
    """``--engine local|ray``: read the rows here (Polars), or as a Ray dataset (docs/scale.md).

    With ``--engine ray`` the command runs inside ``reports_kept_from_ray``: its report is all its
    standard output carries.
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("engine") != "ray":
            return fn(*args, **kwargs)
        with reports_kept_from_ray():
            return fn(*args, **kwargs)

    return click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                        help="ray: FILE is a Parquet path, folder or glob read with ray.data.read_parquet; the "
                             "work runs on the Ray cluster ray.init() finds (RAY_ADDRESS), else a local one. "
                             "Ray's own messages go to stderr; stdout carries the report alone.")(wrapper)  # type: ignore[return-value]
