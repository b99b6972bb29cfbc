"""Bearer-token authentication for `gsolve mcp --transport http`, the rule for where it may bind and
with what token, and how many sessions it keeps.

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

# 16 random hex characters are 64 bits: out of reach of guessing over a network at any request rate,
# while a 1-character token (accepted before issue 26) is found in a few dozen requests.
MIN_TOKEN_CHARS = 16
# Each open session holds ~40 KB of server state (2,000 sessions: +80 MB, issue 26) and the SDK
# keeps one until it is idle this long or the client deletes it. A client that returns after the idle
# timeout gets 404 and opens a new session (the MCP spec's rule); one client needs one session.
DEFAULT_SESSION_IDLE_SECONDS = 900.0
DEFAULT_MAX_SESSIONS = 100  # beyond it a new session is answered 503 until one ends or expires
MAX_SESSION_IDLE_SECONDS = 24 * 3600.0
MAX_SESSIONS_LIMIT = 10_000  # the SDK's own default cap: ~400 MB of sessions

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
    if token is not None and len(token.strip()) < MIN_TOKEN_CHARS:
        raise ValueError(f"the MCP token has {len(token.strip())} characters, fewer than the {MIN_TOKEN_CHARS} that "
                         "keep it from being guessed; set GSOLVE_MCP_TOKEN to a long random string (e.g. `openssl "
                         "rand -hex 32`)")
    if not is_loopback(host) and token is None:
        raise ValueError(
            f"refusing to serve MCP over HTTP on {host!r} without a token: other machines could start runs. "
            "Set GSOLVE_MCP_TOKEN (or pass --token) to a long random string, or bind to 127.0.0.1")


def bind_warning(host: str) -> str | None:
    """What to tell the operator when ``host`` is reachable from other machines (None on loopback)."""
    if is_loopback(host):
        return None
    return (f"serving MCP on {host!r}, which other machines can reach: whoever holds the token can start "
            "training runs here, and plain HTTP carries the token in clear text; put a TLS proxy in front of "
            "it, or bind to 127.0.0.1")


def check_session_limits(idle_seconds: float, max_sessions: int) -> None:
    """ValueError, naming the flag, for a session limit outside what the server can keep."""
    if not 1.0 <= idle_seconds <= MAX_SESSION_IDLE_SECONDS:
        raise ValueError(f"--session-idle-timeout must be between 1 and {MAX_SESSION_IDLE_SECONDS:g} seconds, got "
                         f"{idle_seconds:g}")
    if not 1 <= max_sessions <= MAX_SESSIONS_LIMIT:
        raise ValueError(f"--max-sessions must be between 1 and {MAX_SESSIONS_LIMIT}, got {max_sessions}")


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
