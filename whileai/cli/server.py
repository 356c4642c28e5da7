"""``wai server``: the REST server over the local store (Starlette + uvicorn)."""

from __future__ import annotations

import click

from whileai.cli._options import store_option
from whileai.defaults import SERVER_HOST, SERVER_PORT


@click.command()
@click.option("--host", default=SERVER_HOST, show_default=True,
              help="Address to listen on; anything but loopback needs API keys (wai keys create NAME).")
@click.option("--port", type=click.IntRange(1, 65535), default=SERVER_PORT, show_default=True, help="Port.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info",
              show_default=True, help="Log level (a request line shows the key id only).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Another host name requests may use (repeat it); others get 421 (DNS rebinding).")
@store_option
def server(host: str, port: int, log_level: str, allow_hosts: tuple[str, ...], store_path: str | None) -> None:
    """Serve tracked runs, scores, verdicts and the brief over HTTP (whileai.platform.server).

    Prints its URL, then runs until Ctrl-C. A non-loopback --host exits 2 unless the store holds keys.
    """
    from whileai.platform.server import serve

    serve(host, port, store=store_path, log_level=log_level, on_start=lambda line: click.echo(line, err=True),
          allow_hosts=allow_hosts)
