"""Who may call the daemon's API over TCP: the fabric's token, a Host it serves, the page's Origin.

aizone runs as root, so its TCP API must not be a way in for another local
user or for a web page in the user's browser. The Unix socket is root's
alone (mode 0600) and needs nothing more; every request that comes over
TCP passes `AccessGuard`, an ASGI middleware, in this order:

1. **Host.** The `Host` header must name the bound address, `localhost`,
   `127.0.0.1` or `[::1]` (or an extra name the daemon was given), with the
   port. A page whose site name was rebound to 127.0.0.1 (DNS rebinding)
   sends its own name and is refused (403) before anything is read.
2. **Token.** `Authorization: Bearer <token>`, or the `aizone-token`
   cookie the dashboard holds (HttpOnly, SameSite=Strict). The token is
   made by the daemon at start (`new_token`), kept 0600 in
   `<state dir>/api.token`, never on a command line or in a log, and
   compared in constant time. `GET /?token=...` (the URL `aizone up`
   prints, as Jupyter's does) sets the cookie and redirects to `/`, so the
   token leaves the address bar. Without it: 401, loopback included.
3. **Origin, for a state change** (POST, PUT, PATCH, DELETE): a request
   with an `Origin` header that is not the page's own (`http://` + the
   request's Host) is refused (403);
   one authenticated by the cookie must also carry `X-Aizone-Request: 1`,
   a header a cross-site form cannot set and a cross-site script cannot
   send without a CORS preflight that nothing here answers.
On both transports `BodyCap` refuses a body over 1 MiB with 413, whether
it says so in `Content-Length` or streams past it.

Names defined here: `AccessGuard`, `AccessPolicy`, `BodyCap`, `new_token`,
`token_path`, `read_token`, `write_token`, `TOKEN_COOKIE`, `CSRF_HEADER`,
`MAX_BODY`.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from topologies.runstate import state_dir

__all__ = ["CSRF_HEADER", "MAX_BODY", "TOKEN_COOKIE", "AccessGuard", "AccessPolicy", "BodyCap",
           "new_token", "read_token", "token_path", "write_token"]

TOKEN_FILE = "api.token"
TOKEN_COOKIE = "aizone-token"
CSRF_HEADER = "x-aizone-request"
MAX_BODY = 1 << 20
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def token_path(directory: Path | None = None) -> Path:
    """Where the token file is: `api.token` in `directory` (default: the fabric's state dir)."""
    return (directory or state_dir()) / TOKEN_FILE


def write_token(token: str, directory: Path | None = None) -> Path:
    """Store `token` 0600 (created under a 0077 umask, so there is no window)."""
    path = token_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    old = os.umask(0o077)
    try:
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(token + "\n")
        os.replace(tmp, path)
    finally:
        os.umask(old)
    return path


def read_token(directory: Path | None = None) -> str | None:
    """The running fabric's token, or None when there is none (or it is not ours to read)."""
    try:
        return token_path(directory).read_text().strip() or None
    except OSError:
        return None


@dataclass(frozen=True, kw_only=True)
class AccessPolicy:
    """What a TCP request must show (see the module docstring)."""

    token: str
    """The fabric's secret; every TCP request needs it."""
    host: str
    """The address the API is bound to ("127.0.0.1", "::1", or another one)."""
    port: int
    """The bound TCP port: part of every Host the API serves."""
    extra_hosts: tuple[str, ...] = ()
    """More names the API answers to (a machine's name, when it is opened deliberately)."""

    def allowed_hosts(self) -> frozenset[str]:
        """Every `Host` header value served: each allowed name with the port, lower-case."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        names = {shown, "localhost", "127.0.0.1", "[::1]", *self.extra_hosts}
        return frozenset(f"{n.lower()}:{self.port}" for n in names)

    def token_ok(self, candidate: str | None) -> bool:
        """Whether `candidate` is the fabric's token (compared in constant time; None is not)."""
        return candidate is not None and hmac.compare_digest(candidate.encode(),
                                                             self.token.encode())


class AccessGuard:
    """ASGI middleware enforcing an `AccessPolicy` on every HTTP request."""

    def __init__(self, app: Asgi, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy
        self.hosts = policy.allowed_hosts()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "").lower()
        if host not in self.hosts:
            await _refuse(send, 403, f"this API does not serve Host {host or '(none)'!r}: "
                                     f"use http://127.0.0.1:{self.policy.port}/")
            return
        method = scope["method"]
        bearer = headers.get("authorization", "")
        by_header = bearer.startswith("Bearer ") and self.policy.token_ok(bearer[7:])
        by_cookie = self.policy.token_ok(_cookie(headers.get("cookie", "")))
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if method == "GET" and scope["path"] == "/" and "token" in query:
            if self.policy.token_ok(query["token"][0]):
                await _login(send, self.policy.token)
            else:
                await _refuse(send, 401, "that token is not this fabric's (see the URL "
                                         "`aizone up` printed, or `aizone dashboard`)")
            return
        if not (by_header or by_cookie):
            await _refuse(send, 401, "this API needs the fabric's token: `Authorization: "
                                     "Bearer <token>` (root can read it in "
                                     f"{token_path()}), or open the URL `aizone up` printed")
            return
        if method in _UNSAFE:
            origin = headers.get("origin")
            if origin is not None and _origin_host(origin) != host:
                await _refuse(send, 403, f"a change from origin {origin!r} is refused: only "
                                         f"the page's own origin may change the fabric")
                return
            if not by_header and headers.get(CSRF_HEADER) != "1":
                await _refuse(send, 403, f"a change authenticated by the cookie needs the "
                                         f"header {CSRF_HEADER}: 1")
                return
        await self.app(scope, receive, send)


class BodyCap:
    """ASGI middleware: a request body over `limit` bytes is a 413, on any transport.

    Bodies here are small (a mode, a link, a job): read whole, up to the cap,
    then handed on, so a body that streams past the cap (no Content-Length)
    is refused before any route runs.
    """

    def __init__(self, app: Asgi, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = _headers(scope).get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await _refuse(send, 413, f"the request body is larger than {self.limit} bytes")
            return
        messages, fits = await _read_body(receive, self.limit)
        if not fits:
            await _refuse(send, 413, f"the request body is larger than {self.limit} bytes")
            return
        await self.app(scope, _replay(messages, receive), send)


async def _read_body(receive: Receive, limit: int) -> tuple[list[Message], bool]:
    """Every message of the request body, and False when it passed `limit` bytes."""
    messages: list[Message] = []
    seen = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, True
        seen += len(message.get("body", b""))
        if seen > limit:
            return messages, False
        if not message.get("more_body", False):
            return messages, True


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def wrapped() -> Message:
        """The next buffered message, then whatever `receive` gives."""
        if pending:
            return pending.pop(0)
        return await receive()

    return wrapped


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _cookie(header: str) -> str | None:
    if not header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # noqa: BLE001 - a malformed cookie header is no token
        return None
    morsel = jar.get(TOKEN_COOKIE)
    return morsel.value if morsel is not None else None


def _origin_host(origin: str) -> str:
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{host.lower()}:{port}"


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _login(send: Send, token: str) -> None:
    cookie = f"{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", b"/"), (b"set-cookie", cookie.encode()),
                            (b"cache-control", b"no-store"), (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
