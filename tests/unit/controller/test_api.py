"""Tests for controller.api: schema, error answers, authentication and the event stream.

The daemon behind the API is a real `Daemon` that has not brought a fabric
up (no root needed), served by the real uvicorn server on a Unix socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from controller.api import ApiServer, create_app
from controller.daemon import Daemon, DaemonConfig
from tests.unit.controller.netutil import free_port


@pytest.fixture()
def daemon() -> Daemon:
    return Daemon(DaemonConfig(topology=None))


@pytest.fixture()
def client(daemon: Daemon) -> TestClient:
    return TestClient(create_app(daemon), client=("127.0.0.1", 50000))


def test_openapi_documents_every_operation(client: TestClient) -> None:
    """/openapi.json lists each path the CLI uses, with its method."""
    paths = client.get("/openapi.json").json()["paths"]
    want = {("/api/v1/status", "get"), ("/api/v1/topology", "get"), ("/api/v1/stats", "get"),
            ("/api/v1/events", "get"), ("/api/v1/routes", "get"), ("/api/v1/mode", "post"),
            ("/api/v1/link", "post"), ("/api/v1/check", "post"), ("/api/v1/exec", "post"),
            ("/api/v1/shutdown", "post")}
    have = {(p, m) for p, ops in paths.items() for m in ops}
    assert want <= have


def test_status_of_a_daemon_still_starting(client: TestClient) -> None:
    """Status answers before the fabric is up, with the phase."""
    r = client.get("/api/v1/status")
    assert r.status_code == 200 and r.json()["phase"] == "starting"


def test_operations_before_bring_up_are_409(client: TestClient) -> None:
    """A mode change on a fabric that is not up: 409 and one line saying so."""
    r = client.post("/api/v1/mode", json={"mode": "eecmp"})
    assert r.status_code == 409
    assert r.json() == {"error": "the fabric is not up (it is starting)"}


@pytest.mark.parametrize("body,field", [({"mode": "ospf"}, "mode"), ({}, "mode"),
                                        ({"mode": "pin", "extra": 1}, "extra")],
                         ids=["bad-value", "missing", "unknown-key"])
def test_invalid_bodies_name_the_field(client: TestClient, body: dict[str, Any],
                                       field: str) -> None:
    """422 with the field named first in the message."""
    r = client.post("/api/v1/mode", json=body)
    assert r.status_code == 422
    assert r.json()["error"].startswith(f"{field}: ")


def test_link_index_must_not_be_negative(client: TestClient) -> None:
    """Body validation checks ranges too."""
    r = client.post("/api/v1/link", json={"a": "rtsw1", "b": "ctsw1", "index": -1, "up": False})
    assert r.status_code == 422 and r.json()["error"].startswith("index: ")


def _serve(daemon: Daemon, tmp_path: Path,
           body: Callable[[httpx.AsyncClient, ApiServer], Awaitable[None]]) -> None:
    """Run the real server on a Unix socket (and an ephemeral TCP port) around `body`."""

    async def main() -> None:
        daemon.bus.bind(asyncio.get_running_loop())
        server = ApiServer(daemon, host="127.0.0.1", port=free_port(),
                           unix_path=tmp_path / "api.sock", token="t0ken")
        await server.start()
        try:
            transport = httpx.AsyncHTTPTransport(uds=str(tmp_path / "api.sock"))
            async with httpx.AsyncClient(transport=transport, base_url="http://aizone") as c:
                await body(c, server)
        finally:
            await server.stop()

    asyncio.run(main())


# A kind no test asserts on: published until the client has read one, so the events a test
# publishes next go out once its stream is subscribed (not after a guessed delay).
HELLO = "hello"


async def until_subscribed(daemon: Daemon, listening: asyncio.Event) -> None:
    """Publish HELLO events until the test's client has read one."""
    while not listening.is_set():
        daemon.bus.publish(HELLO, {})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(listening.wait(), 0.05)


def test_event_stream_delivers_events_in_order(daemon: Daemon, tmp_path: Path) -> None:
    """Published events arrive as SSE blocks (id, event, data), in order, until "down"."""
    got: list[dict[str, Any]] = []

    async def body(c: httpx.AsyncClient, _server: ApiServer) -> None:
        listening = asyncio.Event()

        async def publish() -> None:
            await until_subscribed(daemon, listening)
            daemon.bus.publish("mode", {"mode": "eecmp"})
            daemon.bus.publish("stats", {"links": []})
            daemon.bus.publish("down", {})

        task = asyncio.create_task(publish())
        async with c.stream("GET", "/api/v1/events") as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            block: dict[str, Any] = {}
            async for line in r.aiter_lines():
                if line.startswith(("id: ", "event: ")):
                    key, _, value = line.partition(": ")
                    block[key] = value
                elif line.startswith("data: "):
                    block["data"] = json.loads(line[6:])
                elif not line and block:
                    if block["event"] == HELLO:
                        listening.set()
                    else:
                        got.append(block)
                    block = {}
        await task

    _serve(daemon, tmp_path, body)
    assert [b["event"] for b in got] == ["mode", "stats", "down"]
    assert [int(b["id"]) for b in got] == sorted(int(b["id"]) for b in got)
    assert got[0]["data"]["data"] == {"mode": "eecmp"}


def test_event_stream_filters_kinds_and_replays(daemon: Daemon, tmp_path: Path) -> None:
    """?kinds= keeps only those kinds; ?replay=true starts with the kept history."""
    daemon.bus.publish("progress", {"step": "compiling"})
    got: list[str] = []

    async def body(c: httpx.AsyncClient, _server: ApiServer) -> None:
        listening = asyncio.Event()

        async def publish() -> None:
            await until_subscribed(daemon, listening)
            daemon.bus.publish("stats", {})
            daemon.bus.publish("progress", {"step": "up"})
            daemon.bus.publish("down", {})

        task = asyncio.create_task(publish())
        async with c.stream("GET", "/api/v1/events",
                            params={"kinds": f"progress,down,{HELLO}", "replay": "true"}) as r:
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    data = json.loads(line[6:])
                    if data["kind"] == HELLO:
                        listening.set()
                    else:
                        got.append(f"{data['kind']}:{data['data'].get('step', '')}")
        await task

    _serve(daemon, tmp_path, body)
    assert got == ["progress:compiling", "progress:up", "down:"]


def test_unix_socket_is_root_only(daemon: Daemon, tmp_path: Path) -> None:
    """The API socket is created mode 0600 and removed when the server stops."""
    modes: list[int] = []

    async def body(c: httpx.AsyncClient, server: ApiServer) -> None:
        modes.append((tmp_path / "api.sock").stat().st_mode & 0o777)
        assert (await c.get("/api/v1/status")).status_code == 200
        assert server.addresses["url"].startswith("http://127.0.0.1:")

    _serve(daemon, tmp_path, body)
    assert modes == [0o600]
    assert not (tmp_path / "api.sock").exists()


# The routes that answer something else than JSON, and what.
STREAMS = {"/api/v1/events": "text/event-stream",
           "/api/v1/capture": "application/vnd.tcpdump.pcap",
           "/metrics": "text/plain"}


def test_every_route_documents_what_it_answers(client: TestClient) -> None:
    """Each JSON route's 200 answer in /openapi.json is a named model (or a list/map of one)."""
    doc = client.get("/openapi.json").json()
    bare = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            content = op["responses"]["200"].get("content", {})
            if path in STREAMS:  # not JSON: each says what it answers instead
                assert list(content) == [STREAMS[path]], (path, content)
                continue
            schema = content["application/json"]["schema"]
            text = str(schema)
            if "$ref" not in text:
                bare.append(f"{method.upper()} {path}: {schema}")
    assert bare == []
    status = doc["components"]["schemas"]["StatusAnswer"]["properties"]
    assert {"phase", "switches", "links", "mode"} <= set(status)
