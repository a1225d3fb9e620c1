"""What the emulator itself did between two samples: lost frames, packets/s, CPU.

The emulated links lose packets in one place only: a switch's egress
queue that overflows (the traffic manager's tail drop, counted apart by
the daemon as `tm.tm_dropped`). Anything else that disappears between the
two ends of a cable is the emulator falling behind: a switch process or
an agent that did not read its socket in time (the kernel drops the
frame), a veth shaper that overflowed. `Usage.of(plan, before, after)`
therefore counts, per cable and direction, the frames the sending end
counted out minus the frames the receiving end counted in:

- fabric links: the sender's `tx_port` minus the receiver's `rx_port`;
- host to RTSW: the agent's `frames_sent` minus the RTSW's `rx_port`;
- RTSW to host: the RTSW's `tx_port` minus the agent's `frames_received`
  less the PAUSE frames it received (those come from the traffic manager,
  which the pipeline's `tx_port` does not count).

Two kinds of frames missing at the far end are not the emulator's: on a
fabric link, the controller's link probes (one every 0.2 s each way) are
sent and received all the time, and the two ends of a cable are read one
after the other, so one probe can be on the wire at a reading
(`IN_FLIGHT`: up to that many frames per cable and direction are not
counted lost; measured, an idle-to-idle run otherwise shows 1 frame
"lost" on half the fabric links), plus the probes the sending end sent
between the reading of the receiving end's `rx_port` and its own
`tx_port` in the second sample (`probe_allowance`: the switches are read
one after the other, RTSWs first, so a CTSW -> RTSW direction is read
that much apart; on a loaded machine the reads take long enough that 2
frames showed "lost" on such a cable, and the run was wrongly flagged);
and a link the experiment failed
(`failed`: its frames are the emulated failure's loss, counted apart in
`failed_lost`).

Frames the kernels of the hosts send themselves (ARP, IPv6 neighbour
discovery) reach the RTSW's `rx_port` without being an agent's: the
balance of a cable is floored at 0 rather than letting them cancel a loss
elsewhere. `lost / sent` is the loss not caused by the emulated links.

The same two samples give the aggregate load (frames and bytes the hosts'
NICs sent per second, emulated Gbit/s), the packets per second the
switches' pipelines took in, and CPU shares: per switch process and per
agent (of one core), and the machine's (of all its cores).

Names defined here: `Usage`, `link_balance`, `cpu_share`, `probe_allowance`,
`IN_FLIGHT`, `PROBE_INTERVAL`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from controller.daemon import DaemonConfig
from topologies.addressing import AddressPlan

from .fabric import Sample

__all__ = ["IN_FLIGHT", "PROBE_INTERVAL", "Usage", "cpu_share", "link_balance",
           "probe_allowance"]

IN_FLIGHT = 1  # frames per fabric cable and direction a reading can catch on the wire
PROBE_INTERVAL = DaemonConfig.probe_interval  # the daemon's link probes, each way (seconds)


def link_balance(sent_before: int, sent_after: int, got_before: int, got_after: int) -> int:
    """Frames that left one end of a cable and did not arrive at the other (>= 0)."""
    return max(0, (sent_after - sent_before) - (got_after - got_before))


def probe_allowance(sample: Sample, sender: str, receiver: str) -> int:
    """Probes `sender` can have sent between `receiver`'s rx_port read and its own tx_port read
    in `sample` (0 when it was read first, or when either was not read)."""
    if sender not in sample.read_at or receiver not in sample.read_at:
        return 0
    apart = sample.read_at[sender][1] - sample.read_at[receiver][0]
    return math.ceil(apart / PROBE_INTERVAL) if apart > 0 else 0


def cpu_share(before: Mapping[str, float], after: Mapping[str, float], seconds: float
              ) -> dict[str, float]:
    """CPU seconds used between two readings over wall seconds, per name in both."""
    if seconds <= 0:
        return {}
    return {k: round((after[k] - before[k]) / seconds, 4) for k in after if k in before}


def _cell(sample: Sample, switch: str, kind: str, port: int) -> int:
    return sample.ports.get(switch, {}).get(kind, {}).get(port, (0, 0))[0]


def _nic(sample: Sample, intf: str, key: str) -> int:
    return int(sample.nics.get(intf, {}).get(key, 0))


@dataclass(frozen=True, kw_only=True)
class Usage:
    """What the emulator did between two samples: frames lost on cables, rates, CPU shares."""

    seconds: float
    sent: int  # frames that entered a cable (host NICs' and switch ports' transmit side)
    lost: int  # of those, frames that did not come out of its other end
    lost_on: dict[str, int]  # "<link id> up|down" -> frames lost there (only > 0)
    host_frames: int  # frames the hosts' NICs sent
    host_bytes: int
    host_pps: float
    host_gbps: float  # emulated Gbit/s the hosts sent, all NICs
    switch_pps: float  # packets/s the switches' pipelines took in (rx_port), all switches
    switch_cpu: dict[str, float]  # switch -> share of one core
    agent_cpu: dict[str, float]  # host -> share of one core
    machine_cpu: float  # share of all the machine's cores (0..1)
    complete: bool  # every switch and every agent was read both times
    failed_lost: dict[str, int] = field(default_factory=dict)  # on failed links, per way
    # Every other server of a fabric spread over several: the share of all its cores (0..1).
    server_cpu: dict[str, float] = field(default_factory=dict)

    @property
    def loss(self) -> float:
        """Frames lost not at a switch queue, over frames sent."""
        return self.lost / self.sent if self.sent else 0.0

    def to_json(self) -> dict[str, Any]:
        """The usage as a JSON-ready dict, `loss` included."""
        out = asdict(self)
        out["loss"] = self.loss
        return out

    @classmethod
    def of(cls, plan: AddressPlan, before: Sample, after: Sample,
           seconds: float | None = None, failed: frozenset[str] = frozenset()) -> Usage:
        """The usage between two samples; rates over `seconds` (default: between the samples).

        Give the job's own span as `seconds` when the samples bracket idle
        time too (a collective's start barrier, the counter reads); `failed`:
        link ids the experiment failed meanwhile.
        """
        seconds = max(seconds if seconds else after.at - before.at, 1e-9)
        sent = lost = 0
        lost_on: dict[str, int] = {}
        failed_lost: dict[str, int] = {}
        for lk in plan.links:
            if lk.tier == "host":
                ways = [
                    ("up", _nic(before, lk.a_intf, "frames_sent"),
                     _nic(after, lk.a_intf, "frames_sent"),
                     _cell(before, lk.b, "rx", lk.b_port), _cell(after, lk.b, "rx", lk.b_port)),
                    ("down", _cell(before, lk.b, "tx", lk.b_port),
                     _cell(after, lk.b, "tx", lk.b_port),
                     _nic(before, lk.a_intf, "frames_received")
                     - _nic(before, lk.a_intf, "pause_frames"),
                     _nic(after, lk.a_intf, "frames_received")
                     - _nic(after, lk.a_intf, "pause_frames")),
                ]
            else:
                ways = [
                    ("up", _cell(before, lk.a, "tx", lk.a_port), _cell(after, lk.a, "tx", lk.a_port),
                     _cell(before, lk.b, "rx", lk.b_port), _cell(after, lk.b, "rx", lk.b_port)),
                    ("down", _cell(before, lk.b, "tx", lk.b_port),
                     _cell(after, lk.b, "tx", lk.b_port),
                     _cell(before, lk.a, "rx", lk.a_port), _cell(after, lk.a, "rx", lk.a_port)),
                ]
            for way, s0, s1, g0, g1 in ways:
                sent += max(0, s1 - s0)
                gone = link_balance(s0, s1, g0, g1)
                if lk.id in failed:
                    if gone:
                        failed_lost[f"{lk.id} {way}"] = gone
                    continue
                if lk.tier != "host":
                    src, dst = (lk.a, lk.b) if way == "up" else (lk.b, lk.a)
                    gone = max(0, gone - IN_FLIGHT - probe_allowance(after, src, dst))
                if gone:
                    lost_on[f"{lk.id} {way}"] = gone
                    lost += gone
        nic_names = {n.intf for n in plan.nics()}
        host_frames = sum(_nic(after, n, "frames_sent") - _nic(before, n, "frames_sent")
                          for n in nic_names)
        host_bytes = sum(_nic(after, n, "bytes_sent") - _nic(before, n, "bytes_sent")
                         for n in nic_names)
        switch_rx = sum(
            max(0, _cell(after, s.name, "rx", p.port) - _cell(before, s.name, "rx", p.port))
            for s in plan.switches for p in s.ports)
        machine = _share(before.machine, after.machine)
        complete = (all(after.ports.get(s.name, {}).get("rx") for s in plan.switches)
                    and all(before.ports.get(s.name, {}).get("rx") for s in plan.switches)
                    and nic_names <= set(before.nics) and nic_names <= set(after.nics))
        return cls(seconds=seconds, sent=sent, lost=lost, lost_on=lost_on,
                   host_frames=host_frames, host_bytes=host_bytes,
                   host_pps=host_frames / seconds, host_gbps=host_bytes * 8 / seconds / 1e9,
                   switch_pps=switch_rx / seconds,
                   switch_cpu=cpu_share(before.switch_cpu, after.switch_cpu, seconds),
                   agent_cpu=cpu_share(before.agent_cpu, after.agent_cpu, seconds),
                   machine_cpu=round(machine, 4), complete=complete,
                   failed_lost=failed_lost,
                   server_cpu={name: round(_share(before.servers[name], now), 4)
                               for name, now in after.servers.items()
                               if name in before.servers})


def _share(before: tuple[float, float], after: tuple[float, float]) -> float:
    """The busy share of all a machine's cores between two (busy, total) readings."""
    busy0, total0 = before
    busy1, total1 = after
    return (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0
