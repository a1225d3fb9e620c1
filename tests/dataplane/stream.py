"""The P4Runtime StreamChannel of a test: primary arbitration and packet-in / packet-out.

`controller.p4rt.SwitchSession` writes and reads (opened with
`primary=False`, it uses no stream); this stream wins the arbitration with
the same election id, so the session's writes are the primary's, and it
carries PacketOut / PacketIn with their controller metadata by name, as
the P4Info declares them (`packet_out.egress_port`, `packet_in.ingress_port`).

Names defined here: `PacketStream`, `PacketIn`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc

from controller.proto import p4i, p4r, p4r_grpc, rpc_code
from controller.values import decode, encode

__all__ = ["PacketIn", "PacketStream"]


@dataclass(frozen=True)
class PacketIn:
    payload: bytes
    metadata: dict[str, int]


class PacketStream:
    """One StreamChannel: arbitration, then packet I/O (see the module docstring)."""

    def __init__(self, address: str, device_id: int, election_id: int = 1) -> None:
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.packet_ins: queue.Queue[PacketIn] = queue.Queue()
        self._requests: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self._arbitration: queue.Queue[Any] = queue.Queue()
        self._channel: grpc.Channel | None = None
        self._call: Any = None
        self._reader: threading.Thread | None = None
        self._meta_in: dict[int, str] = {}
        self._meta_out: dict[str, tuple[int, int]] = {}

    def open(self, timeout: float = 10.0) -> PacketStream:
        self._channel = grpc.insecure_channel(self.address)
        grpc.channel_ready_future(self._channel).result(timeout=timeout)
        stub = p4r_grpc.P4RuntimeStub(self._channel)

        def requests() -> Iterator[p4r.StreamMessageRequest]:
            while (item := self._requests.get()) is not None:
                yield item

        self._call = stub.StreamChannel(requests())
        self._reader = threading.Thread(target=self._read, name="p4rt-stream", daemon=True)
        self._reader.start()
        eid = p4r.Uint128(high=self.election_id >> 64, low=self.election_id & (2**64 - 1))
        self._requests.put(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
            device_id=self.device_id, election_id=eid)))
        got = self._arbitration.get(timeout=timeout)
        if isinstance(got, Exception):
            raise got
        if got.status.code != rpc_code.OK:
            raise RuntimeError(f"not primary: {got.status.message}")
        return self

    def _read(self) -> None:
        try:
            for resp in self._call:
                kind = resp.WhichOneof("update")
                if kind == "arbitration":
                    self._arbitration.put(resp.arbitration)
                elif kind == "packet":
                    meta = {self._meta_in.get(m.metadata_id, str(m.metadata_id)): decode(m.value)
                            for m in resp.packet.metadata}
                    self.packet_ins.put(PacketIn(resp.packet.payload, meta))
        except grpc.RpcError as err:
            self._arbitration.put(err)

    def use_p4info(self, info: p4i.P4Info) -> None:
        """Learn the controller metadata ids of the program now running."""
        for cpm in info.controller_packet_metadata:
            if cpm.preamble.name == "packet_in":
                self._meta_in = {m.id: m.name for m in cpm.metadata}
            elif cpm.preamble.name == "packet_out":
                self._meta_out = {m.name: (m.id, m.bitwidth) for m in cpm.metadata}

    def packet_out(self, payload: bytes, **metadata: int) -> None:
        """Send a PacketOut; metadata fields not given are 0."""
        out = p4r.PacketOut(payload=payload)
        for name, (mid, width) in self._meta_out.items():
            out.metadata.add(metadata_id=mid, value=encode(metadata.get(name, 0), width))
        unknown = set(metadata) - set(self._meta_out)
        if unknown:
            raise ValueError(f"packet_out has no metadata {sorted(unknown)}")
        self._requests.put(p4r.StreamMessageRequest(packet=out))

    def next_packet_in(self, timeout: float) -> PacketIn | None:
        try:
            return self.packet_ins.get(timeout=timeout)
        except queue.Empty:
            return None

    def drain(self) -> None:
        while not self.packet_ins.empty():
            self.packet_ins.get_nowait()

    def close(self) -> None:
        self._requests.put(None)
        if self._call is not None:
            self._call.cancel()
        if self._reader is not None:
            self._reader.join(timeout=2)
        if self._channel is not None:
            self._channel.close()
