"""``wai keys create NAME``: an account and its API key (only the hash is stored)."""

from __future__ import annotations

import click

from whileai.cli._common import store_option


@click.group()
def keys() -> None:
    """API keys for wai server: one account per name, the key printed once, only its hash stored."""


@keys.command()
@click.argument("name")
@store_option
def create(name: str, store_path: str | None) -> None:
    """Create account NAME (or a second key for it) and print its key once."""
    from whileai.platform import create_key

    info = create_key(name, store=store_path)
    click.echo(info.key)
    click.echo(f"key {info.key_id} for account {info.account}: shown once, only its hash is stored. "
               "wai server now asks every request for a key.", err=True)
