"""The per-role route entries: the `controller.entities` values each switch needs for a mode.

Pure functions of (plan, mode, failed links): `compute_routes` /
`compute_all` build every switch's entities from
`controller.routegraph.RouteGraph.route_sets` only (that module's docstring
has the rule: which ports lead where, per role and mode).

Entities. Next hops are action-profile members of the `next_hop` table's
selector, one per port (member id = port number, action `set_output(port,
port MAC, neighbour MAC)`); a route points at a `next_id`:

- next_id = a port number (1..510): that single port, the member directly.
- next_id >= 1024: a selector group, group id = next_id. Groups are
  deduplicated by member set, and ids are stable: the member sets of the
  failure-free fabric keep their ids - 1024 (`UPLINK_GROUP`) = every uplink
  of an RTSW or every ATSW uplink of a CTSW, 1024 + 1 + k (`BUNDLE_BASE`)
  = the k-th parallel-link bundle (CTSW to the k-th rack it links to, ATSW
  to zone k) - and any other set gets 2048 + i, i its rank among the
  switch's other sets in ascending order of member tuples.

Per role, the routes (in this order): RTSW - ARP replies for each
host-facing gateway, a /32 per own NIC, the rack's /24 dropped (an unknown
local address must not bounce off a CTSW), then per other rack its /24
(`ecmp`/`eecmp`) or a /32 per remote NIC (`pin`). CTSW - each own-zone
rack's /24, the zone's /16 dropped, each other zone's /16. ATSW - each
zone's /16. A zone's /16 at a CTSW or ATSW points where most of its racks
go; a rack that goes elsewhere after a failure gets its own /24 (a drop
route when it is unreachable), so LPM forwards every rack along its own
shortest paths and nothing loops. An unreachable destination gets a drop
route. Every switch: `switch_config` default action `set_config(mode,
salt)` with salt = device id, so stacked tiers do not hash a flow alike.
With no failed link the entries are those of the static computation this
module replaced.

Names defined here: `SwitchEntries`, `compute_routes`, `compute_all`,
`NAMES`, `UPLINK_GROUP`, `BUNDLE_BASE`, `OTHER_GROUP_BASE`.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass

from topologies.addressing import AddressPlan, PortPlan, SwitchPlan, ip_to_int, mac_to_int

from .entities import Action, Entity, Exact, Group, Lpm, Member, TableEntry
from .routegraph import MODE_VALUES, RouteGraph, check_mode

__all__ = [
    "BUNDLE_BASE",
    "NAMES",
    "OTHER_GROUP_BASE",
    "UPLINK_GROUP",
    "SwitchEntries",
    "compute_all",
    "compute_routes",
]

UPLINK_GROUP = 1024
BUNDLE_BASE = 1024
OTHER_GROUP_BASE = 2048

# The P4Runtime names route computation writes; one place to change them.
NAMES = {
    "arp_table": "FabricIngress.arp.arp_reply",
    "arp_action": "FabricIngress.arp.reply",
    "config_table": "FabricIngress.config.switch_config",
    "config_action": "FabricIngress.config.set_config",
    "route_table": "FabricIngress.routing.ipv4_route",
    "route_action": "FabricIngress.routing.set_next_id",
    "route_drop": "FabricIngress.routing.drop_no_route",
    "next_table": "FabricIngress.routing.next_hop",
    "next_action": "FabricIngress.routing.set_output",
    "selector": "FabricIngress.routing.ecmp_selector",
    "rx_counter": "FabricIngress.counters.rx_port",
    "tx_counter": "FabricEgress.counters.tx_port",
}


@dataclass(frozen=True, kw_only=True)
class SwitchEntries:
    """Everything one switch needs, in a safe install order."""

    switch: str
    members: tuple[Member, ...]
    groups: tuple[Group, ...]
    entries: tuple[TableEntry, ...]
    defaults: tuple[TableEntry, ...]

    def install_order(self) -> list[Entity]:
        """Members before the groups and entries that refer to them; defaults last."""
        return [*self.members, *self.groups, *self.entries, *self.defaults]

    def delete_order(self) -> list[Entity]:
        """Entries before the groups and members they refer to (defaults are not deleted)."""
        return [*reversed(self.entries), *reversed(self.groups), *reversed(self.members)]

    def count(self) -> dict[str, int]:
        """How many entries each table gets (members, groups and defaults not counted)."""
        out: dict[str, int] = {}
        for e in self.entries:
            out[e.table] = out.get(e.table, 0) + 1
        return out


def _prefix(cidr: str) -> Lpm:
    net = ipaddress.IPv4Network(cidr)
    return Lpm(value=int(net.network_address), prefix_len=net.prefixlen)


def _member(port: PortPlan) -> Member:
    return Member(profile=NAMES["selector"], member_id=port.port, action=Action(
        name=NAMES["next_action"],
        params=(("port", port.port), ("src_mac", mac_to_int(port.mac)),
                ("dst_mac", mac_to_int(port.peer_mac)))))


def _next_entry(next_id: int, *, group: bool) -> TableEntry:
    match = (("next_id", Exact(value=next_id)),)
    if group:
        return TableEntry(table=NAMES["next_table"], match=match, group_id=next_id)
    return TableEntry(table=NAMES["next_table"], match=match, member_id=next_id)


Ports = tuple[int, ...]


class _Acc:
    """Collects one switch's routes as (prefix, ports); entities come out in `done`."""

    def __init__(self, sw: SwitchPlan, canonical: dict[Ports, int]) -> None:
        self.sw = sw
        self.canonical = canonical
        self.routes: list[tuple[str, Ports]] = []
        self.arp: list[TableEntry] = []

    def route(self, cidr: str, ports: Ports) -> None:
        """Add a route to `cidr` over `ports` (one port, a group's ports, or () to drop)."""
        self.routes.append((cidr, ports))

    def done(self, mode: str) -> SwitchEntries:
        """The switch's entities for `mode`: members, groups, next hops, routes, config."""
        sets = sorted({p for _, p in self.routes if len(p) > 1})
        ids = {p: self.canonical[p] for p in sets if p in self.canonical}
        others = [p for p in sets if p not in self.canonical]
        ids.update({p: OTHER_GROUP_BASE + i for i, p in enumerate(others)})
        groups = sorted((Group(profile=NAMES["selector"], group_id=gid, members=p,
                               max_size=len(p)) for p, gid in ids.items()),
                        key=lambda g: g.group_id)
        next_hops: dict[int, TableEntry] = {}
        entries: list[TableEntry] = []
        for cidr, ports in self.routes:
            match = (("dst_addr", _prefix(cidr)),)
            if not ports:
                entries.append(TableEntry(table=NAMES["route_table"], match=match,
                                          action=Action(name=NAMES["route_drop"])))
                continue
            nid = ports[0] if len(ports) == 1 else ids[ports]
            next_hops.setdefault(nid, _next_entry(nid, group=len(ports) > 1))
            entries.append(TableEntry(table=NAMES["route_table"], match=match, action=Action(
                name=NAMES["route_action"], params=(("next_id", nid),))))
        config = TableEntry(table=NAMES["config_table"], is_default=True, action=Action(
            name=NAMES["config_action"],
            params=(("mode", MODE_VALUES[mode]), ("salt", self.sw.device_id & 0xFFFFFFFF))))
        return SwitchEntries(
            switch=self.sw.name, members=tuple(_member(p) for p in self.sw.ports),
            groups=tuple(groups),
            entries=(*self.arp, *(next_hops[k] for k in sorted(next_hops)), *entries),
            defaults=(config,))


def _rack_nics(g: RouteGraph) -> dict[int, list[int]]:
    """rack index -> its NIC indices, in plan order."""
    out: dict[int, list[int]] = {}
    for i, r in enumerate(g.nic_rack.tolist()):
        out.setdefault(int(r), []).append(i)
    return out


def _rtsw(g: RouteGraph, sw: SwitchPlan, mode: str, acc: _Acc) -> None:
    s = g.index[sw.name]
    own = [p for p in sw.ports_of("host")]
    for p in own:
        assert p.gateway_ip and p.host_ip
        acc.arp.append(TableEntry(
            table=NAMES["arp_table"], match=(("target_ip", Exact(value=ip_to_int(p.gateway_ip))),),
            action=Action(name=NAMES["arp_action"], params=(("router_mac", mac_to_int(p.mac)),))))
    own_nics = [g.nic_of_ip(p.host_ip or "") for p in own]
    if own_nics:
        rows = g.route_sets(s, [n for n in own_nics if n is not None], mode)
        for p, row in zip(own, rows, strict=True):
            acc.route(f"{p.host_ip}/32", g.ports_of(s, row))
    assert sw.subnet
    acc.route(sw.subnet, ())
    if not sw.ports_of("uplink"):
        return
    by_rack = _rack_nics(g)
    me = int(g.rack_of[s])
    for rack, nics in sorted(by_rack.items()):
        if rack == me:
            continue
        if mode == "pin":
            rows = g.route_sets(s, nics, mode)
            for nic, row in zip(nics, rows, strict=True):
                acc.route(f"{_ip(int(g.nic_ips[nic]))}/32", g.ports_of(s, row))
        else:
            row = g.route_sets(s, nics[:1], mode)[0]
            subnet = g.plan.switches[int(g.racks[rack])].subnet
            assert subnet
            acc.route(subnet, g.ports_of(s, row))


def _ip(n: int) -> str:
    return str(ipaddress.IPv4Address(n))


def _zone_routes(g: RouteGraph, s: int, zone: int, racks: list[int], mode: str, acc: _Acc,
                 preferred: Ports) -> None:
    """A zone's /16 where most of its racks go, and a /24 for each rack that goes elsewhere."""
    by_rack = _rack_nics(g)
    firsts = [by_rack[r][0] for r in racks]
    rows = g.route_sets(s, firsts, mode)
    per_rack = [g.ports_of(s, row) for row in rows]
    counts = Counter(per_rack)
    top = max(counts.values())
    best = sorted(p for p, c in counts.items() if c == top)
    agg = preferred if preferred in best else best[0]
    acc.route(f"10.{zone}.0.0/16", agg)
    for r, ports in zip(racks, per_rack, strict=True):
        if ports != agg:
            subnet = g.plan.switches[int(g.racks[r])].subnet
            assert subnet
            acc.route(subnet, ports)


def _zone_racks(g: RouteGraph) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for r, s in enumerate(g.racks.tolist()):
        out.setdefault(int(g.zone[s]), []).append(r)
    return out


def _bundles(sw: SwitchPlan) -> dict[str, list[int]]:
    """Downlink ports grouped by the switch at their other end, in port order."""
    out: dict[str, list[int]] = {}
    for p in sw.ports_of("downlink"):
        out.setdefault(p.peer, []).append(p.port)
    return out


def _ctsw(g: RouteGraph, sw: SwitchPlan, mode: str, acc: _Acc) -> None:
    s = g.index[sw.name]
    by_rack = _rack_nics(g)
    for rtsw, _ports in _bundles(sw).items():
        rack = int(g.rack_of[g.index[rtsw]])
        row = g.route_sets(s, by_rack[rack][:1], mode)[0]
        subnet = g.plan.switch(rtsw).subnet
        assert subnet
        acc.route(subnet, g.ports_of(s, row))
    assert sw.subnet
    acc.route(sw.subnet, ())
    uplinks = tuple(p.port for p in sw.ports_of("uplink"))
    if not uplinks:
        return
    for z, racks in sorted(_zone_racks(g).items()):
        if z == sw.zone:
            continue
        preferred = (uplinks[z % len(uplinks)],) if mode == "pin" else uplinks
        _zone_routes(g, s, z, racks, mode, acc, preferred)


def _atsw(g: RouteGraph, sw: SwitchPlan, mode: str, acc: _Acc) -> None:
    s = g.index[sw.name]
    by_zone: dict[int, list[int]] = {}
    for p in sw.ports_of("downlink"):
        by_zone.setdefault(int(g.zone[g.index[p.peer]]), []).append(p.port)
    zone_racks = _zone_racks(g)
    for z, ports in sorted(by_zone.items()):
        _zone_routes(g, s, z, zone_racks.get(z, []), mode, acc, tuple(ports))


def _canonical(g: RouteGraph, sw: SwitchPlan) -> dict[Ports, int]:
    """The failure-free member sets of a switch and their group ids (module docstring)."""
    out: dict[Ports, int] = {}
    if sw.role == "atsw":
        by_zone: dict[int, list[int]] = {}
        for p in sw.ports_of("downlink"):
            by_zone.setdefault(int(g.zone[g.index[p.peer]]), []).append(p.port)
        for z, ports in by_zone.items():
            out.setdefault(tuple(sorted(ports)), BUNDLE_BASE + 1 + z)
        return out
    uplinks = tuple(p.port for p in sw.ports_of("uplink"))
    if len(uplinks) > 1:
        out[uplinks] = UPLINK_GROUP
    if sw.role == "ctsw":
        for k, ports in enumerate(_bundles(sw).values()):
            out.setdefault(tuple(sorted(ports)), BUNDLE_BASE + 1 + k)
    return out


_BY_ROLE = {"rtsw": _rtsw, "ctsw": _ctsw, "atsw": _atsw}


def compute_routes(plan: AddressPlan | RouteGraph, switch: str, mode: str | None = None,
                   failed: frozenset[str] = frozenset()) -> SwitchEntries:
    """The entities `switch` needs under `mode` (default: the plan's) with `failed` links down.

    Pass a `RouteGraph` instead of a plan to compute many switches on one
    graph (its own failed links are used then).
    """
    g = plan if isinstance(plan, RouteGraph) else RouteGraph(plan, failed)
    mode = check_mode(mode or g.plan.mode)
    sw = g.plan.switches[g.switch_index(switch)]
    acc = _Acc(sw, _canonical(g, sw))
    _BY_ROLE[sw.role](g, sw, mode, acc)
    return acc.done(mode)


def compute_all(plan: AddressPlan, mode: str | None = None,
                failed: frozenset[str] = frozenset()) -> dict[str, SwitchEntries]:
    """`compute_routes` for every switch of the plan, by switch name (one graph for all)."""
    g = RouteGraph(plan, failed)
    return {s.name: compute_routes(g, s.name, mode) for s in plan.switches}
