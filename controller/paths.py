"""Predict the path of one packet from the entries the switches hold.

`predict_path(plan, entries, src, dst_ip, proto=17, sport=49152,
dport=4791, qp=17)` follows a packet from a source NIC through the fabric
the way the P4 programs forward it, using only each switch's entries as
`controller.entities` values - exactly what the daemon reads back over
P4Runtime (`ipv4_route` entries, `next_hop` entries, selector members and
groups, the `switch_config` default action with mode and salt):

1. the switch's mode and salt from its `switch_config` default (the
   program's own default, `ecmp` with salt 0, when none was written);
2. the longest prefix of `ipv4_route` matching the destination: a drop
   route (or no match) ends the path;
3. the `next_hop` entry of the route's next_id: a member, or a group whose
   member is chosen with the program hash (`controller.hashing`) over the
   group's members in ascending member id (BMv2's handle order for members
   the controller creates in that order);
4. the member's `set_output` port; the plan says which cable that is and
   what is at the other end.

The path is the list of `Hop`s (switch, ingress port, egress port, link
id); it ends when the packet reaches a host (delivered), is dropped, or
has taken more hops than any loop-free route needs (a loop).
`aizone trace` prints it; the model predicts the same paths from
`controller.routegraph` directly.

Names defined here: `Hop`, `PredictedPath`, `predict_path`, `PathError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from topologies.addressing import AddressPlan, NicPlan, ip_to_int

from .entities import Entity, Group, Lpm, Member, TableEntry
from .hashing import MODES, choose_member_one
from .routes import NAMES

__all__ = ["Hop", "PathError", "PredictedPath", "predict_path"]

_MODE_NAMES = {v: k for k, v in MODES.items()}
_MAX_HOPS = 16


class PathError(ValueError):
    """The packet cannot be traced: unknown source or destination, or entries that do not fit."""


@dataclass(frozen=True, kw_only=True)
class Hop:
    """One switch on the path: where the packet came in and where it left, over which cable."""

    switch: str
    ingress_port: int
    egress_port: int
    link: str  # the id of the cable out of egress_port
    next_id: int
    group_id: int | None = None  # set when a selector group chose the member
    member_index: int | None = None  # the index into the group's members (ascending id)


@dataclass(frozen=True, kw_only=True)
class PredictedPath:
    """Where one packet goes: the hops, and how the path ended."""

    src: str  # source NIC interface, e.g. h1-eth0
    dst_ip: str
    first_link: str  # the source NIC's cable into its RTSW
    hops: tuple[Hop, ...]
    delivered_to: str | None  # the NIC interface that receives it, or None
    dropped_at: str | None = None  # the switch that dropped it
    reason: str = ""

    @property
    def links(self) -> tuple[str, ...]:
        """The ids of the links the packet crosses, the source NIC's cable first."""
        return (self.first_link, *(h.link for h in self.hops))


@dataclass
class _Switch:
    mode: str
    salt: int
    routes: list[tuple[int, int, TableEntry]]  # (value, prefix_len, entry), longest first
    next_hops: dict[int, TableEntry]
    members: dict[int, Member]
    groups: dict[int, Group]


def _index(name: str, entities: Iterable[Entity]) -> _Switch:
    mode, salt = "ecmp", 0
    routes: list[tuple[int, int, TableEntry]] = []
    next_hops: dict[int, TableEntry] = {}
    members: dict[int, Member] = {}
    groups: dict[int, Group] = {}
    for e in entities:
        if isinstance(e, Member):
            if e.profile == NAMES["selector"]:
                members[e.member_id] = e
        elif isinstance(e, Group):
            if e.profile == NAMES["selector"]:
                groups[e.group_id] = e
        elif not isinstance(e, TableEntry):
            continue  # clone sessions (the PFC frames') have no part in a path
        elif e.table == NAMES["config_table"] and e.is_default and e.action is not None:
            params = dict(e.action.params)
            value = params.get("mode", MODES["ecmp"])
            if value not in _MODE_NAMES:
                raise PathError(f"{name}: switch_config mode {value} is not a routing mode")
            mode, salt = _MODE_NAMES[value], params.get("salt", 0)
        elif e.table == NAMES["route_table"] and not e.is_default:
            (_, m), = e.match
            if not isinstance(m, Lpm):
                raise PathError(f"{name}: {e.table} entry without an LPM key")
            routes.append((m.value, m.prefix_len, e))
        elif e.table == NAMES["next_table"] and not e.is_default:
            (_, m), = e.match
            next_hops[m.value] = e  # Exact
    routes.sort(key=lambda r: -r[1])
    return _Switch(mode=mode, salt=salt, routes=routes, next_hops=next_hops, members=members,
                   groups=groups)


def _lpm(sw: _Switch, dst: int) -> TableEntry | None:
    for value, plen, e in sw.routes:
        shift = 32 - plen
        if dst >> shift == value >> shift:
            return e
    return None


def _nic(plan: AddressPlan, src: str) -> NicPlan:
    for n in plan.nics():
        if src in (n.intf, n.ip):
            return n
    raise PathError(f"{src!r} is neither a NIC interface (like h1-eth0) nor a NIC address "
                    f"of {plan.name}")


def predict_path(plan: AddressPlan, entries: Mapping[str, Iterable[Entity]], src: str,
                 dst_ip: str, *, proto: int = 17, sport: int = 49152, dport: int = 4791,
                 qp: int = 17, src_ip: str | None = None) -> PredictedPath:
    """The path of one packet from NIC `src` (interface or address) to `dst_ip` (module docstring).

    `qp` is the BTH destination QP (used in `eecmp` mode); pass 0 for a
    packet that is not RoCEv2. `src_ip` defaults to the NIC's address.
    """
    nic = _nic(plan, src)
    try:
        dst = ip_to_int(dst_ip)
        source = ip_to_int(src_ip or nic.ip)
    except ValueError as exc:
        raise PathError(f"not an IPv4 address: {exc}") from None
    nic_by_port = {(n.switch, n.switch_port): n for n in plan.nics()}
    switches = {s.name: s for s in plan.switches}
    indexed: dict[str, _Switch] = {}
    first = switches[nic.switch].port(nic.switch_port)
    hops: list[Hop] = []
    at, ingress = nic.switch, nic.switch_port

    def end(delivered_to: str | None, dropped_at: str | None = None,
            reason: str = "") -> PredictedPath:
        """The path so far, ended: delivered to a NIC, or dropped at a switch for `reason`."""
        return PredictedPath(src=nic.intf, dst_ip=dst_ip, first_link=first.link_id,
                             hops=tuple(hops), delivered_to=delivered_to, dropped_at=dropped_at,
                             reason=reason)

    for _ in range(_MAX_HOPS):
        if at not in indexed:
            indexed[at] = _index(at, entries.get(at, ()))
        sw = indexed[at]
        route = _lpm(sw, dst)
        if route is None or route.action is None or route.action.name != NAMES["route_action"]:
            why = "no route" if route is None else "drop route"
            return end(delivered_to=None, dropped_at=at, reason=f"{why} for {dst_ip}")
        nid = dict(route.action.params)["next_id"]
        nh = sw.next_hops.get(nid)
        if nh is None:
            return end(delivered_to=None, dropped_at=at, reason=f"no next_hop entry {nid}")
        group_id = index = None
        if nh.group_id is not None:
            group = sw.groups.get(nh.group_id)
            if group is None or not group.members:
                return end(delivered_to=None, dropped_at=at,
                           reason=f"group {nh.group_id} missing or empty")
            members = sorted(group.members)
            index = choose_member_one(source, dst, proto, sport, dport, qp, mode=sw.mode,
                                      salt=sw.salt, members=len(members))
            group_id, member_id = group.group_id, members[index]
        else:
            member_id = nh.member_id if nh.member_id is not None else -1
        member = sw.members.get(member_id)
        if member is None:
            return end(delivered_to=None, dropped_at=at, reason=f"no member {member_id}")
        port = dict(member.action.params)["port"]
        try:
            plan_port = switches[at].port(port)
        except KeyError:
            raise PathError(f"{at}: member {member_id} sends to port {port}, "
                            f"which the plan does not have") from None
        hops.append(Hop(switch=at, ingress_port=ingress, egress_port=port,
                        link=plan_port.link_id, next_id=nid, group_id=group_id,
                        member_index=index))
        if plan_port.kind == "host":
            got = nic_by_port[(at, port)]
            return end(delivered_to=got.intf,
                       reason="" if got.ip == dst_ip else f"delivered to {got.ip}, not {dst_ip}")
        at, ingress = plan_port.peer, plan_port.peer_port
    return end(delivered_to=None, dropped_at=at, reason=f"loop: more than {_MAX_HOPS} hops")
