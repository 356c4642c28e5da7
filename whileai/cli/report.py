"""``wai report``: rollout files as one self-contained HTML page (whileai.platform.pages.write_report)."""

from __future__ import annotations

import click

from whileai import _shapes


@click.command()
@click.argument("rows", nargs=-1, required=True, metavar="ROWS...")
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--label", "labels", multiple=True, metavar="NAME", help="A name per file, in order (default: file names).")
@click.option("--by", multiple=True, metavar="KEY", help="The failure table's dimension; repeatable (default fault_kind).")
@click.option("--title", default=None, help="The page title.")
@click.option("--shape", default=None, type=click.Choice(_shapes.names()), metavar="NAME",
              help=f"Read every file as this shape instead of telling it from the file: {_shapes.summary()}.")
def report(rows: tuple[str, ...], out: str, labels: tuple[str, ...], by: tuple[str, ...], title: str | None,
           shape: str | None) -> None:
    """Pass rates with intervals, where each file fails, the delta of the first two files and the hack scan.

    One HTML file with the plotly.js bundle inlined: it opens offline, from disk, with no server.
    """
    from whileai.platform.pages import write_report
    from whileai.table import forcing

    with forcing(shape):
        path = write_report(list(rows), out, labels=list(labels) or None, by=list(by) or None, title=title)
    click.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)", err=True)
