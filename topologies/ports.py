"""The port settings of each switch, derived from the plan: what a switch node sets on its ports.

A switch's ports run at their link tier's emulated rate with the tier's
egress queue length, and PFC covers the lossless classes on the ports of
tiers with `pfc.enabled`; every switch has `qos.queues` priority queues.
The node classes (`topologies.nodes`) turn these values into each target's
flags and run-time calls; `run.json` records them (`to_json`), so a switch
restarted after the daemon died gets the same ones.

Names defined here: `PortSettings`, `SwitchSettings`, `switch_settings`,
`MTU_FRAME`, `ROCE_FRAME`, `HOLD_QUEUE_PACKETS`, `DRAIN_SPEEDUP`, `ack_queue`,
`drain_queue`, `frames_per_second`, `paced_mbps`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from .addressing import AddressPlan, Tier

__all__ = ["DRAIN_SPEEDUP", "HOLD_QUEUE_PACKETS", "MTU_FRAME", "ROCE_FRAME", "PortSettings",
           "SwitchSettings", "ack_queue", "drain_queue", "frames_per_second", "paced_mbps",
           "switch_settings"]

# Bytes of a full-size frame on a veth (1500-byte IP packet + 14-byte
# Ethernet header; no FCS, preamble or gap: tc counts the same bytes).
MTU_FRAME = 1514
# Bytes of the frame the fabric's lossless class is made of: a RoCEv2 RC WRITE
# Middle packet at the default path MTU (1,024): Ethernet 14 + IPv4 20 + UDP 8
# + BTH 12 + payload 1,024 + ICRC 4 (`traffic.schema.Transport.path_mtu`).
ROCE_FRAME = 14 + 20 + 8 + 12 + 1024 + 4
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
    second; `paced_mbps` is that rate in Mb/s, at which the switch's side of the cable
    is shaped to match (`topologies.net`)."""
    return max(1, math.ceil(rate_mbps * 1e6 / (8 * frame) - 1e-9))


def paced_mbps(rate_mbps: float, frame: int = MTU_FRAME) -> float:
    """The rate in Mb/s of a queue paced at `frames_per_second(rate_mbps, frame)`."""
    return frames_per_second(rate_mbps, frame) * 8 * frame / 1e6


@dataclass(frozen=True, kw_only=True)
class PortSettings:
    """One switch port: rate (Mb/s), egress queue (packets), PFC priorities and thresholds."""

    port: int
    intf: str
    tier: Tier
    rate_mbps: float
    queue: int
    pfc: tuple[int, ...]  # priorities PFC covers on this port; empty: off
    xoff: int
    xon: int

    @property
    def gbps(self) -> str:
        """The rate in Gb/s as a flag value ("0.01" for 10 Mb/s)."""
        return f"{self.rate_mbps / 1000:.9g}"


@dataclass(frozen=True, kw_only=True)
class SwitchSettings:
    """Every port of one switch, and its number of priority queues."""

    queues: int
    ports: tuple[PortSettings, ...]
    drain: int = 0  # the drain lane's queue (`drain_queue`); 0: none

    def to_json(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict (what `from_json` reads)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SwitchSettings:
        """The settings `to_json` wrote."""
        ports = tuple(PortSettings(**{**p, "pfc": tuple(p["pfc"])}) for p in data["ports"])
        return cls(queues=int(data["queues"]), ports=ports, drain=int(data.get("drain", 0)))


def switch_settings(plan: AddressPlan, name: str) -> SwitchSettings:
    """The settings of switch `name` from its ports' link tiers and the plan's QoS."""
    sw = plan.switch(name)
    lossless = plan.qos.lossless_tcs
    ports = []
    for p in sw.ports:
        link = plan.link(p.link_id)
        shape = link.shape
        ports.append(PortSettings(
            port=p.port, intf=p.intf, tier=p.tier, rate_mbps=shape.rate_mbps,
            queue=shape.queue, pfc=lossless if shape.pfc.enabled else (),
            xoff=shape.pfc.xoff, xon=shape.pfc.xon))
    drain = drain_queue(plan.qos.queues, {c.tc for c in plan.qos.classes.values()})
    return SwitchSettings(queues=plan.qos.queues, ports=tuple(ports), drain=drain)
