"""One RoCEv2 flow between two NICs, as the two hosts' jobs for their agents.

A flow is what `aizone trace` confirms a path with and what the fabric
tests send: RDMA WRITEs from a source NIC to a destination NIC over one RC
connection, so every packet is acknowledged, retransmitted when lost and
checked by the receiver (ICRC, PSN order, lengths, bytes). On the wire,
the data packets carry the given UDP source port, destination QPs and
class; destination port 4791, as every RoCEv2 packet.

`flow_jobs` returns one ``Job`` per host (one with both connections when
source and destination NICs are on the same host): the source sends
`messages` messages of `size` bytes, whole messages round-robin over the
QPs, in steps of at most ``MAX_MESSAGES``; the destination expects the
same bytes step by step. `rate_mbps` paces the whole flow (each QP at its
share, the connection's ``rate_limit_mbps``). `sent` and `received` read
the hosts' reports back as the numbers a test or trace asks about.

Names: ``FLOW``, ``flow_jobs``, ``sent``, ``received``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from traffic.collectives import Rank
from traffic.schema import (
    MAX_MESSAGES,
    Connection,
    HostReport,
    Job,
    QpLink,
    Recv,
    Send,
    Step,
    Transport,
)

__all__ = ["FLOW", "flow_jobs", "received", "sent"]

FLOW = "flow"  # the source's connection id; the destination's is FLOW + "-in"
_QP_BASE = 0x100  # the source's own QP numbers: 0x100, 0x101, ... (none is on the wire forward)


def flow_jobs(src: Rank, dst: Rank, *, qps: Sequence[int], sport: int, messages: int, size: int,
              cls: Literal["data", "control", "default"] = "data",
              rate_mbps: float | None = None, transport: Transport | None = None,
              start_at: float | None = None, name: str = FLOW) -> dict[str, Job]:
    """The jobs of one flow from `src` to `dst` (see the module docstring), by host."""
    if (src.host, src.nic) == (dst.host, dst.nic):
        raise ValueError(f"a flow from {src.nic} to itself does not cross the fabric")
    if not qps or len(set(qps)) != len(qps):
        raise ValueError(f"qps={list(qps)}: give distinct destination QPs")
    if messages < 1 or size < 1:
        raise ValueError(f"messages={messages}, size={size}: both must be at least 1")
    limit = None if rate_mbps is None else rate_mbps / len(qps)
    mine = [_QP_BASE + i for i in range(len(qps))]
    out_conn = Connection(id=FLOW, nic=src.nic, peer_ip=dst.ip, peer_mac=dst.mac, cls=cls,
                          rate_limit_mbps=limit,
                          qps=[QpLink(local=m, remote=q, sport=sport) for m, q in zip(mine, qps,
                                                                                      strict=True)])
    in_conn = Connection(id=FLOW + "-in", nic=dst.nic, peer_ip=src.ip, peer_mac=src.mac, cls=cls,
                         qps=[QpLink(local=q, remote=m, sport=sport) for m, q in zip(mine, qps,
                                                                                     strict=True)])
    counts = [min(MAX_MESSAGES, messages - k) for k in range(0, messages, MAX_MESSAGES)]
    sends = [Step(sends=[Send(conn=FLOW, bytes=n * size, message_bytes=size, strategy="rr")])
             for n in counts]
    recvs = [Step(recvs=[Recv(conn=FLOW + "-in", bytes=n * size)]) for n in counts]
    common: dict[str, Any] = {"name": name, "start_at": start_at,
                              "transport": transport or Transport()}
    if src.host == dst.host:
        both = [Step(sends=s.sends, recvs=r.recvs) for s, r in zip(sends, recvs, strict=True)]
        return {src.host: Job(connections=[out_conn, in_conn], steps=both, **common)}
    return {src.host: Job(connections=[out_conn], steps=sends, **common),
            dst.host: Job(connections=[in_conn], steps=recvs, **common)}


def _report(report: HostReport | Mapping[str, Any]) -> HostReport:
    return report if isinstance(report, HostReport) else HostReport.model_validate(report)


def sent(report: HostReport | Mapping[str, Any]) -> dict[str, int]:
    """The source's side: data packets put on the wire (retransmissions included), and more."""
    r = _report(report)
    c = r.counters
    return {"packets": c.packets_sent, "retransmitted": c.retransmitted,
            "bytes_acknowledged": sum(s.bytes_sent for s in r.steps),
            "messages": sum(s.messages_sent for s in r.steps), "timeouts": c.timeouts}


def received(report: HostReport | Mapping[str, Any]) -> dict[str, int]:
    """The destination's side: data packets that reached the QPs, whole messages, errors."""
    r = _report(report)
    c = r.counters
    return {"packets": c.packets_received + c.duplicates + c.out_of_sequence,
            "messages_complete": sum(s.messages_received for s in r.steps),
            "bytes": sum(s.bytes_received for s in r.steps), "icrc_errors": c.icrc_errors,
            "data_errors": c.data_errors}
