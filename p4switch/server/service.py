"""The P4Runtime gRPC service (p4.v1.P4Runtime) and the server that hosts it.

`P4RuntimeService` answers the six RPCs of P4Runtime v1 (spec v1.4):
Write, Read, SetForwardingPipelineConfig, GetForwardingPipelineConfig,
StreamChannel and Capabilities. Request-level errors become a gRPC status;
per-update/per-entity errors are packed as `p4.v1.Error`s into a
`google.rpc.Status` sent in the `grpc-status-details-bin` trailer, with the
top-level code UNKNOWN (spec §10.3, §11).

`P4RuntimeServer` puts the service on the wire with one of the transports of
`p4switch.server.transport` (gRPC C++ through the native extension, or
grpcio's thread-pool server); the service itself is synchronous, device work
under the runtime's lock. StreamChannel's responses come from a per-stream
thread-safe queue, filled by the stream's reader thread, the forwarding
thread, the digest engine and the idle scanner; packet-ins beyond a bound
are dropped, so a slow controller never stalls forwarding.

Names defined here: `P4RuntimeService`, `P4RuntimeServer`,
`P4RUNTIME_API_VERSION`, `Context`; `ServerError` and `TlsConfig` (from
`transport`) are exported here too.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

import grpc
from google.protobuf import any_pb2

from p4switch.pipeline.state import StateError
from p4switch.proto import p4r, p4r_grpc, rpc_status
from p4switch.server.arbitration import Arbiter, Controller
from p4switch.server.roles import RoleAccess
from p4switch.server.runtime import DeviceFactory, DeviceRuntime
from p4switch.server.stream import Transmit
from p4switch.server.transport import ServerError, TlsConfig, make_transport
from p4switch.translate import (
    FAILED_PRECONDITION,
    NOT_FOUND,
    PERMISSION_DENIED,
    UNIMPLEMENTED,
    UNKNOWN,
    P4RTError,
)

log = logging.getLogger("p4switch.server")

P4RUNTIME_API_VERSION = "1.4.1"

_CODES = {c.value[0]: c for c in grpc.StatusCode}


class Context(Protocol):
    """What the service uses of a call's context (grpc.ServicerContext or the native one)."""

    def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        """End the call with a status."""

    def set_trailing_metadata(self, metadata: Any) -> None:
        """Set the call's trailing metadata."""

    def add_callback(self, callback: Any) -> Any:
        """Run `callback` when the call ends."""


def _abort(context: Context, e: P4RTError) -> NoReturn:
    context.abort(_CODES.get(e.code, grpc.StatusCode.UNKNOWN), e.message)
    raise AssertionError("unreachable")  # context.abort raises


def _abort_batch(context: Context, results: list[P4RTError | None], what: str) -> NoReturn:
    """UNKNOWN with one p4.v1.Error per element of the batch, in order."""
    failed = sum(1 for r in results if r is not None)
    message = f"{what} failure: {failed} of {len(results)} failed"
    first = next(r for r in results if r is not None)
    if len(results) == 1:
        message = f"{what} failure: {first.message}"
    status = rpc_status.Status(code=UNKNOWN, message=message)
    ok = p4r.Error(canonical_code=0)
    for r in results:
        err = ok if r is None else p4r.Error(canonical_code=r.code, message=r.message)
        packed = any_pb2.Any()
        packed.Pack(err)
        status.details.append(packed)
    context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
    context.abort(grpc.StatusCode.UNKNOWN, message)
    raise AssertionError("unreachable")  # context.abort raises


_END = object()


@dataclass
class _Abort:
    error: P4RTError


class P4RuntimeService(p4r_grpc.P4RuntimeServicer):
    """p4.v1.P4Runtime for one device (see module docstring)."""

    def __init__(self, runtime: DeviceRuntime) -> None:
        self.runtime = runtime
        self.arbiter = Arbiter({runtime.device_id})
        runtime.stream.packet_in_sink = self._packet_in
        runtime.stream.digest_sink = self._digest
        runtime.stream.idle_sink = self._idle

    # -- helpers -------------------------------------------------------------

    def _check_device(self, device_id: int) -> None:
        if device_id != self.runtime.device_id:
            raise P4RTError(NOT_FOUND, f"unknown device id {device_id}")

    def _to_primaries(self, field: str, msg: Any, wants: Callable[[RoleAccess], bool]) -> None:
        """Send `msg` as StreamMessageResponse.<field> to each primary whose role wants it
        (built once; dropped for a stream whose queue is full)."""
        out = None
        for ctl, access in self.arbiter.primaries(self.runtime.device_id):
            if access is None or wants(access):
                out = out or p4r.StreamMessageResponse(**{field: msg})
                ctl.send(out, droppable=True)

    def _packet_in(self, msg: p4r.PacketIn) -> None:
        self._to_primaries("packet", msg, lambda access: access.wants_packet_in(msg.metadata))

    def _digest(self, msg: p4r.DigestList) -> None:
        self._to_primaries("digest", msg, lambda access: access.allows(msg.digest_id))

    def _idle(self, msg: p4r.IdleTimeoutNotification) -> None:
        table_id = msg.table_entry[0].table_id if msg.table_entry else 0
        self._to_primaries("idle_timeout_notification", msg, lambda access: access.allows(table_id))

    # -- unary RPCs ----------------------------------------------------------

    def Write(self, request: p4r.WriteRequest, context: Context) -> p4r.WriteResponse:
        """The Write RPC: the primary controller's updates, applied in order."""
        try:
            access = self.arbiter.check_primary(request.device_id, request.role, request.election_id,
                                                request.HasField("election_id"))
            self.runtime.state_for_writes()
            if request.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
                raise P4RTError(UNIMPLEMENTED, "only CONTINUE_ON_ERROR atomicity is supported")
            results = self.runtime.write(request.updates, access)
        except P4RTError as e:
            _abort(context, e)
        if any(r is not None for r in results):
            _abort_batch(context, results, "Write")
        return p4r.WriteResponse()

    def Read(self, request: p4r.ReadRequest, context: Context) -> Iterator[p4r.ReadResponse]:
        """The Read RPC: the requested entities, in chunks."""
        try:
            self._check_device(request.device_id)
            access = self.arbiter.read_access(request.device_id, request.role)
            chunks, results = self.runtime.read(request.entities, access)
        except P4RTError as e:
            _abort(context, e)
        yield from chunks
        if any(r is not None for r in results):
            _abort_batch(context, results, "Read")

    def SetForwardingPipelineConfig(self, request: p4r.SetForwardingPipelineConfigRequest,
                                    context: Context) -> p4r.SetForwardingPipelineConfigResponse:
        """The SetForwardingPipelineConfig RPC (primary controllers only)."""
        try:
            access = self.arbiter.check_primary(request.device_id, request.role, request.election_id,
                                                request.HasField("election_id"))
            if access is not None and not access.can_push_pipeline:
                raise P4RTError(PERMISSION_DENIED, f"role {request.role!r} may not push a pipeline")
            config = request.config if request.HasField("config") else None
            self.runtime.set_pipeline(request.action, config)
        except P4RTError as e:
            _abort(context, e)
        return p4r.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request: p4r.GetForwardingPipelineConfigRequest,
                                    context: Context) -> p4r.GetForwardingPipelineConfigResponse:
        """The GetForwardingPipelineConfig RPC."""
        try:
            self._check_device(request.device_id)
        except P4RTError as e:
            _abort(context, e)
        config = self.runtime.get_config(request.response_type)
        out = p4r.GetForwardingPipelineConfigResponse()
        if config is not None:
            out.config.CopyFrom(config)
        return out

    def Capabilities(self, request: p4r.CapabilitiesRequest,
                     context: Context) -> p4r.CapabilitiesResponse:
        """The Capabilities RPC: the P4Runtime API version served."""
        return p4r.CapabilitiesResponse(p4runtime_api_version=P4RUNTIME_API_VERSION)

    # -- stream --------------------------------------------------------------

    def StreamChannel(self, request_iterator: Iterator[p4r.StreamMessageRequest],
                      context: Context) -> Generator[p4r.StreamMessageResponse, None, None]:
        """The StreamChannel RPC: arbitration, packet-out and digest acks in; packet-in, digests, idle timeouts out."""
        me = Controller()
        live: list[Controller | None] = [None]
        # The stream ends when the RPC does (client gone, server stopping) ...
        context.add_callback(lambda: me.send(_END))
        # ... and the client's messages are handled on a thread of their own
        # while this one hands the queued responses to gRPC.
        threading.Thread(target=self._stream_reader, args=(request_iterator, me, live),
                         name="p4rt-stream", daemon=True).start()
        try:
            while True:
                item = me.get()
                if item is _END:
                    return
                if isinstance(item, _Abort):
                    _abort(context, item.error)
                yield item
        finally:
            if live[0] is not None:
                self.arbiter.remove(live[0])

    def _stream_reader(self, requests: Iterator[p4r.StreamMessageRequest], me: Controller,
                       live: list[Controller | None]) -> None:
        """Handle the client's stream messages, in order."""

        def stream_error(code: int, message: str, req: p4r.StreamMessageRequest) -> None:
            """Send the client a StreamError about `req`."""
            err = p4r.StreamError(canonical_code=code, message=message)
            which = req.WhichOneof("update")
            if which == "packet":
                err.packet_out.packet_out.CopyFrom(req.packet)
            elif which == "digest_ack":
                err.digest_list_ack.digest_list_ack.CopyFrom(req.digest_ack)
            else:
                err.other.other.CopyFrom(req.other)
            me.send(p4r.StreamMessageResponse(error=err), droppable=True)

        def is_primary() -> bool:
            """Whether this stream's controller is the primary now."""
            ctl = live[0]
            return ctl is not None and any(c is ctl for c, _ in self.arbiter.primaries(self.runtime.device_id))

        try:
            for req in requests:
                which = req.WhichOneof("update")
                try:
                    if which == "arbitration":
                        live[0] = self.arbiter.update(live[0], req.arbitration, me)
                    elif which == "packet":
                        if not is_primary():
                            raise P4RTError(PERMISSION_DENIED, "only the primary controller may send packets")
                        self.runtime.stream.packet_out(req.packet)
                    elif which == "digest_ack":
                        if not is_primary():
                            raise P4RTError(PERMISSION_DENIED, "only the primary controller may ack digests")
                        self.runtime.stream.digest_ack(req.digest_ack)
                    elif which == "other":
                        raise P4RTError(UNIMPLEMENTED, "no architecture-specific stream messages")
                    else:
                        raise P4RTError(FAILED_PRECONDITION, "empty stream message")
                except P4RTError as e:
                    if which == "arbitration":
                        me.send(_Abort(e))
                        return
                    stream_error(e.code, e.message, req)
                except StateError as e:
                    stream_error(int(e.code), e.message, req)
        except Exception:  # the client went away, or the RPC was cancelled
            pass
        me.send(_END)


class P4RuntimeServer:
    """A running P4Runtime gRPC server for one device.

    `factory(program, transmit)` builds the Device for each committed program;
    `transmit(port, frame)` sends the Device's output to the ports. The
    constructor binds the address (`port` is the bound port) and serves;
    `transport` picks how (see `p4switch.server.transport`).
    """

    def __init__(self, *, device_id: int = 0, factory: DeviceFactory | None = None,
                 address: str = "127.0.0.1:9559", transmit: Transmit | None = None,
                 cpu_port: int | None = None, tls: TlsConfig | None = None,
                 transport: str | None = None) -> None:
        self.runtime = DeviceRuntime(device_id, factory, transmit=transmit, cpu_port=cpu_port)
        self.service = P4RuntimeService(self.runtime)
        self.address = address
        _check_bind(address)
        self._transport = make_transport(self.service, address, tls, transport)
        self.transport = type(self._transport).__name__
        self.port = self._transport.port
        self._stopped = threading.Event()
        self._stop_lock = threading.Lock()

    def start(self) -> P4RuntimeServer:
        """Start serving (the transport already listens); returns self."""
        log.info("P4Runtime server listening on %s (%s)", self.address, self.transport)
        return self

    def stop(self, grace: float | None = 0.5) -> None:
        """Stop serving and close the device (once; later calls return at once)."""
        with self._stop_lock:  # one stop at a time; the later ones find it done
            if self._stopped.is_set():
                return
            try:
                self._transport.stop(grace or 0.0)
            finally:
                self._stopped.set()
                self.runtime.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server is stopped (True) or `timeout` passed (False)."""
        return self._stopped.wait(timeout)

    def process(self, port: int, data: bytes) -> None:
        """Hand a received frame to the running pipeline (the port loop's sink)."""
        self.runtime.stream.process(port, data)

    def process_many(self, port: int, frames: list[bytes]) -> None:
        """Hand frames received on a port in one batch to the running pipeline, in order."""
        self.runtime.stream.process_many(port, frames)


def _check_bind(address: str) -> None:
    """Fail with the OS's reason (gRPC only says it could not bind)."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    if not port.isdigit() or int(port) == 0:
        return
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except OSError as e:
        raise ServerError(f"cannot listen on {address}: {e.strerror or e}") from None
    family, _, _, _, sockaddr = infos[0]
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(sockaddr)
    except OSError as e:
        raise ServerError(f"cannot listen on {address}: {e.strerror or e}") from None
    finally:
        s.close()


__all__ = ["P4RuntimeService", "P4RuntimeServer", "TlsConfig", "P4RUNTIME_API_VERSION",
           "ServerError", "Context"]
