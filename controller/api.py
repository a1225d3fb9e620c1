"""The daemon's local API: HTTP/JSON (FastAPI) on a Unix socket and on loopback TCP.

Everything `aizone` shows and does goes through here, so the CLI, the
dashboard and any other program see one source of truth. The schema is
FastAPI's OpenAPI document (`GET /openapi.json`; there is no `/docs` page,
whose scripts would come from a CDN); `docs/api.md` walks through it.
Every path is under `/api/v1`:

    GET  /status              fabric, switches (alive, ready, last reconcile), hosts, links
    GET  /topology            nodes and edges by tier (what the dashboard draws)
    GET  /stats               the latest statistics snapshot (controller.stats)
    GET  /events              server-sent events: progress, stats, mode, link, ...
    GET  /routes[?switch=S]   entries read back from the switches, and whether they equal the intent
    GET  /routes/history/S[?limit=N]   the P4Runtime writes sent to S, with time and reason
    GET  /counters/S/C?index=I&index=J   cells of switch S's counter C, read now
    POST /mode                {"mode": "pin|ecmp|eecmp"}: switch on the live fabric
    GET  /acl                 the ACL rules people added, per switch
    PUT  /acl/S               {"rules": [...]}: replace switch S's added ACL rules
    POST /link                {"a", "b", "index", "up"}: fail or restore a link
    POST /check               all host pairs: ping and one RoCEv2 transfer
    POST /exec                {"host", "argv", "timeout"}: run a command in a host (Unix socket only)
    GET  /capture?target=T&seconds=S[&count&snaplen&filter]   pcap of a link, port or NIC
    GET  /trace?src&dst&...   a flow's path predicted from the entries read back
                              (or ?job=ID&connection=r0>r1: a job's connection)
    POST /trace               {"src", "dst", ...}: the same, confirmed by sending the flow
    POST /run                 a collective on the hosts' agents (controller.jobs.RunRequest)
    GET  /jobs, /jobs/ID      the collectives run so far, and one's full result
    POST /shutdown            stop the fabric (what `aizone down` asks)

and, for a Prometheus server (with the token as a bearer token over TCP),
`GET /metrics`: the fabric in the exposition format (`controller.metrics`).

Errors answer with a status code and `{"error": "one line"}`: 400 bad
request (unknown switch, link, mode), 401 no token (TCP), 403 a Host,
Origin or route this transport does not serve, 409 the fabric is not up,
413 a body over 1 MiB, 422 a body that does not validate (the field is
named), 429 too many of that operation at once, 502 a switch refused or
did not answer.

Two transports, two applications (`create_app(daemon, tcp=...)`): the Unix
socket (`<state dir>/api.sock`, mode 0600, root's alone) serves every
route; TCP (127.0.0.1:8400 unless told otherwise) serves the same routes
but `/exec` behind `controller.access.AccessGuard` (the fabric's token,
the Host, the page's Origin). Running commands in hosts is never offered
over TCP. Both cap bodies (1 MiB), event streams, concurrent execs, checks
and runs, and connections.

Names defined here: `create_app`, `ApiServer`, `Limits`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import uvicorn
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from . import failures, operations
from .access import AccessGuard, AccessPolicy, BodyCap
from .errors import ControllerError, DaemonError, P4RuntimeError
from .jobs import RunRequest
from .metrics import CONTENT_TYPE as METRICS_TYPE
from .responses import (
    AclAnswer,
    AclRuleView,
    CheckAnswer,
    CountersAnswer,
    ExecAnswer,
    HistoryAnswer,
    JobSummary,
    LinkAnswer,
    ModeAnswer,
    RoutesAnswer,
    RunAnswer,
    ShutdownAnswer,
    StatsAnswer,
    StatusAnswer,
    TopologyAnswer,
    TraceAnswer,
)
from .web import mount_dashboard

if TYPE_CHECKING:
    from .daemon import Daemon

__all__ = ["ApiServer", "Limits", "create_app"]

PREFIX = "/api/v1"
LOG = logging.getLogger("aizone.api")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModeRequest(_Body):
    """The body of `POST /mode`: the routing mode to switch the live fabric to."""

    mode: Literal["pin", "ecmp", "eecmp"]


class LinkRequest(_Body):
    """The body of `POST /link`: the link between `a` and `b` to fail or restore (`up`)."""

    a: str = Field(description="one end (switch or host name)")
    b: str = Field(description="the other end")
    index: int = Field(default=0, ge=0, description="which of several parallel links")
    up: bool
    silent: bool = Field(default=False, description="fail it without telling routing: "
                                                    "the probes must find it")


class ExecRequest(_Body):
    """The body of `POST /exec`: a command to run in a host, with its timeout in seconds."""

    host: str
    argv: list[str] = Field(min_length=1)
    timeout: float = Field(default=30, gt=0, le=600)


class TraceRequest(_Body):
    """The body of `POST /trace`: the flow to predict and send (module `controller.trace`).

    SRC -> DST's connection, or a job's; its UDP source port and destination
    QP are the shared allocation's unless `sport`/`qp` are given.
    """

    src: str | None = Field(default=None, description="source host or NIC (without a job)")
    dst: str | None = Field(default=None, description="destination host or NIC (without a job)")
    job: int | None = Field(default=None, description="a job the daemon ran (GET /jobs): trace "
                                                      "one of its connections")
    connection: str | None = Field(default=None, description='the job\'s connection, "r<s>>r<d>" '
                                                             "(default its first)")
    qp_index: int = Field(default=0, ge=0, lt=255, description="which QP of the connection")
    qps: int = Field(default=1, ge=1, le=255, description="QPs of SRC -> DST's connection")
    sport_per_qp: bool = Field(default=False, description="SRC -> DST: one source port per QP")
    sport: int | None = Field(default=None, ge=0, le=65535,
                              description="UDP source port (default: the allocation's)")
    dport: int = Field(default=4791, ge=0, le=65535)
    qp: int | None = Field(default=None, ge=0, lt=1 << 24,
                           description="BTH destination QP (default: the allocation's)")


@dataclass(frozen=True, kw_only=True)
class Limits:
    """How much of each costly thing the API does at once (a request past one: 429/503)."""

    streams: int = 32
    """Event streams (`GET /events`) open at once, over both transports."""
    execs: int = 4
    """Commands running in hosts at once (`POST /exec`)."""
    exec_output: int = 1 << 20
    """Bytes kept of each of a command's stdout and stderr; the rest is counted, not kept."""
    checks: int = 1
    """All-pairs checks at once (`POST /check`)."""
    captures: int = 4
    """Packet captures at once (`GET /capture`)."""
    runs: int = 4
    """Collectives running or waiting for the fabric at once (`POST /run`)."""
    connections: int = 256
    """Connections per transport; past that uvicorn answers 503."""


class _Slots:
    """A counter of operations in progress; `take` fails fast instead of queueing."""

    def __init__(self, what: str, limit: int) -> None:
        self.what, self.limit, self.busy = what, limit, 0

    def check(self) -> None:
        """Raise `_Busy` when every slot is taken (before starting what would take one)."""
        if self.busy >= self.limit:
            raise _Busy(f"{self.limit} {self.what} already in progress: try again when one ends")

    def acquire(self) -> None:
        """Take one slot, to be given back by `release`; raises `_Busy` when all are taken."""
        self.check()
        self.busy += 1

    def release(self) -> None:
        """Give back a slot `acquire` took."""
        self.busy -= 1

    @contextlib.contextmanager
    def take(self) -> Iterator[None]:
        """Hold one slot for the `with` block; raises `_Busy` when all are taken."""
        self.acquire()
        try:
            yield
        finally:
            self.release()


class _Busy(Exception):
    pass


class AclRule(_Body):
    """One rule in `PUT /acl/{switch}`: what to do with the packets `match` selects."""

    action: Literal["drop", "permit", "punt"] = "drop"
    priority: int = Field(default=500, ge=1, le=999, description="higher wins; 1000 is the "
                                                                  "controller's probe rule")
    match: dict[str, int | tuple[int, int]] = Field(
        description="P4Info field name -> value (every bit) or [value, mask]: ingress_port, "
                    "eth_dst, eth_type, ip_proto, l4_dst_port, bth_dst_qp, bth_psn")


class AclRequest(_Body):
    """The body of `PUT /acl/{switch}`: the switch's whole set of added ACL rules."""

    rules: list[AclRule] = Field(default_factory=list, description="the switch's whole set of "
                                                                   "rules ([] clears it)")


class CheckRequest(_Body):
    """The optional body of `POST /check`: whether a RoCEv2 transfer follows each ping."""

    roce: bool = Field(default=True, description="also one RoCEv2 RDMA WRITE per pair")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": message})


def create_app(daemon: Daemon, *, tcp: bool = False, limits: Limits | None = None,
               slots: dict[str, _Slots] | None = None) -> FastAPI:
    """The FastAPI application serving `daemon` on one transport (see the module docstring).

    `tcp=True` leaves `/exec` out (it answers 403); the caller wraps the app in
    `AccessGuard`. `slots` are shared between the transports' apps so a cap
    counts both.
    """
    limits = limits or Limits()
    slots = slots if slots is not None else _new_slots(limits)
    # No /docs or /redoc: FastAPI's pages load their scripts from a CDN, which must not
    # run inside the API's origin. The schema itself is at /openapi.json.
    app = FastAPI(title="aizone controller", version="1", docs_url=None, redoc_url=None,
                  description="The local API of the aizone controller daemon.")

    @app.exception_handler(_Busy)
    async def _busy(_request: Request, exc: _Busy) -> JSONResponse:
        return _error(429, str(exc))

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

    @app.get(f"{PREFIX}/status", summary="the fabric and its switches, hosts and links",
             response_model=StatusAnswer)
    async def status() -> dict[str, Any]:
        return await operations.status(daemon)

    @app.get(f"{PREFIX}/topology", summary="nodes and edges by tier, for drawing",
             response_model=TopologyAnswer)
    async def topology() -> dict[str, Any]:
        return operations.topology(daemon)

    @app.get(f"{PREFIX}/stats", summary="the latest statistics snapshot",
             response_model=StatsAnswer)
    async def stats() -> dict[str, Any]:
        return daemon.stats.latest if daemon.stats is not None else {}

    @app.get(f"{PREFIX}/capture", summary="packets of a link, switch port or host NIC, as pcap",
             response_class=StreamingResponse, response_model=None,
             responses={200: {"content": {"application/vnd.tcpdump.pcap": {}},
                              "description": "a pcap stream (tcpdump's)"}})
    async def capture(target: str, seconds: Annotated[float, Query(gt=0)] = 10.0,
                      count: Annotated[int | None, Query(ge=1)] = None,
                      snaplen: Annotated[int | None, Query(ge=64, le=65535)] = None,
                      filter: str | None = None) -> Any:  # noqa: A002 - tcpdump's word
        # The slot is taken now and given back when tcpdump ends (at its seconds at the
        # latest), whether the body is read to the end, cut short, or never read.
        slot = slots["captures"]
        slot.acquire()
        try:
            point, chunks = await operations.capture(daemon, target, seconds=seconds,
                                                     count=count, snaplen=snaplen, bpf=filter,
                                                     on_end=slot.release)
        except BaseException:
            slot.release()
            raise

        async def body() -> AsyncIterator[bytes]:
            """The pcap chunks until tcpdump ends."""
            try:
                async for chunk in chunks:
                    yield chunk
            finally:
                await chunks.aclose()  # tcpdump ends with the request (or the client)

        name = "".join(c if c.isalnum() or c in "-_" else "_" for c in target)
        return StreamingResponse(body(), media_type="application/vnd.tcpdump.pcap",
                                 headers={"Content-Disposition":
                                          f'attachment; filename="{name}.pcap"',
                                          "X-Aizone-Capture": point.what})

    @app.get("/metrics", summary="the fabric in the Prometheus exposition format",
             response_class=Response, response_model=None,
             responses={200: {"content": {"text/plain": {}},
                              "description": "Prometheus text exposition format 0.0.4"}})
    async def metrics() -> Response:
        return Response(content=operations.metrics(daemon), media_type=METRICS_TYPE)

    @app.get(f"{PREFIX}/events", summary="server-sent events (progress, stats, changes)",
             response_class=StreamingResponse, response_model=None,
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "server-sent events, one JSON object each"}})
    async def events(kinds: str | None = None, replay: bool = False) -> Any:
        wanted = set(kinds.split(",")) if kinds else None
        streams = slots["streams"]
        if streams.busy >= streams.limit:
            return _error(503, f"{streams.limit} event streams are already open: close one "
                               f"(a dashboard tab) and try again")
        return StreamingResponse(_sse(daemon, wanted, replay, streams),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    @app.get(f"{PREFIX}/counters/{{switch}}/{{counter}}",
             summary="cells of a switch's indexed counter, read now",
             response_model=CountersAnswer)
    async def counters(switch: str, counter: str,
                       index: Annotated[list[int], Query(min_length=1)]) -> dict[str, Any]:
        return await operations.counters(daemon, switch, counter, index)

    @app.get(f"{PREFIX}/routes/history/{{switch}}",
             summary="the P4Runtime writes the controller sent a switch, with their reasons",
             response_model=HistoryAnswer)
    async def history(switch: str, limit: Annotated[int | None, Query(ge=1)] = None
                      ) -> dict[str, Any]:
        return operations.history(daemon, switch, limit)

    @app.get(f"{PREFIX}/routes", summary="entries read back from the switches",
             response_model=RoutesAnswer)
    async def routes(switch: str | None = None) -> dict[str, Any]:
        return await operations.routes(daemon, switch)

    @app.post(f"{PREFIX}/mode", summary="change the routing mode on the live fabric",
             response_model=ModeAnswer)
    async def mode(body: ModeRequest) -> dict[str, Any]:
        return await operations.set_mode(daemon, body.mode)

    @app.get(f"{PREFIX}/acl", summary="the ACL rules people added, per switch",
             response_model=dict[str, list[AclRuleView]])
    async def acl_list() -> dict[str, Any]:
        return operations.acl(daemon)

    @app.put(f"{PREFIX}/acl/{{switch}}", summary="replace a switch's added ACL rules (drop, "
                                                 "permit, punt), written as a diff",
             response_model=AclAnswer)
    async def acl_put(switch: str, body: AclRequest) -> dict[str, Any]:
        from .intent import acl_rule

        try:
            rules = [acl_rule(r.action, dict(r.match), r.priority) for r in body.rules]
        except ValueError as exc:
            raise DaemonError(str(exc)) from None
        return await operations.set_acl(daemon, switch, rules)

    @app.post(f"{PREFIX}/link", summary="fail or restore a link",
             response_model=LinkAnswer)
    async def link(body: LinkRequest) -> dict[str, Any]:
        link_id = failures.find_link(daemon, body.a, body.b, body.index)
        return await failures.set_link(daemon, link_id, body.up, silent=body.silent)

    @app.post(f"{PREFIX}/check", summary="all host pairs: ping and one RoCEv2 transfer",
             response_model=CheckAnswer)
    async def check(body: CheckRequest | None = None) -> dict[str, Any]:
        with slots["checks"].take():
            return await operations.check(daemon, roce=body.roce if body else True)

    if tcp:
        @app.post(f"{PREFIX}/exec", summary="not over TCP: use the Unix socket (`aizone exec`)",
                  response_model=None)
        async def exec_refused() -> JSONResponse:
            return _error(403, "running commands in hosts is offered on the Unix socket only "
                               "(root's `aizone exec`), never over TCP")
    else:
        @app.post(f"{PREFIX}/exec", summary="run a command inside a host's network namespace",
                  response_model=ExecAnswer)
        async def exec_(body: ExecRequest) -> dict[str, Any]:
            with slots["execs"].take():
                return await operations.exec_in_host(daemon, body.host, body.argv,
                                                     body.timeout, limit=limits.exec_output)

    @app.get(f"{PREFIX}/trace", summary="a flow's path, predicted from the entries read back",
             response_model=TraceAnswer)
    async def trace(src: str | None = None, dst: str | None = None, job: int | None = None,
                    connection: str | None = None,
                    qp_index: Annotated[int, Query(ge=0, lt=255)] = 0,
                    qps: Annotated[int, Query(ge=1, le=255)] = 1, sport_per_qp: bool = False,
                    sport: Annotated[int | None, Query(ge=0, le=65535)] = None,
                    dport: Annotated[int, Query(ge=0, le=65535)] = 4791,
                    qp: Annotated[int | None, Query(ge=0, lt=1 << 24)] = None) -> dict[str, Any]:
        return await operations.trace(daemon, send=False, dport=dport, src=src, dst=dst,
                                      job=job, connection=connection, qp_index=qp_index,
                                      qps=qps, sport_per_qp=sport_per_qp, sport=sport, qp=qp)

    @app.post(f"{PREFIX}/trace", summary="a flow's path, predicted and confirmed by sending it",
             response_model=TraceAnswer)
    async def trace_send(body: TraceRequest) -> dict[str, Any]:
        return await operations.trace(daemon, send=True, **body.model_dump())

    @app.post(f"{PREFIX}/run", summary="run a collective on the hosts' traffic agents",
             response_model=RunAnswer)
    async def run(body: RunRequest) -> dict[str, Any]:
        with slots["runs"].take():
            return await operations.run_job(daemon, body)

    @app.get(f"{PREFIX}/jobs", summary="the collectives run so far (latest 50)",
             response_model=list[JobSummary])
    async def jobs() -> list[dict[str, Any]]:
        return [{"id": j["id"], "pattern": j["pattern"], "ranks": len(j["ranks_nics"]),
                 "time_s": j["result"]["time_s"], "busbw_gbps": j["result"]["busbw_gbps"],
                 "mode": j["mode"]} for j in daemon.jobs.values()]

    @app.get(f"{PREFIX}/jobs/{{job_id}}", summary="one collective's full result",
             response_model=RunAnswer)
    async def job(job_id: int) -> dict[str, Any]:
        got = daemon.jobs.get(job_id)
        if got is None:
            raise DaemonError(f"no job {job_id} (see GET {PREFIX}/jobs)")
        return got

    @app.post(f"{PREFIX}/shutdown", summary="stop the fabric and the daemon",
             response_model=ShutdownAnswer)
    async def shutdown() -> dict[str, Any]:
        return await operations.shutdown(daemon)

    mount_dashboard(app)
    return app


def _new_slots(limits: Limits) -> dict[str, _Slots]:
    return {"streams": _Slots("event streams", limits.streams),
            "execs": _Slots("commands in hosts", limits.execs),
            "checks": _Slots("checks", limits.checks),
            "captures": _Slots("captures", limits.captures),
            "runs": _Slots("collectives", limits.runs)}


async def _sse(daemon: Daemon, kinds: set[str] | None, replay: bool,
               slots: _Slots) -> AsyncIterator[bytes]:
    """The event stream: one `event:`/`data:` block per event, a comment every 15 s."""
    with slots.take():
        async for block in _sse_blocks(daemon, kinds, replay):
            yield block


async def _sse_blocks(daemon: Daemon, kinds: set[str] | None,
                      replay: bool) -> AsyncIterator[bytes]:
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
        """Install no signal handlers (uvicorn's would stop the server on SIGINT/SIGTERM)."""
        yield


class ApiServer:
    """Serves the daemon on its Unix socket (every route) and on TCP (guarded, no `/exec`).

    The TCP port is the one asked for or nothing: when it is taken, `start`
    fails with a message naming it (a page bookmarked at 8400 must never
    reach whoever took 8400 while the daemon moved on to 8401).
    """

    def __init__(self, daemon: Daemon, *, host: str, port: int, unix_path: Path,
                 token: str, extra_hosts: tuple[str, ...] = (),
                 limits: Limits | None = None) -> None:
        if not token:
            raise DaemonError("the API needs the fabric's token (controller.access.new_token)")
        self.daemon = daemon
        self.host, self.port, self.unix_path = host, port, unix_path
        self.policy = AccessPolicy(token=token, host=host, port=port, extra_hosts=extra_hosts)
        self.limits = limits or Limits()
        self.addresses: dict[str, str] = {}
        self._servers: list[_Server] = []
        self._tasks: list[asyncio.Task[None]] = []

    def _tcp_socket(self) -> socket.socket:
        tcp = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by every accepted connection: a response's head and body leave at once
        # instead of the body waiting out the client's delayed ACK (~40 ms a request).
        tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            tcp.bind((self.host, self.port))
        except OSError as exc:
            tcp.close()
            raise DaemonError(f"the API cannot listen on {self.host}:{self.port}: "
                              f"{exc.strerror} (another program holds it?): free it, or "
                              f"choose another with `aizone up --api-port N`") from None
        return tcp

    def _unix_socket(self) -> socket.socket:
        unix = socket.socket(socket.AF_UNIX)
        self.unix_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(FileNotFoundError):
            self.unix_path.unlink()
        old = os.umask(0o177)  # created 0600: no moment at which another user may connect
        try:
            unix.bind(str(self.unix_path))
        finally:
            os.umask(old)
        os.chmod(self.unix_path, 0o600)
        return unix

    async def start(self) -> None:
        """Bind both sockets and serve them; returns once both servers have started.

        Raises `DaemonError` when the TCP port cannot be bound, or what stopped
        a server that ended while starting.
        """
        tcp = self._tcp_socket()
        try:
            unix = self._unix_socket()
        except OSError:
            tcp.close()
            raise
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.addresses = {"url": f"http://{shown}:{self.port}/", "unix": str(self.unix_path)}
        slots = _new_slots(self.limits)
        apps: list[tuple[Any, socket.socket]] = [
            (BodyCap(create_app(self.daemon, limits=self.limits, slots=slots)), unix),
            (AccessGuard(BodyCap(create_app(self.daemon, tcp=True, limits=self.limits,
                                            slots=slots)), self.policy), tcp)]
        for app, sock in apps:
            config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                                    limit_concurrency=self.limits.connections,
                                    timeout_keep_alive=5)
            server = _Server(config)
            self._servers.append(server)
            self._tasks.append(asyncio.create_task(server.serve(sockets=[sock]), name="api"))
        while not all(server.started for server in self._servers):
            for task in self._tasks:
                if task.done():
                    await task  # raises what stopped it
                    return
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Ask both servers to exit (each cancelled after 5 s) and remove the Unix socket."""
        for server in self._servers:
            server.should_exit = True
        for task in self._tasks:
            try:
                await asyncio.wait_for(task, 5)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
        with contextlib.suppress(FileNotFoundError):
            self.unix_path.unlink()
