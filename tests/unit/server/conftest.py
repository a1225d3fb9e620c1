"""Fixtures: an in-process P4Runtime server on a free port, and a small client.

`server` runs `P4RuntimeServer` with the real pipeline (`p4switch.pipeline.Switch`)
on `MemoryPorts`; the default program is `small.p4` (one object of every
P4Runtime kind, ids pinned with @id), compiled once by the front end.
`client` talks to it through the real generated gRPC stub.
`Client.stream(...)` opens a StreamChannel and arbitrates; `Client.write`,
`read` and `set_pipeline` fill in device id, role and election id.
`compiled(name)` gives (P4Info, device config) of any .p4 file in this folder;
`p4_id(kind, name)` the id of a P4Info object of small.p4.
"""

from __future__ import annotations

import functools
import os
import queue
import threading
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import text_format

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.io import MemoryPorts
from p4switch.p4info import build_p4info
from p4switch.pipeline import Switch
from p4switch.proto import p4i, p4r, p4r_grpc, rpc_status
from p4switch.server import P4RuntimeServer

DEVICE_ID = 1
CPU_PORT = 255
HERE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def _compiled(name: str) -> tuple[bytes, bytes]:
    program = compile_file(os.path.join(HERE, name))
    info = build_p4info(program)
    text = text_format.MessageToString(info)
    return info.SerializeToString(), ir.to_json(program, text).encode()


def compiled(name: str = "small.p4") -> tuple[p4i.P4Info, bytes]:
    """(P4Info, p4switch program file) of a P4 program in this folder (a fresh P4Info copy)."""
    info, blob = _compiled(name)
    return p4i.P4Info.FromString(info), blob


def load_p4info() -> p4i.P4Info:
    return compiled()[0]


def make_program_file() -> bytes:
    return compiled()[1]


def p4_id(kind: str, name: str) -> int:
    """The id of P4Info object `name` among `kind` (e.g. "actions", "NoAction") of small.p4."""
    for obj in getattr(load_p4info(), kind):
        if obj.preamble.name == name:
            return obj.preamble.id
    raise KeyError(name)


def switch_factory(program: ir.Program, transmit) -> Switch:
    return Switch(program, transmit, cpu_port=CPU_PORT)


class Stream:
    """One StreamChannel: send requests, receive responses (with a timeout)."""

    def __init__(self, stub: p4r_grpc.P4RuntimeStub) -> None:
        self._requests: queue.Queue = queue.Queue()
        self.responses: queue.Queue = queue.Queue()
        self.error: grpc.RpcError | None = None
        self.done = threading.Event()
        self._call = stub.StreamChannel(self._iter())
        threading.Thread(target=self._read, daemon=True).start()

    def _iter(self) -> Iterator[p4r.StreamMessageRequest]:
        while True:
            item = self._requests.get()
            if item is None:
                return
            yield item

    def _read(self) -> None:
        try:
            for resp in self._call:
                self.responses.put(resp)
        except grpc.RpcError as e:
            self.error = e
        finally:
            self.done.set()

    def send(self, msg: p4r.StreamMessageRequest) -> None:
        self._requests.put(msg)

    def arbitrate(self, election_id: int | None, *, role: str | None = None,
                  device_id: int = DEVICE_ID) -> None:
        mau = p4r.MasterArbitrationUpdate(device_id=device_id)
        if election_id is not None:
            mau.election_id.high = election_id >> 64
            mau.election_id.low = election_id & ((1 << 64) - 1)
        if role is not None:
            mau.role.name = role
        self.send(p4r.StreamMessageRequest(arbitration=mau))

    def recv(self, timeout: float = 2.0) -> p4r.StreamMessageResponse:
        return self.responses.get(timeout=timeout)

    def recv_arbitration(self, timeout: float = 2.0) -> p4r.MasterArbitrationUpdate:
        while True:
            msg = self.recv(timeout)
            if msg.HasField("arbitration"):
                return msg.arbitration

    def no_message(self, timeout: float = 0.3) -> bool:
        try:
            self.responses.get(timeout=timeout)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        self._requests.put(None)
        self.done.wait(2)

    def cancel(self) -> None:
        self._call.cancel()
        self.done.wait(2)


class Client:
    """A thin P4Runtime client over the generated stub."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.election_id = 10
        self.role = ""
        self.streams: list[Stream] = []

    def stream(self, election_id: int | None = None, *, role: str | None = None,
               device_id: int = DEVICE_ID, wait: bool = True) -> Stream:
        s = Stream(self.stub)
        self.streams.append(s)
        s.arbitrate(self.election_id if election_id is None else election_id, role=role,
                    device_id=device_id)
        if wait:
            s.recv_arbitration()
        return s

    def _eid(self, msg, election_id: int | None) -> None:
        eid = self.election_id if election_id is None else election_id
        msg.election_id.high = eid >> 64
        msg.election_id.low = eid & ((1 << 64) - 1)

    def set_pipeline(self, *, action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                     p4info: p4i.P4Info | None = None, device_config: bytes | None = None,
                     cookie: int | None = None, election_id: int | None = None,
                     device_id: int = DEVICE_ID, config: bool = True) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(device_id=device_id, action=action, role=self.role)
        self._eid(req, election_id)
        if config:
            req.config.p4info.CopyFrom(p4info or load_p4info())
            req.config.p4_device_config = make_program_file() if device_config is None else device_config
            if cookie is not None:
                req.config.cookie.cookie = cookie
        self.stub.SetForwardingPipelineConfig(req)

    def write(self, *updates: p4r.Update, election_id: int | None = None,
              device_id: int = DEVICE_ID, **kw) -> None:
        req = p4r.WriteRequest(device_id=device_id, role=self.role, updates=updates, **kw)
        self._eid(req, election_id)
        self.stub.Write(req)

    def read(self, *entities: p4r.Entity, device_id: int = DEVICE_ID) -> list[p4r.Entity]:
        out: list[p4r.Entity] = []
        for resp in self.stub.Read(p4r.ReadRequest(device_id=device_id, entities=entities)):
            out.extend(resp.entities)
        return out

    def close(self) -> None:
        for s in self.streams:
            s.close()
        self.channel.close()


def write_errors(err: grpc.RpcError) -> list[p4r.Error]:
    """The per-update p4.v1.Errors of a failed Write/Read."""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = rpc_status.Status.FromString(value)
            out = []
            for d in status.details:
                e = p4r.Error()
                d.Unpack(e)
                out.append(e)
            return out
    return []


def update(kind: str, **entity) -> p4r.Update:
    return p4r.Update(type=getattr(p4r.Update, kind), entity=p4r.Entity(**entity))


@pytest.fixture
def ports() -> MemoryPorts:
    return MemoryPorts([1, 2, 3, 4])


@pytest.fixture
def transport() -> str:
    """The gRPC transport the `server` fixture uses (modules that test both override this)."""
    return "native"


TRANSPORTS = ("native", "grpcio")


def each_transport(request: pytest.FixtureRequest) -> str:
    """A module whose every test runs on both gRPC transports overrides `transport` with
    `transport = pytest.fixture(params=TRANSPORTS)(each_transport)`."""
    return str(request.param)


@pytest.fixture
def server(ports: MemoryPorts, transport: str) -> Iterator[P4RuntimeServer]:
    srv = P4RuntimeServer(device_id=DEVICE_ID, factory=switch_factory, address="127.0.0.1:0",
                          transmit=ports.transmit, cpu_port=CPU_PORT, transport=transport).start()
    ports.start(srv.process)
    yield srv
    srv.stop(grace=0)
    ports.stop()


@pytest.fixture
def client(server: P4RuntimeServer) -> Iterator[Client]:
    c = Client(f"127.0.0.1:{server.port}")
    yield c
    c.close()


@pytest.fixture
def primary(client: Client) -> Client:
    """A client that is primary (election id 10) with the small program installed."""
    client.stream(10)
    client.set_pipeline()
    return client
