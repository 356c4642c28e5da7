"""The saved login (``~/.whileai/credentials.json``, mode 0600) and how a key and a server resolve.

Both in one order: the argument, then the environment (``WHILEAI_API_KEY``, ``WHILEAI_BASE_URL``),
then what ``wai login`` saved. The saved key belongs to the saved server: it is sent to that server
only, never to one named by an argument or the environment (which then needs its own key).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from whileai.defaults import (
    API_KEY_ENV,
    API_KEY_HEADER,
    BASE_URL_ENV,
    CREDENTIALS_PATH,
    PLATFORM_TIMEOUT_S,
)
from whileai.errors import ArgumentError, PlatformError

__all__ = ["credentials_path", "key_id", "load_login", "logout", "resolve_api_key", "resolve_base_url", "save_login",
           "status", "check_login"]


def credentials_path() -> Path:
    """The credentials file (``~/.whileai/credentials.json``; ``~`` is ``$HOME``)."""
    return Path(CREDENTIALS_PATH).expanduser()


def load_login() -> dict[str, Any]:
    """The saved login (``{}`` when there is none or it cannot be read)."""
    path = credentials_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_login(base_url: str, api_key: str | None) -> Path:
    """Save the server and key, readable by the owner only (0600), through the one atomic writer.

    ``table.atomic_path`` keeps an existing file's permission bits, so the file is made 0600
    (empty) first when it is new, and set back to 0600 when it exists; its temporary file is 0600.
    """
    from whileai.table import atomic_path

    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise ArgumentError(f"server must be an http:// or https:// URL, got {base_url!r}. "
                            "Pass --server http://127.0.0.1:8484.")
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.chmod(path, 0o600)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps({"base_url": base_url.rstrip("/"), "api_key": api_key}), encoding="utf-8")
    return path


def logout() -> bool:
    """Remove the saved login; True when there was one."""
    try:
        credentials_path().unlink()
    except FileNotFoundError:
        return False
    return True


def resolve_api_key(api_key: str | None = None, *, server: str | None = None) -> tuple[str | None, str | None]:
    """(key, where it came from): the argument, ``WHILEAI_API_KEY``, then the saved login.

    Args:
        api_key: The key passed in, if any.
        server: The server the key is for. The saved key is used only when this is the saved
            server (or not given), so a key saved for one server is never sent to another.
    """
    if api_key:
        return api_key, "argument"
    if os.environ.get(API_KEY_ENV):
        return os.environ[API_KEY_ENV], API_KEY_ENV
    login = load_login()
    saved = login.get("api_key")
    saved_url = str(login.get("base_url") or "").rstrip("/")
    if saved and (server is None or server.rstrip("/") == saved_url):
        return saved, str(credentials_path())
    return None, None


def resolve_base_url(base_url: str | None = None) -> tuple[str | None, str | None]:
    """(server URL, where it came from): the argument, ``WHILEAI_BASE_URL``, then the saved login (the key's order)."""
    if base_url:
        return base_url.rstrip("/"), "argument"
    if os.environ.get(BASE_URL_ENV):
        return os.environ[BASE_URL_ENV].rstrip("/"), BASE_URL_ENV
    saved = load_login().get("base_url")
    if saved:
        return str(saved).rstrip("/"), str(credentials_path())
    return None, None


def key_id(api_key: str | None) -> str | None:
    """The public id of a key (``wai_<id>_...``), the only part ever shown or logged."""
    if not api_key:
        return None
    parts = api_key.split("_", 2)
    return parts[1] if len(parts) == 3 and parts[0] == "wai" else "(not a wai key)"


def status() -> dict[str, Any]:
    """Which server and key the client would use now, and where each came from (never the key itself)."""
    url, url_source = resolve_base_url()
    key, key_source = resolve_api_key(server=url)
    return {"server": url, "server_source": url_source, "key_id": key_id(key), "key_source": key_source,
            "credentials": str(credentials_path()), "saved": credentials_path().exists()}


def check_login(base_url: str, api_key: str | None, *, transport: Any = None) -> dict[str, Any]:
    """``GET /whoami`` on the server with the key; its answer, or a PlatformError saying what failed."""
    import httpx

    headers = {API_KEY_HEADER: api_key} if api_key else {}
    try:
        with httpx.Client(base_url=base_url, headers=headers, timeout=PLATFORM_TIMEOUT_S, transport=transport) as c:
            resp = c.get("/whoami")
    except httpx.HTTPError as exc:
        raise PlatformError(503, "unreachable", f"server must answer at {base_url!r}, got no answer ({exc}). "
                                                "Start it with `wai server`, or check the URL.") from exc
    if resp.status_code != 200:
        try:
            err = resp.json()["error"]
            code, message = err["code"], err["message"]
        except (ValueError, KeyError, TypeError):
            code, message = "error", resp.text[:200]
        raise PlatformError(resp.status_code, code, message)
    return dict(resp.json())
