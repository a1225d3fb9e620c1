"""The sending half of a host agent: post RDMA WRITE messages over several QPs.

A sender behaves like an RC requester whose WRITEs are never acknowledged
(there is no responder NIC in the emulation): it turns (messages, size,
strategy, QPs) into RDMA WRITE posts (``traffic.qpscale``), each post into
packets (``traffic.builders.segment_write``) with a PSN sequence per QP, and
transmits them the way a NIC schedules its send queues: one packet per QP
with work pending, in turn. It paces to an optional rate and stops a paused
priority while PFC PAUSE frames say so.

Names:

- ``SendConfig``: what to send, where, how fast.
- ``Frame``: one packet ready for the wire and the QP it belongs to.
- ``build_queues``: the per-QP packet queues of a configuration.
- ``interleave``: the transmit order of those queues.
- ``run_sender``: resolve addresses, transmit, honour PFC, return a report.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

from traffic.builders import segment_write
from traffic.errors import TrafficError
from traffic.link import PacketSocket, iface_info, link_bps, resolve_mac
from traffic.pfc import PauseState, parse_pfc
from traffic.qpscale import MAX_QPS, STRATEGIES, encode_imm
from traffic.roce import DEFAULT_DSCP, IB_MTUS, psn_add

__all__ = ["Frame", "SendConfig", "build_queues", "interleave", "run_sender"]

_DEFAULT_LINK_BPS = 10e9  # when neither the user nor the driver says
_ETH_HEADER = 14


@dataclass(frozen=True, kw_only=True)
class SendConfig:
    """One sender run. ``qps`` are the destination QP numbers, in strategy order."""

    iface: str
    dst_ip: str
    qps: tuple[int, ...]
    messages: int = 1
    size: int = 4096
    strategy: str = "round_robin"
    path_mtu: int = 1024
    rate_mbps: float | None = None  # Ethernet frame bits per second / 1e6; None: flat out
    src_port: int = 49152
    src_port_per_qp: bool = False  # src_port + QP index instead of one port for all QPs
    dscp: int = DEFAULT_DSCP
    priority: int = 3  # the PFC priority this traffic is queued in at the switch
    honour_pfc: bool = True
    link_mbps: float | None = None  # for PAUSE quanta; default: sysfs, else 10 Gb/s
    psn: int = 0  # first PSN of every QP
    va: int = 0x1000_0000  # remote buffer base; message m lands at va + m * size
    rkey: int = 0x1000
    src_ip: str | None = None  # default: the interface's address
    dst_mac: str | None = None  # default: resolved (neighbour table, then ARP)
    arp_timeout: float = 3.0

    def __post_init__(self) -> None:
        if not self.qps:
            raise ValueError("qps: give at least one destination QP")
        if len(self.qps) > MAX_QPS:
            raise ValueError(f"qps: at most {MAX_QPS} QPs")
        for qp in self.qps:
            if not 0 <= qp < 1 << 24:
                raise ValueError(f"qps: {qp} does not fit in 24 bits")
        if len(set(self.qps)) != len(self.qps):
            raise ValueError("qps: destination QPs must be distinct")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy={self.strategy!r}: one of {', '.join(STRATEGIES)}")
        if self.path_mtu not in IB_MTUS:
            raise ValueError(f"path_mtu={self.path_mtu!r}: one of {IB_MTUS}")
        if self.rate_mbps is not None and self.rate_mbps <= 0:
            raise ValueError(f"rate_mbps={self.rate_mbps!r}: must be positive")
        if self.link_mbps is not None and self.link_mbps <= 0:
            raise ValueError(f"link_mbps={self.link_mbps!r}: must be positive")
        if not 0 <= self.priority <= 7:
            raise ValueError(f"priority={self.priority!r}: must be 0..7")
        if self.messages < 0 or self.size < 0:
            raise ValueError("messages and size must be >= 0")


@dataclass(frozen=True, kw_only=True)
class Frame:
    """One packet on the wire."""

    qp: int
    data: bytes
    payload_len: int
    post_end: bool  # the last packet of an RDMA WRITE


def build_queues(
    config: SendConfig, *, src_mac: str, src_ip: str, dst_mac: str
) -> dict[int, list[Frame]]:
    """Per destination QP, its packets in PSN order (QPs in ``config.qps`` order)."""
    posts = STRATEGIES[config.strategy](config.messages, config.size, len(config.qps))
    queues: dict[int, list[Frame]] = {qp: [] for qp in config.qps}
    next_psn = {qp: config.psn for qp in config.qps}
    for post in posts:
        qp = config.qps[post.qp_index]
        # A recognisable payload: the message index, so a capture shows which is which.
        message = bytes([post.message % 256]) * post.length
        src_port = config.src_port + post.qp_index if config.src_port_per_qp else config.src_port
        packets = segment_write(
            message=message,
            path_mtu=config.path_mtu,
            psn=next_psn[qp],
            va=config.va + post.message * config.size + post.offset,
            imm=encode_imm(post.message, post.chunks),
            src_mac=src_mac,
            dst_mac=dst_mac,
            src_ip=src_ip,
            dst_ip=config.dst_ip,
            src_port=src_port & 0xFFFF,
            dest_qp=qp,
            rkey=config.rkey,
            dscp=config.dscp,
        )
        next_psn[qp] = psn_add(next_psn[qp], len(packets))
        for i, pkt in enumerate(packets):
            start = i * config.path_mtu
            queues[qp].append(
                Frame(
                    qp=qp,
                    data=bytes(pkt),
                    payload_len=max(0, min(config.path_mtu, post.length - start)),
                    post_end=i == len(packets) - 1,
                )
            )
    return queues


def interleave(queues: dict[int, list[Frame]]) -> Iterator[Frame]:
    """Transmit order: one packet from each QP with packets left, in turn."""
    cursors = {qp: 0 for qp in queues}
    while cursors:
        for qp in list(cursors):
            i = cursors[qp]
            if i >= len(queues[qp]):
                del cursors[qp]
                continue
            yield queues[qp][i]
            cursors[qp] = i + 1


class _Pfc:
    """Reads PAUSE frames off the sender's socket and waits out paused periods.

    A pause runs from the frame's kernel receive timestamp, not from when
    Python reads it, so one that expired while the sender slept (pacing)
    holds nothing back. Hence wall-clock time here, the timestamps' clock.
    """

    def __init__(self, sock: PacketSocket, priority: int, bps: float) -> None:
        self.sock = sock
        self.priority = priority
        self.state = PauseState(bps)
        self.paused_seconds = 0.0

    def poll(self, timeout: float = 0) -> None:
        """Read the PAUSE frames that arrived (waiting up to ``timeout`` for the first)."""
        got = self.sock.recv(timeout)
        while got is not None:
            pauses = parse_pfc(got[0])
            if pauses is not None:
                self.state.apply(pauses, got[1])
            got = self.sock.recv(0)

    def wait_until_clear(self) -> None:
        """Return once the sender's priority is not paused (at once if it is not)."""
        self.poll(0)
        now = time.time()
        if not self.state.is_paused(self.priority, now):
            return
        start = now
        while self.state.is_paused(self.priority, now):
            # Sleep on the socket: an XON (quanta 0) may end the pause early.
            self.poll(max(0.0, self.state.paused_until(self.priority) - now))
            now = time.time()
        self.paused_seconds += now - start


def run_sender(config: SendConfig) -> dict[str, object]:
    """Send what ``config`` asks for and return the sender's report (JSON-ready)."""
    iface = iface_info(config.iface)
    src_ip = config.src_ip or iface.ip
    if src_ip is None:
        raise TrafficError(f"{iface.name} has no IPv4 address; pass a source IP")
    dst_mac = config.dst_mac or resolve_mac(iface, config.dst_ip, config.arp_timeout)
    queues = build_queues(config, src_mac=iface.mac, src_ip=src_ip, dst_mac=dst_mac)
    frames = list(interleave(queues))
    largest = max((len(f.data) for f in frames), default=0)
    if largest - _ETH_HEADER > iface.mtu:
        raise TrafficError(
            f"path MTU {config.path_mtu} makes {largest - _ETH_HEADER}-byte IP packets but "
            f"{iface.name} has MTU {iface.mtu}; lower the path MTU or raise the link MTU"
        )
    bps = config.link_mbps * 1e6 if config.link_mbps else link_bps(iface.name) or _DEFAULT_LINK_BPS

    per_qp = {
        qp: {"packets": 0, "bytes": 0, "payload_bytes": 0, "writes": 0, "first_psn": config.psn}
        for qp in config.qps
    }
    sent_bytes = 0
    with PacketSocket(iface.name) as sock:
        pfc = _Pfc(sock, config.priority, bps)
        start_wall = time.time()
        start = next_at = time.monotonic()
        for frame in frames:
            if config.honour_pfc:
                before = pfc.paused_seconds
                pfc.wait_until_clear()
                if pfc.paused_seconds != before:
                    # No catching up after a pause: PFC takes the time away.
                    next_at = max(next_at, time.monotonic())
            if config.rate_mbps:
                delay = next_at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                next_at += len(frame.data) * 8 / (config.rate_mbps * 1e6)
            sock.send(frame.data)
            sent_bytes += len(frame.data)
            counts = per_qp[frame.qp]
            counts["packets"] += 1
            counts["bytes"] += len(frame.data)
            counts["payload_bytes"] += frame.payload_len
            counts["writes"] += int(frame.post_end)
        end = time.monotonic()
        if config.honour_pfc:
            pfc.poll()  # count PAUSE frames that arrived during the last packets
    for counts in per_qp.values():
        counts["next_psn"] = psn_add(config.psn, counts["packets"])
    return {
        "role": "send",
        "iface": iface.name,
        "src_ip": src_ip,
        "dst_ip": config.dst_ip,
        "src_mac": iface.mac,
        "dst_mac": dst_mac,
        "strategy": config.strategy,
        "qps": list(config.qps),
        "messages": config.messages,
        "size": config.size,
        "path_mtu": config.path_mtu,
        "priority": config.priority,
        "packets": len(frames),
        "bytes": sent_bytes,
        "payload_bytes": sum(c["payload_bytes"] for c in per_qp.values()),
        "writes": sum(c["writes"] for c in per_qp.values()),
        "per_qp": {str(qp): counts for qp, counts in per_qp.items()},
        "pause_frames": pfc.state.frames,
        "paused_seconds": round(pfc.paused_seconds, 6),
        "start": start_wall,
        "duration": end - start,
    }
