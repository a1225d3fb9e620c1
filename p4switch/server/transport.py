"""How the P4Runtime service is put on the wire: two interchangeable transports.

`NativeTransport` (the default) serves the service with gRPC C++ through the
`p4switch.server._native` extension (native.cc), built at install time
against the system's libgrpc++: every call reaches Python once, as bytes, on
a gRPC thread, and small calls are answered right there. `GrpcioTransport`
uses grpcio's thread-pool server; it is what runs when the extension was not
built (no libgrpc++ on the machine) or when `P4SWITCH_GRPC=grpcio` asks for it.
Both serve the same `P4RuntimeService` object and give clients the same
statuses, trailers and streams; the native one answers a one-update Write in
well under half the server CPU time (see bench/p4rt_write.py).

Names defined here: `Transport`, `NativeTransport`, `GrpcioTransport`,
`make_transport`, `native_available`, `ServerError`, `TlsConfig`,
`INLINE_UPDATES`, `MAX_RPCS`, `MAX_MESSAGE`, `STREAM_IN_HIGH`, `STREAM_IN_LOW`.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import ssl
import threading
import weakref
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

import grpc
from google.protobuf.message import DecodeError, Message

from p4switch.proto import p4r, p4r_grpc

if TYPE_CHECKING:
    from p4switch.server.service import P4RuntimeService

try:
    from p4switch.server import _native  # type: ignore[attr-defined]
    _NATIVE_ERROR = ""
except ImportError as e:  # not built: no libgrpc++ (or no compiler) at install time
    _native = None
    _NATIVE_ERROR = str(e)

log = logging.getLogger("p4switch.server")

# Writes of at most this many updates are answered on the gRPC thread that
# received them (about 1.5 ms of work at most); bigger ones, reads and
# pipeline configs go to a small pool so that gRPC's threads stay free.
INLINE_UPDATES = 128

# RPCs grpcio's server runs at once (each holds a pool thread while it runs;
# an open StreamChannel holds one for its whole life).
MAX_RPCS = 64

MAX_MESSAGE = 256 << 20

_SERVICE = "/p4.v1.P4Runtime/"
_OK, _UNKNOWN, _INVALID_ARGUMENT, _UNIMPLEMENTED = 0, 2, 3, 12


def native_available() -> str:
    """'' when the native transport can run, else why not."""
    return _NATIVE_ERROR


class ServerError(Exception):
    """The server cannot start (address in use, bad TLS files ...)."""


@dataclass(frozen=True, kw_only=True)
class TlsConfig:
    """PEM file paths; with `ca` and `client_auth` the server requires client certificates."""

    cert: str
    key: str
    ca: str = ""
    client_auth: bool = False


class Transport(Protocol):
    """A running P4Runtime server: the TCP port it listens on, and how to stop it."""

    port: int

    def stop(self, grace: float) -> None:
        """Stop serving, giving calls in progress up to `grace` seconds to finish."""


def _read_tls(tls: TlsConfig) -> tuple[bytes, bytes, bytes | None]:
    """(key, cert, ca) PEM bytes; ServerError names the file that cannot be read."""

    def read(path: str) -> bytes:
        """The bytes of one PEM file (ServerError when it cannot be read)."""
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as e:
            raise ServerError(f"TLS: {e}") from None

    key, cert, ca = read(tls.key), read(tls.cert), read(tls.ca) if tls.ca else None
    # gRPC would accept unusable files here and fail every handshake later: check them now.
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(tls.cert, tls.key)
    except (ssl.SSLError, ValueError) as e:
        raise ServerError(f"TLS: {tls.cert} / {tls.key}: not a usable certificate and key ({e})") from None
    if tls.ca:
        try:
            ctx.load_verify_locations(cafile=tls.ca)
        except (ssl.SSLError, ValueError) as e:
            raise ServerError(f"TLS: {tls.ca}: not a usable CA certificate ({e})") from None
    elif tls.client_auth:
        raise ServerError("TLS: client authentication needs a CA certificate (--grpc-server-cacert)")
    return key, cert, ca


# -- grpcio -------------------------------------------------------------------

class GrpcioTransport:
    """grpcio's thread-pool server."""

    def __init__(self, service: P4RuntimeService, address: str, tls: TlsConfig | None) -> None:
        creds = None
        if tls is not None:
            key, cert, ca = _read_tls(tls)
            creds = grpc.ssl_server_credentials([(key, cert)], root_certificates=ca,
                                                require_client_auth=tls.client_auth)
        self._executor = futures.ThreadPoolExecutor(max_workers=MAX_RPCS, thread_name_prefix="p4rt")
        self._server = grpc.server(
            self._executor,
            options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                     ("grpc.max_send_message_length", MAX_MESSAGE),
                     ("grpc.so_reuseport", 0)],
            maximum_concurrent_rpcs=MAX_RPCS,
        )
        p4r_grpc.add_P4RuntimeServicer_to_server(service, self._server)
        try:
            port = (self._server.add_insecure_port(address) if creds is None
                    else self._server.add_secure_port(address, creds))
        except RuntimeError as e:
            raise ServerError(f"cannot listen on {address}: {e}") from None
        if not port:
            raise ServerError(f"cannot listen on {address} (address in use?)")
        self.port = port
        self._server.start()

    def stop(self, grace: float) -> None:
        """Stop the server (calls in progress get `grace` seconds) and its thread pool."""
        self._server.stop(grace).wait(grace + 5)
        self._executor.shutdown(wait=False, cancel_futures=True)


# -- native -------------------------------------------------------------------

class _Aborted(Exception):
    def __init__(self, code: int, message: str, details: bytes) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details


@dataclass(eq=False)
class _Context:
    """What `P4RuntimeService` uses of a grpc.ServicerContext, for a native call."""

    details: bytes = b""
    callbacks: list[Callable[[], None]] = field(default_factory=list)

    def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        """End the call with `code` and `details` (raises, as grpc's abort does)."""
        raise _Aborted(code.value[0], details, self.details)

    def set_trailing_metadata(self, metadata: Any) -> None:
        """Keep the binary status details the service sets, to send with the status."""
        for key, value in metadata:
            if key == "grpc-status-details-bin":
                self.details = value

    def add_callback(self, callback: Callable[[], None]) -> bool:
        """Run `callback` when the call ends (always accepted)."""
        self.callbacks.append(callback)
        return True

    def run_callbacks(self) -> None:
        """Run the callbacks added so far, once each."""
        callbacks, self.callbacks = self.callbacks, []
        for cb in callbacks:
            cb()


def _finish(call: Any, code: int, message: str, details: bytes = b"", responses: Any = ()) -> None:
    """End a native call; never raises (a call left unfinished would hang its client)."""
    try:
        call.finish(code, message.encode("utf-8", "backslashreplace").decode("utf-8"), details, responses)
    except Exception:
        log.exception("P4Runtime %s: cannot send the answer", call.method)
        try:
            call.finish(_UNKNOWN, "p4switch: internal error while answering")
        except Exception:
            log.exception("P4Runtime %s: cannot end the call", call.method)


def _finish_error(call: Any, e: BaseException, responses: Any = ()) -> None:
    if isinstance(e, _Aborted):
        _finish(call, e.code, e.message, e.details, responses)
    else:
        log.error("P4Runtime %s failed", call.method, exc_info=e)
        _finish(call, _UNKNOWN, f"p4switch: internal error in {call.method}: {e}")


class _Unary:
    """A unary call, or Read (which answers with all its responses at once)."""

    __slots__ = ("transport", "call", "name", "request")

    def __init__(self, transport: NativeTransport, call: Any, name: str, request: Message) -> None:
        self.transport, self.call, self.name, self.request = transport, call, name, request

    def run(self) -> None:
        """Run the call on the service and finish it with the responses or the error."""
        fn = getattr(self.transport.service, self.name)
        ctx = _Context()
        responses: list[bytes] = []
        try:
            if self.name == "Read":
                for chunk in fn(self.request, ctx):
                    responses.append(chunk.SerializeToString())
            else:
                responses.append(fn(self.request, ctx).SerializeToString())
        except BaseException as e:  # noqa: BLE001 - every failure becomes the call's status
            _finish_error(self.call, e, responses)
            return
        _finish(self.call, _OK, "", b"", responses)


_CLOSED = object()

# Stream messages queued for the service's reader before the transport stops
# reading from the client (and resumes below the low mark): a client that
# floods packet-outs is pushed back by gRPC's flow control instead of
# growing the server's memory.
STREAM_IN_HIGH = 256
STREAM_IN_LOW = 64


class _Stream:
    """StreamChannel: requests queued for the service's reader, responses written by a thread of its own."""

    def __init__(self, transport: NativeTransport, call: Any, first: bytes | None) -> None:
        self.service, self.call = transport.service, call
        self.requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.paused = False
        self.ctx = _Context()
        if first is None:
            self.requests.put(_CLOSED)
        else:
            self.message(first)
        threading.Thread(target=self._serve, name="p4rt-stream-out", daemon=True).start()

    def message(self, data: bytes) -> bool:
        """One client message (on a gRPC thread); False pauses reading until `_requests` resumes it."""
        try:
            self.requests.put(p4r.StreamMessageRequest.FromString(data))
        except DecodeError as e:
            _finish(self.call, _INVALID_ARGUMENT, f"malformed StreamMessageRequest: {e}")
            self.requests.put(_CLOSED)
            return False
        if self.requests.qsize() >= STREAM_IN_HIGH:
            self.paused = True
            return False
        return True

    def closed(self) -> None:
        """The client sent its last message: the service's reader ends."""
        self.requests.put(_CLOSED)

    def done(self) -> None:
        """The call is over: the service's reader ends and the call's callbacks run."""
        self.requests.put(_CLOSED)
        self.ctx.run_callbacks()

    def _requests(self) -> Iterator[p4r.StreamMessageRequest]:
        while True:
            item = self.requests.get()
            if self.paused and self.requests.qsize() <= STREAM_IN_LOW:
                # resume() also holds when the pause is not recorded yet (see native.cc)
                self.paused = False
                self.call.resume()
            if item is _CLOSED:
                return
            yield item

    def _serve(self) -> None:
        responses = self.service.StreamChannel(self._requests(), self.ctx)
        try:
            for response in responses:
                if not self.call.write(response.SerializeToString()):
                    return
            _finish(self.call, _OK, "")
        except BaseException as e:  # noqa: BLE001 - the stream's status
            _finish_error(self.call, e)
        finally:
            responses.close()


_live: weakref.WeakSet[NativeTransport] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """gRPC's threads must not call into an interpreter that is shutting down."""
    for t in list(_live):
        t.stop(0)


class NativeTransport:
    """gRPC C++ (callback API, generic service) with the service in Python."""

    def __init__(self, service: P4RuntimeService, address: str, tls: TlsConfig | None) -> None:
        if _native is None:
            raise ServerError(f"the native gRPC transport is not built: {_NATIVE_ERROR}")
        creds = None
        if tls is not None:
            key, cert, ca = _read_tls(tls)
            creds = (key.decode(), cert.decode(), ca.decode() if ca else None, tls.client_auth)
        self.service = service
        self.pool = futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="p4rt")
        self._unary: dict[str, tuple[str, Any]] = {
            _SERVICE + "Write": ("Write", p4r.WriteRequest),
            _SERVICE + "Read": ("Read", p4r.ReadRequest),
            _SERVICE + "SetForwardingPipelineConfig":
                ("SetForwardingPipelineConfig", p4r.SetForwardingPipelineConfigRequest),
            _SERVICE + "GetForwardingPipelineConfig":
                ("GetForwardingPipelineConfig", p4r.GetForwardingPipelineConfigRequest),
            _SERVICE + "Capabilities": ("Capabilities", p4r.CapabilitiesRequest),
        }
        self._server = _native.Server(self._handle, MAX_MESSAGE)
        self.port = self._server.start(address, creds)
        if not self.port:
            self._server.stop(0)  # drops the handler: nothing keeps this transport alive
            self.pool.shutdown(wait=False)
            raise ServerError(f"cannot listen on {address} (address in use or bad TLS files?)")
        _live.add(self)

    def _handle(self, call: Any, data: bytes | None) -> _Stream | None:
        """A new call and its first message: answer it, or return the sink of its stream."""
        method = call.method
        if method == _SERVICE + "StreamChannel":
            return _Stream(self, call, data)
        spec = self._unary.get(method)
        if spec is None:
            _finish(call, _UNIMPLEMENTED, f"unknown method {method}")
            return None
        name, request_type = spec
        if data is None:  # the client sent no request (or is already gone)
            _finish(call, _INVALID_ARGUMENT, f"{method} takes exactly one request message")
            return None
        try:
            request = request_type.FromString(data)
        except DecodeError as e:
            _finish(call, _INVALID_ARGUMENT, f"malformed {request_type.__name__}: {e}")
            return None
        unary = _Unary(self, call, name, request)
        if name == "Capabilities":
            unary.run()
            return None
        # Small work is done right here, on the gRPC thread, but only when the
        # device is free at once: gRPC has few such threads, and one waiting
        # for a pipeline commit would hold up every other call.
        if name == "GetForwardingPipelineConfig" or (name == "Write" and len(request.updates) <= INLINE_UPDATES):
            lock = self.service.runtime.lock
            if lock.acquire(blocking=False):
                try:
                    unary.run()
                finally:
                    lock.release()
                return None
        self.pool.submit(unary.run)
        return None

    def stop(self, grace: float) -> None:
        """Stop the server (calls in progress get `grace` seconds) and its thread pool."""
        _live.discard(self)
        self._server.stop(grace)
        self.pool.shutdown(wait=False, cancel_futures=True)


def make_transport(service: P4RuntimeService, address: str, tls: TlsConfig | None,
                   kind: str | None = None) -> Transport:
    """The transport `kind` ('native', 'grpcio'; default: $P4SWITCH_GRPC, else native when built)."""
    asked = kind or os.environ.get("P4SWITCH_GRPC")
    kind = asked or ("native" if _native is not None else "grpcio")
    if not asked and _native is None:
        log.warning("the native gRPC transport is not built (%s): serving P4Runtime with grpcio "
                    "(one-update writes are slower; install libgrpc++-dev and pkg-config, then reinstall)",
                    _NATIVE_ERROR)
    if kind == "native":
        return NativeTransport(service, address, tls)
    if kind == "grpcio":
        return GrpcioTransport(service, address, tls)
    raise ServerError(f"unknown gRPC transport {kind!r} (expected 'native' or 'grpcio')")


__all__ = ["Transport", "NativeTransport", "GrpcioTransport", "make_transport", "native_available",
           "ServerError", "TlsConfig", "INLINE_UPDATES", "MAX_RPCS"]
