"""IEEE 802.1Qbb priority flow control (PFC) as a host sees it.

A switch whose ingress buffer for a priority crosses its XOFF threshold sends
a MAC control frame (EtherType 0x8808, opcode 0x0101) to the upstream
device: for each enabled priority, stop transmitting for ``quanta`` x 512
bit-times at the link speed; a frame with quanta 0 (XON) resumes at once.
scapy's ``scapy.contrib.mac_control`` has the frame layout; this module adds
what a sender needs around it:

- ``pfc_frame``: build a PFC frame (tests, tools).
- ``parse_pfc``: bytes -> {priority: quanta} for the enabled priorities, or
  ``None`` for any other frame. Never raises.
- ``quanta_seconds``: pause quanta -> seconds at a link speed.
- ``PauseState``: per-priority "paused until" deadlines, fed with frames.
"""

from __future__ import annotations

from typing import Any

from scapy.contrib.mac_control import MACControl, MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether
from scapy.packet import Packet

__all__ = ["PFC_DST_MAC", "PauseState", "parse_pfc", "pfc_frame", "quanta_seconds"]

PFC_DST_MAC = MACControl.DEFAULT_DST_MAC  # 01:80:c2:00:00:01, never forwarded by bridges
_ETHERTYPE_MAC_CONTROL = 0x8808
_OPCODE_PFC = 0x0101
_PFC_LEN = 14 + 2 + 2 + 16  # Ethernet, opcode, enable vector, 8 timers
_BITS_PER_QUANTUM = 512


def pfc_frame(src_mac: str, pauses: dict[int, int], dst_mac: str = PFC_DST_MAC) -> Packet:
    """Build a PFC frame pausing each ``priority: quanta`` in ``pauses`` (quanta 0 = XON)."""
    # Any, not int: scapy's Packet.__init__ takes positional params that ** could bind
    fields: dict[str, Any] = {}
    for prio, quanta in pauses.items():
        if not 0 <= prio <= 7:
            raise ValueError(f"priority={prio!r}: must be 0..7")
        if not 0 <= quanta <= 0xFFFF:
            raise ValueError(f"quanta={quanta!r}: must be 0..65535")
        fields[f"c{prio}_enabled"] = 1
        fields[f"c{prio}_pause_time"] = quanta
    return Ether(src=src_mac, dst=dst_mac) / MACControlClassBasedFlowControl(**fields)


def parse_pfc(data: bytes) -> dict[int, int] | None:
    """Return {priority: quanta} of a PFC frame's enabled priorities, else None."""
    if len(data) < _PFC_LEN:
        return None
    if int.from_bytes(data[12:14], "big") != _ETHERTYPE_MAC_CONTROL:
        return None
    if int.from_bytes(data[14:16], "big") != _OPCODE_PFC:
        return None
    # Fixed layout, so read it directly: this runs between every two frames
    # a sender transmits, where a scapy dissection would cost ~0.5 ms.
    enabled = data[17]
    return {
        prio: int.from_bytes(data[18 + 2 * prio : 20 + 2 * prio], "big")
        for prio in range(8)
        if enabled >> prio & 1
    }


def quanta_seconds(quanta: int, link_bps: float) -> float:
    """Seconds that ``quanta`` pause quanta last on a link of ``link_bps`` bit/s."""
    return quanta * _BITS_PER_QUANTUM / link_bps


class PauseState:
    """Per-priority pause deadlines of one port, driven by received PFC frames.

    Times are whatever clock the caller passes (``time.monotonic()`` in the
    agent); a new frame replaces the previous deadline of each priority it
    enables, as 802.1Qbb prescribes (a refresh, not an addition).
    """

    def __init__(self, link_bps: float) -> None:
        if link_bps <= 0:
            raise ValueError(f"link_bps={link_bps!r}: must be positive")
        self.link_bps = link_bps
        self.frames = 0
        self._until = [0.0] * 8
        # Time spent paused, per priority: closed intervals plus the open one.
        self._paused = [0.0] * 8
        self._since: list[float | None] = [None] * 8

    def apply(self, pauses: dict[int, int], now: float) -> None:
        """Record one received PFC frame's {priority: quanta} at time ``now``."""
        self.frames += 1
        for prio, quanta in pauses.items():
            self._close(prio, now)
            self._until[prio] = now + quanta_seconds(quanta, self.link_bps)
            if quanta:
                self._since[prio] = now

    def _close(self, prio: int, now: float) -> None:
        since = self._since[prio]
        if since is not None:
            self._paused[prio] += max(0.0, min(self._until[prio], now) - since)
            self._since[prio] = None

    def paused_seconds(self, priority: int, now: float) -> float:
        """Total time ``priority`` has been paused up to ``now`` (XON and refreshes applied)."""
        since = self._since[priority]
        if since is None:
            return self._paused[priority]
        return self._paused[priority] + max(0.0, min(self._until[priority], now) - since)

    def paused_until(self, priority: int) -> float:
        """When ``priority`` may transmit again (in the past if it is not paused)."""
        return self._until[priority]

    def is_paused(self, priority: int, now: float) -> bool:
        """Whether ``priority`` is paused at time ``now``."""
        return self._until[priority] > now
