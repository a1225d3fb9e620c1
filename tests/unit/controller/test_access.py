"""Who may call the daemon's API: the token, the Host, the Origin, the caps (controller.access).

Every test runs the daemon's real `ApiServer` (uvicorn on a real Unix socket
and a real loopback TCP port) in front of a real `Daemon` that has not
brought a fabric up, and talks to it with httpx as a client would; the
browser's side (DNS rebinding, a cross-site form) is in
tests/browser/test_page_security.py.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from controller.access import TOKEN_COOKIE, read_token, write_token
from controller.api import ApiServer, Limits, create_app
from controller.daemon import Daemon, DaemonConfig
from controller.errors import DaemonError
from tests.unit.controller.netutil import free_port

TOKEN = "test-token-0123456789"


def _routes() -> list[tuple[str, str]]:
    """(method, path) of every route of the TCP application, with sample path parameters."""
    app = create_app(Daemon(DaemonConfig(topology=None)), tcp=True)
    out = []
    for path, ops in app.openapi()["paths"].items():
        for method in ops:
            out.append((method.upper(), path.replace("{switch}", "rtsw1")
                        .replace("{counter}", "c").replace("{job_id}", "1")))
    return sorted(out) + [("GET", "/"), ("GET", "/dashboard/dashboard.js"),
                          ("GET", "/openapi.json")]


Body = Callable[[httpx.AsyncClient, httpx.AsyncClient, ApiServer], Awaitable[None]]


def _serve(tmp_path: Path, body: Body, *, limits: Limits | None = None) -> None:
    """The real server around `body(tcp_client, unix_client, server)`."""

    async def main() -> None:
        daemon = Daemon(DaemonConfig(topology=None))
        daemon.bus.bind(asyncio.get_running_loop())
        port = free_port()
        server = ApiServer(daemon, host="127.0.0.1", port=port, unix_path=tmp_path / "api.sock",
                           token=TOKEN, limits=limits)
        await server.start()
        try:
            unix = httpx.AsyncHTTPTransport(uds=str(tmp_path / "api.sock"))
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as tcp, \
                    httpx.AsyncClient(transport=unix, base_url="http://aizone") as local:
                await body(tcp, local, server)
        finally:
            await server.stop()

    asyncio.run(main())


AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize("method,path", _routes(), ids=lambda x: str(x))
def test_every_route_over_tcp_without_the_token_is_401(tmp_path: Path, method: str,
                                                       path: str) -> None:
    """No token, loopback client: 401 and the reason, for every route and the page."""
    async def body(tcp: httpx.AsyncClient, _unix: httpx.AsyncClient, _s: ApiServer) -> None:
        r = await tcp.request(method, path, json={} if method in ("POST", "PUT") else None)
        assert r.status_code == 401, (method, path, r.status_code, r.text)
        assert "token" in r.json()["error"]

    _serve(tmp_path, body)


def test_a_wrong_token_is_401_and_the_right_one_answers(tmp_path: Path) -> None:
    """Bearer with another secret: 401; with the fabric's: the status."""
    async def body(tcp: httpx.AsyncClient, _unix: httpx.AsyncClient, _s: ApiServer) -> None:
        bad = await tcp.get("/api/v1/status", headers={"Authorization": "Bearer nope"})
        assert bad.status_code == 401
        ok = await tcp.get("/api/v1/status", headers=AUTH)
        assert ok.status_code == 200 and ok.json()["phase"] == "starting"

    _serve(tmp_path, body)


@pytest.mark.parametrize("host", ["attacker.example:{port}", "127.0.0.1:1", "attacker.example",
                                  "127.0.0.1.nip.io:{port}"],
                         ids=["rebound-name", "other-port", "no-port", "lookalike"])
def test_a_foreign_host_header_is_refused_even_with_the_token(tmp_path: Path, host: str) -> None:
    """DNS rebinding sends the attacker's name as Host: 403 before anything is read."""
    async def body(tcp: httpx.AsyncClient, _unix: httpx.AsyncClient, s: ApiServer) -> None:
        r = await tcp.get("/api/v1/status", headers={**AUTH, "Host": host.format(port=s.port)})
        assert r.status_code == 403 and "Host" in r.json()["error"]

    _serve(tmp_path, body)


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1"])
def test_loopback_names_are_served(tmp_path: Path, name: str) -> None:
    """The bound address and localhost, with the port, are the API's own Hosts."""
    async def body(tcp: httpx.AsyncClient, _unix: httpx.AsyncClient, s: ApiServer) -> None:
        r = await tcp.get("/api/v1/status", headers={**AUTH, "Host": f"{name}:{s.port}"})
        assert r.status_code == 200

    _serve(tmp_path, body)


def test_exec_is_refused_over_tcp_whatever_the_token(tmp_path: Path) -> None:
    """POST /exec over TCP with the token: 403; over the Unix socket the route exists (409)."""
    job = {"host": "h1", "argv": ["id"]}

    async def body(tcp: httpx.AsyncClient, unix: httpx.AsyncClient, _s: ApiServer) -> None:
        r = await tcp.post("/api/v1/exec", json=job, headers=AUTH)
        assert r.status_code == 403 and "Unix socket only" in r.json()["error"]
        local = await unix.post("/api/v1/exec", json=job)
        assert local.status_code == 409 and "not up" in local.json()["error"]

    _serve(tmp_path, body)


def test_the_printed_url_sets_an_httponly_strict_cookie(tmp_path: Path) -> None:
    """GET /?token=T: 303 to / with the cookie; the cookie then opens the page and the API."""
    async def body(tcp: httpx.AsyncClient, _unix: httpx.AsyncClient, _s: ApiServer) -> None:
        r = await tcp.get("/", params={"token": TOKEN})
        assert r.status_code == 303 and r.headers["location"] == "/"
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"{TOKEN_COOKIE}={TOKEN};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        jar = {"Cookie": f"{TOKEN_COOKIE}={TOKEN}"}
        page = await tcp.get("/", headers=jar)
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert (await tcp.get("/api/v1/status", headers=jar)).status_code == 200
        wrong = await tcp.get("/", params={"token": "guess"})
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers

    _serve(tmp_path, body)


def test_a_change_by_cookie_needs_the_page_header_and_origin(tmp_path: Path) -> None:
    """Cookie alone (a cross-site form): 403; foreign Origin: 403; the page's own way: reaches the daemon."""
    jar = {"Cookie": f"{TOKEN_COOKIE}={TOKEN}"}

    async def body(tcp: httpx.AsyncClient, _unix: httpx.AsyncClient, s: ApiServer) -> None:
        own = f"http://127.0.0.1:{s.port}"
        form = await tcp.post("/api/v1/shutdown", headers={**jar, "Origin": own})
        assert form.status_code == 403 and "x-aizone-request" in form.json()["error"]
        foreign = await tcp.post("/api/v1/mode", json={"mode": "pin"}, headers={**jar, "Origin": "http://attacker.example",
                                          "x-aizone-request": "1"})
        assert foreign.status_code == 403 and "origin" in foreign.json()["error"]
        null = await tcp.post("/api/v1/mode", json={"mode": "pin"}, headers={**jar, "Origin": "null", "x-aizone-request": "1"})
        assert null.status_code == 403
        page = await tcp.post("/api/v1/mode", json={"mode": "pin"}, headers={**jar, "Origin": own, "x-aizone-request": "1"})
        assert page.status_code == 409  # reached the daemon: "the fabric is not up"

    _serve(tmp_path, body)


def test_a_foreign_origin_is_refused_with_the_bearer_too(tmp_path: Path) -> None:
    """A state change whose Origin is another site's is refused whatever it authenticates with."""
    async def body(tcp: httpx.AsyncClient, _unix: httpx.AsyncClient, _s: ApiServer) -> None:
        r = await tcp.post("/api/v1/shutdown", headers={**AUTH, "Origin": "http://evil.test"})
        assert r.status_code == 403

    _serve(tmp_path, body)


def test_the_daemon_survives_refused_shutdowns(tmp_path: Path) -> None:
    """After refused shutdowns the daemon has not been asked to stop."""
    daemon_stopped: list[bool] = []

    async def body(tcp: httpx.AsyncClient, unix: httpx.AsyncClient, s: ApiServer) -> None:
        for _ in range(3):
            assert (await tcp.post("/api/v1/shutdown")).status_code == 401
        daemon_stopped.append(s.daemon._stop.is_set())
        assert (await unix.get("/api/v1/status")).status_code == 200

    _serve(tmp_path, body)
    assert daemon_stopped == [False]


async def _chunks(n: int) -> AsyncIterator[bytes]:
    for _ in range(n):
        yield b"x" * 65536


@pytest.mark.parametrize("transport", ["tcp", "unix"])
@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_body_over_one_mib_is_413(tmp_path: Path, transport: str, framing: str) -> None:
    """1 MiB + 1 byte declared, or 2 MiB streamed without a length: 413, on both transports."""
    async def body(tcp: httpx.AsyncClient, unix: httpx.AsyncClient, _s: ApiServer) -> None:
        client = tcp if transport == "tcp" else unix
        if framing == "content-length":
            r = await client.post("/api/v1/mode", content=b"x" * ((1 << 20) + 1),
                                  headers={**AUTH, "content-type": "application/json"})
        else:
            r = await client.post("/api/v1/mode", content=_chunks(32),
                                  headers={**AUTH, "content-type": "application/json"})
        assert r.status_code == 413 and "1048576 bytes" in r.json()["error"]
        assert (await client.get("/api/v1/status", headers=AUTH)).status_code == 200

    _serve(tmp_path, body)


def test_too_many_event_streams_are_refused_and_the_daemon_is_unharmed(tmp_path: Path) -> None:
    """With a cap of 2, the third stream is a 503 saying why; closing one frees a place."""
    async def body(tcp: httpx.AsyncClient, unix: httpx.AsyncClient, _s: ApiServer) -> None:
        first = await unix.send(unix.build_request("GET", "/api/v1/events"), stream=True)
        second = await tcp.send(tcp.build_request("GET", "/api/v1/events", headers=AUTH),
                                stream=True)
        assert first.status_code == second.status_code == 200
        third = await unix.get("/api/v1/events")
        assert third.status_code == 503 and "event streams" in third.json()["error"]
        assert (await unix.get("/api/v1/status")).status_code == 200
        await first.aclose()
        for _ in range(100):  # the server notices the disconnect on its next write or poll
            again = await unix.send(unix.build_request("GET", "/api/v1/events"), stream=True)
            if again.status_code == 200:
                await again.aclose()
                break
            await again.aclose()
            await asyncio.sleep(0.2)
        else:
            pytest.fail("a closed stream never freed its place")
        await second.aclose()

    _serve(tmp_path, body, limits=Limits(streams=2))


def test_a_taken_port_fails_naming_it(tmp_path: Path) -> None:
    """The API never moves to another port on its own: start fails and says which and how."""
    import socket

    async def main() -> None:
        with socket.socket() as squatter:
            squatter.bind(("127.0.0.1", 0))
            squatter.listen()
            port = squatter.getsockname()[1]
            server = ApiServer(Daemon(DaemonConfig(topology=None)), host="127.0.0.1", port=port,
                               unix_path=tmp_path / "api.sock", token=TOKEN)
            with pytest.raises(DaemonError, match=rf"127\.0\.0\.1:{port}.*--api-port"):
                await server.start()

    asyncio.run(main())


def test_the_token_file_is_0600_in_a_0700_folder(tmp_path: Path) -> None:
    """write_token makes the folder 0700 and the file 0600, whatever the caller's umask."""
    old = os.umask(0)
    try:
        path = write_token("abc", tmp_path / "state")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert read_token(tmp_path / "state") == "abc"


def test_the_schema_is_served_but_no_cdn_page(tmp_path: Path) -> None:
    """/openapi.json answers (with the token); /docs and /redoc, which load a CDN, do not exist."""
    async def body(tcp: httpx.AsyncClient, _unix: httpx.AsyncClient, _s: ApiServer) -> None:
        assert (await tcp.get("/openapi.json", headers=AUTH)).status_code == 200
        for page in ("/docs", "/redoc"):
            assert (await tcp.get(page, headers=AUTH)).status_code == 404

    _serve(tmp_path, body)


def test_predicting_a_trace_is_a_get_and_sending_one_a_post() -> None:
    """GET /trace takes no `send`; sending packets is POST /trace (a change, so guarded)."""
    paths: dict[str, Any] = create_app(Daemon(DaemonConfig(topology=None))).openapi()["paths"]
    params = {p["name"] for p in paths["/api/v1/trace"]["get"]["parameters"]}
    assert "send" not in params and {"src", "dst", "qp"} <= params
    assert "post" in paths["/api/v1/trace"]
