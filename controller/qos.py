"""QoS intent: the traffic-class tables of a switch, from the topology spec alone.

`compute_qos(spec, plan, switch)` returns the `controller.entities` entries
that put the spec's traffic classes (`qos.classes`, see `topologies.spec`)
into the P4 programs' QoS controls (`p4/include/control/qos.p4`):

- `FabricIngress.qos.dscp_to_tc`: one ternary entry per DSCP of each class,
  exact mask 0x3f, `set_tc(tc)`. DSCPs are unique across classes (the spec
  checks), so no two entries overlap and all share priority 1. Unlisted
  DSCPs miss and stay in class 0; CNPs go to class 7 in the program
  whatever their DSCP.
- `FabricIngress.qos.tc_to_queue`: `tc` -> `set_queue(tc)` for every class
  0..queues-1 ("class c waits in queue c"); a class past the switch's
  queues has no entry and stays in queue 0 (the program's default).
- `FabricEgress.ecn.ecn_threshold`: (`port`, `tc`) -> `set_ecn_threshold(depth)`
  for every data port of the switch and every lossless class, `depth`
  the port's link tier `ecn_threshold` (packets).

Order: DSCP entries by class then DSCP, queues by class, ECN by port then
class; entries compare with `==`, so the daemon diffs them against what a
switch holds.

Names defined here: `compute_qos`, `QOS_NAMES`, `DSCP_MASK`, `DSCP_PRIORITY`.
"""

from __future__ import annotations

from topologies.addressing import AddressPlan
from topologies.spec import FabricSpec

from .entities import Action, Exact, TableEntry, Ternary

__all__ = ["DSCP_MASK", "DSCP_PRIORITY", "QOS_NAMES", "compute_qos"]

# The P4Runtime names QoS writes (p4/include/control/qos.p4 as the P4Info names them).
QOS_NAMES = {
    "dscp_to_tc": "FabricIngress.qos.dscp_to_tc",
    "set_tc": "FabricIngress.qos.set_tc",
    "tc_to_queue": "FabricIngress.qos.tc_to_queue",
    "set_queue": "FabricIngress.qos.set_queue",
    "ecn_threshold": "FabricEgress.ecn.ecn_threshold",
    "set_ecn_threshold": "FabricEgress.ecn.set_ecn_threshold",
}
DSCP_MASK = 0x3F  # the 6-bit key, matched exactly
DSCP_PRIORITY = 1  # ternary entries need a priority; these never overlap


def compute_qos(spec: FabricSpec, plan: AddressPlan, switch: str) -> tuple[TableEntry, ...]:
    """The QoS entries of `switch` (see the module docstring)."""
    sw = plan.switch(switch)
    classes = sorted(spec.qos.classes.values(), key=lambda c: c.tc)
    out: list[TableEntry] = []
    for c in classes:
        for dscp in sorted(c.dscp):
            out.append(TableEntry(
                table=QOS_NAMES["dscp_to_tc"],
                match=(("dscp", Ternary(value=dscp, mask=DSCP_MASK)),),
                action=Action(name=QOS_NAMES["set_tc"], params=(("tc", c.tc),)),
                priority=DSCP_PRIORITY))
    for tc in range(spec.qos.queues):
        out.append(TableEntry(
            table=QOS_NAMES["tc_to_queue"], match=(("tc", Exact(value=tc)),),
            action=Action(name=QOS_NAMES["set_queue"], params=(("queue", tc),))))
    lossless = spec.qos.lossless_tcs
    for port in sorted(sw.ports, key=lambda p: p.port):
        depth = spec.links.tier(port.tier).ecn_threshold
        for tc in lossless:
            out.append(TableEntry(
                table=QOS_NAMES["ecn_threshold"],
                match=(("port", Exact(value=port.port)), ("tc", Exact(value=tc))),
                action=Action(name=QOS_NAMES["set_ecn_threshold"], params=(("depth", depth),))))
    return tuple(out)
