"""The port settings of each switch, derived from the plan: what a switch node sets on its ports.

A switch's ports run at their link tier's emulated rate with the tier's
egress queue length, and PFC covers the lossless classes on the ports of
tiers with `pfc.enabled`; every switch has `qos.queues` priority queues.
The node classes (`topologies.nodes`) turn these values into each target's
flags and run-time calls; `run.json` records them (`to_json`), so a switch
restarted after the daemon died gets the same ones.

PFC's priority groups are sized in bytes, the way 802.1Qbb switches size
them (`pfc_thresholds`): the programs' PFC (`controller.qos.compute_pfc`)
takes them on every target, and p4switch's native PFC too when the
topology's `buffer.accounting` is bytes (`SwitchSettings.buffer_unit`).

The thresholds (`pfc_thresholds`, 802.1Qbb's way, in bytes): the tier's
`pfc.xoff`/`pfc.xon` are counted in RoCE frames (`topologies.mtu.roce_frame`
at the links' path MTU: `ROCE_FRAME`, 1,082 bytes, at the default MTU), the
frames the lossless class carries. After XOFF leaves, the upstream keeps
sending for a round trip: its frame on the wire, the PAUSE's way up, the
emulated switch's reaction (`PFC_RESPONSE_S`) and the cable both ways
(the topology's scaled `latency:`, or a tier's `delay_ms`); that many bytes at
the port's rate, plus one largest frame (`AddressPlan.mtu_frame`) it may have
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

Worked out for ai_zone_small's host ports at MTU 1,500 (10 Mb/s, queue 128,
XOFF/XON 16/8, no delay_ms; the preset's jumbo links count 4,154-byte frames and a
9,014-byte largest one instead: tests/unit/controller/test_pfc_intent.py): XOFF 16 x 1,082 = 17,312 B, XON 8 x 1,082 = 8,656 B; round
trip 20 ms; headroom 10e6 / 8 x 0.020 + 1,514 = 26,514 B; XOFF + headroom
43,826 B of a 128 x 1,082 = 138,496-B queue (fits, XOFF kept); pause
2 x 43,826 / 64 = 1,369.6 -> 1,370 quanta = 70.1 ms at 10 Mb/s (51.2 us a
quantum), refreshed every 35,072 us. Its uplinks (20 Mb/s): headroom
20e6 / 8 x 0.020 + 1,514 = 51,514 B, pause 2 x 68,826 / 64 -> 2,151 quanta
= 55.1 ms at 20 Mb/s (25.6 us a quantum), refresh 27,533 us. rack.yaml's
host ports (20 Mb/s, queue 64, XOFF 24) show the clamp: 64 x 1,082 =
69,248 B leave 17,734 B below the 51,514-B headroom, so XOFF comes at
17,734 B instead of 25,968.

Names defined here: `PortSettings`, `SwitchSettings`, `switch_settings`,
`PfcThresholds`, `pfc_thresholds`, `pause_quanta`,
`HOLD_QUEUE_PACKETS`, `DRAIN_SPEEDUP`, `PFC_RESPONSE_S`, `ack_queue`,
`drain_queue`, `frames_per_second`, `paced_mbps`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from .addressing import AddressPlan, Tier
from .latency import TIER_ENDS
from .mtu import MTU_FRAME, ROCE_FRAME

__all__ = ["DRAIN_SPEEDUP", "HOLD_QUEUE_PACKETS", "PFC_RESPONSE_S", "SHAPER_HEADROOM",
           "PfcThresholds", "PortSettings", "SwitchSettings", "ack_queue", "drain_queue",
           "frames_per_second", "paced_mbps", "pause_quanta", "pfc_thresholds",
           "switch_end_mbps", "switch_settings"]

# The PFC headroom of a port where the program does PFC (p4/include/control/pfc.p4,
# BMv2): the length of its lossless queues, and of its lowest queue, through which
# the program holds paused packets by recirculating them. XOFF still comes at the
# tier's `xoff` packets; what the upstream sends before the PAUSE takes effect there
# (a busy BMv2 reacts in tens of milliseconds: hundreds of frames at 20 Mb/s) must
# not be dropped. A real switch keeps headroom apart from the queue's own buffer.
HOLD_QUEUE_PACKETS = 1024
# How much faster than the port a BMv2 port's drain lane is paced: the queue a held
# packet whose pause is over goes round until its turn (`drain_queue`,
# p4/include/control/pfc.p4 `pfc_drain`). Faster empties a line in fewer port-times;
# each turn is a pass of both pipelines, so it is not unpaced: an unpaced lane would
# take every cycle of the port's egress thread while a line waits for its head.
DRAIN_SPEEDUP = 2
# How much faster than the switch's port the switch's side of a cable is shaped, so that a
# congested port's backlog waits in the switch's queue, where the program's queue depth, ECN
# marking and PFC accounting see it, not in tc behind it (`switch_end_mbps`). A BMv2 queue
# (packets) whose egress thread was held up lets out at once what fell due meanwhile; a shaper
# at the very same pace kept that burst for the rest of a congestion episode (a 2:1 incast at
# 20 Mb/s: 4-13 packets standing in tc, up to 47); 5 % above, it drains in a fraction of a
# second (mean backlog under half a packet; 2 % left bursts of 17-34 standing). p4switch's
# ports pace bytes at the link's rate, and a shaper at that rate held 0.8-2.8 packets on
# average in the same incast, each a frame's time of delay per hop the switch did not count.
# Either way the port, paced at the tier's rate, stays the bottleneck.
SHAPER_HEADROOM = 1.05


def ack_queue(queues: int) -> int:
    """The queue RC ACKs/NAKs of the lossless classes wait in on a switch with `queues`
    priority queues: the highest (`controller.qos.ack_lane`)."""
    return queues - 1


def drain_queue(queues: int, class_tcs: tuple[int, ...] | set[int]) -> int:
    """The drain lane of a switch with `queues` priority queues whose named classes wait in
    `class_tcs`: the lowest queue above 0 that no class uses and that is not the highest (RC
    ACKs' lane on BMv2, `controller.qos.ack_lane`); 0 when every queue is taken (held packets
    then go round the lowest queue, paced at the port's rate, until their turn)."""
    free = [q for q in range(1, ack_queue(queues)) if q not in class_tcs]
    return free[0] if free else 0


def frames_per_second(rate_mbps: float, frame: int = MTU_FRAME) -> int:
    """The rate of a queue paced in packets (BMv2's set_queue_rate) for a link of
    `rate_mbps`: rate / (8 x `frame` bytes) frames per second, rounded up, at least 1.

    Up, not down: rounded down (115 frames/s for 1 Mb/s of 1,082-B frames, against
    115.6), the port is slower than the sender that feeds it at the link's rate, its
    queue grows half a frame a second, and PFC pauses a fabric with no link congested
    (measured: 7 to 143 PAUSEs per port in 10 s of an uncongested permutation). A port
    paced at the rate rounded up is faster than its link by less than one frame a
    second; `paced_mbps` is that rate in Mb/s, a little below the rate the switch's side of
    the cable is shaped at (`switch_end_mbps`, `topologies.net`)."""
    return max(1, math.ceil(rate_mbps * 1e6 / (8 * frame) - 1e-9))


def paced_mbps(rate_mbps: float, frame: int = MTU_FRAME) -> float:
    """The rate in Mb/s of a queue paced at `frames_per_second(rate_mbps, frame)`."""
    return frames_per_second(rate_mbps, frame) * 8 * frame / 1e6


def switch_end_mbps(rate_mbps: float, frame: int | None = None) -> float:
    """The rate in Mb/s the switch's side of a `rate_mbps` cable is shaped at:
    `SHAPER_HEADROOM` times the switch port's own pace, so the switch's queue, not tc
    behind it, holds the backlog. `frame`: the switch's queues are paced in packets of
    that many bytes (BMv2), whose pace is `paced_mbps`; None: they pace bytes at the
    link's rate (p4switch)."""
    pace = rate_mbps if frame is None else paced_mbps(rate_mbps, frame)
    return pace * SHAPER_HEADROOM


@dataclass(frozen=True, kw_only=True)
class PortSettings:
    """One switch port: rate (Mb/s), egress queue (packets), PFC priorities and thresholds,
    and the same in bytes for a buffer that counts bytes."""

    port: int
    intf: str
    tier: Tier
    rate_mbps: float
    queue: int
    pfc: tuple[int, ...]  # priorities PFC covers on this port; empty: off
    xoff: int
    xon: int
    # Bytes, with PFC: `pfc_thresholds`' XOFF and XON, and the headroom a buffer counted in
    # bytes gives the PG: all the queue holds above XOFF, at least `pfc_thresholds`' round
    # trip (0 without PFC). See `switch_settings`.
    xoff_bytes: int = 0
    xon_bytes: int = 0
    headroom_bytes: int = 0
    # Bytes of the RoCE frame `queue`, `xoff` and `xon` count (`topologies.mtu.roce_frame`
    # at the links' path MTU).
    frame: int = ROCE_FRAME

    @property
    def queue_bytes(self) -> int:
        """The queue in bytes: `queue` RoCE frames."""
        return self.queue * self.frame

    @property
    def gbps(self) -> str:
        """The rate in Gb/s as a flag value ("0.01" for 10 Mb/s)."""
        return f"{self.rate_mbps / 1000:.9g}"


@dataclass(frozen=True, kw_only=True)
class SwitchSettings:
    """Every port of one switch, its number of priority queues, and how its buffer counts."""

    queues: int
    ports: tuple[PortSettings, ...]
    drain: int = 0  # the drain lane's queue (`drain_queue`); 0: none
    buffer_unit: str = "packets"  # what p4switch's queues and native PFC count: packets | bytes
    shared_bytes: int | None = None  # a pool every queue draws from (bytes); None: none
    alpha: float | None = None  # dynamic thresholds on the pool; None: static

    def to_json(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict (what `from_json` reads)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SwitchSettings:
        """The settings `to_json` wrote."""
        ports = tuple(PortSettings(**{**p, "pfc": tuple(p["pfc"])}) for p in data["ports"])
        return cls(queues=int(data["queues"]), ports=ports, drain=int(data.get("drain", 0)),
                   buffer_unit=str(data.get("buffer_unit", "packets")),
                   shared_bytes=data.get("shared_bytes"), alpha=data.get("alpha"))


def switch_settings(plan: AddressPlan, name: str) -> SwitchSettings:
    """The settings of switch `name` from its ports' link tiers and the plan's QoS."""
    sw = plan.switch(name)
    lossless = plan.qos.lossless_tcs
    ports = []
    for p in sw.ports:
        link = plan.link(p.link_id)
        shape = link.shape
        port = PortSettings(
            port=p.port, intf=p.intf, tier=p.tier, rate_mbps=shape.rate_mbps,
            queue=shape.queue, pfc=lossless if shape.pfc.enabled else (),
            xoff=shape.pfc.xoff, xon=shape.pfc.xon, frame=plan.roce_frame)
        if port.pfc:
            # The PG may fill its queue, as one counted in packets may (the emulated switches
            # and NIC agents take tens of milliseconds to act on a PAUSE, longer than the
            # round trip `pfc_thresholds` assumes; the queues are sized for that, in frames:
            # `experiments.sizes.lossless`), and never has less than the round trip's bytes.
            th = pfc_thresholds(plan, port)
            headroom = max(th.headroom_bytes, port.queue_bytes - th.xoff_bytes)
            port = replace(port, xoff_bytes=th.xoff_bytes, xon_bytes=th.xon_bytes,
                           headroom_bytes=headroom)
        ports.append(port)
    drain = drain_queue(plan.qos.queues, {c.tc for c in plan.qos.classes.values()})
    buffer = plan.buffer
    return SwitchSettings(queues=plan.qos.queues, ports=tuple(ports), drain=drain,
                          buffer_unit=buffer.accounting, shared_bytes=buffer.shared_bytes,
                          alpha=buffer.alpha)


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
    headroom = math.ceil(rate_bps / 8 * _round_trip_s(plan)) + plan.mtu_frame
    buffer = port.queue_bytes
    xon = port.xon * port.frame
    xoff = min(port.xoff * port.frame, buffer - headroom)
    fits = xoff > xon
    if not fits:
        xoff = xon + port.frame
    quanta = pause_quanta(xoff + headroom)
    pause_us = quanta * 512 / rate_bps * 1e6
    return PfcThresholds(xoff_bytes=xoff, xon_bytes=xon, headroom_bytes=headroom,
                         buffer_bytes=buffer, headroom_fits=fits, quanta=quanta,
                         refresh_us=max(1, round(pause_us / 2)))
