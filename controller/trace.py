"""`aizone trace`: the path of one flow, predicted from the switches' entries, then confirmed.

1. Read every switch's entries back over P4Runtime and predict the path
   with the programs' own hash (`controller.paths.predict_path`, which uses
   `controller.hashing`: the one implementation shared with the model).
2. Confirm it: send `count` RoCEv2 packets of exactly that flow (source
   NIC, destination, UDP source port, destination QP, destination port
   4791, the data class) through the RC transport: the source and the
   destination hosts' traffic agents run one connection's jobs
   (`traffic.flowjobs`), paced at `PACE_MBPS`, so every packet is
   acknowledged and lost ones go again. Read the switches' `tx_port`
   counters before and after. Each predicted hop's egress port must have
   sent at least `count` packets more; every other member of a group the
   flow went through must have sent fewer than half of that (their
   counters also move with link probes and other traffic, which is why the
   test is a margin and not equality). The acknowledgements travel the
   other way, out of ports that are not the forward path's groups.

Names defined here: `trace`, `confirm`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict
from typing import Any

from topologies.addressing import AddressPlan
from traffic.agentclient import AgentError
from traffic.collectives import Rank
from traffic.flowjobs import flow_jobs, sent
from traffic.schema import Transport

from .entities import Entity, Group, Member
from .hostagents import HostAgents
from .paths import PredictedPath, predict_path
from .sessions import FabricSessions

__all__ = ["confirm", "trace"]

TX = "FabricEgress.counters.tx_port"
ROCE_PORT = 4791
# The confirming packets (about 130-byte frames) are paced well below any
# tier's emulated rate, in packets too: BMv2 limits its queues in packets/s
# derived from full-size frames (826/s at 10 Mb/s). A burst would measure how
# fast the emulator reads its ports, not the path.
PACE_MBPS = 0.4
SIZE = 64  # bytes per message: one packet each
# Both agents set their QPs up before the first packet leaves (the job's start_at).
_START_IN = 1.0


async def _tx(sessions: FabricSessions, plan: AddressPlan) -> dict[str, dict[int, int]]:
    names = [s.name for s in plan.switches]
    reads = await asyncio.gather(*(sessions.read_counters(
        n, TX, [p.port for p in plan.switch(n).ports]) for n in names))
    return {n: {i: c.packets for i, c in cells.items()} for n, cells in zip(names, reads,
                                                                          strict=True)}


def _alternatives(path: PredictedPath, entries: dict[str, list[Entity]],
                  plan: AddressPlan) -> dict[str, list[int]]:
    """Per hop through a group: the other members' ports (where the flow must not go)."""
    out: dict[str, list[int]] = {}
    for hop in path.hops:
        if hop.group_id is None:
            continue
        groups = [e for e in entries[hop.switch] if isinstance(e, Group)
                  and e.group_id == hop.group_id]
        if not groups:
            continue
        members = {e.member_id: e for e in entries[hop.switch] if isinstance(e, Member)}
        ports = []
        for mid in groups[0].members:
            member = members.get(mid)
            params = dict(member.action.params) if member is not None else {}
            port = params.get("port")
            if port is not None and port != hop.egress_port:
                ports.append(int(port))
        out[hop.switch] = ports
    return out


async def confirm(sessions: FabricSessions, plan: AddressPlan, agents: HostAgents,
                  path: PredictedPath, entries: dict[str, list[Entity]], *, sport: int, qp: int,
                  count: int = 200, ack_timeout_ms: float | None = None) -> dict[str, Any]:
    """Send the flow through the RC transport and check the counters on (and off) the path.

    `ack_timeout_ms`: the RC ACK timeout, the fabric's (None: the transport's default).
    """
    nic = next(n for n in plan.nics() if n.intf == path.src)
    dst = plan.nic_by_ip(path.dst_ip)
    jobs = flow_jobs(Rank(host=nic.host, nic=nic.intf, ip=nic.ip),
                     Rank(host=dst.host, nic=dst.intf, ip=dst.ip), qps=(qp,), sport=sport,
                     messages=count, size=SIZE, cls="data", rate_mbps=PACE_MBPS,
                     start_at=time.time() + _START_IN, name="trace",
                     transport=Transport(ack_timeout_ms=ack_timeout_ms) if ack_timeout_ms else None)
    before = await _tx(sessions, plan)
    try:
        reports = await agents.run_all(jobs, timeout=60)
    except AgentError as exc:
        return {"confirmed": False, "error": str(exc)[-300:]}
    # Every packet was acknowledged, so every switch on the path has counted it.
    after = await _tx(sessions, plan)
    hops = []
    ok = True
    others = _alternatives(path, entries, plan)
    for hop in path.hops:
        moved = after[hop.switch].get(hop.egress_port, 0) - before[hop.switch].get(
            hop.egress_port, 0)
        off = {p: after[hop.switch].get(p, 0) - before[hop.switch].get(p, 0)
               for p in others.get(hop.switch, [])}
        hop_ok = moved >= count and all(v < count / 2 for v in off.values())
        ok = ok and hop_ok
        hops.append({"switch": hop.switch, "egress_port": hop.egress_port, "sent": moved,
                     "other_members": off, "ok": hop_ok})
    source = sent(reports[nic.host])
    return {"confirmed": ok and path.delivered_to is not None, "packets": count,
            "retransmitted": source["retransmitted"], "hops": hops}


async def trace(sessions: FabricSessions, plan: AddressPlan, agents: HostAgents | None,
                src: str, dst: str, *, sport: int = 49152, dport: int = ROCE_PORT, qp: int = 17,
                send: bool = True, ack_timeout_ms: float | None = None) -> dict[str, Any]:
    """Predict (and with `send`, confirm) the path of one flow; see the module docstring.

    `agents` are the fabric's traffic agents, which send the confirming flow
    (None: the path is predicted, and the confirmation says why not sent);
    `ack_timeout_ms` their RC ACK timeout (None: the transport's default).
    """
    src_nic = _nic_of(plan, src)
    dst_ip = _ip_of(plan, dst)
    names = [s.name for s in plan.switches]
    states = await asyncio.gather(*(sessions.read_state(n) for n in names))
    entries = dict(zip(names, states, strict=True))
    path = predict_path(plan, entries, src_nic, dst_ip, sport=sport, dport=dport, qp=qp)
    result: dict[str, Any] = {"src": src_nic, "dst_ip": dst_ip, "sport": sport, "dport": dport,
                              "qp": qp, "prediction": _path_json(path)}
    if send and dport == ROCE_PORT and path.delivered_to is not None and agents is not None:
        result["confirmation"] = await confirm(sessions, plan, agents, path, entries,
                                               sport=sport, qp=qp, ack_timeout_ms=ack_timeout_ms)
    elif send:
        result["confirmation"] = {"confirmed": None, "error": (
            "only RoCEv2 flows (destination port 4791) are sent to confirm a path"
            if dport != ROCE_PORT else "the predicted path does not reach a host"
            if path.delivered_to is None else "the traffic agents are not running")}
    return result


def _path_json(path: PredictedPath) -> dict[str, Any]:
    return {"hops": [asdict(h) for h in path.hops], "links": list(path.links),
            "delivered_to": path.delivered_to, "dropped_at": path.dropped_at,
            "reason": path.reason}


def _nic_of(plan: AddressPlan, name: str) -> str:
    """A host (its NIC 0), a NIC interface or a NIC address -> the NIC's interface."""
    for h in plan.hosts:
        if h.name == name:
            return h.nics[0].intf
        for n in h.nics:
            if name in (n.intf, n.ip):
                return n.intf
    raise ValueError(f"no host, NIC or NIC address {name!r} in fabric {plan.name}")


def _ip_of(plan: AddressPlan, name: str) -> str:
    for h in plan.hosts:
        if h.name == name:
            return h.nics[0].ip
        for n in h.nics:
            if name in (n.intf, n.ip):
                return n.ip
    raise ValueError(f"no host, NIC or NIC address {name!r} in fabric {plan.name}")
