"""Flows to paths: every flow walked hop by hop as the switches forward it, vectorised.

`LinkTable(graph, spec)` numbers the directed links of a fabric: one per
switch port (what leaves the switch by that port) and one per NIC (what
the NIC sends into its RTSW), each with its cable's id, tier, direction
(`up` from the lower tier) and rate. `route_flows(graph, links, flows,
mode)` returns which directed links each flow crosses, using the one route
computation (`controller.routegraph.RouteGraph.route_sets`) and the one program
hash (`controller.hashing`): per hop, flows are grouped by the switch they
are at, the switch's route for each distinct destination is looked up
once, and a flow in a group takes member crc16(ecmp_key) % members, with
ecmp_key salted by that switch. The per-flow CRC-32 is computed once (it
does not depend on the switch); per hop only the salt, the multiply and the
CRC-16 are recomputed.

Rates: every directed link carries its tier's represented rate,
`rate_mbps * FabricSpec.scale` (the line rate the emulated rate stands
for), in bits/s; a spec without rates gives every tier `line_rate_gbps`.

Names defined here: `LinkTable`, `Routed`, `route_flows`, `TIERS`, `MAX_HOPS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from controller import hashing
from controller.routegraph import RouteGraph

from .flows import Flows

__all__ = ["MAX_HOPS", "TIERS", "LinkTable", "Routed", "route_flows"]

MAX_HOPS = 12
# (tier, direction) of each directed link, in report order.
TIERS = ("host up", "rtsw_ctsw up", "ctsw_atsw up", "ctsw_atsw down", "rtsw_ctsw down",
         "host down")
_TIER_OF = {("rtsw", "host"): "host down", ("rtsw", "uplink"): "rtsw_ctsw up",
            ("ctsw", "downlink"): "rtsw_ctsw down", ("ctsw", "uplink"): "ctsw_atsw up",
            ("atsw", "downlink"): "ctsw_atsw down"}
Ints = npt.NDArray[np.int64]


def _tier_rates(spec: Any) -> dict[str, float]:
    """bits/s per cable tier: rate_mbps x scale, or the line rate when the spec has no rates."""
    line = float(getattr(spec, "line_rate_gbps", 400) or 400) * 1e9
    links = getattr(spec, "links", None)
    host = getattr(getattr(links, "host", None), "rate_mbps", None)
    out = {}
    for tier in ("host", "rtsw_ctsw", "ctsw_atsw"):
        rate = getattr(getattr(links, tier, None), "rate_mbps", None)
        out[tier] = line * rate / host if rate and host else line
    return out


class LinkTable:
    """The directed links of a `RouteGraph` (module docstring).

    Arrays per directed link: `link` (index into `ids`), `tier` (index into
    `TIERS`), `src` (name of the node it leaves), `capacity` (bits/s);
    `port_base[s]` is the first directed link of switch s (then one per port
    in port order) and `nic_base` the first NIC up-link (then one per NIC).
    """

    def __init__(self, graph: RouteGraph, spec: Any = None) -> None:
        rates = _tier_rates(spec)
        ids: dict[str, int] = {}
        link: list[int] = []
        tier: list[int] = []
        src: list[str] = []
        cap: list[float] = []
        self.port_base = np.zeros(len(graph.names), dtype=np.int64)
        for s, ports in enumerate(graph.ports):
            self.port_base[s] = len(link)
            sw = graph.plan.switches[s]
            for p, lid in zip(sw.ports, ports.link, strict=True):
                name = _TIER_OF[(sw.role, p.kind)]
                link.append(ids.setdefault(lid, len(ids)))
                tier.append(TIERS.index(name))
                src.append(sw.name)
                cap.append(rates[name.split()[0]])
        self.nic_base = len(link)
        for nic in graph.plan.nics():
            sw = graph.plan.switches[graph.index[nic.switch]]
            lid = sw.port(nic.switch_port).link_id
            link.append(ids.setdefault(lid, len(ids)))
            tier.append(0)
            src.append(nic.host)
            cap.append(rates["host"])
        self.ids = tuple(ids)
        self.link = np.array(link, dtype=np.int64)
        self.tier = np.array(tier, dtype=np.int64)
        self.src = tuple(src)
        self.capacity = np.array(cap, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.link)

    def name(self, d: int) -> str:
        """'<link id> up|down' for people."""
        return f"{self.ids[self.link[d]]} {TIERS[self.tier[d]].split()[1]}"


@dataclass(frozen=True)
class Routed:
    """Where the flows of one step went: (flow, directed link) pairs and the fate of each flow."""

    flow_of: Ints  # flow index of each crossing
    link_of: Ints  # directed link of each crossing
    delivered: npt.NDArray[np.bool_]  # per flow
    hops: Ints  # switches crossed, per flow


def route_flows(graph: RouteGraph, links: LinkTable, flows: Flows, mode: str) -> Routed:
    """The directed links each flow crosses under `mode` (module docstring)."""
    n = len(flows)
    ips = graph.nic_ips
    flow_h = hashing.flow_hash(ips[flows.src], ips[flows.dst], 17, flows.sport, flows.dport,
                               flows.qp, mode=mode)
    fl_parts: list[Ints] = []
    ln_parts: list[Ints] = []
    delivered = np.zeros(n, dtype=bool)
    hops = np.zeros(n, dtype=np.int64)
    idx = np.arange(n, dtype=np.int64)
    alive = graph.nic_live[flows.src]
    fl_parts.append(idx[alive])
    ln_parts.append(links.nic_base + flows.src[alive])
    active = idx[alive]
    at = graph.racks[graph.nic_rack[flows.src[alive]]]
    pin_rtsw = mode == "pin"
    for _ in range(MAX_HOPS):
        if not len(active):
            break
        order = np.argsort(at, kind="stable")
        active, at = active[order], at[order]
        h = hashing.member_hash(hashing.ecmp_key(flow_h[active], graph.salt[at]))
        switches, starts = np.unique(at, return_index=True)
        ends = np.append(starts[1:], len(at))
        egress = np.full(len(active), -1, dtype=np.int64)
        nxt = np.full(len(active), -1, dtype=np.int64)
        for s, a, b in zip(switches.tolist(), starts.tolist(), ends.tolist(), strict=True):
            dst = flows.dst[active[a:b]]
            # What the route depends on: the NIC at an RTSW for its own rack (and
            # every NIC in pin mode), the rack everywhere else.
            rack = graph.nic_rack[dst]
            per_nic = (rack == graph.rack_of[s]) | pin_rtsw if graph.role[s] == "rtsw" else \
                np.zeros(len(dst), dtype=bool)
            key = np.where(per_nic, dst, -1 - rack)
            uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
            mask = graph.route_sets(s, dst[first], mode)
            counts = mask.sum(axis=1)
            table = np.argsort(~mask, axis=1, kind="stable")  # True positions first, in port order
            c = counts[inv]
            ok = c > 0
            pos = table[inv, h[a:b] % np.maximum(c, 1)]
            p = graph.ports[s]
            egress[a:b] = np.where(ok, links.port_base[s] + pos, -1)
            nxt[a:b] = np.where(ok, p.peer[pos], -2)
            host = ok & (p.kind[pos] == 0)
            nxt[a:b][host] = -3  # reached a host
        went = egress >= 0
        fl_parts.append(active[went])
        ln_parts.append(egress[went])
        hops[active[went]] += 1
        delivered[active[nxt == -3]] = True
        keep = nxt >= 0
        active, at = active[keep], nxt[keep]
    return Routed(flow_of=np.concatenate(fl_parts), link_of=np.concatenate(ln_parts),
                  delivered=delivered, hops=hops)
