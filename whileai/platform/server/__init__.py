"""``wai server``: the REST app over the store (Starlette + uvicorn), API keys, the OpenAPI document.

``create_app(store, routes=[...])`` is the app factory; extra routes (the Runs pages) read the
records through ``service_for(request)``.
"""

from whileai.platform.server._app import create_app, is_loopback, openapi, serve, service_for

__all__ = ["create_app", "is_loopback", "openapi", "serve", "service_for"]
