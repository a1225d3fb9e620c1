"""`aizone check`: can every host reach every other host, by ping and by RoCEv2?

For every ordered pair of hosts (src, dst) and every NIC index k of src,
one ICMP echo from src's NIC k to dst's NIC k (NIC 0 when dst has fewer),
with the source address bound, so each NIC's own uplink and routing table
is exercised. With `roce`, one RoCEv2 RDMA WRITE per ordered host pair over
NIC 0, received and checked (ICRC, PSN order, length) by the destination's
traffic agent. Pings run a few at a time in the host namespaces
(`FabricRuntime.host_run`).

Names defined here: `check_pairs`, `Pair`, `ping_pairs`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from topologies.addressing import AddressPlan

__all__ = ["Pair", "check_pairs", "ping_pairs"]

_RECEIVED = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_RTT = re.compile(r"= [\d.]+/([\d.]+)/")
PARALLEL = 8


@dataclass(frozen=True, kw_only=True)
class Pair:
    """One ping of the check: from host `src` (NIC address `src_ip`) to `dst_ip` of `dst`."""

    src: str
    src_ip: str
    dst: str
    dst_ip: str


def ping_pairs(plan: AddressPlan) -> list[Pair]:
    """Every (src NIC k, dst NIC k) over ordered host pairs (see the module docstring)."""
    out = []
    for s in plan.hosts:
        for d in plan.hosts:
            if s.name == d.name:
                continue
            for k, nic in enumerate(s.nics):
                dn = d.nics[k] if k < len(d.nics) else d.nics[0]
                out.append(Pair(src=s.name, src_ip=nic.ip, dst=d.name, dst_ip=dn.ip))
    return out


async def _ping(fabric: Any, pair: Pair) -> dict[str, Any]:
    argv = ["ping", "-n", "-q", "-c", "1", "-W", "2", "-I", pair.src_ip, pair.dst_ip]
    proc = await asyncio.to_thread(fabric.host_run, pair.src, argv, 10)
    m = _RECEIVED.search(proc.stdout or "")
    rtt = _RTT.search(proc.stdout or "")
    ok = m is not None and int(m.group(2)) >= 1
    return {"src": pair.src, "src_ip": pair.src_ip, "dst": pair.dst, "dst_ip": pair.dst_ip,
            "kind": "ping", "ok": ok, "rtt_ms": float(rtt.group(1)) if rtt else None,
            "detail": "" if ok else (proc.stdout or proc.stderr or "").strip()[-200:]}


async def check_pairs(plan: AddressPlan, fabric: Any, agents: Any = None, *, roce: bool = True,
                      ack_timeout_ms: float | None = None,
                      progress: Callable[[int, int], object] | None = None) -> dict[str, Any]:
    """Ping every pair (and, with `roce`, one RoCEv2 transfer per host pair).

    `ack_timeout_ms`: the RC ACK timeout of the transfers, the fabric's as for
    `aizone run` (`controller.jobs.fabric_ack_timeout_ms`); None: the transport's.
    """
    pairs = ping_pairs(plan)
    sem = asyncio.Semaphore(PARALLEL)
    done = 0

    async def one(pair: Pair) -> dict[str, Any]:
        """Ping `pair` (at most `PARALLEL` at once) and report progress every 8 done."""
        nonlocal done
        async with sem:
            r = await _ping(fabric, pair)
        done += 1
        if progress is not None and (done % 8 == 0 or done == len(pairs)):
            progress(done, len(pairs))
        return r

    results = list(await asyncio.gather(*(one(p) for p in pairs)))
    if roce and agents is not None:
        from .rocecheck import roce_pairs

        results += await roce_pairs(plan, agents, ack_timeout_ms=ack_timeout_ms)
    failed = [r for r in results if not r["ok"]]
    return {"ok": not failed, "pairs": len(results), "failed": failed,
            "pings": sum(1 for r in results if r["kind"] == "ping"),
            "roce": sum(1 for r in results if r["kind"] == "roce"), "results": results,
            "ack_timeout_ms": ack_timeout_ms if roce and agents is not None else None}
