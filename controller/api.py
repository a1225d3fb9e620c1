"""The daemon's local API: HTTP/JSON (FastAPI) on a Unix socket and on loopback TCP.

Everything `aizone` shows and does goes through here, so the CLI, the
dashboard and any other program see one source of truth. The schema is
FastAPI's OpenAPI document (`GET /openapi.json`, browsable at `/docs`);
`docs/api.md` walks through it. Every path is under `/api/v1`:

    GET  /status              fabric, switches (alive, ready, last reconcile), hosts, links
    GET  /topology            nodes and edges by tier (what the dashboard draws)
    GET  /stats               the latest statistics snapshot (controller.stats)
    GET  /events              server-sent events: progress, stats, mode, link, ...
    GET  /routes[?switch=S]   entries read back from the switches, and whether they equal the intent
    GET  /counters/S/C?index=I&index=J   cells of switch S's counter C, read now
    POST /mode                {"mode": "pin|ecmp|eecmp"}: switch on the live fabric
    POST /link                {"a", "b", "index", "up"}: fail or restore a link
    POST /check               all host pairs: ping and one RoCEv2 transfer
    POST /exec                {"host", "argv", "timeout"}: run a command in a host
    GET  /trace?src&dst&...   a flow's path from the entries read back, confirmed by counters
    POST /run                 a collective on the hosts' agents (controller.jobs.RunRequest)
    GET  /jobs, /jobs/ID      the collectives run so far, and one's full result
    POST /shutdown            stop the fabric (what `aizone down` asks)

Errors answer with a status code and `{"error": "one line"}`: 400 bad
request (unknown switch, link, mode), 409 the fabric is not up, 422 a body
that does not validate (the field is named), 502 a switch refused or did
not answer. Requests over TCP to a non-loopback address need
`Authorization: Bearer <token>` (the daemon refuses such a bind without a
token); the Unix socket is root's only (mode 0600).

Names defined here: `create_app`, `ApiServer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import uvicorn
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from .errors import ControllerError, P4RuntimeError
from .jobs import RunRequest
from .web import mount_dashboard

if TYPE_CHECKING:
    from .daemon import Daemon

__all__ = ["ApiServer", "create_app"]

PREFIX = "/api/v1"
LOG = logging.getLogger("aizone.api")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModeRequest(_Body):
    mode: Literal["pin", "ecmp", "eecmp"]


class LinkRequest(_Body):
    a: str = Field(description="one end (switch or host name)")
    b: str = Field(description="the other end")
    index: int = Field(default=0, ge=0, description="which of several parallel links")
    up: bool
    silent: bool = Field(default=False, description="fail it without telling routing: "
                                                    "the probes must find it")


class ExecRequest(_Body):
    host: str
    argv: list[str] = Field(min_length=1)
    timeout: float = Field(default=30, gt=0, le=3600)


class AclRule(_Body):
    action: Literal["drop", "permit", "punt"] = "drop"
    priority: int = Field(default=500, ge=1, le=999, description="higher wins; 1000 is the "
                                                                  "controller's probe rule")
    match: dict[str, int | tuple[int, int]] = Field(
        description="P4Info field name -> value (every bit) or [value, mask]: ingress_port, "
                    "eth_dst, eth_type, ip_proto, l4_dst_port, bth_dst_qp, bth_psn")


class AclRequest(_Body):
    rules: list[AclRule] = Field(default_factory=list, description="the switch's whole set of "
                                                                   "rules ([] clears it)")


class CheckRequest(_Body):
    roce: bool = Field(default=True, description="also one RoCEv2 RDMA WRITE per pair")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": message})


def create_app(daemon: Daemon, *, token: str | None = None) -> FastAPI:
    """The FastAPI application serving `daemon` (see the module docstring)."""
    from .daemon import DaemonError

    app = FastAPI(title="aizone controller", version="1",
                  description="The local API of the aizone controller daemon.")

    @app.middleware("http")
    async def _auth(request: Request, call_next: Any) -> Any:
        client = request.scope.get("client")
        remote = client is not None and not _loopback(client[0])
        if token and remote and request.headers.get("authorization") != f"Bearer {token}":
            return _error(401, "this API needs `Authorization: Bearer <token>` from this address")
        return await call_next(request)

    @app.exception_handler(DaemonError)
    async def _daemon_error(_request: Request, exc: DaemonError) -> JSONResponse:
        return _error(409 if "not up" in str(exc) else 400, str(exc))

    @app.exception_handler(P4RuntimeError)
    async def _p4rt_error(_request: Request, exc: P4RuntimeError) -> JSONResponse:
        return _error(502, str(exc))

    @app.exception_handler(ControllerError)
    async def _ctl_error(_request: Request, exc: ControllerError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(Exception)
    async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
        LOG.exception("API request failed")
        return _error(500, f"internal error: {type(exc).__name__}: {exc} (see the daemon log)")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors():
            where = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
            parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
        return _error(422, "; ".join(parts) or "invalid request")

    @app.get(f"{PREFIX}/status", summary="the fabric and its switches, hosts and links")
    async def status() -> dict[str, Any]:
        return await daemon.status()

    @app.get(f"{PREFIX}/topology", summary="nodes and edges by tier, for drawing")
    async def topology() -> dict[str, Any]:
        return daemon.topology()

    @app.get(f"{PREFIX}/stats", summary="the latest statistics snapshot")
    async def stats() -> dict[str, Any]:
        return daemon.stats.latest if daemon.stats is not None else {}

    @app.get(f"{PREFIX}/events", summary="server-sent events (progress, stats, changes)")
    async def events(kinds: str | None = None, replay: bool = False) -> StreamingResponse:
        wanted = set(kinds.split(",")) if kinds else None
        return StreamingResponse(_sse(daemon, wanted, replay), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    @app.get(f"{PREFIX}/counters/{{switch}}/{{counter}}",
             summary="cells of a switch's indexed counter, read now")
    async def counters(switch: str, counter: str,
                       index: Annotated[list[int], Query(min_length=1)]) -> dict[str, Any]:
        return await daemon.counters(switch, counter, index)

    @app.get(f"{PREFIX}/routes", summary="entries read back from the switches")
    async def routes(switch: str | None = None) -> dict[str, Any]:
        return await daemon.routes(switch)

    @app.post(f"{PREFIX}/mode", summary="change the routing mode on the live fabric")
    async def mode(body: ModeRequest) -> dict[str, Any]:
        return await daemon.set_mode(body.mode)

    @app.get(f"{PREFIX}/acl", summary="the ACL rules people added, per switch")
    async def acl_list() -> dict[str, Any]:
        return daemon.acl()

    @app.put(f"{PREFIX}/acl/{{switch}}", summary="replace a switch's added ACL rules (drop, "
                                                 "permit, punt), written as a diff")
    async def acl_put(switch: str, body: AclRequest) -> dict[str, Any]:
        from .intent import acl_rule

        try:
            rules = [acl_rule(r.action, dict(r.match), r.priority) for r in body.rules]
        except ValueError as exc:
            raise DaemonError(str(exc)) from None
        return await daemon.set_acl(switch, rules)

    @app.post(f"{PREFIX}/link", summary="fail or restore a link")
    async def link(body: LinkRequest) -> dict[str, Any]:
        link_id = daemon.find_link(body.a, body.b, body.index)
        return await daemon.set_link(link_id, body.up, silent=body.silent)

    @app.post(f"{PREFIX}/check", summary="all host pairs: ping and one RoCEv2 transfer")
    async def check(body: CheckRequest | None = None) -> dict[str, Any]:
        return await daemon.check(roce=body.roce if body else True)

    @app.post(f"{PREFIX}/exec", summary="run a command inside a host's network namespace")
    async def exec_(body: ExecRequest) -> dict[str, Any]:
        return await daemon.exec(body.host, body.argv, body.timeout)

    @app.get(f"{PREFIX}/trace", summary="a flow's path: predicted from the entries, confirmed")
    async def trace(src: str, dst: str, sport: Annotated[int, Query(ge=0, le=65535)] = 49152,
                    dport: Annotated[int, Query(ge=0, le=65535)] = 4791,
                    qp: Annotated[int, Query(ge=0, lt=1 << 24)] = 17,
                    send: bool = True) -> dict[str, Any]:
        return await daemon.trace(src, dst, sport=sport, dport=dport, qp=qp, send=send)

    @app.post(f"{PREFIX}/run", summary="run a collective on the hosts' traffic agents")
    async def run(body: RunRequest) -> dict[str, Any]:
        return await daemon.run_job(body)

    @app.get(f"{PREFIX}/jobs", summary="the collectives run so far (latest 50)")
    async def jobs() -> list[dict[str, Any]]:
        return [{"id": j["id"], "pattern": j["pattern"], "ranks": len(j["ranks_nics"]),
                 "time_s": j["result"]["time_s"], "busbw_gbps": j["result"]["busbw_gbps"],
                 "mode": j["mode"]} for j in daemon.jobs.values()]

    @app.get(f"{PREFIX}/jobs/{{job_id}}", summary="one collective's full result")
    async def job(job_id: int) -> dict[str, Any]:
        got = daemon.jobs.get(job_id)
        if got is None:
            raise DaemonError(f"no job {job_id} (see GET {PREFIX}/jobs)")
        return got

    @app.post(f"{PREFIX}/shutdown", summary="stop the fabric and the daemon")
    async def shutdown() -> dict[str, Any]:
        return await daemon.shutdown()

    mount_dashboard(app)
    return app


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def _sse(daemon: Daemon, kinds: set[str] | None, replay: bool) -> AsyncIterator[bytes]:
    """The event stream: one `event:`/`data:` block per event, a comment every 15 s."""
    stream = cast(AsyncGenerator[Any, None], daemon.bus.subscribe(replay=replay, kinds=kinds))
    nxt = asyncio.ensure_future(anext(stream))
    try:
        while True:
            done, _ = await asyncio.wait({nxt}, timeout=15)
            if not done:
                yield b": keep-alive\n\n"
                continue
            event = nxt.result()
            yield (f"id: {event.seq}\nevent: {event.kind}\n"
                   f"data: {json.dumps(event.to_json(), default=str)}\n\n").encode()
            if event.kind == "down":
                return
            nxt = asyncio.ensure_future(anext(stream))
    finally:
        # A browser that leaves cancels us mid-wait: the pending read must end
        # before the generator can be closed.
        nxt.cancel()
        with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, Exception):
            await nxt
        await stream.aclose()


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the daemon decides when to stop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class ApiServer:
    """Serves `create_app(daemon)` on a Unix socket and a TCP address."""

    def __init__(self, daemon: Daemon, *, host: str, port: int, unix_path: Path,
                 token: str | None = None) -> None:
        if not _loopback(host) and not token:
            from .daemon import DaemonError

            raise DaemonError(f"the API would listen on {host}, which is not loopback: "
                              f"give --api-token to require a token")
        self.daemon = daemon
        self.host, self.port, self.unix_path, self.token = host, port, unix_path, token
        self.addresses: dict[str, str] = {}
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None

    def _sockets(self) -> list[socket.socket]:
        from .daemon import DaemonError

        tcp = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        port = self.port
        for candidate in range(self.port, self.port + 20):
            try:
                tcp.bind((self.host, candidate))
                port = candidate
                break
            except OSError:
                continue
        else:
            tcp.close()
            raise DaemonError(f"no free TCP port for the API in {self.host}:{self.port}.."
                              f"{self.port + 19}")
        unix = socket.socket(socket.AF_UNIX)
        self.unix_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.unix_path.unlink()
        unix.bind(str(self.unix_path))
        os.chmod(self.unix_path, 0o600)
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.addresses = {"url": f"http://{shown}:{port}/", "unix": str(self.unix_path)}
        return [tcp, unix]

    async def start(self) -> None:
        sockets = self._sockets()
        config = uvicorn.Config(create_app(self.daemon, token=self.token), log_level="warning",
                                lifespan="off", access_log=False)
        self._server = _Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=sockets), name="api")
        while not self._server.started:
            if self._task.done():
                await self._task  # raises what stopped it
                return
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            try:
                await asyncio.wait_for(self._task, 5)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        with contextlib.suppress(FileNotFoundError):
            self.unix_path.unlink()
