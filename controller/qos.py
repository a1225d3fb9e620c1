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

`compute_pfc(plan, switch)` is the PFC of the program (`p4/include/control/pfc.p4`)
on every port whose link tier has `pfc.enabled`, from `topologies.ports`:

- a clone session `PFC_SESSION_BASE + port` (replica: the port) that PFC
  frames sent out of the port go through;
- `FabricIngress.pfc.pfc_honour`: `port` -> `honour(quantum_q16_us)`, the
  port's pause quantum (512 bit-times at its emulated rate) in microseconds
  x 65536, so received PFC frames hold for quanta x 512 bit-times;
- `FabricEgress.pfc.pfc_port`: `port` -> `set_pfc_port(mac, xoff_quanta,
  refresh)`: frames out of it come from the port's MAC, pause for the time
  the port's queue of RoCE frames takes to leave (`pfc_quanta`: 64 bytes a
  quantum, at most 65,535) and are re-sent every half of that while
  asserted. Not 65,535 quanta: at the emulated rates that is seconds (3.4 s
  at 10 Mb/s), and the programs send XON for an ingress port only when a
  packet from it leaves a drained queue, so a port whose last packets left
  while others kept the queue up would stay paused that long; with a pause
  the length of a queue it resumes on its own and is paused again if the
  queue is still full;
- per lossless class: `FabricEgress.pfc.pfc_xoff` (`port`, `tc`) ->
  `set_xoff(xoff, xon)` (the tier's thresholds, packets of queue depth) and
  `FabricEgress.pfc.pfc_hold` (`port`, `tc`) -> `hold(watchdog)` (the
  class is held while paused; watchdog 0: off).

Names defined here: `compute_qos`, `compute_pfc`, `pfc_quantum_q16`, `QOS_NAMES`,
`PFC_NAMES`, `PFC_SESSION_BASE`, `pfc_quanta`, `DSCP_MASK`, `DSCP_PRIORITY`.
"""

from __future__ import annotations

import math

from topologies.addressing import AddressPlan, mac_to_int
from topologies.ports import ROCE_FRAME, switch_settings
from topologies.spec import FabricSpec

from .entities import Action, CloneSession, Exact, TableEntry, Ternary

__all__ = ["DSCP_MASK", "DSCP_PRIORITY", "PFC_NAMES", "PFC_SESSION_BASE", "pfc_quanta",
           "QOS_NAMES", "compute_pfc", "compute_qos", "pfc_quantum_q16"]

# The P4Runtime names QoS writes (p4/include/control/qos.p4 as the P4Info names them).
QOS_NAMES = {
    "dscp_to_tc": "FabricIngress.qos.dscp_to_tc",
    "set_tc": "FabricIngress.qos.set_tc",
    "tc_to_queue": "FabricIngress.qos.tc_to_queue",
    "set_queue": "FabricIngress.qos.set_queue",
    "ecn_threshold": "FabricEgress.ecn.ecn_threshold",
    "set_ecn_threshold": "FabricEgress.ecn.set_ecn_threshold",
}
# p4/include/control/pfc.p4's tables and actions, and define.p4's PFC_SESSION_BASE.
PFC_NAMES = {
    "pfc_honour": "FabricIngress.pfc.pfc_honour",
    "honour": "FabricIngress.pfc.honour",
    "pfc_hold": "FabricEgress.pfc.pfc_hold",
    "hold": "FabricEgress.pfc.hold",
    "pfc_xoff": "FabricEgress.pfc.pfc_xoff",
    "set_xoff": "FabricEgress.pfc.set_xoff",
    "pfc_port": "FabricEgress.pfc.pfc_port",
    "set_pfc_port": "FabricEgress.pfc.set_pfc_port",
}
PFC_SESSION_BASE = 1024


def pfc_quanta(queue: int) -> int:
    """Pause quanta (512 bit-times, 64 bytes each) for a queue of `queue` RoCE frames to
    leave: what an XOFF out of a port with that queue asks for, at most 65,535."""
    return min(0xFFFF, math.ceil(queue * ROCE_FRAME / 64))
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


def pfc_quantum_q16(rate_mbps: float) -> int:
    """Microseconds of one pause quantum (512 bit-times) at `rate_mbps`, x 65536."""
    return round(512 / (rate_mbps * 1e6) * 1e6 * 65536)


def compute_pfc(plan: AddressPlan, switch: str) -> tuple[CloneSession | TableEntry, ...]:
    """The PFC clone sessions and entries of `switch` (see the module docstring)."""
    settings = switch_settings(plan, switch)
    macs = {p.port: p.mac for p in plan.switch(switch).ports}
    sessions: list[CloneSession | TableEntry] = []
    entries: list[CloneSession | TableEntry] = []
    for p in sorted(settings.ports, key=lambda p: p.port):
        if not p.pfc:
            continue
        port = (("port", Exact(value=p.port)),)
        quanta = pfc_quanta(p.queue)
        pause_us = quanta * 512 / (p.rate_mbps * 1e6) * 1e6
        sessions.append(CloneSession(session_id=PFC_SESSION_BASE + p.port,
                                     replicas=((p.port, 0),)))
        entries.append(TableEntry(
            table=PFC_NAMES["pfc_honour"], match=port,
            action=Action(name=PFC_NAMES["honour"],
                          params=(("quantum_q16_us", pfc_quantum_q16(p.rate_mbps)),))))
        entries.append(TableEntry(
            table=PFC_NAMES["pfc_port"], match=port,
            action=Action(name=PFC_NAMES["set_pfc_port"], params=(
                ("mac", mac_to_int(macs[p.port])), ("xoff_quanta", quanta),
                ("refresh", max(1, round(pause_us / 2)))))))
        for tc in p.pfc:
            key = (*port, ("tc", Exact(value=tc)))
            entries.append(TableEntry(
                table=PFC_NAMES["pfc_xoff"], match=key,
                action=Action(name=PFC_NAMES["set_xoff"],
                              params=(("xoff_depth", p.xoff), ("xon_depth", p.xon)))))
            entries.append(TableEntry(
                table=PFC_NAMES["pfc_hold"], match=key,
                action=Action(name=PFC_NAMES["hold"], params=(("watchdog", 0),))))
    return (*sessions, *entries)
