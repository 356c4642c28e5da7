"""``wai keys create NAME``, ``list``, ``revoke KEY_ID``: accounts and their API keys (only hashes are stored)."""

from __future__ import annotations

import click

from whileai.cli._options import store_option


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


@keys.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the keys as JSON.")
@store_option
def list_(as_json: bool, store_path: str | None) -> None:
    """List the store's keys by public id, with account, creation time and whether revoked (never the key)."""
    import json

    from whileai.platform import list_keys

    rows = list_keys(store=store_path)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no API keys: wai server answers loopback requests without one (wai keys create NAME)", err=True)
        return
    for row in rows:
        click.echo(f"{row['key_id']}  {row['account'] or '?'}  {row['created_at']}  "
                   f"{'revoked' if row['revoked'] else 'active'}")


@keys.command()
@click.argument("key_id")
@store_option
def revoke(key_id: str, store_path: str | None) -> None:
    """Revoke key KEY_ID (its public id, or the whole key): it answers 401 from the next request on."""
    from whileai.platform import revoke_key

    result = revoke_key(key_id, store=store_path)
    click.echo(f"key {result['key_id']} {'was already' if result['was_revoked'] else 'is now'} revoked; requests "
               "with it answer 401. wai server still asks every request for a key.", err=True)
