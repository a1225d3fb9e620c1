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
- `FabricIngress.qos.ack_queue`, only for a target whose queue rates
  count packets (BMv2, `packet_queues`): `tc` -> `set_queue(top)` for every
  lossless class, `top` the switch's highest queue (`ack_lane`), so an RC
  ACK/NAK waits there instead of taking a full RoCE frame's slot of its
  class's queue rate (docs/bmv2.md, "Rates"). A class that is itself the
  highest queue has no entry.
- `FabricEgress.ecn.ecn_threshold`: (`port`, `tc`) -> `set_ecn_threshold(depth)`
  for every data port of the switch and every lossless class, `depth`
  the port's link tier `ecn_threshold` (packets).

Order: DSCP entries by class then DSCP, queues by class, ECN by port then
class; entries compare with `==`, so the daemon diffs them against what a
switch holds.

`compute_pfc(plan, switch, drain=...)` is the PFC of the program (`p4/include/control/pfc.p4`)
on every port whose link tier has `pfc.enabled`, from `topologies.ports`:

- a clone session `PFC_SESSION_BASE + port` (replica: the port) that PFC
  frames sent out of the port go through;
- `FabricIngress.pfc.pfc_honour`: `port` -> `honour(quantum_q16_us)`, the
  port's pause quantum (512 bit-times at its emulated rate) in microseconds
  x 65536, so received PFC frames hold for quanta x 512 bit-times;
- per lossless class, the priority group (ingress port, class):
  `FabricIngress.pfc.pfc_xoff` (`port`, `tc`) -> `set_xoff(xoff_bytes,
  xon_bytes)`, its thresholds in bytes (`topologies.ports.pfc_thresholds`), and
  `FabricEgress.pfc.pfc_hold` (`port`, `tc`) -> `hold(watchdog)` (the class
  is held towards the port while paused; watchdog 0: off);
- `FabricEgress.pfc.pfc_port`: `port` -> `set_pfc_port(mac, xoff_quanta,
  refresh)`: frames out of it come from the port's MAC, pause for
  `topologies.ports.pfc_thresholds`' quanta and are re-sent every `refresh` us while XOFF
  stays asserted;
- with `drain` (BMv2, whose queue rates count packets) and a free queue
  (`topologies.ports.drain_queue`), `FabricIngress.pfc.pfc_drain`: `port` ->
  `drain_via(queue)`, the lane a held packet whose pause is over goes round
  until its turn, paced `ports.DRAIN_SPEEDUP` times faster than the port
  (`Bmv2SwitchNode.cli_commands`) instead of at the port's rate.

The thresholds, headroom, quanta and refresh of every PFC port come from
`topologies.ports.pfc_thresholds` (in bytes; the topology's native PFC on
p4switch takes the same ones when its buffer counts bytes).

Names defined here: `compute_qos`, `ack_lane`, `compute_pfc`, `pfc_quantum_q16`,
`QOS_NAMES`, `PFC_NAMES`, `PFC_SESSION_BASE`, `DSCP_MASK`, `DSCP_PRIORITY`.
"""

from __future__ import annotations

from topologies.addressing import AddressPlan, mac_to_int
from topologies.ports import ack_queue, pfc_thresholds, switch_settings
from topologies.spec import FabricSpec

from .entities import Action, CloneSession, Exact, TableEntry, Ternary

__all__ = ["DSCP_MASK", "DSCP_PRIORITY", "PFC_NAMES", "PFC_SESSION_BASE", "QOS_NAMES", "ack_lane",
           "compute_pfc", "compute_qos", "pfc_quantum_q16"]

# The P4Runtime names QoS writes (p4/include/control/qos.p4 as the P4Info names them).
QOS_NAMES = {
    "dscp_to_tc": "FabricIngress.qos.dscp_to_tc",
    "set_tc": "FabricIngress.qos.set_tc",
    "tc_to_queue": "FabricIngress.qos.tc_to_queue",
    "set_queue": "FabricIngress.qos.set_queue",
    "ack_queue": "FabricIngress.qos.ack_queue",
    "ecn_threshold": "FabricEgress.ecn.ecn_threshold",
    "set_ecn_threshold": "FabricEgress.ecn.set_ecn_threshold",
}
# p4/include/control/pfc.p4's tables and actions, and define.p4's PFC_SESSION_BASE.
PFC_NAMES = {
    "pfc_honour": "FabricIngress.pfc.pfc_honour",
    "honour": "FabricIngress.pfc.honour",
    "pfc_hold": "FabricEgress.pfc.pfc_hold",
    "hold": "FabricEgress.pfc.hold",
    "pfc_xoff": "FabricIngress.pfc.pfc_xoff",
    "set_xoff": "FabricIngress.pfc.set_xoff",
    "pfc_port": "FabricEgress.pfc.pfc_port",
    "set_pfc_port": "FabricEgress.pfc.set_pfc_port",
    "pfc_drain": "FabricIngress.pfc.pfc_drain",
    "drain_via": "FabricIngress.pfc.drain_via",
}
PFC_SESSION_BASE = 1024


DSCP_MASK = 0x3F  # the 6-bit key, matched exactly
DSCP_PRIORITY = 1  # ternary entries need a priority; these never overlap


def ack_lane(spec: FabricSpec) -> tuple[tuple[int, int], ...]:
    """(class, queue) of the ACK lane: each lossless class's RC ACKs/NAKs wait in the
    switch's highest queue (the control class's when it has all 8), unless that is the
    class's own."""
    top = ack_queue(spec.qos.queues)
    return tuple((tc, top) for tc in spec.qos.lossless_tcs if tc != top)


def compute_qos(spec: FabricSpec, plan: AddressPlan, switch: str, *,
                packet_queues: bool = False) -> tuple[TableEntry, ...]:
    """The QoS entries of `switch` (see the module docstring); with `packet_queues` (the
    target's queue rates count packets: BMv2), the ACK lane's too."""
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
    if packet_queues:
        for tc, queue in ack_lane(spec):
            out.append(TableEntry(
                table=QOS_NAMES["ack_queue"], match=(("tc", Exact(value=tc)),),
                action=Action(name=QOS_NAMES["set_queue"], params=(("queue", queue),))))
    lossless = spec.qos.lossless_tcs
    for port in sorted(sw.ports, key=lambda p: p.port):
        depth = spec.links.tier(port.tier).ecn_threshold
        for tc in lossless:
            out.append(TableEntry(
                table=QOS_NAMES["ecn_threshold"],
                match=(("port", Exact(value=port.port)), ("tc", Exact(value=tc))),
                action=Action(name=QOS_NAMES["set_ecn_threshold"], params=(("depth", depth),))))
    return tuple(out)


def pfc_quantum_q16(rate_mbps: float) -> int:
    """Microseconds of one pause quantum (512 bit-times) at `rate_mbps`, x 65536."""
    return round(512 / (rate_mbps * 1e6) * 1e6 * 65536)


def compute_pfc(plan: AddressPlan, switch: str, *, drain: bool = False
                ) -> tuple[CloneSession | TableEntry, ...]:
    """The PFC clone sessions and entries of `switch` (see the module docstring); with `drain`
    (a target whose queue rates count packets: BMv2), each PFC port's drain lane too."""
    settings = switch_settings(plan, switch)
    macs = {p.port: p.mac for p in plan.switch(switch).ports}
    sessions: list[CloneSession | TableEntry] = []
    entries: list[CloneSession | TableEntry] = []
    for p in sorted(settings.ports, key=lambda p: p.port):
        if not p.pfc:
            continue
        port = (("port", Exact(value=p.port)),)
        th = pfc_thresholds(plan, p)
        sessions.append(CloneSession(session_id=PFC_SESSION_BASE + p.port,
                                     replicas=((p.port, 0),)))
        entries.append(TableEntry(
            table=PFC_NAMES["pfc_honour"], match=port,
            action=Action(name=PFC_NAMES["honour"],
                          params=(("quantum_q16_us", pfc_quantum_q16(p.rate_mbps)),))))
        if drain and settings.drain:
            entries.append(TableEntry(
                table=PFC_NAMES["pfc_drain"], match=port,
                action=Action(name=PFC_NAMES["drain_via"], params=(("queue", settings.drain),))))
        entries.append(TableEntry(
            table=PFC_NAMES["pfc_port"], match=port,
            action=Action(name=PFC_NAMES["set_pfc_port"], params=(
                ("mac", mac_to_int(macs[p.port])), ("xoff_quanta", th.quanta),
                ("refresh", th.refresh_us)))))
        for tc in p.pfc:
            key = (*port, ("tc", Exact(value=tc)))
            entries.append(TableEntry(
                table=PFC_NAMES["pfc_xoff"], match=key,
                action=Action(name=PFC_NAMES["set_xoff"],
                              params=(("xoff_bytes", th.xoff_bytes), ("xon_bytes", th.xon_bytes)))))
            entries.append(TableEntry(
                table=PFC_NAMES["pfc_hold"], match=key,
                action=Action(name=PFC_NAMES["hold"], params=(("watchdog", 0),))))
    return (*sessions, *entries)
