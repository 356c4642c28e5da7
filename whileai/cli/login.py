"""``wai login``, ``wai status``, ``wai logout``: the saved server and key (~/.whileai/credentials.json)."""

from __future__ import annotations

import json

import click


@click.command()
@click.option("--server", "base_url", required=True, help="wai server URL, e.g. http://127.0.0.1:8484.")
@click.option("--key", "api_key", default=None, help="API key (default: WHILEAI_API_KEY, else none).")
def login(base_url: str, api_key: str | None) -> None:
    """Check the server answers the key, then save both (mode 0600)."""
    from whileai.platform import check_login, key_id, resolve_api_key, save_login

    key = api_key or resolve_api_key(None, server=base_url)[0]
    who = check_login(base_url, key)
    path = save_login(base_url, key)
    click.echo(f"logged in to {base_url} as {who['account']} (key {key_id(key) or 'none'}); saved to {path}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def status(as_json: bool) -> None:
    """Which server and key the client uses, and where each came from (never the key itself)."""
    from whileai.platform import status as current

    info = current()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"server: {info['server'] or 'none (the local store)'}"
               + (f" (from {info['server_source']})" if info["server_source"] else ""))
    click.echo(f"key: {info['key_id'] or 'none'}" + (f" (from {info['key_source']})" if info["key_source"] else ""))
    click.echo(f"credentials: {info['credentials']}{'' if info['saved'] else ' (none saved)'}")


@click.command()
def logout() -> None:
    """Remove the saved server and key."""
    from whileai.platform import logout as remove

    click.echo("logged out: credentials removed" if remove() else "no saved login to remove")
