"""What every switch should hold, and the ordered writes that take a switch there.

The intended state of a switch is a pure function of the fabric (spec and
addressing plan), the routing mode and the set of failed links: its routes
(`controller.routes`), its QoS tables (`controller.qos`) and the ACL entry
that punts the controller's link probes, and the PFC of the program
(`controller.qos.compute_pfc`: clone sessions and PFC tables).
`FabricIntent` computes it per
switch (cached per (mode, failures)); `diff(intended, current)` compares it
with what the switch holds (read back over P4Runtime) and `Diff.updates()`
orders the writes so that nothing is ever missing while they run
(make-before-break):

0. clone sessions (PFC frames go through them) inserted / modified;
1. members inserted / modified, ascending id (a group's member order on the
   switch is its members' creation order: see `controller.hashing`);
2. groups inserted / modified;
3. table entries inserted / modified, `next_hop` before the routes that
   point at it;
4. default actions modified (`switch_config`: mode and salt);
5. deletes, in the reverse order: routes, then `next_hop`, other tables,
   then groups, then members, then clone sessions.

Changing mode or routing around a failure is then the same operation as
reconciling a restarted switch: diff and write the difference. Routes of the
old and the new state coexist between steps 3 and 5 (a /32 pin route and a
/24 group route to the same rack both forward), so a steady flow loses
nothing.

Names defined here: `FabricIntent`, `Diff`, `diff`, `entity_key`,
`OWNED_TABLES`, `PROBE_ETHERTYPE`, `probe_acl_entry`, `acl_rule`, `ACL_FIELDS`,
`ACL_ACTIONS`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from topologies.addressing import AddressPlan
from topologies.spec import FabricSpec

from .entities import (
    Action,
    CloneSession,
    Entity,
    Group,
    Member,
    TableEntry,
    Ternary,
    UpdateKind,
)
from .qos import PFC_NAMES, QOS_NAMES, compute_pfc, compute_qos
from .routegraph import RouteGraph
from .routes import NAMES, compute_routes

__all__ = [
    "OWNED_TABLES",
    "PROBE_ETHERTYPE",
    "Diff",
    "FabricIntent",
    "diff",
    "entity_key",
    "probe_acl_entry",
    "acl_rule",
    "ACL_FIELDS",
    "ACL_ACTIONS",
]

# Link probes are LLDP-typed frames (IEEE 802.1AB's EtherType): switches punt
# them to the controller with their ingress port.
PROBE_ETHERTYPE = 0x88CC
ACL_TABLE = "FabricIngress.acl.acl"
ACL_PUNT = "FabricIngress.acl.punt_to_cpu"

# Tables whose entries the controller owns: anything in them that the intent
# does not hold is deleted. (Tables a role's program lacks are skipped.)
OWNED_TABLES = (
    NAMES["next_table"],
    NAMES["route_table"],
    "FabricIngress.routing.ipv6_route",
    NAMES["arp_table"],
    ACL_TABLE,
    "FabricIngress.qos.dscp_to_tc",
    "FabricIngress.qos.tc_to_queue",
    QOS_NAMES["ack_queue"],
    "FabricEgress.ecn.ecn_threshold",
    PFC_NAMES["pfc_honour"],
    PFC_NAMES["pfc_port"],
    PFC_NAMES["pfc_xoff"],
    PFC_NAMES["pfc_hold"],
    PFC_NAMES["pfc_drain"],
)
# Install order of table entries; deletes go the other way.
_TABLE_RANK = {name: i for i, name in enumerate(OWNED_TABLES)}


# The ACL's match fields a rule may set (P4Info names) and the widths of their values.
ACL_FIELDS = {"ingress_port": 9, "eth_dst": 48, "eth_type": 16, "ip_proto": 8,
              "l4_dst_port": 16, "bth_dst_qp": 24, "bth_psn": 24}
ACL_ACTIONS = {"drop": "FabricIngress.acl.drop", "permit": "FabricIngress.acl.permit",
               "punt": ACL_PUNT}


def acl_rule(action: str, match: dict[str, int | tuple[int, int]], priority: int
             ) -> TableEntry:
    """A person's ACL entry: `match` maps field -> value (all bits) or (value, mask)."""
    if action not in ACL_ACTIONS:
        raise ValueError(f"ACL action {action!r}: one of {', '.join(ACL_ACTIONS)}")
    if not 1 <= priority < 1000:
        raise ValueError(f"ACL priority {priority}: 1..999 (1000 is the controller's probes)")
    fields = []
    for name, given in sorted(match.items()):
        width = ACL_FIELDS.get(name)
        if width is None:
            raise ValueError(f"ACL field {name!r}: one of {', '.join(ACL_FIELDS)}")
        value, mask = given if isinstance(given, tuple) else (given, (1 << width) - 1)
        if not 0 <= value < 1 << width or not 0 < mask < 1 << width or value & ~mask:
            raise ValueError(f"ACL field {name}: value {value:#x} / mask {mask:#x} do not fit "
                             f"bit<{width}> (or the value has bits outside the mask)")
        fields.append((name, Ternary(value=value, mask=mask)))
    if not fields:
        raise ValueError("an ACL rule needs at least one match field")
    return TableEntry(table=ACL_TABLE, match=tuple(fields),
                      action=Action(name=ACL_ACTIONS[action]), priority=priority)


def probe_acl_entry() -> TableEntry:
    """The ACL entry that punts link probes (EtherType 0x88cc) to the controller."""
    return TableEntry(table=ACL_TABLE, match=(("eth_type", Ternary(value=PROBE_ETHERTYPE,
                                                                    mask=0xFFFF)),),
                      action=Action(name=ACL_PUNT), priority=1000)


def entity_key(e: Entity) -> tuple[object, ...]:
    """What identifies an entity on a switch (two entities with one key cannot coexist)."""
    if isinstance(e, CloneSession):
        return ("clone", e.session_id)
    if isinstance(e, Member):
        return ("member", e.profile, e.member_id)
    if isinstance(e, Group):
        return ("group", e.profile, e.group_id)
    return ("entry", *e.key())


def _entry_rank(e: TableEntry) -> int:
    return _TABLE_RANK.get(e.table, len(_TABLE_RANK))


@dataclass(frozen=True, kw_only=True)
class Diff:
    """The writes that turn a switch's current state into the intended one."""

    inserts: tuple[Entity, ...] = ()
    modifies: tuple[Entity, ...] = ()
    deletes: tuple[Entity, ...] = ()
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        """Whether there is nothing to write: the switch already holds the intent."""
        return not (self.inserts or self.modifies or self.deletes)

    def counts(self) -> dict[str, int]:
        """How many entities to insert, modify and delete, and how many are unchanged."""
        return {"insert": len(self.inserts), "modify": len(self.modifies),
                "delete": len(self.deletes), "unchanged": self.unchanged}

    def updates(self) -> list[tuple[UpdateKind, Entity]]:
        """Every write, in make-before-break order (see the module docstring)."""
        writes: list[tuple[UpdateKind, Entity]] = [
            ("modify" if e in self.modifies else "insert", e)
            for e in (*self.inserts, *self.modifies)
        ]

        def rank(item: tuple[UpdateKind, Entity]) -> tuple[int, int, int]:
            """Sort key of an insert or modify: clone sessions, members, groups, entries."""
            e = item[1]
            if isinstance(e, CloneSession):  # before the PFC entries that clone to it
                return (-1, 0, e.session_id)
            if isinstance(e, Member):
                return (0, 0, e.member_id)
            if isinstance(e, Group):
                return (1, 0, e.group_id)
            if e.is_default:
                return (3, 0, 0)
            return (2, _entry_rank(e), 0)

        writes.sort(key=rank)
        deletes: list[tuple[UpdateKind, Entity]] = [("delete", e) for e in self.deletes]

        def delete_rank(item: tuple[UpdateKind, Entity]) -> tuple[int, int, int]:
            """Sort key of a delete: the reverse of `rank`'s order."""
            e = item[1]
            if isinstance(e, CloneSession):
                return (3, 0, -e.session_id)
            if isinstance(e, Member):
                return (2, 0, -e.member_id)
            if isinstance(e, Group):
                return (1, 0, -e.group_id)
            return (0, -_entry_rank(e), 0)

        deletes.sort(key=delete_rank)
        return writes + deletes


def diff(intended: Iterable[Entity], current: Iterable[Entity]) -> Diff:
    """Compare intended and current entities by key (default actions are only modified)."""
    want = {entity_key(e): e for e in intended}
    have = {entity_key(e): e for e in current}
    inserts: list[Entity] = []
    modifies: list[Entity] = []
    deletes: list[Entity] = []
    unchanged = 0
    for key, e in want.items():
        cur = have.get(key)
        if cur is None:
            if isinstance(e, TableEntry) and e.is_default:
                modifies.append(e)  # a default action always exists: set it
            else:
                inserts.append(e)
        elif cur != e:
            modifies.append(e)
        else:
            unchanged += 1
    for key, e in have.items():
        if key not in want and not (isinstance(e, TableEntry) and e.is_default):
            deletes.append(e)
    return Diff(inserts=tuple(inserts), modifies=tuple(modifies), deletes=tuple(deletes),
                unchanged=unchanged)


@dataclass
class FabricIntent:
    """The intended state of every switch of a fabric, for a mode and a set of failed links."""

    spec: FabricSpec
    plan: AddressPlan
    mode: str
    failed: frozenset[str] = field(default_factory=frozenset)
    # The programs' own PFC (clone sessions and PFC tables): False where the target does PFC
    # in its traffic manager instead (p4switch's native 802.1Qbb), so the two never both act.
    program_pfc: bool = True
    # The target's queue rates count packets (BMv2): RC ACKs get a queue of their own
    # (`controller.qos.ack_lane`), and held packets past their pause a drain lane.
    packet_queues: bool = False

    # Entries a person added to a switch's ACL (`aizone acl`): kept while the daemon runs.
    acl: dict[str, tuple[TableEntry, ...]] = field(default_factory=dict)

    _cache: dict[tuple[str, str, frozenset[str]], tuple[Entity, ...]] = field(
        default_factory=dict, repr=False)
    _graphs: dict[frozenset[str], RouteGraph] = field(default_factory=dict, repr=False)

    def for_switch(self, switch: str) -> tuple[Entity, ...]:
        """Every entity `switch` should hold under the current mode and failures."""
        key = (switch, self.mode, self.failed)
        got = self._cache.get(key)
        if got is None:
            if len(self._cache) > 4096:  # modes x failure sets seen: keep it bounded
                self._cache.clear()
                self._graphs.clear()
            graph = self._graphs.get(self.failed)
            if graph is None:  # one live graph per failure set, shared by every switch
                graph = self._graphs[self.failed] = RouteGraph(self.plan, self.failed)
            got = self._cache[key] = _intent(self.spec, self.plan, graph, switch, self.mode,
                                             program_pfc=self.program_pfc,
                                             packet_queues=self.packet_queues)
        return (*got, *self.acl.get(switch, ()))

    def tables(self, switch: str) -> set[str]:
        """The tables an intent for `switch` writes (besides the owned ones)."""
        return {e.table for e in self.for_switch(switch) if isinstance(e, TableEntry)}

    def clone_sessions(self, switch: str) -> set[int]:
        """The clone sessions (PFC frames' ones) the intent for `switch` holds."""
        return {e.session_id for e in self.for_switch(switch) if isinstance(e, CloneSession)}


def _intent(spec: FabricSpec, plan: AddressPlan, graph: RouteGraph, switch: str,
            mode: str, *, program_pfc: bool = True, packet_queues: bool = False
            ) -> tuple[Entity, ...]:
    routes = compute_routes(graph, switch, mode)
    qos = compute_qos(spec, plan, switch, packet_queues=packet_queues)
    pfc = compute_pfc(plan, switch, drain=packet_queues) if program_pfc else ()
    return (*routes.members, *routes.groups, *routes.entries, *qos, *pfc, probe_acl_entry(),
            *routes.defaults)
