"""Route computation: the table entries each switch needs, from the addressing plan alone.

The computation is pure (plan in, entities out) and knows the P4 programs
only by the names below. Next hops are action profile members of the
`next_hop` table's selector, one member per port (member id = port number,
action `set_output(port, port MAC, neighbour MAC)`), and `next_id`s name
what a route points at:

- next_id = a port number (1..510): that single port, referenced as the
  member directly. Host-facing ports, and in `pin` mode the one uplink a
  destination is pinned to, use these.
- next_id >= 1024: a selector group, group id = next_id, whose members the
  switch picks by hash (`ecmp`: 5-tuple; `eecmp`: 5-tuple + BTH destination
  QP, switched on by `switch_config`). 1024 = every uplink of an RTSW or
  every ATSW uplink of a CTSW; 1024 + k = the k-th parallel-link bundle
  (CTSW to rack k, ATSW to zone k).

Per role:

- RTSW: ARP replies for each host-facing gateway; a /32 per host NIC of the
  rack to its port; the rack's /24 otherwise dropped (an unknown local
  address must not bounce off a CTSW); with uplinks, every other rack's
  /24 to the uplink group (`ecmp`/`eecmp`) or, in `pin` mode, every remote
  NIC's /32 to the uplink chosen by the destination's slice (its RTSW
  downlink port), as the paper's path pinning does.
- CTSW: each rack's /24 to that rack's RTSW (a group when parallel links),
  the own zone's /16 otherwise dropped, other zones' /16 to the ATSWs.
- ATSW: each zone's /16 to that zone's CTSWs.
- Every switch: `switch_config` default action `set_config(mode, salt)`
  with salt = device id, so stacked tiers do not hash a flow alike.

Names defined here: `SwitchEntries`, `compute_routes`, `compute_all`,
`MODE_VALUES`, `NAMES`, `UPLINK_GROUP`, `BUNDLE_BASE`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from topologies.addressing import AddressPlan, PortKind, PortPlan, SwitchPlan, ip_to_int, mac_to_int

from .entities import Action, Entity, Exact, Group, Lpm, Member, TableEntry

__all__ = [
    "BUNDLE_BASE",
    "MODE_VALUES",
    "NAMES",
    "UPLINK_GROUP",
    "SwitchEntries",
    "compute_all",
    "compute_routes",
]

# MODE_PIN / MODE_ECMP / MODE_EECMP in p4/include/define.p4.
MODE_VALUES = {"pin": 0, "ecmp": 1, "eecmp": 2}
UPLINK_GROUP = 1024
BUNDLE_BASE = 1024

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
        out: dict[str, int] = {}
        for e in self.entries:
            out[e.table] = out.get(e.table, 0) + 1
        return out


def _prefix(cidr: str) -> Lpm:
    net = ipaddress.IPv4Network(cidr)
    return Lpm(value=int(net.network_address), prefix_len=net.prefixlen)


def _route(cidr: str, next_id: int) -> TableEntry:
    return TableEntry(table=NAMES["route_table"], match=(("dst_addr", _prefix(cidr)),),
                      action=Action(name=NAMES["route_action"], params=(("next_id", next_id),)))


def _drop(cidr: str) -> TableEntry:
    return TableEntry(table=NAMES["route_table"], match=(("dst_addr", _prefix(cidr)),),
                      action=Action(name=NAMES["route_drop"]))


def _member(port: PortPlan) -> Member:
    return Member(profile=NAMES["selector"], member_id=port.port, action=Action(
        name=NAMES["next_action"],
        params=(("port", port.port), ("src_mac", mac_to_int(port.mac)),
                ("dst_mac", mac_to_int(port.peer_mac)))))


def _next_member(next_id: int, port: int) -> TableEntry:
    return TableEntry(table=NAMES["next_table"], match=(("next_id", Exact(value=next_id)),),
                      member_id=port)


def _next_group(next_id: int) -> TableEntry:
    return TableEntry(table=NAMES["next_table"], match=(("next_id", Exact(value=next_id)),),
                      group_id=next_id)


class _Acc:
    """Collects one switch's entities; groups and next_hop entries are deduplicated."""

    def __init__(self, sw: SwitchPlan) -> None:
        self.sw = sw
        self.members = [_member(p) for p in sw.ports]
        self.groups: dict[int, Group] = {}
        self.next_hops: dict[int, TableEntry] = {}
        self.routes: list[TableEntry] = []
        self.other: list[TableEntry] = []

    def to_port(self, port: int) -> int:
        self.next_hops.setdefault(port, _next_member(port, port))
        return port

    def to_group(self, group_id: int, ports: list[int]) -> int:
        if len(ports) == 1:
            return self.to_port(ports[0])
        self.groups[group_id] = Group(profile=NAMES["selector"], group_id=group_id,
                                      members=tuple(sorted(ports)), max_size=len(ports))
        self.next_hops.setdefault(group_id, _next_group(group_id))
        return group_id

    def done(self, mode: str) -> SwitchEntries:
        config = TableEntry(table=NAMES["config_table"], is_default=True, action=Action(
            name=NAMES["config_action"],
            params=(("mode", MODE_VALUES[mode]), ("salt", self.sw.device_id & 0xFFFFFFFF))))
        return SwitchEntries(
            switch=self.sw.name, members=tuple(self.members),
            groups=tuple(self.groups[g] for g in sorted(self.groups)),
            entries=(*self.other, *(self.next_hops[k] for k in sorted(self.next_hops)),
                     *self.routes),
            defaults=(config,))


def _rtsw(plan: AddressPlan, sw: SwitchPlan, mode: str, acc: _Acc) -> None:
    for p in sw.ports_of("host"):
        assert p.gateway_ip and p.host_ip
        acc.other.append(TableEntry(
            table=NAMES["arp_table"], match=(("target_ip", Exact(value=ip_to_int(p.gateway_ip))),),
            action=Action(name=NAMES["arp_action"], params=(("router_mac", mac_to_int(p.mac)),))))
        acc.routes.append(_route(f"{p.host_ip}/32", acc.to_port(p.port)))
    assert sw.subnet
    acc.routes.append(_drop(sw.subnet))
    uplinks = [p.port for p in sw.ports_of("uplink")]
    if not uplinks:
        return
    for other in plan.switches_of("rtsw"):
        if other.name == sw.name:
            continue
        if mode == "pin":
            # Destination slice = its downlink port on its RTSW; the same
            # slice always takes the same uplink.
            for p in other.ports_of("host"):
                up = uplinks[(p.port - 1) % len(uplinks)]
                acc.routes.append(_route(f"{p.host_ip}/32", acc.to_port(up)))
        else:
            assert other.subnet
            acc.routes.append(_route(other.subnet, acc.to_group(UPLINK_GROUP, uplinks)))


def _bundles(sw: SwitchPlan, kind: PortKind) -> dict[str, list[int]]:
    """Ports of `kind` grouped by the switch at their other end, in port order."""
    out: dict[str, list[int]] = {}
    for p in sw.ports_of(kind):
        out.setdefault(p.peer, []).append(p.port)
    return out


def _ctsw(plan: AddressPlan, sw: SwitchPlan, mode: str, acc: _Acc) -> None:
    for k, (rtsw, ports) in enumerate(_bundles(sw, "downlink").items()):
        subnet = plan.switch(rtsw).subnet
        assert subnet
        acc.routes.append(_route(subnet, acc.to_group(BUNDLE_BASE + 1 + k, ports)))
    assert sw.subnet
    acc.routes.append(_drop(sw.subnet))
    uplinks = [p.port for p in sw.ports_of("uplink")]
    if not uplinks:
        return
    # every CTSW has a zone (only ATSWs have None)
    zones = sorted({s.zone for s in plan.switches_of("ctsw") if s.zone is not None and s.zone != sw.zone})
    for z in zones:
        cidr = f"10.{z}.0.0/16"
        if mode == "pin":
            acc.routes.append(_route(cidr, acc.to_port(uplinks[z % len(uplinks)])))
        else:
            acc.routes.append(_route(cidr, acc.to_group(UPLINK_GROUP, uplinks)))


def _atsw(plan: AddressPlan, sw: SwitchPlan, mode: str, acc: _Acc) -> None:
    by_zone: dict[int, list[int]] = {}
    for p in sw.ports_of("downlink"):
        z = plan.switch(p.peer).zone
        assert z is not None
        by_zone.setdefault(z, []).append(p.port)
    for z, ports in sorted(by_zone.items()):
        acc.routes.append(_route(f"10.{z}.0.0/16", acc.to_group(BUNDLE_BASE + 1 + z, ports)))


_BY_ROLE = {"rtsw": _rtsw, "ctsw": _ctsw, "atsw": _atsw}


def compute_routes(plan: AddressPlan, switch: str, mode: str | None = None) -> SwitchEntries:
    """The entities `switch` needs under `mode` (default: the plan's routing mode)."""
    mode = mode or plan.mode
    if mode not in MODE_VALUES:
        raise ValueError(f"unknown routing mode {mode!r} (choose from {', '.join(MODE_VALUES)})")
    sw = plan.switch(switch)
    acc = _Acc(sw)
    _BY_ROLE[sw.role](plan, sw, mode, acc)
    return acc.done(mode)


def compute_all(plan: AddressPlan, mode: str | None = None) -> dict[str, SwitchEntries]:
    """`compute_routes` for every switch of the plan, by switch name."""
    return {s.name: compute_routes(plan, s.name, mode) for s in plan.switches}
