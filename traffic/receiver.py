"""The receiving half of a host agent: check, reassemble and count RoCEv2 traffic.

A receiver plays the RC responder's checks without answering: for every
RoCEv2 packet to its IP it verifies the ICRC (a bad one is dropped, as a NIC
drops it), checks that PSNs follow each other per connection (source IP,
destination QP), reassembles RDMA WRITE messages (First/Middle/Last or
Only, total length = the RETH DMA length) and, with the immediate data of
``traffic.qpscale``, whole application messages and their completion times.

Names:

- ``Receiver``: the accounting; ``feed(frame, timestamp)`` then ``report()``.
  No sockets, so it runs on frames from anywhere (tests, pcaps).
- ``RecvConfig`` / ``run_receiver``: capture on an interface until a packet
  count, a message count, a timeout or a stop request, then report.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from traffic.errors import TrafficError
from traffic.link import PacketSocket, iface_info
from traffic.parser import Malformed, RoceInfo, parse
from traffic.qpscale import decode_imm
from traffic.roce import ROCEV2_UDP_PORT, Opcode, psn_add

__all__ = ["Receiver", "RecvConfig", "run_receiver"]

_UC = Opcode.UC
_FIRST = {Opcode.RC_RDMA_WRITE_FIRST, _UC + Opcode.RC_RDMA_WRITE_FIRST}
_MIDDLE = {Opcode.RC_RDMA_WRITE_MIDDLE, _UC + Opcode.RC_RDMA_WRITE_MIDDLE}
_LAST = {
    op + base
    for base in (0, _UC)
    for op in (Opcode.RC_RDMA_WRITE_LAST, Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE)
}
_ONLY = {
    op + base
    for base in (0, _UC)
    for op in (Opcode.RC_RDMA_WRITE_ONLY, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE)
}


@dataclass
class _Write:
    """An RDMA WRITE being reassembled."""

    dlen: int
    received: int
    start: float


@dataclass
class _Connection:
    """Responder state of one (source IP, destination QP)."""

    expected_psn: int | None = None
    write: _Write | None = None
    abandoned: bool = False  # packets went missing; skip to the next First/Only


@dataclass
class _QpCounts:
    packets: int = 0
    bytes: int = 0
    payload_bytes: int = 0
    writes: int = 0
    icrc_errors: int = 0
    psn_errors: int = 0
    first_psn: int | None = None
    last_psn: int | None = None


@dataclass
class _Message:
    chunks: int
    done: int = 0
    start: float = 0.0
    end: float = 0.0


@dataclass
class _Totals:
    packets: int = 0
    bytes: int = 0
    payload_bytes: int = 0
    icrc_errors: int = 0
    psn_errors: int = 0
    sequence_errors: int = 0  # opcode out of place: Middle without First, ...
    length_errors: int = 0  # a WRITE whose bytes differ from its RETH DMA length
    malformed: int = 0
    other_opcodes: int = 0
    writes_complete: int = 0
    messages_complete: int = 0
    first_ts: float | None = None
    last_ts: float | None = None
    message_times: list[float] = field(default_factory=list)


class Receiver:
    """Counts and reassembles the RoCEv2 packets fed to it.

    ``ip`` keeps only packets to that address (None: all RoCEv2 packets).
    """

    def __init__(self, ip: str | None = None) -> None:
        self.ip = ip
        self._t = _Totals()
        self._qps: dict[int, _QpCounts] = defaultdict(_QpCounts)
        self._sources: dict[str, int] = defaultdict(int)
        self._conns: dict[tuple[str, int], _Connection] = defaultdict(_Connection)
        self._messages: dict[tuple[str, int], _Message] = {}

    @property
    def packets(self) -> int:
        """RoCEv2 packets to ``ip`` seen so far (bad ones included)."""
        return self._t.packets

    @property
    def messages_complete(self) -> int:
        """Messages received whole so far (all chunks of a chunked one)."""
        return self._t.messages_complete

    def feed(self, frame: bytes, ts: float) -> bool:
        """Account one Ethernet frame received at ``ts``; True if it was RoCEv2 to ``ip``."""
        info = parse(frame)
        if info is None:
            return False
        if isinstance(info, Malformed):
            if self.ip is not None and not _ipv4_dst_is(frame, self.ip):
                return False
            self._count_packet(frame, ts)
            self._t.malformed += 1
            return True
        if self.ip is not None and info.dst_ip != self.ip:
            return False
        self._count_packet(frame, ts)
        qp = self._qps[info.dest_qp]
        qp.packets += 1
        qp.bytes += len(frame)
        self._sources[info.src_ip] += 1
        if not info.icrc_ok:
            # A NIC drops the packet; the PSN gap shows up on the next one.
            self._t.icrc_errors += 1
            qp.icrc_errors += 1
            return True
        qp.payload_bytes += len(info.payload)
        self._t.payload_bytes += len(info.payload)
        if qp.first_psn is None:
            qp.first_psn = info.psn
        qp.last_psn = info.psn
        conn = self._conns[(info.src_ip, info.dest_qp)]
        if conn.expected_psn is not None and info.psn != conn.expected_psn:
            self._t.psn_errors += 1
            qp.psn_errors += 1
            # Packets are missing: the write in flight, or one whose First was
            # lost, cannot complete; its remaining packets are no sequence error.
            conn.write = None
            conn.abandoned = True
        conn.expected_psn = psn_add(info.psn, 1)
        self._reassemble(info, conn, qp, ts)
        return True

    def _count_packet(self, frame: bytes, ts: float) -> None:
        t = self._t
        t.packets += 1
        t.bytes += len(frame)
        if t.first_ts is None:
            t.first_ts = ts
        t.last_ts = ts

    def _reassemble(self, info: RoceInfo, conn: _Connection, qp: _QpCounts, ts: float) -> None:
        op, size = info.opcode, len(info.payload)
        if op in _FIRST or op in _ONLY:
            conn.abandoned = False
            if conn.write is not None:
                self._t.sequence_errors += 1
            assert info.reth is not None  # parse() guarantees the RETH for these opcodes
            conn.write = _Write(dlen=info.reth.dlen, received=size, start=ts)
        elif op in _MIDDLE or op in _LAST:
            if conn.write is None:
                if op in _LAST:
                    if not conn.abandoned:
                        self._t.sequence_errors += 1  # a write whose start never came
                    conn.abandoned = False
                return
            conn.write.received += size
        else:
            self._t.other_opcodes += 1
            return
        if op in _LAST or op in _ONLY:
            write, conn.write = conn.write, None
            if write.received != write.dlen:
                self._t.length_errors += 1
                return
            self._t.writes_complete += 1
            qp.writes += 1
            self._complete(info, write.start, ts)

    def _complete(self, info: RoceInfo, start: float, end: float) -> None:
        if info.imm is None:
            chunks, key = 1, None
        else:
            message, chunks = decode_imm(info.imm)
            key = (info.src_ip, message)
        if key is None or chunks <= 1:
            self._finish(start, end)
            return
        msg = self._messages.get(key)
        if msg is None:
            msg = self._messages[key] = _Message(chunks=chunks, start=start, end=end)
        msg.done += 1
        msg.start, msg.end = min(msg.start, start), max(msg.end, end)
        if msg.done == msg.chunks:
            del self._messages[key]
            self._finish(msg.start, msg.end)

    def _finish(self, start: float, end: float) -> None:
        self._t.messages_complete += 1
        self._t.message_times.append(end - start)

    def report(self) -> dict[str, object]:
        """Counters so far, JSON-ready (QP numbers as string keys)."""
        t = self._t
        return {
            "packets": t.packets,
            "bytes": t.bytes,
            "payload_bytes": t.payload_bytes,
            "messages_complete": t.messages_complete,
            "messages_incomplete": len(self._messages),
            "writes_complete": t.writes_complete,
            "icrc_errors": t.icrc_errors,
            "psn_errors": t.psn_errors,
            "sequence_errors": t.sequence_errors,
            "length_errors": t.length_errors,
            "malformed": t.malformed,
            "other_opcodes": t.other_opcodes,
            "first_ts": t.first_ts,
            "last_ts": t.last_ts,
            "message_time_us": _summary_us(t.message_times),
            "per_qp": {str(qp): vars(c).copy() for qp, c in sorted(self._qps.items())},
            "per_source": dict(sorted(self._sources.items())),
        }


def _ipv4_dst_is(frame: bytes, ip: str) -> bool:
    """Whether an (untagged) IPv4 frame's destination is ``ip``; for unparsable frames."""
    try:
        return frame[30:34] == socket.inet_aton(ip)
    except OSError:
        return False


def _summary_us(seconds: list[float]) -> dict[str, float] | None:
    if not seconds:
        return None
    us = sorted(s * 1e6 for s in seconds)

    def pct(p: float) -> float:
        """The `p` quantile of the sorted durations, in microseconds."""
        return round(us[min(len(us) - 1, int(p * len(us)))], 1)

    return {
        "count": len(us),
        "min": round(us[0], 1),
        "mean": round(sum(us) / len(us), 1),
        "p50": pct(0.5),
        "p99": pct(0.99),
        "max": round(us[-1], 1),
    }


@dataclass(frozen=True, kw_only=True)
class RecvConfig:
    """One receiver run; it ends at the first of ``count``, ``messages``, ``timeout``."""

    iface: str
    ip: str | None = None  # default: the interface's address
    count: int | None = None  # RoCEv2 packets to ip
    messages: int | None = None  # complete application messages
    timeout: float | None = None  # seconds from start
    ready_file: str | None = None  # touched once the socket is listening
    rcvbuf: int = 64 << 20


def run_receiver(config: RecvConfig, stop: threading.Event | None = None) -> dict[str, object]:
    """Capture on ``config.iface`` and return the receiver's report (JSON-ready).

    ``stop`` ends the capture early (a CLI sets it on SIGTERM/SIGINT).
    """
    iface = iface_info(config.iface)
    ip = config.ip or iface.ip
    if ip is None:
        raise TrafficError(f"{iface.name} has no IPv4 address; pass the receiver's IP")
    receiver = Receiver(ip)
    stop = stop or threading.Event()
    deadline = None if config.timeout is None else time.monotonic() + config.timeout

    def done() -> bool:
        """Whether the `count` packets or `messages` messages asked for have arrived."""
        return (config.count is not None and receiver.packets >= config.count) or (
            config.messages is not None and receiver.messages_complete >= config.messages
        )

    with PacketSocket(iface.name, rcvbuf=config.rcvbuf) as sock, _udp_sink(ip):
        if config.ready_file:
            Path(config.ready_file).touch()
        start = time.time()
        timed_out = False
        while not done() and not stop.is_set():
            wait = 0.2  # wake up now and then to notice stop
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                wait = min(wait, left)
            got = sock.recv(wait)
            if got is not None:
                receiver.feed(*got)
        drops = sock.kernel_drops()
    report = {
        "role": "recv",
        "iface": iface.name,
        "ip": ip,
        "start": start,
        "done": done(),
        "timed_out": timed_out,
        "kernel_drops": drops,
    }
    report.update(receiver.report())
    return report


@contextmanager
def _udp_sink(ip: str) -> Iterator[None]:
    """Hold UDP port 4791 open so the kernel does not answer every RoCE packet
    with an ICMP port unreachable (a RoCE NIC consumes them before the IP
    stack does). The socket is never read: its tiny queue overflows silently."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
        sock.bind((ip, ROCEV2_UDP_PORT))
    except OSError:
        pass  # someone (rdma_rxe, another agent) already holds the port: fine
    try:
        yield
    finally:
        sock.close()
