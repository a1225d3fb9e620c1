"""NICs and jobs joined in memory on a virtual clock: the transport without sockets or root.

``MemNet`` is an ideal switch: a frame a NIC transmits reaches, after
``delay`` seconds, the NIC that owns its destination IPv4 address (frames
to nobody are counted and dropped). Time is virtual: the loop jumps to the
next thing that can happen (a NIC's next transmission or timer, a frame's
arrival, a job's timer), so a test of a 134 ms ACK timeout takes
microseconds and gives the same result every run. Hooks let a test act as
the network would:

- ``drop(frame, src_nic) -> bool``: lose a frame (a congested or failed link);
- ``rewrite(frame) -> bytes``: change it on the way (CE-mark it, corrupt it);
- ``inject(nic, frame, at)``: deliver a frame of the test's own (a PFC PAUSE
  from the switch, a stale packet).

Every frame delivered is logged (``log``: time, source NIC, destination
NIC, frame), so tests read what crossed the wire.

Names: ``MemNet``, ``Delivery``.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from traffic.nic import Nic

__all__ = ["Delivery", "MemNet"]


class _Ticker(Protocol):
    def poll(self, now: float) -> None:
        """Do what is due at `now`."""
    def next_event(self, now: float) -> float:
        """When the next `poll` is needed (inf: never)."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """One frame that crossed the in-memory network."""

    time: float  # arrival
    src: str  # NIC name ("" for an injected frame)
    dst: str
    frame: bytes


class MemNet:
    """An ideal switch in memory between NICs (see the module docstring)."""

    def __init__(self, *, delay: float = 5e-6) -> None:
        self.now = 0.0
        self.delay = delay
        self.nics: dict[str, Nic] = {}
        self.log: list[Delivery] = []
        self.unroutable = 0
        self.dropped = 0
        self.drop: Callable[[bytes, str], bool] | None = None
        self.rewrite: Callable[[bytes], bytes] | None = None
        self._by_ip: dict[bytes, Nic] = {}
        self._tickers: list[_Ticker] = []
        self._heap: list[tuple[float, int, str, Nic, bytes]] = []
        self._seq = itertools.count()

    def add(self, nic: Nic) -> Nic:
        """Attach `nic` to the network (routed by its IPv4 address); returns it."""
        self.nics[nic.name] = nic
        self._by_ip[_ip_bytes(nic.config.ip)] = nic
        return nic

    def add_ticker(self, ticker: _Ticker) -> None:
        """Poll ``ticker`` (a job run) with the NICs."""
        self._tickers.append(ticker)

    def inject(self, nic: str, frame: bytes, at: float | None = None) -> None:
        """Deliver ``frame`` to NIC ``nic`` at time ``at`` (default: now)."""
        when = self.now if at is None else at
        heapq.heappush(self._heap, (when, next(self._seq), "", self.nics[nic], frame))

    def _send(self, src: Nic, frame: bytes) -> None:
        if self.drop is not None and self.drop(frame, src.name):
            self.dropped += 1
            return
        if self.rewrite is not None:
            frame = self.rewrite(frame)
        dst = self._by_ip.get(frame[30:34]) if frame[12:14] == b"\x08\x00" else None
        if dst is None:
            self.unroutable += 1
            return
        heapq.heappush(self._heap, (self.now + self.delay, next(self._seq), src.name, dst, frame))

    def step(self) -> bool:
        """Do everything that is due now, then move the clock to the next event.

        Returns False when nothing is left to happen (every NIC idle, no
        frame in flight, no timer).
        """
        now = self.now
        busy = True
        while busy:
            busy = False
            while self._heap and self._heap[0][0] <= now:
                t, _, src, dst, frame = heapq.heappop(self._heap)
                self.log.append(Delivery(t, src, dst.name, frame))
                dst.receive(frame, t)
                busy = True
            for nic in self.nics.values():
                nic.poll(now)
            for ticker in self._tickers:
                ticker.poll(now)
            for nic in self.nics.values():
                out = nic.next_frame(now)
                while out is not None:
                    busy = True
                    self._send(nic, out)
                    out = nic.next_frame(now)
        when = self._heap[0][0] if self._heap else math.inf
        for nic in self.nics.values():
            when = min(when, nic.next_event(now))
        for ticker in self._tickers:
            when = min(when, ticker.next_event(now))
        if when == math.inf:
            return False
        self.now = max(now, when)
        return True

    def run(self, until: Callable[[], bool] | None = None, *, limit: float = 600.0) -> float:
        """Step until ``until()`` holds (default: nothing left to do); returns the virtual time.

        Raises ``RuntimeError`` when the virtual clock passes ``limit``
        seconds first (a stuck protocol) or when everything is idle and
        ``until()`` does not hold.
        """
        still = 0
        while until is None or not until():
            before = self.now
            if self.now > limit:
                raise RuntimeError(f"memnet: still running at t={self.now:.3f} s (limit {limit} s)")
            if not self.step():
                if until is None or until():
                    break
                raise RuntimeError(f"memnet: nothing left to happen at t={self.now:.6f} s")
            still = still + 1 if self.now == before else 0
            if still > 100_000:
                raise RuntimeError(f"memnet: no progress at t={self.now:.6f} s")
        return self.now


def _ip_bytes(ip: str) -> bytes:
    return bytes(int(part) for part in ip.split("."))
