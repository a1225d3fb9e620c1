"""Link liveness from probes the controller sends through the switches themselves.

P4Runtime has no port status (that is gNMI's, which neither BMv2's
simple_switch_grpc nor p4switch serves), so the controller watches every
switch-to-switch link the way LLDP-based controllers do: every `interval`
it sends, through each switch, a packet-out of a small probe frame out of
each fabric port (`PROBE_ETHERTYPE`, 0x88cc; packet-outs leave in the
control class's queue, so data traffic does not starve them); the switch at
the other end punts it to the controller (an ACL entry of the intent) with
its ingress port. A direction of a link that has not delivered a probe for
`dead_after` seconds is down; one that delivers `up_after` probes in a row
after that is up again. A link is up when both directions are.

Detection time is therefore between `dead_after - interval` and
`dead_after` plus the poll delay (the daemon's defaults: probes every 0.2 s,
dead after 1.0 s, so about 1.0-1.2 s: on a 2-core machine whose switches
are busy with a collective, probes arrive late, and a shorter deadline
takes live links for dead ones); it is measured and reported with each
failure (`detected_after`: time from the last probe seen to the detection).

Probe frame: Ethernet to the LLDP nearest-bridge address 01:80:c2:00:00:0e,
from the sending port's MAC, EtherType 0x88cc, then the payload
`AZPROBE1` + sending switch index (2 bytes) + port (2 bytes) + sequence
(4 bytes), padded to 60 bytes.

Names defined here: `LinkProber`, `LinkState`, `probe_frame`, `parse_probe`,
`PROBE_ETHERTYPE`.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from topologies.addressing import AddressPlan

from .intent import PROBE_ETHERTYPE
from .sessions import FabricSessions
from .tasks import DaemonTasks

__all__ = ["PROBE_ETHERTYPE", "LinkProber", "LinkState", "parse_probe", "probe_frame"]

LOG = logging.getLogger("aizone.probes")
_MAGIC = b"AZPROBE1"
_DST = bytes.fromhex("0180c200000e")
_FMT = "!HHI"


def probe_frame(src_mac: str, switch_index: int, port: int, seq: int) -> bytes:
    """The probe `switch_index` sends out of `port` (see the module docstring)."""
    head = _DST + bytes.fromhex(src_mac.replace(":", "")) + PROBE_ETHERTYPE.to_bytes(2, "big")
    body = _MAGIC + struct.pack(_FMT, switch_index, port, seq & 0xFFFFFFFF)
    frame = head + body
    return frame + b"\0" * max(0, 60 - len(frame))


def parse_probe(frame: bytes) -> tuple[int, int, int] | None:
    """(switch index, port, sequence) of a probe frame, or None for anything else."""
    if len(frame) < 14 + len(_MAGIC) + 8 or frame[12:14] != PROBE_ETHERTYPE.to_bytes(2, "big"):
        return None
    if frame[14:14 + len(_MAGIC)] != _MAGIC:
        return None
    return struct.unpack_from(_FMT, frame, 14 + len(_MAGIC))


@dataclass(kw_only=True)
class _Direction:
    """One direction of a link: (sender switch, port) -> (receiver switch, port)."""

    link: str
    sender: str
    port: int
    receiver: str
    receiver_port: int
    last_seen: float = 0.0
    streak: int = 0  # probes in a row since the direction was last down
    up: bool = True


@dataclass(kw_only=True)
class LinkState:
    """What the prober knows of one link (both directions)."""

    link: str
    up: bool
    last_seen: float
    changed_at: float
    detected_after: float | None = None  # seconds between the last probe and the detection


Change = Callable[[LinkState], None]


@dataclass
class LinkProber:
    """Sends probes and watches their arrival (see the module docstring)."""

    plan: AddressPlan
    sessions: FabricSessions
    on_change: Change
    interval: float = 0.1
    dead_after: float = 0.5
    up_after: int = 3
    _dirs: dict[tuple[str, int], _Direction] = field(default_factory=dict)
    _links: dict[str, LinkState] = field(default_factory=dict)
    _seq: int = 0
    _index: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        now = time.monotonic()
        self._index = {s.index: s.name for s in self.plan.switches}
        for lk in self.plan.links:
            if lk.tier == "host":
                continue  # a host does not punt probes; its NIC link is not probed
            link = lk.id
            self._dirs[(lk.a, lk.a_port)] = _Direction(link=link, sender=lk.a, port=lk.a_port,
                                                       receiver=lk.b, receiver_port=lk.b_port,
                                                       last_seen=now)
            self._dirs[(lk.b, lk.b_port)] = _Direction(link=link, sender=lk.b, port=lk.b_port,
                                                       receiver=lk.a, receiver_port=lk.a_port,
                                                       last_seen=now)
            self._links[link] = LinkState(link=link, up=True, last_seen=now, changed_at=now)

    @property
    def links(self) -> dict[str, LinkState]:
        """Each probed link's state by link id (host links are not probed)."""
        return self._links

    def is_up(self, link: str) -> bool:
        """Whether the probes find `link` up; a link that is not probed counts as up."""
        state = self._links.get(link)
        return state.up if state is not None else True

    def start(self, tasks: DaemonTasks) -> None:
        """Start probing as a task of `tasks` (which cancels it with the daemon's others)."""
        now = time.monotonic()
        for d in self._dirs.values():
            d.last_seen = now  # grace period: nothing is late before the first round
        tasks.spawn(self._run(), "probes")

    async def _run(self) -> None:
        macs = {(s.name, p.port): p.mac for s in self.plan.switches for p in s.ports}
        index = {s.name: s.index for s in self.plan.switches}
        previous = time.monotonic()
        while True:
            t0 = time.monotonic()
            if t0 - previous > self.dead_after / 2:
                # This loop itself was held up (a CPU-bound machine): the probes
                # were late because of us, not because a link died.
                for d in self._dirs.values():
                    d.last_seen = max(d.last_seen, t0 - self.interval)
            previous = t0
            self._seq += 1
            frames: dict[str, list[tuple[int, bytes]]] = {}
            for (sw, port), d in self._dirs.items():
                if not self.sessions.is_ready(sw) or not self.sessions.is_ready(d.receiver):
                    d.last_seen = t0  # a switch being (re)started is not a link failure
                    continue
                frames.setdefault(sw, []).append(
                    (port, probe_frame(macs[(sw, port)], index[sw], port, self._seq)))
            results = await asyncio.gather(
                *(self.sessions.packet_out(sw, fr) for sw, fr in frames.items()),
                return_exceptions=True)
            for r in results:
                if isinstance(r, Exception):
                    LOG.debug("probe packet-out failed: %s", r)
            self._check(time.monotonic())
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - t0)))

    def on_packet_in(self, switch: str, port: int, payload: bytes) -> None:
        """A punted frame from `switch`'s `port`: a probe if it parses as one."""
        got = parse_probe(payload)
        if got is None:
            return
        index, sent_port, _seq = got
        sender = self._index.get(index)
        d = self._dirs.get((sender, sent_port)) if sender else None
        if d is None or d.receiver != switch or d.receiver_port != port:
            LOG.warning("probe from %s port %s arrived at %s port %s: the cabling is not the "
                        "plan's", sender, sent_port, switch, port)
            return
        d.last_seen = time.monotonic()
        d.streak += 1
        if not d.up and d.streak >= self.up_after:
            d.up = True
            self._update(d.link, d.last_seen)

    def _check(self, now: float) -> None:
        for d in self._dirs.values():
            if d.up and now - d.last_seen > self.dead_after:
                d.up = False
                d.streak = 0
                self._update(d.link, now)

    def _update(self, link: str, now: float) -> None:
        dirs = [d for d in self._dirs.values() if d.link == link]
        up = all(d.up for d in dirs)
        state = self._links[link]
        if up == state.up:
            return
        last = max(d.last_seen for d in dirs) if up else min(d.last_seen for d in dirs)
        state.up, state.changed_at = up, now
        state.last_seen = last
        state.detected_after = round(now - last, 4) if not up else None
        self.on_change(replace(state))  # a snapshot: the state object changes later
