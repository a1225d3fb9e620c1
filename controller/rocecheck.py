"""The RoCEv2 half of `aizone check`: one RDMA WRITE between every ordered pair of hosts.

One all-to-all over NIC 0 of every host, run by the hosts' traffic agents
(`controller.hostagents`): each host writes `SIZE` bytes to every other host
over a Reliable Connection (ICRC, PSN order, lengths and every byte checked
by the receiver). A pair whose transfer did not complete is named with the
agent's words (which step, which peer, how many bytes were owed).

The all-to-all is pairwise (`build_jobs(..., pairwise=True)`): n-1 steps, each
host writing to one peer and written to by one at a time. The check asks
whether every pair is reachable, not how the fabric takes an n-1 to 1 incast:
sent all at once, on a 20-switch BMv2 fabric (`ai_zone_large`) whose switches
forward slower than the links' rate, the 31 writes queued at each host's port
longer than the ACK timeout, one passing check counted 2,181 ACK timeouts over
its 992 writes, and a QP gave up after its 7 retries in 3 of 3 first checks.

Names defined here: `roce_pairs`, `SIZE`.
"""

from __future__ import annotations

import re
import time
from typing import Any

from topologies.addressing import AddressPlan
from traffic.agentclient import AgentError, JobFailed
from traffic.collectives import Rank, build_jobs

from .hostagents import HostAgents
from .jobs import fabric_transport

__all__ = ["SIZE", "roce_pairs"]

SIZE = 4096
# How the agent names the peer a failed step owed bytes to (or the QP that gave up).
_PEER = re.compile(r"(?:send to|from|->) (\d+\.\d+\.\d+\.\d+)")


async def roce_pairs(plan: AddressPlan, agents: HostAgents, timeout: float = 60, *,
                     ack_timeout_ms: float | None = None) -> list[dict[str, Any]]:
    """One result per ordered host pair (see the module docstring).

    `ack_timeout_ms`: the RC ACK timeout; it must exceed the time the fabric's
    queues can hold a packet, or packets only queued are sent again and again
    until the QP gives up (None: the transport's default, NCCL's 134 ms).
    """
    hosts = list(plan.hosts)
    ranks = [Rank(host=h.name, nic=h.nics[0].intf, ip=h.nics[0].ip) for h in hosts]
    n = len(ranks)
    if n < 2:
        return []
    transport = fabric_transport(plan, ack_timeout_ms)
    jobs = build_jobs("alltoall", ranks, SIZE * n, name="check", transport=transport,
                      pairwise=True, start_at=time.time() + 1.0)
    failed: dict[tuple[str, str], str] = {}
    try:
        await agents.run_all(jobs, timeout)
    except JobFailed as exc:
        by_ip = {h.nics[0].ip: h.name for h in hosts}
        src = str((exc.report or {}).get("host", ""))
        peers = {by_ip[ip] for ip in _PEER.findall(str(exc)) if ip in by_ip}
        for dst in peers or {h.name for h in hosts if h.name != src}:
            failed[(src, dst)] = str(exc)
    except AgentError as exc:
        for s in hosts:
            for d in hosts:
                if s is not d:
                    failed[(s.name, d.name)] = str(exc)
    out = []
    for s in hosts:
        for d in hosts:
            if s is d:
                continue
            err = failed.get((s.name, d.name))
            out.append({"src": s.name, "src_ip": s.nics[0].ip, "dst": d.name,
                        "dst_ip": d.nics[0].ip, "kind": "roce", "ok": err is None,
                        "detail": err or f"{SIZE} B RDMA WRITE"})
    return out
