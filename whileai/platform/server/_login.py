"""What ``wai login`` checks before it saves anything: the server answers, and accepts the key."""

from __future__ import annotations

from typing import Any

from whileai.defaults import API_KEY_HEADER, PLATFORM_TIMEOUT_S
from whileai.errors import PlatformError

__all__ = ["check_login"]


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
