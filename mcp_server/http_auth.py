"""Bearer-token authentication for `gsolve mcp --transport http`, and the rule for where it may bind.

A plain ASGI wrapper: every HTTP request must carry ``Authorization: Bearer <token>`` (compared in
constant time) or it is answered 401 before it reaches the MCP app. Lifespan events pass through.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_UNAUTHORIZED = json.dumps({
    "error": "unauthorized",
    "error_description": "missing or wrong bearer token: send 'Authorization: Bearer <token>' with the token the "
    "server was started with (gsolve mcp --token, or $GSOLVE_MCP_TOKEN)",
}).encode()


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, 'localhost')."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve a non-loopback address without a token (anyone who can reach it could start runs)."""
    if token is not None and not token.strip():
        raise ValueError("the MCP token is empty; pass a long random string (e.g. `openssl rand -hex 32`)")
    if not is_loopback(host) and token is None:
        raise ValueError(
            f"refusing to serve MCP over HTTP on {host!r} without a token: other machines could start runs. "
            "Set GSOLVE_MCP_TOKEN (or pass --token) to a long random string, or bind to 127.0.0.1")


class BearerAuth:
    """Answer 401 to any HTTP request whose Authorization header is not ``Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self._token = token.encode()

    def _authorized(self, scope: Scope) -> bool:
        header = b""
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                header = value
                break
        scheme, _, presented = header.partition(b" ")
        # compare_digest always runs, so a wrong scheme takes as long as a wrong token.
        same = hmac.compare_digest(presented.strip(), self._token)
        return same and scheme.lower() == b"bearer"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="gsolve-mcp"')]})
            await send({"type": "http.response.body", "body": _UNAUTHORIZED})
            return
        await self.app(scope, receive, send)
