"""A client of the daemon's local API (httpx over its Unix socket), for the CLI and programs.

`ApiClient()` talks to the daemon of this machine's running fabric through
`<state dir>/api.sock`; `ApiClient(url=..., token=...)` to one listening on
TCP. Every method returns the decoded JSON; an answer with an error status
raises `ApiError` carrying the daemon's one-line message, and a daemon that
is not there raises `NotRunning`. `events()` yields the server-sent events
as `(kind, data)` pairs.

Names defined here: `ApiClient`, `ApiError`, `NotRunning`, `socket_path`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from topologies.runstate import state_dir

from .errors import ControllerError

__all__ = ["ApiClient", "ApiError", "NotRunning", "socket_path"]

PREFIX = "/api/v1"


class ApiError(ControllerError):
    """The daemon answered with an error; `status` is the HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class NotRunning(ControllerError):
    """No daemon answers (no fabric is up, or its daemon died)."""


def socket_path() -> Path:
    """The Unix socket of this machine's running daemon: `<state dir>/api.sock`."""
    return state_dir() / "api.sock"


class ApiClient:
    """Calls the daemon's API (see the module docstring)."""

    def __init__(self, *, url: str | None = None, token: str | None = None,
                 timeout: float = 120.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if url:
            self._client = httpx.Client(base_url=url.rstrip("/"), headers=headers,
                                        timeout=timeout)
            self.where = url
        else:
            path = socket_path()
            self._client = httpx.Client(transport=httpx.HTTPTransport(uds=str(path)),
                                        base_url="http://aizone", headers=headers,
                                        timeout=timeout)
            self.where = str(path)

    def close(self) -> None:
        """Close the HTTP connections; the client is not used again."""
        self._client.close()

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        try:
            resp = self._client.request(method, PREFIX + path, **kw)
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError):
            raise self._not_running() from None
        except httpx.TimeoutException:
            raise ApiError(f"the daemon did not answer {method} {path} in time", 504) from None
        if resp.status_code >= 400:
            raise _api_error(resp)
        return resp.json()

    def _not_running(self) -> NotRunning:
        return NotRunning(f"no fabric is running (no daemon answers at {self.where}): "
                          f"start one with `aizone up TOPO`")

    def get(self, path: str, **params: Any) -> Any:
        """GET `path` (under /api/v1) with `params` as the query (None ones left out)."""
        return self._call("GET", path, params={k: v for k, v in params.items() if v is not None})

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """POST `body` as JSON (`{}` when None) to `path` (under /api/v1)."""
        return self._call("POST", path, json=body or {})

    def put(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """PUT `body` as JSON (`{}` when None) to `path` (under /api/v1)."""
        return self._call("PUT", path, json=body or {})

    def alive(self) -> bool:
        """Whether a daemon answers `GET /status` (an error answer still raises `ApiError`)."""
        try:
            self.get("/status")
            return True
        except NotRunning:
            return False

    def download(self, path: str, sink: Any, *, timeout: float,
                 started: Any = None, **params: Any) -> dict[str, str]:
        """GET `path` and write its body to `sink` (a binary file) as it comes; the answer's
        headers. `started(headers)` is called once the answer begins."""
        try:
            with self._client.stream("GET", PREFIX + path,
                                     params={k: v for k, v in params.items() if v is not None},
                                     timeout=httpx.Timeout(timeout, read=timeout)) as r:
                if r.status_code >= 400:
                    r.read()
                    raise _api_error(r)
                if started is not None:
                    started(r.headers)
                for chunk in r.iter_raw():
                    sink.write(chunk)
                    sink.flush()
                return dict(r.headers)
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError):
            raise self._not_running() from None

    def events(self, kinds: set[str] | None = None, *, replay: bool = False,
               timeout: float | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Server-sent events as (kind, event) pairs, until the stream ends."""
        params: dict[str, Any] = {"replay": str(replay).lower()}
        if kinds:
            params["kinds"] = ",".join(sorted(kinds))
        try:
            with self._client.stream("GET", PREFIX + "/events", params=params,
                                     timeout=httpx.Timeout(timeout or 5.0, read=timeout)) as r:
                kind, data = "", ""
                for line in r.iter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: "):
                        data += line[6:]
                    elif not line and kind:
                        yield kind, json.loads(data)
                        kind, data = "", ""
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError):
            raise NotRunning(f"no daemon answers at {self.where}") from None
        except httpx.RemoteProtocolError:
            return  # the daemon went away: the stream is over


def _api_error(resp: httpx.Response) -> ApiError:
    """The daemon's error answer as an `ApiError`: its one-line `error`, else the body."""
    try:
        message = resp.json().get("error") or resp.text
    except ValueError:
        message = resp.text
    return ApiError(str(message), resp.status_code)
