"""``wai runs``: the tracked agents and runs (wp.track, the Runs page), on a server or the local store.

Thin calls into whileai.platform: list agents and runs, print a run, a verdict, the brief and a
version-against-version diff, promote a version, archive a run. Promote and archive change what a
person reads, so they ask for ``--yes``. Every command takes ``--json``.
"""

from __future__ import annotations

import json
from typing import Any

import click

from whileai.cli._options import json_option


def _connection(fn: Any) -> Any:
    fn = click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
                      help="Write to this store file instead of a server.")(fn)
    fn = click.option("--api-key", "api_key", default=None, help="API key (default: WHILEAI_API_KEY, else the saved one).")(fn)
    return click.option("--server", "base_url", default=None,
                        help="wai server URL (default: WHILEAI_BASE_URL, else the saved login, else the local store).")(fn)


def _backend(base_url: str | None, api_key: str | None, store_path: str | None) -> Any:
    from whileai.platform import backend_for

    return backend_for(base_url=base_url, api_key=api_key, store=store_path)


def _print(value: Any, as_json: bool, text: str | None = None) -> None:
    from pydantic import BaseModel

    if as_json:
        if isinstance(value, list):
            click.echo(json.dumps([v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value],
                                  indent=2, default=str))
        else:
            click.echo(json.dumps(value.model_dump(mode="json") if isinstance(value, BaseModel) else value,
                                  indent=2, default=str))
        return
    click.echo(text if text is not None else str(value))


def _confirm(yes: bool, what: str) -> None:
    from whileai.errors import ArgumentError

    if not yes:
        raise ArgumentError(f"{what} needs --yes, got none. Run it again with --yes to do it.", argument="yes")


@click.group()
def runs() -> None:
    """Tracked agents and runs (wp.track, the Runs page): list, show, verdict, brief, diff, promote, archive."""


@runs.command()
@_connection
@json_option
def agents(base_url: str | None, api_key: str | None, store_path: str | None, as_json: bool) -> None:
    """The account's tracked agents, with the served version of each."""
    backend = _backend(base_url, api_key, store_path)
    found = backend.call("agents")
    lines = [f"{a.name}  model {a.model or '-'}  served {a.served or '(first scored)'}" for a in found]
    _print(found, as_json, "\n".join(lines) or "no tracked agents")


@runs.command("list")
@click.option("--agent", default=None, help="Only this agent's runs.")
@click.option("--archived", is_flag=True, help="Include archived runs.")
@_connection
@json_option
def list_(agent: str | None, archived: bool, base_url: str | None, api_key: str | None, store_path: str | None,
          as_json: bool) -> None:
    """Tracked runs, oldest first (archived ones only with --archived)."""
    found = _backend(base_url, api_key, store_path).call("runs", agent=agent, archived=archived or None)
    lines = [f"{r.id}  {r.agent or '-'}  {r.version or '-'}  {r.status}{'  (archived)' if r.archived else ''}"
             for r in found]
    _print(found, as_json, "\n".join(lines) or "no tracked runs")


@runs.command()
@click.argument("run_id")
@_connection
@json_option
def show(run_id: str, base_url: str | None, api_key: str | None, store_path: str | None, as_json: bool) -> None:
    """One tracked run: its record, summary and scores."""
    backend = _backend(base_url, api_key, store_path)
    run = backend.call("run", run_id=run_id)
    scores = backend.call("scores", run_id=run_id)
    text = "\n".join([f"{run.id}  agent {run.agent or '-'}  version {run.version or '-'}  {run.status}",
                      *[f"  {s.behavior}: {s.value:.1f}" + (f" (±{s.ci:.1f})" if s.ci is not None else "")
                        + f" n={s.n if s.n is not None else 'n/a'}" for s in scores]])
    _print({"run": run.model_dump(mode="json"), "scores": [s.model_dump(mode="json") for s in scores]}, as_json, text)


@runs.command()
@click.argument("agent")
@click.argument("behavior")
@click.option("--version", default=None, help="The candidate (default: the newest scored that is not served).")
@_connection
@json_option
def verdict(agent: str, behavior: str, version: str | None, base_url: str | None, api_key: str | None,
            store_path: str | None, as_json: bool) -> None:
    """The verdict on BEHAVIOR: does the candidate beat the served version, and is it real."""
    _print(_backend(base_url, api_key, store_path).call("verdict", agent=agent, behavior=behavior, version=version),
           as_json)


@runs.command()
@click.argument("agent")
@click.option("--markdown", is_flag=True, help="The text a coding agent reads (the page's copy-for-agent text).")
@_connection
@json_option
def brief(agent: str, markdown: bool, base_url: str | None, api_key: str | None, store_path: str | None,
          as_json: bool) -> None:
    """What happened, what it means, what to do next."""
    got = _backend(base_url, api_key, store_path).call("brief", agent=agent)
    _print(got, as_json, got.markdown() if markdown else None)


@runs.command()
@click.argument("agent")
@click.argument("behavior")
@click.argument("a")
@click.argument("b")
@_connection
@json_option
def diff(agent: str, behavior: str, a: str, b: str, base_url: str | None, api_key: str | None,
         store_path: str | None, as_json: bool) -> None:
    """Version B against version A on BEHAVIOR, task by task, with the paired delta."""
    got = _backend(base_url, api_key, store_path).call("diff", agent=agent, behavior=behavior, a=a, b=b)
    lines = [got.line, *[f"  {word} {c.task}: {c.a_rate:.2f} -> {c.b_rate:.2f}"
                         for word, items in (("regressed", got.regressed), ("improved", got.improved)) for c in items]]
    _print(got, as_json, "\n".join(lines))


@runs.command()
@click.argument("agent")
@click.argument("version")
@click.option("--yes", is_flag=True, help="Do it: the served version changes for every verdict.")
@_connection
@json_option
def promote(agent: str, version: str, yes: bool, base_url: str | None, api_key: str | None, store_path: str | None,
            as_json: bool) -> None:
    """Serve VERSION: the one every candidate is compared against (needs --yes)."""
    from whileai.platform import Promote

    backend = _backend(base_url, api_key, store_path)
    backend.call("agent", name=agent)  # an unknown agent says so before --yes is asked
    _confirm(yes, f"promote changes {agent!r}'s served version to {version!r}, and every verdict with it; it")
    info = backend.call("promote", agent=agent, body=Promote(version=version))
    _print(info, as_json, f"{agent}: serving {info.served}")


@runs.command()
@click.argument("run_id")
@click.option("--yes", is_flag=True, help="Do it: the run leaves the listings, verdicts and the brief.")
@_connection
@json_option
def archive(run_id: str, yes: bool, base_url: str | None, api_key: str | None, store_path: str | None,
            as_json: bool) -> None:
    """Hide RUN_ID everywhere unless asked (it stays in the store; needs --yes)."""
    from whileai.platform import RunPatch

    backend = _backend(base_url, api_key, store_path)
    backend.call("run", run_id=run_id)  # an unknown id says so before --yes is asked
    _confirm(yes, f"archive hides run {run_id!r} from the listings, the verdicts and the brief; it")
    record = backend.call("patch_run", run_id=run_id, patch=RunPatch(archived=True))
    _print(record, as_json, f"{record.id}: archived (wai runs list --archived lists it)")
