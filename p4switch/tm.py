"""Traffic manager: per-port strict-priority egress queues, port speed, PFC.

Each egress port has `queues` FIFO queues; queue i holds the packets whose
`standard_metadata.priority` is i and a higher i is served first (BMv2
simple_switch with priority queues). Depth is counted in packets (tail drop,
counted per queue); a queue may have a rate limit in packets/s; a port may
have a speed in bits/s, in which case a packet occupies the port for its
serialisation time before the next one leaves.

PFC (IEEE 802.1Qbb) is per (port, priority):

* XOFF/XON accounting: every queued packet is charged to the (ingress port,
  priority) it came from; when the charge reaches `xoff` packets a PAUSE
  frame with quanta 0xFFFF for that priority is sent out of the ingress port
  (upstream); when it falls to `xon` a PAUSE with quanta 0 (resume) is sent.
* A PAUSE frame received on a port (ethertype 0x8808, opcode 0x0101) is
  consumed (never reaches the pipeline) and stops the listed priorities'
  egress on that port for quanta x 512 bit-times at the port's speed.

A scheduler thread delivers dequeued packets to `deliver(port, priority,
item, deq_depth)`.

Names defined here: `TmConfig`, `TrafficManager`, `PfcConfig`,
`build_pause_frame`, `parse_pause_frame`, `PFC_ETHERTYPE`, `PFC_OPCODE`.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("p4switch.tm")

PFC_ETHERTYPE = 0x8808
PFC_OPCODE = 0x0101
PFC_DST = bytes.fromhex("0180c2000001")
DEFAULT_SPEED = 10_000_000_000  # bits/s, for pause quanta when no speed is set


def build_pause_frame(quanta: dict[int, int], src_mac: bytes = b"\x00" * 6) -> bytes:
    """A PFC PAUSE frame (60 bytes, no FCS) pausing priority p for quanta[p] (0 = resume)."""
    enable = 0
    times = [0] * 8
    for p, q in quanta.items():
        enable |= 1 << p
        times[p] = q & 0xFFFF
    body = PFC_DST + src_mac + PFC_ETHERTYPE.to_bytes(2, "big") + PFC_OPCODE.to_bytes(2, "big")
    body += enable.to_bytes(2, "big") + b"".join(t.to_bytes(2, "big") for t in times)
    return body + b"\x00" * (60 - len(body))


def parse_pause_frame(frame: bytes) -> dict[int, int] | None:
    """priority -> quanta of a PFC PAUSE frame; None when the frame is not one."""
    if len(frame) < 34 or frame[12:14] != b"\x88\x08" or frame[14:16] != b"\x01\x01":
        return None
    enable = int.from_bytes(frame[16:18], "big")
    return {p: int.from_bytes(frame[18 + 2 * p:20 + 2 * p], "big") for p in range(8) if enable >> p & 1}


@dataclass(frozen=True, kw_only=True)
class PfcConfig:
    """PFC on one port: the priorities it covers and the XOFF/XON thresholds (packets)."""

    priorities: frozenset[int]
    xoff: int = 48
    xon: int = 32


@dataclass(frozen=True, kw_only=True)
class TmConfig:
    """Initial settings; `TrafficManager.set_*` change them at run time."""

    queues: int = 1
    depth: int = 64
    port_depth: dict[int, int] = field(default_factory=dict)
    rate_pps: float | None = None
    port_rate_pps: dict[int, float] = field(default_factory=dict)
    speed_bps: float | None = None
    port_speed_bps: dict[int, float] = field(default_factory=dict)
    pfc: dict[int | None, PfcConfig] = field(default_factory=dict)  # None: every port


class _Settings:
    """Mutable per-port / per-queue settings, looked up most specific first."""

    def __init__(self, c: TmConfig) -> None:
        self.depth: dict[Any, int] = {None: c.depth, **c.port_depth}
        self.rate: dict[Any, float | None] = {None: c.rate_pps, **c.port_rate_pps}
        self.speed: dict[Any, float | None] = {None: c.speed_bps, **c.port_speed_bps}
        self.pfc: dict[Any, PfcConfig | None] = dict(c.pfc)

    @staticmethod
    def _get(d: dict, port: int, prio: int | None = None) -> Any:
        if prio is not None and (port, prio) in d:
            return d[(port, prio)]
        if port in d:
            return d[port]
        return d.get(None)

    def depth_of(self, port: int, prio: int) -> int:
        return self._get(self.depth, port, prio)

    def rate_of(self, port: int, prio: int) -> float | None:
        return self._get(self.rate, port, prio)

    def speed_of(self, port: int) -> float | None:
        return self._get(self.speed, port)

    def pfc_of(self, port: int) -> PfcConfig | None:
        return self._get(self.pfc, port)


class _Port:
    __slots__ = ("queues", "busy_until", "paused_until", "next_ok")

    def __init__(self, n: int) -> None:
        self.queues: list[collections.deque] = [collections.deque() for _ in range(n)]
        self.busy_until = 0.0
        self.paused_until = [0.0] * n
        self.next_ok = [0.0] * n  # rate limit: earliest next dequeue per queue


class TrafficManager:
    """Queues + scheduler thread. `enqueue` is called with the switch lock held or not; it locks itself."""

    def __init__(self, deliver: Callable[[int, int, Any, int], None], config: TmConfig, *,
                 send_raw: Callable[[int, bytes], None] | None = None,
                 size_of: Callable[[Any], int] = lambda item: 0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.deliver = deliver
        self.config = config
        self.settings = _Settings(config)
        self.send_raw = send_raw
        self.size_of = size_of
        self.clock = clock
        self.cv = threading.Condition()
        self.ports: dict[int, _Port] = {}
        self.drops: collections.Counter[tuple[int, int]] = collections.Counter()
        self.enqueued: collections.Counter[tuple[int, int]] = collections.Counter()
        self.dequeued: collections.Counter[tuple[int, int]] = collections.Counter()
        self.pauses_sent: collections.Counter[tuple[int, int]] = collections.Counter()
        self.pauses_received: collections.Counter[tuple[int, int]] = collections.Counter()
        self.charge: collections.Counter[tuple[int, int]] = collections.Counter()
        self.xoff_sent: set[tuple[int, int]] = set()
        self.in_flight = 0
        self._stop = False
        self.thread = threading.Thread(target=self._run, name="p4switch-tm", daemon=True)
        self.thread.start()

    # ------------------------------------------------------------ queues
    def _port(self, port: int) -> _Port:
        p = self.ports.get(port)
        if p is None:
            p = self.ports[port] = _Port(self.config.queues)
        return p

    def depth(self, port: int, prio: int) -> int:
        p = self.ports.get(port)
        return len(p.queues[prio]) if p is not None else 0

    def enqueue(self, port: int, prio: int, item: Any, ingress_port: int | None = None) -> int | None:
        """Queue an item; returns the queue depth found (enq_qdepth) or None when tail-dropped."""
        pause: list[tuple[int, dict[int, int]]] = []
        with self.cv:
            p = self._port(port)
            q = p.queues[prio]
            depth = len(q)
            if depth >= self.settings.depth_of(port, prio):
                self.drops[(port, prio)] += 1
                return None
            q.append((item, ingress_port))
            self.enqueued[(port, prio)] += 1
            if ingress_port is not None:
                pause = self._charge(ingress_port, prio, +1)
            self.cv.notify()
        self._send_pauses(pause)
        return depth

    def _charge(self, ingress_port: int, prio: int, delta: int) -> list[tuple[int, dict[int, int]]]:
        cfg = self.settings.pfc_of(ingress_port)
        k = (ingress_port, prio)
        self.charge[k] += delta
        if cfg is None or prio not in cfg.priorities:
            return []
        n = self.charge[k]
        if delta > 0 and n >= cfg.xoff and k not in self.xoff_sent:
            self.xoff_sent.add(k)
            self.pauses_sent[k] += 1
            return [(ingress_port, {prio: 0xFFFF})]
        if delta < 0 and n <= cfg.xon and k in self.xoff_sent:
            self.xoff_sent.discard(k)
            return [(ingress_port, {prio: 0})]
        return []

    def _send_pauses(self, pauses: list[tuple[int, dict[int, int]]]) -> None:
        if self.send_raw is None:
            return
        for port, quanta in pauses:
            try:
                self.send_raw(port, build_pause_frame(quanta))
            except Exception:  # a port that cannot send must not stop the TM
                log.exception("sending PFC frame on port %d failed", port)

    # ------------------------------------------------------------ PFC input
    def receive_pause(self, port: int, frame: bytes) -> bool:
        """Handle a frame received on `port`; True when it was a PAUSE frame (consumed)."""
        cfg = self.settings.pfc_of(port)
        if cfg is None:
            return False
        quanta = parse_pause_frame(frame)
        if quanta is None:
            return False
        speed = self.settings.speed_of(port) or DEFAULT_SPEED
        now = self.clock()
        with self.cv:
            p = self._port(port)
            for prio, q in quanta.items():
                if prio >= self.config.queues or prio not in cfg.priorities:
                    continue
                self.pauses_received[(port, prio)] += 1
                p.paused_until[prio] = now + q * 512 / speed if q else 0.0
            self.cv.notify()
        return True

    def paused(self, port: int, prio: int) -> bool:
        p = self.ports.get(port)
        return p is not None and p.paused_until[prio] > self.clock()

    # ------------------------------------------------------------ scheduler
    def _pick(self, now: float) -> tuple[float, tuple | None]:
        """(earliest time something may become ready, (port, prio, entry) ready now or None)."""
        wake = float("inf")
        for port, p in self.ports.items():
            if p.busy_until > now:
                if any(p.queues):
                    wake = min(wake, p.busy_until)
                continue
            for prio in range(len(p.queues) - 1, -1, -1):
                q = p.queues[prio]
                if not q:
                    continue
                if p.paused_until[prio] > now:
                    wake = min(wake, p.paused_until[prio])
                    continue
                if p.next_ok[prio] > now:
                    wake = min(wake, p.next_ok[prio])
                    continue
                return now, (port, prio, q.popleft())
        return wake, None

    def _run(self) -> None:
        while True:
            with self.cv:
                while True:
                    if self._stop:
                        return
                    now = self.clock()
                    wake, got = self._pick(now)
                    if got is not None:
                        break
                    self.cv.wait(None if wake == float("inf") else max(0.0, wake - now))
                port, prio, (item, ingress_port) = got
                p = self.ports[port]
                rate = self.settings.rate_of(port, prio)
                if rate:
                    p.next_ok[prio] = now + 1.0 / rate
                speed = self.settings.speed_of(port)
                if speed:
                    p.busy_until = now + self.size_of(item) * 8 / speed
                self.dequeued[(port, prio)] += 1
                deq_depth = len(p.queues[prio])
                self.in_flight += 1
                pause = self._charge(ingress_port, prio, -1) if ingress_port is not None else []
            self._send_pauses(pause)
            try:
                self.deliver(port, prio, item, deq_depth)
            except Exception:
                log.exception("egress processing failed")
            finally:
                with self.cv:
                    self.in_flight -= 1
                    self.cv.notify_all()

    # ------------------------------------------------------------ run-time settings
    def set_depth(self, port: int | None, depth: int, prio: int | None = None) -> None:
        with self.cv:
            self.settings.depth[port if prio is None else (port, prio)] = int(depth)

    def set_rate(self, port: int | None, pps: float | None, prio: int | None = None) -> None:
        with self.cv:
            self.settings.rate[port if prio is None else (port, prio)] = float(pps) if pps else None
            self.cv.notify()

    def set_speed(self, port: int | None, bps: float | None) -> None:
        with self.cv:
            self.settings.speed[port] = float(bps) if bps else None
            self.cv.notify()

    def set_pfc(self, port: int | None, cfg: PfcConfig | None) -> None:
        with self.cv:
            self.settings.pfc[port] = cfg

    def stats(self) -> dict[str, Any]:
        """Counters and depths per "port/priority" (JSON-friendly)."""
        with self.cv:
            keys = set(self.enqueued) | set(self.drops) | {
                (port, q) for port, p in self.ports.items() for q in range(len(p.queues))}
            now = self.clock()
            out = {}
            for port, q in sorted(keys):
                p = self.ports.get(port)
                out[f"{port}/{q}"] = {
                    "depth": len(p.queues[q]) if p else 0,
                    "enqueued": self.enqueued[(port, q)],
                    "dequeued": self.dequeued[(port, q)],
                    "dropped": self.drops[(port, q)],
                    "paused": bool(p and p.paused_until[q] > now),
                    "pauses_received": self.pauses_received[(port, q)],
                    "pauses_sent": self.pauses_sent[(port, q)],
                    "charge": self.charge[(port, q)],
                }
            return out

    def flush(self) -> int:
        """Drop everything queued (a new program is loaded); returns how many."""
        with self.cv:
            n = 0
            for p in self.ports.values():
                for q in p.queues:
                    n += len(q)
                    q.clear()
            self.charge.clear()
            self.cv.notify_all()
        return n

    def idle(self) -> bool:
        with self.cv:
            return self.in_flight == 0 and not any(any(p.queues) for p in self.ports.values())

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait until every queue is empty and nothing is being delivered."""
        end = time.monotonic() + timeout
        with self.cv:
            while self.in_flight or any(any(p.queues) for p in self.ports.values()):
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cv.wait(min(left, 0.05))
        return True

    def close(self) -> None:
        with self.cv:
            self._stop = True
            self.cv.notify_all()
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout=2.0)
