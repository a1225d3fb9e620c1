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

Which flow: the UDP source port and destination QP come from the one
allocation the agents, the model and the experiments' predictor share
(`traffic.connections`), so a trace follows the packets a run sends:

- `job_flow(plan, job, connection, qp_index)`: QP `qp_index` of a
  connection (``"r<s>>r<d>"``, default the job's first) of a collective the
  daemon ran (its record: pattern, ranks' NICs, QPs, `sport_per_qp`);
- `pair_flow(plan, src, dst, qps, qp_index)`: the connection of SRC -> DST
  as rank 0 -> rank 1 of a job of their own (for two hosts, what `aizone run
  allreduce --hosts SRC,DST --per host --qps Q` sends from SRC to DST);
- an explicit `sport`/`qp` overrides either number (a flow no job sends).

Names defined here: `TraceFlow`, `resolve_flow`, `job_flow`, `pair_flow`, `trace`,
`confirm`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from topologies.addressing import AddressPlan
from traffic.agentclient import AgentError
from traffic.collectives import Rank
from traffic.connections import AllocationError, plan_connections, receiver_qpn, source_port
from traffic.flowjobs import flow_jobs, sent

from .entities import Entity, Group, Member
from .hostagents import HostAgents
from .jobs import fabric_transport
from .paths import PredictedPath, predict_path
from .sessions import FabricSessions

__all__ = ["TraceFlow", "confirm", "job_flow", "pair_flow", "resolve_flow", "trace"]

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


@dataclass(frozen=True, kw_only=True)
class TraceFlow:
    """The flow a trace follows, and which connection of the allocation it is."""

    src: str
    """The source NIC's interface."""
    dst_ip: str
    """The destination NIC's address."""
    sport: int
    """The UDP source port."""
    qp: int
    """The BTH destination QP (the receiver's QP of the connection)."""
    connection: str | None = None
    """The connection ("r<s>>r<d>") whose QP this is; None: a flow given by its numbers."""
    qp_index: int = 0
    """Which of the connection's QPs."""
    job: int | None = None
    """The daemon's job the connection belongs to; None: the pair's own allocation."""


def _ranks(plan: AddressPlan, nics: list[str]) -> list[Rank]:
    by = {n.intf: n for n in plan.nics()}
    missing = [x for x in nics if x not in by]
    if missing:
        raise ValueError(f"no NIC {missing[0]!r} in fabric {plan.name}")
    return [Rank(host=by[x].host, nic=x, ip=by[x].ip) for x in nics]


def _pick(plans: tuple[Any, ...], connection: str | None, qp_index: int, where: str) -> Any:
    if not plans:
        raise ValueError(f"{where}: no connection crosses the fabric")
    if connection is None:
        chosen = plans[0]
    else:
        chosen = next((c for c in plans if c.id == connection), None)
        if chosen is None:
            ids = [c.id for c in plans]
            shown = ", ".join(ids[:8]) + (f" ... ({len(ids)} in all)" if len(ids) > 8 else "")
            raise ValueError(f"{where}: no connection {connection!r}; it has {shown}")
    if not 0 <= qp_index < len(chosen.receiver_qpns):
        raise ValueError(f"{where}: qp_index={qp_index}: connection {chosen.id} has "
                         f"{len(chosen.receiver_qpns)} QP(s), 0..{len(chosen.receiver_qpns) - 1}")
    return chosen


def job_flow(plan: AddressPlan, job: Mapping[str, Any], connection: str | None = None,
             qp_index: int = 0) -> TraceFlow:
    """QP `qp_index` of `connection` (None: the first) of a job the daemon ran (its record)."""
    req = job.get("request") or {}
    where = f"job {job.get('id')}"
    try:
        ranks = _ranks(plan, list(job["ranks_nics"]))
        plans = plan_connections(str(job["pattern"]), ranks, int(req.get("qps", 1)),
                                 job_name=f"job{job.get('id')}-{job['pattern']}",
                                 sport_per_qp=bool(req.get("sport_per_qp", False)))
    except KeyError as exc:
        raise ValueError(f"{where}: its record has no {exc.args[0]!r}") from None
    except AllocationError as exc:
        raise ValueError(f"{where}: {exc}") from None
    c = _pick(plans, connection, qp_index, where)
    return TraceFlow(src=ranks[c.src].nic, dst_ip=ranks[c.dst].ip, sport=c.sports[qp_index],
                     qp=c.receiver_qpns[qp_index], connection=c.id, qp_index=qp_index,
                     job=int(job["id"]) if job.get("id") is not None else None)


def pair_flow(plan: AddressPlan, src: str, dst: str, *, qps: int = 1, qp_index: int = 0,
              sport_per_qp: bool = False) -> TraceFlow:
    """QP `qp_index` of SRC -> DST, rank 0 -> rank 1 of a job of their own with `qps` QPs."""
    ranks = _ranks(plan, [_nic_of(plan, src), _nic_of(plan, dst)])
    where = f"{src} -> {dst}"
    if ranks[0].nic == ranks[1].nic:
        raise ValueError(f"{where}: a flow from {ranks[0].nic} to itself does not cross the "
                         f"fabric")
    if not 1 <= qps <= 255:
        raise ValueError(f"{where}: qps={qps}: must be 1..255")
    if not 0 <= qp_index < qps:
        raise ValueError(f"{where}: qp_index={qp_index}: must be 0..{qps - 1} with {qps} QP(s)")
    # The allocation's own numbers for connection r0>r1 (`plan_connections` gives the
    # same for two hosts; two NICs of one host get no connection in a job, since they
    # exchange over the host's interconnect, but a trace between them crosses the RTSW).
    return TraceFlow(src=ranks[0].nic, dst_ip=ranks[1].ip,
                     sport=source_port(ranks[0].ip, ranks[1].ip, qp_index, per_qp=sport_per_qp),
                     qp=receiver_qpn(0, qp_index, qps), connection="r0>r1", qp_index=qp_index)


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
    transport = fabric_transport(plan, ack_timeout_ms)
    jobs = flow_jobs(Rank(host=nic.host, nic=nic.intf, ip=nic.ip),
                     Rank(host=dst.host, nic=dst.intf, ip=dst.ip), qps=(qp,), sport=sport,
                     messages=count, size=SIZE, cls="data", rate_mbps=PACE_MBPS,
                     start_at=time.time() + _START_IN, name="trace",
                     transport=transport)
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
                flow: TraceFlow, *, dport: int = ROCE_PORT, send: bool = True,
                ack_timeout_ms: float | None = None) -> dict[str, Any]:
    """Predict (and with `send`, confirm) the path of `flow`; see the module docstring.

    `agents` are the fabric's traffic agents, which send the confirming flow
    (None: the path is predicted, and the confirmation says why not sent);
    `ack_timeout_ms` their RC ACK timeout (None: the transport's default).
    """
    src_nic, dst_ip, sport, qp = flow.src, flow.dst_ip, flow.sport, flow.qp
    names = [s.name for s in plan.switches]
    states = await asyncio.gather(*(sessions.read_state(n) for n in names))
    entries = dict(zip(names, states, strict=True))
    path = predict_path(plan, entries, src_nic, dst_ip, sport=sport, dport=dport, qp=qp)
    result: dict[str, Any] = {"src": src_nic, "dst_ip": dst_ip, "sport": sport, "dport": dport,
                              "qp": qp, "connection": flow.connection,
                              "qp_index": flow.qp_index, "job": flow.job,
                              "prediction": _path_json(path)}
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



def resolve_flow(plan: AddressPlan, jobs: Mapping[int, Mapping[str, Any]], *,
                 src: str | None = None, dst: str | None = None, job: int | None = None,
                 connection: str | None = None, qp_index: int = 0, qps: int = 1,
                 sport_per_qp: bool = False, sport: int | None = None,
                 qp: int | None = None) -> TraceFlow:
    """The flow a trace request names: a job's connection, or SRC -> DST's (module docstring).

    `jobs` are the daemon's job records by id; `sport` and `qp`, when given,
    replace the allocation's numbers (the flow is then no connection's).
    """
    if job is not None:
        if src is not None or dst is not None or qps != 1 or sport_per_qp:
            raise ValueError("a job's connection: its job record gives the NICs, QPs and "
                             "source ports (leave out src, dst, qps and sport_per_qp)")
        record = jobs.get(job)
        if record is None:
            kept = sorted(jobs)
            raise ValueError(f"no job {job}: the daemon keeps the latest 50"
                             + (f" ({kept[0]}..{kept[-1]})" if kept else ", and has run none"))
        flow = job_flow(plan, record, connection, qp_index)
    elif src is None or dst is None:
        raise ValueError("give a source and a destination, or a job (and its connection)")
    elif connection is not None:
        raise ValueError(f"connection {connection!r} names a job's connection: give the job too")
    else:
        flow = pair_flow(plan, src, dst, qps=qps, qp_index=qp_index, sport_per_qp=sport_per_qp)
    if sport is None and qp is None:
        return flow
    return TraceFlow(src=flow.src, dst_ip=flow.dst_ip,
                     sport=flow.sport if sport is None else sport,
                     qp=flow.qp if qp is None else qp)
