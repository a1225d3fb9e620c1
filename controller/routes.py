"""Route computation: where each switch sends each destination, and the entries that say so.

Pure functions of (plan, mode, failed links), in two layers that share one
computation:

1. The structural layer, `RouteGraph(plan, failed)`: the live fabric as
   numpy arrays (switches, their ports in port order, the peer at the other
   end, whether the cable is up) and the hop distance from every switch to
   every rack's RTSW over live links. `RouteGraph.route_sets(switch, nics)`
   gives, for packets at a switch towards destination NICs, the ports of the
   route each packet matches (one port, a group's members in ascending port
   = member id order, or none: dropped), vectorised over NICs, so the
   flow-level model walks 24K-GPU fabrics without materialising entries.
   `next_hop_ports(graph, switch, dst_ip, mode)` is its one-packet form.
2. The entity layer, `compute_routes` / `compute_all`: the `controller.
   entities` values of every switch, built from `route_sets` only.

The rule (`route_sets`). A destination is a NIC; its rack is the routing
target. A switch's next hops towards rack r are its live ports whose peer
switch is one hop closer to r's RTSW on the live graph (shortest live
paths; hosts never transit). Then per role and mode:

- RTSW: its own NICs leave by their host port (none if that cable is
  down). Other racks: `ecmp`/`eecmp` hash over the next hops; `pin` takes
  one uplink per destination NIC, its slice: uplink number
  (NIC's RTSW port - 1) mod (uplinks), the paper's path pinning. The slice
  keeps its uplink while that uplink is a next hop; when it is not (its
  cable or everything behind it is down) the slice moves to the next
  uplink in port order (cyclically) that is one, so the survivors carry the
  extra load. A NIC whose own cable is down is dropped in `pin` mode (its
  /32 is the destination); in `ecmp`/`eecmp` its rack still routes to the
  RTSW, which drops it.
- CTSW: racks of its zone hash over the next hops (in every mode: the
  `pin` key is the destination address alone); other zones: `ecmp`/
  `eecmp` hash, `pin` takes ATSW uplink number (zone mod uplinks) with the
  same fallback.
- ATSW: every zone's racks hash over the next hops.

A switch with no next hop towards a destination drops it.

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

Link ids (`failed`) are the graph edge keys "<a_intf>--<b_intf>", the lower
tier's end first (`PortPlan.link_id`).

Names defined here: `RouteGraph`, `SwitchEntries`, `compute_routes`,
`compute_all`, `next_hop_ports`, `MODE_VALUES`, `NAMES`,
`UPLINK_GROUP`, `BUNDLE_BASE`, `OTHER_GROUP_BASE`, `UNREACHABLE`.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from topologies.addressing import AddressPlan, PortPlan, SwitchPlan, ip_to_int, mac_to_int

from .entities import Action, Entity, Exact, Group, Lpm, Member, TableEntry

__all__ = [
    "BUNDLE_BASE",
    "MODE_VALUES",
    "NAMES",
    "OTHER_GROUP_BASE",
    "UNREACHABLE",
    "UPLINK_GROUP",
    "RouteGraph",
    "SwitchEntries",
    "compute_all",
    "compute_routes",
    "next_hop_ports",
]

# MODE_PIN / MODE_ECMP / MODE_EECMP in p4/include/define.p4.
MODE_VALUES = {"pin": 0, "ecmp": 1, "eecmp": 2}
UPLINK_GROUP = 1024
BUNDLE_BASE = 1024
OTHER_GROUP_BASE = 2048
UNREACHABLE = np.int16(np.iinfo(np.int16).max)

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

_HOST, _UP, _DOWN = 0, 1, 2
_KIND = {"host": _HOST, "uplink": _UP, "downlink": _DOWN}
Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]


def _check_mode(mode: str) -> str:
    if mode not in MODE_VALUES:
        raise ValueError(f"unknown routing mode {mode!r} (choose from {', '.join(MODE_VALUES)})")
    return mode


# --- the structural layer ---------------------------------------------------------


@dataclass(frozen=True)
class _Ports:
    """One switch's ports as arrays, in port order."""

    number: Ints  # port numbers
    peer: Ints  # peer switch index, -1 for a host
    live: Bools
    kind: Ints  # _HOST | _UP | _DOWN
    nic: Ints  # NIC index behind a host port, else -1
    link: tuple[str, ...]  # link id per port
    uplinks: Ints  # positions (into the arrays above) of the uplinks


class RouteGraph:
    """The live fabric of `plan` with `failed` links removed, as arrays (module docstring).

    Attributes: `plan`, `failed`, `names` (switches in plan order), `index`
    (name -> switch index), `role` and `zone` per switch (zone -1 for
    ATSWs), `salt` per switch (its device id), `racks` (RTSW index per rack
    = routing target), `nic_ips`, `nic_rack`, `nic_zone`, `nic_port` (its
    RTSW port), `nic_live` per NIC in plan order, `dist` (switches x racks
    hop counts, `UNREACHABLE` when cut off).
    """

    def __init__(self, plan: AddressPlan, failed: frozenset[str] | set[str] = frozenset()) -> None:
        self.plan = plan
        self.failed = frozenset(failed)
        sws = plan.switches
        self.names = tuple(s.name for s in sws)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.role = tuple(s.role for s in sws)
        self.zone = np.array([-1 if s.zone is None else s.zone for s in sws], dtype=np.int64)
        self.salt = np.array([s.device_id & 0xFFFFFFFF for s in sws], dtype=np.uint32)
        self.racks = np.array([i for i, s in enumerate(sws) if s.role == "rtsw"], dtype=np.int64)
        self.rack_of = np.full(len(sws), -1, dtype=np.int64)
        self.rack_of[self.racks] = np.arange(len(self.racks))
        nics = plan.nics()
        self.nic_index = {n.intf: i for i, n in enumerate(nics)}
        ip_index = {n.ip: i for i, n in enumerate(nics)}
        self.nic_ips = np.array([ip_to_int(n.ip) for n in nics], dtype=np.int64)
        self.nic_rack = np.array([self.rack_of[self.index[n.switch]] for n in nics], dtype=np.int64)
        self.nic_zone = self.zone[self.racks[self.nic_rack]] if len(nics) else np.zeros(0, np.int64)
        self.nic_port = np.array([n.switch_port for n in nics], dtype=np.int64)
        known: set[str] = set()
        ports: list[_Ports] = []
        nic_live = np.ones(len(nics), dtype=bool)
        for s in sws:
            links = tuple(p.link_id for p in s.ports)
            known.update(links)
            live = np.array([lk not in self.failed for lk in links], dtype=bool)
            kind = np.array([_KIND[p.kind] for p in s.ports], dtype=np.int64)
            nic = np.array([ip_index[p.host_ip] if p.kind == "host" and p.host_ip else -1
                            for p in s.ports], dtype=np.int64)
            for i in np.flatnonzero(nic >= 0):
                nic_live[nic[i]] = bool(live[i])
            ports.append(_Ports(
                number=np.array([p.port for p in s.ports], dtype=np.int64),
                peer=np.array([self.index[p.peer] if p.kind != "host" else -1 for p in s.ports],
                              dtype=np.int64),
                live=live, kind=kind, nic=nic, link=links,
                uplinks=np.flatnonzero(kind == _UP)))
        unknown = sorted(self.failed - known)
        if unknown:
            raise ValueError(f"unknown link id {unknown[0]!r} in failed links of {plan.name} "
                             f"(ids look like rtsw1-eth5--ctsw1-eth1)")
        self.ports = tuple(ports)
        self.nic_live = nic_live
        self.dist = self._distances()

    def _distances(self) -> npt.NDArray[np.int16]:
        """Hop counts switch -> rack RTSW over live switch-to-switch links (BFS, bit-packed)."""
        n, r = len(self.names), len(self.racks)
        dist = np.full((n, r), UNREACHABLE, dtype=np.int16)
        if r == 0:
            return dist
        src, dst = [], []
        for i, p in enumerate(self.ports):
            ok = p.live & (p.peer >= 0)
            peers = np.unique(p.peer[ok])
            src.append(np.full(len(peers), i, dtype=np.int64))
            dst.append(peers)
        u = np.concatenate(src)
        v = np.concatenate(dst)
        order = np.argsort(u, kind="stable")
        u, v = u[order], v[order]
        deg = np.bincount(u, minlength=n)
        starts = np.concatenate([[0], np.cumsum(deg)[:-1]])
        has = deg > 0
        seen = np.zeros((n, r), dtype=bool)
        seen[self.racks, np.arange(r)] = True
        dist[self.racks, np.arange(r)] = 0
        frontier = np.packbits(seen, axis=1)
        visited = frontier.copy()
        level = 0
        while frontier.any() and len(v):
            level += 1
            reach = np.zeros_like(frontier)
            gathered = frontier[v]
            reduced = np.bitwise_or.reduceat(gathered, starts[has], axis=0)
            reach[has] = reduced
            new = reach & ~visited
            if not new.any():
                break
            visited |= new
            newly = np.unpackbits(new, axis=1, count=r).astype(bool)
            dist[newly] = level
            frontier = new
        return dist

    # -- next hops -----------------------------------------------------------------

    def switch_index(self, switch: str) -> int:
        """The row of `switch` in the graph's arrays; `KeyError` for a switch not in the plan."""
        try:
            return self.index[switch]
        except KeyError:
            raise KeyError(f"no switch named {switch!r} in {self.plan.name}") from None

    def _towards(self, s: int, racks: Ints) -> Bools:
        """(len(racks), ports) mask: live ports of s to a peer one hop closer to each rack."""
        p = self.ports[s]
        d_s = self.dist[s, racks].astype(np.int64)
        ok = p.live & (p.peer >= 0)
        peer = np.where(ok, p.peer, 0)
        d_peer = self.dist[peer][:, racks].T.astype(np.int64)
        reach = (d_s > 0) & (d_s < int(UNREACHABLE))
        return ok[None, :] & (d_peer == (d_s - 1)[:, None]) & reach[:, None]

    def _pin(self, s: int, mask: Bools, slices: Ints) -> Bools:
        """One port per row: the slice's uplink if in `mask`, else the next uplink in it."""
        ups = self.ports[s].uplinks
        out = np.zeros_like(mask)
        if not len(mask):
            return out
        rows = np.arange(len(mask))
        has = np.zeros(len(mask), dtype=bool)
        if len(ups):
            idx = (slices[:, None] + np.arange(len(ups))[None, :]) % len(ups)
            cand = mask[rows[:, None], ups[idx]]
            has = cand.any(axis=1)
            first = ups[idx[rows, cand.argmax(axis=1)]]
            out[rows[has], first[has]] = True
        # No uplink is a next hop (only valleys are left): the lowest port that is.
        rest = ~has & mask.any(axis=1)
        out[rows[rest], mask[rest].argmax(axis=1)] = True
        return out

    def route_sets(self, switch: str | int, nics: npt.ArrayLike, mode: str) -> Bools:
        """(len(nics), ports of the switch) mask of the ports the matched route may use.

        Rows with one True are single-port routes, with more a group (hash
        over the True ports in port order), with none a drop.
        """
        _check_mode(mode)
        s = switch if isinstance(switch, int) else self.switch_index(switch)
        n = np.asarray(nics, dtype=np.int64).reshape(-1)
        p = self.ports[s]
        role = self.role[s]
        racks = self.nic_rack[n]
        mask = self._towards(s, racks)
        pin = mode == "pin"
        if role == "rtsw":
            local = racks == self.rack_of[s]
            if local.any():
                mask[local] = (p.nic[None, :] == n[local][:, None]) & p.live[None, :]
            remote = ~local
            if pin and remote.any() and len(p.uplinks):
                slices = (self.nic_port[n[remote]] - 1) % len(p.uplinks)
                pinned = self._pin(s, mask[remote], slices)
                pinned &= self.nic_live[n[remote]][:, None]
                mask[remote] = pinned
        elif role == "ctsw" and pin:
            other = self.nic_zone[n] != self.zone[s]
            if other.any() and len(p.uplinks):
                slices = self.nic_zone[n[other]] % len(p.uplinks)
                mask[other] = self._pin(s, mask[other], slices)
        return mask

    def ports_of(self, switch: str | int, mask_row: Bools) -> tuple[int, ...]:
        """The port numbers of `switch` that `mask_row` (a row of `route_sets`) selects."""
        s = switch if isinstance(switch, int) else self.switch_index(switch)
        return tuple(int(x) for x in self.ports[s].number[mask_row])

    def nic_of_ip(self, ip: str | int) -> int | None:
        """The index of the NIC whose address is `ip` (dotted or an int), or None."""
        value = ip if isinstance(ip, int) else ip_to_int(str(ip))
        hit = np.flatnonzero(self.nic_ips == value)
        return int(hit[0]) if len(hit) else None


def next_hop_ports(graph: RouteGraph | AddressPlan, switch: str, dst_ip: str | int, mode: str,
                   failed: frozenset[str] = frozenset()) -> tuple[int, ...]:
    """The ports a packet to `dst_ip` (a NIC's address) may leave `switch` by, in port order.

    One port for a single-port route (pinned, host-facing), a group's
    members otherwise, () when the switch drops it. A plan is wrapped in a
    `RouteGraph` with `failed`; pass a `RouteGraph` to reuse one.
    """
    g = graph if isinstance(graph, RouteGraph) else RouteGraph(graph, failed)
    nic = g.nic_of_ip(dst_ip)
    if nic is None:
        raise ValueError(f"{dst_ip} is not the address of a NIC of {g.plan.name}")
    return g.ports_of(switch, g.route_sets(switch, [nic], mode)[0])


# --- the entity layer ---------------------------------------------------------------


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
    mode = _check_mode(mode or g.plan.mode)
    sw = g.plan.switches[g.switch_index(switch)]
    acc = _Acc(sw, _canonical(g, sw))
    _BY_ROLE[sw.role](g, sw, mode, acc)
    return acc.done(mode)


def compute_all(plan: AddressPlan, mode: str | None = None,
                failed: frozenset[str] = frozenset()) -> dict[str, SwitchEntries]:
    """`compute_routes` for every switch of the plan, by switch name (one graph for all)."""
    g = RouteGraph(plan, failed)
    return {s.name: compute_routes(g, s.name, mode) for s in plan.switches}
