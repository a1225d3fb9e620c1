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
  xon_bytes)`, its thresholds in bytes (`pfc_thresholds`), and
  `FabricEgress.pfc.pfc_hold` (`port`, `tc`) -> `hold(watchdog)` (the class
  is held towards the port while paused; watchdog 0: off);
- `FabricEgress.pfc.pfc_port`: `port` -> `set_pfc_port(mac, xoff_quanta,
  refresh)`: frames out of it come from the port's MAC, pause for
  `pfc_thresholds`' quanta and are re-sent every `refresh` us while XOFF
  stays asserted;
- with `drain` (BMv2, whose queue rates count packets) and a free queue
  (`topologies.ports.drain_queue`), `FabricIngress.pfc.pfc_drain`: `port` ->
  `drain_via(queue)`, the lane a held packet whose pause is over goes round
  until its turn, paced `ports.DRAIN_SPEEDUP` times faster than the port
  (`Bmv2SwitchNode.cli_commands`) instead of at the port's rate.

The thresholds (`pfc_thresholds`, 802.1Qbb's way, in bytes): the tier's
`pfc.xoff`/`pfc.xon` are counted in RoCE frames (`ports.ROCE_FRAME`), the
frames the lossless class carries. After XOFF leaves, the upstream keeps
sending for a round trip: its frame on the wire, the PAUSE's way up, the
emulated switch's reaction (`PFC_RESPONSE_S`) and the cable both ways
(the topology's scaled `latency:`, or a tier's `delay_ms`); that many bytes at
the port's rate, plus one largest frame (`ports.MTU_FRAME`) it may have
begun, is the PG's headroom, and XOFF is lowered if need be so that XOFF +
headroom fit the tier's queue (`queue` RoCE frames); a queue too short even
for that gets XOFF one frame above XON and `headroom_fits` False (at a
realistic BDP the presets' queues are: docs/model.md). The round trip is
the slowest tier's (the longest),
one figure for the fabric. The pause asks for twice the time the port's
link takes to carry XOFF + headroom and is refreshed at half of it:
long enough that a refresh late by half a pause still lands in time, short
enough that a lost XON costs one pause; XON normally ends it when the PG's
backlog drains.

Worked out for ai_zone_small's host ports (10 Mb/s, queue 128, XOFF/XON 16/8,
no delay_ms): XOFF 16 x 1,082 = 17,312 B, XON 8 x 1,082 = 8,656 B; round
trip 20 ms; headroom 10e6 / 8 x 0.020 + 1,514 = 26,514 B; XOFF + headroom
43,826 B of a 128 x 1,082 = 138,496-B queue (fits, XOFF kept); pause
2 x 43,826 / 64 = 1,369.6 -> 1,370 quanta = 70.1 ms at 10 Mb/s (51.2 us a
quantum), refreshed every 35,072 us. Its uplinks (20 Mb/s): headroom
20e6 / 8 x 0.020 + 1,514 = 51,514 B, pause 2 x 68,826 / 64 -> 2,151 quanta
= 55.1 ms at 20 Mb/s (25.6 us a quantum), refresh 27,533 us. rack.yaml's
host ports (20 Mb/s, queue 64, XOFF 24) show the clamp: 64 x 1,082 =
69,248 B leave 17,734 B below the 51,514-B headroom, so XOFF comes at
17,734 B instead of 25,968.

Names defined here: `compute_qos`, `ack_lane`, `compute_pfc`, `pfc_thresholds`,
`PfcThresholds`, `pfc_quantum_q16`, `pause_quanta`, `QOS_NAMES`, `PFC_NAMES`,
`PFC_SESSION_BASE`, `PFC_RESPONSE_S`, `DSCP_MASK`, `DSCP_PRIORITY`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from topologies.addressing import AddressPlan, mac_to_int
from topologies.latency import TIER_ENDS
from topologies.ports import MTU_FRAME, ROCE_FRAME, PortSettings, ack_queue, switch_settings
from topologies.spec import FabricSpec

from .entities import Action, CloneSession, Exact, TableEntry, Ternary

__all__ = ["DSCP_MASK", "DSCP_PRIORITY", "PFC_NAMES", "PFC_RESPONSE_S", "PFC_SESSION_BASE",
           "PfcThresholds", "QOS_NAMES", "ack_lane", "compute_pfc", "compute_qos", "pause_quanta",
           "pfc_quantum_q16", "pfc_thresholds"]

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


# How long the emulated switch and its upstream take to act on a PAUSE, beyond
# the cable: the program's pass, the PFC frame's wait behind the frame on the
# wire, the upstream's pass or NIC agent taking it in. A busy BMv2 or p4switch
# takes milliseconds to tens of milliseconds per pass here, not a real ASIC's
# microsecond: this is the round trip the headroom must cover.
PFC_RESPONSE_S = 0.020


@dataclass(frozen=True, kw_only=True)
class PfcThresholds:
    """One port's priority-group PFC settings, in bytes (see the module docstring)."""

    xoff_bytes: int
    """XOFF when the PG holds this many bytes."""
    xon_bytes: int
    """XON when the PG is down to this many bytes."""
    headroom_bytes: int
    """What the upstream may still send after XOFF: rate x round trip + a largest frame."""
    buffer_bytes: int
    """The tier's queue in RoCE frames' bytes: XOFF + headroom fit in it..."""
    headroom_fits: bool
    """... unless this is False (XOFF is then one RoCE frame above XON)."""
    quanta: int
    """What an XOFF out of the port asks for (512 bit-times each)."""
    refresh_us: int
    """How often XOFF is re-sent while asserted: half the pause."""


def pause_quanta(nbytes: float) -> int:
    """Quanta (512 bit-times: 64 bytes each) of a pause twice as long as `nbytes` take on
    the link, at most 65,535, at least 1."""
    return max(1, min(0xFFFF, math.ceil(2 * nbytes / 64)))


def _round_trip_s(plan: AddressPlan) -> float:
    """The slowest tier's round trip: its cable both ways (the topology's scaled
    `latency:`, or a tier's netem `delay_ms`), plus the switches' reaction."""
    cable = max((2 * (link.shape.delay_ms or 0.0) / 1000 for link in plan.links), default=0.0)
    if plan.latency is not None:
        cable = max(cable, *(plan.latency.link_rtt_us(link.tier, *TIER_ENDS[link.tier])
                             * 1e-6 * plan.scale for link in plan.links))
    return cable + PFC_RESPONSE_S


def pfc_thresholds(plan: AddressPlan, port: PortSettings) -> PfcThresholds:
    """The PG thresholds, headroom, quanta and refresh of `port` (see the module docstring).
    A queue too short for XOFF above XON plus the headroom gets XOFF one RoCE frame above
    XON, and says so (`headroom_fits` False): lossless only while the upstream reacts
    faster than the round trip assumed."""
    rate_bps = port.rate_mbps * 1e6
    headroom = math.ceil(rate_bps / 8 * _round_trip_s(plan)) + MTU_FRAME
    buffer = port.queue * ROCE_FRAME
    xon = port.xon * ROCE_FRAME
    xoff = min(port.xoff * ROCE_FRAME, buffer - headroom)
    fits = xoff > xon
    if not fits:
        xoff = xon + ROCE_FRAME
    quanta = pause_quanta(xoff + headroom)
    pause_us = quanta * 512 / rate_bps * 1e6
    return PfcThresholds(xoff_bytes=xoff, xon_bytes=xon, headroom_bytes=headroom,
                         buffer_bytes=buffer, headroom_fits=fits, quanta=quanta,
                         refresh_us=max(1, round(pause_us / 2)))


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
