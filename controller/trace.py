"""`aizone trace`: the path of one flow, predicted from the switches' entries, then confirmed.

1. Read every switch's entries back over P4Runtime and predict the path
   with the programs' own hash (`controller.paths.predict_path`, which uses
   `controller.hashing`: the one implementation shared with the model).
2. Confirm it: send `count` RoCEv2 packets of exactly that flow (source
   NIC, destination, UDP source port, destination QP; destination port
   4791) from the source host with the traffic agent, paced at
   `PACE_MBPS`, and read the
   switches' `tx_port` counters before and after. Each predicted hop's
   egress port must have sent at least `count` packets more; every other
   member of a group the flow went through must have sent fewer than half
   of that (their counters also move with link probes and other traffic,
   which is why the test is a margin and not equality).

Names defined here: `trace`, `confirm`.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import asdict
from typing import Any

from topologies.addressing import AddressPlan

from .entities import Entity, Group, Member
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


async def confirm(sessions: FabricSessions, plan: AddressPlan, fabric: Any, path: PredictedPath,
                  entries: dict[str, list[Entity]], *, sport: int, qp: int,
                  count: int = 200) -> dict[str, Any]:
    """Send the flow and check the counters on (and off) the predicted path."""
    nic = next(n for n in plan.nics() if n.intf == path.src)
    before = await _tx(sessions, plan)
    argv = [sys.executable, "-m", "traffic.agent", "send", "--iface", nic.intf, "--dst-ip",
            path.dst_ip, "--qps", str(qp), "--sport", str(sport), "--messages", str(count),
            "--size", "64", "--rate-mbps", str(PACE_MBPS), "--json"]
    proc = await asyncio.to_thread(fabric.host_run, nic.host, argv, 60)
    if proc.returncode != 0:
        return {"confirmed": False, "error": (proc.stdout + proc.stderr).strip()[-300:]}
    await asyncio.sleep(0.5)  # let the last packets cross the fabric
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
    return {"confirmed": ok and path.delivered_to is not None, "packets": count, "hops": hops}


async def trace(sessions: FabricSessions, plan: AddressPlan, fabric: Any, src: str, dst: str,
                *, sport: int = 49152, dport: int = ROCE_PORT, qp: int = 17,
                send: bool = True) -> dict[str, Any]:
    """Predict (and with `send`, confirm) the path of one flow; see the module docstring."""
    src_nic = _nic_of(plan, src)
    dst_ip = _ip_of(plan, dst)
    names = [s.name for s in plan.switches]
    states = await asyncio.gather(*(sessions.read_state(n) for n in names))
    entries = dict(zip(names, states, strict=True))
    path = predict_path(plan, entries, src_nic, dst_ip, sport=sport, dport=dport, qp=qp)
    result: dict[str, Any] = {"src": src_nic, "dst_ip": dst_ip, "sport": sport, "dport": dport,
                              "qp": qp, "prediction": _path_json(path)}
    if send and dport == ROCE_PORT and path.delivered_to is not None:
        result["confirmation"] = await confirm(sessions, plan, fabric, path, entries,
                                               sport=sport, qp=qp)
    elif send:
        result["confirmation"] = {"confirmed": None, "error": (
            "only RoCEv2 flows (destination port 4791) are sent to confirm a path"
            if dport != ROCE_PORT else "the predicted path does not reach a host")}
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
