"""Traffic manager: per-port strict-priority egress queues, port speed, PFC, PFC watchdog.

Each egress port has `queues` FIFO queues; queue i holds the packets whose
`standard_metadata.priority` is i and a higher i is served first (BMv2
simple_switch with priority queues). Per (port, priority): a depth (tail
drop, counted) and an optional drain rate in packets/s. Per port: a speed in
bits/s; a packet then holds the port for its serialisation time before the
next one leaves.

The buffer (`BufferConfig`) counts packets (each one 1, as BMv2's queues do)
or bytes (each packet its frame's length, as a switch's MMU does); depths,
PFC thresholds, headroom and the pool are all in that unit. With a shared
pool, every queued packet outside PFC headroom draws from it, and a lossy
queue is also refused a packet the pool cannot hold; with `alpha` (dynamic
thresholds), a lossy queue holds at most alpha x the pool left free after
the packet, so one congested queue settles at alpha / (1 + alpha) of the
pool and others keep the rest.

PFC (IEEE 802.1Qbb), per (port, priority), beyond BMv2:

* Lossless admission: a packet of a priority PFC covers on its ingress port
  is not tail-dropped by the (shared) egress queue but by its ingress
  priority group (PG: ingress port, priority), so N ingress ports can each
  reach XOFF on one egress queue. With a `headroom` (`PfcConfig`, or
  `set_thresholds`), the PG holds up to its XOFF point in the buffer (with
  `alpha`, the lower of XOFF and alpha x the pool left free), and beyond it
  up to `headroom` more, kept apart from the pool for what was on the wire
  when the PAUSE went out; a packet that fits neither is dropped. A packet
  leaving the PG gives back headroom first. Without a headroom, the PG
  holds up to the ingress port's queue depth.

* XOFF/XON: every queued packet is charged (1, or its bytes) to the PG it
  came from. When the charge reaches the ingress port's `xoff` a PAUSE
  frame (`pfcframe.build_pause_frame`) for that priority goes out of the ingress port
  (upstream); while the charge stays above `xon` the PAUSE is sent again
  before the previous one expires (half its quanta x 512 bit-times at the
  ingress port's speed); falling to `xon` sends a PAUSE with quanta 0. With
  `alpha`, XOFF comes at the dynamic point when that is lower, and XON at
  `xon` scaled by the same ratio.
* A PAUSE frame received on a port is consumed and stops the enabled
  priorities' egress queues of that port for quanta x 512 bit-times at the
  port's speed (10 Gb/s when none is set); quanta 0 resumes at once.
* Watchdog (as SONiC's pfcwd, off by default, per priority): a queue paused
  without a break for `detection_s` is in a PFC storm; its packets are then
  dropped (queued ones and arrivals, counted) or forwarded ignoring PAUSE
  (`action`), until no PAUSE has been received on it for `restoration_s`.

Time: `clock` (default `time.monotonic`). Three ways to run egress:

* `driver` (a `TmDriver`, e.g. `io.RawPorts`): no thread of its own; the
  driver's thread, the one that receives the frames, calls `service()` after
  each batch of frames and again at the time `service()` returned (a timer),
  and the traffic manager calls the `wake` the driver gave it when another
  thread (a packet-out, a setting) changes what is due. One thread per
  switch: no handoff and no thread switch per frame.
* `threaded=True` (no driver): a scheduler thread of its own runs egress as
  packets become ready (in-memory ports, library use).
* `threaded=False`: nothing moves until `poll()` (deliver what is ready now)
  or `advance(seconds)` (a `VirtualClock` stepped through every event),
  which makes tests exact.

The frames themselves are built and read in `p4switch.pfcframe`; the
settings (`TmConfig`, `PfcConfig`, `WatchdogConfig`, `VirtualClock`) live in
`p4switch.tmconfig`.

Names defined here: `TrafficManager`, `TmDriver`.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .pfcframe import build_pause_frame, is_mac_control, parse_pause_frame, port_mac
from .tmconfig import BufferConfig, PfcConfig, Settings, TmConfig, VirtualClock, WatchdogConfig

log = logging.getLogger("p4switch.tm")

INF = float("inf")
DRIVEN_SLACK = 0.001  # seconds; see TrafficManager.slack

__all__ = ["TmDriver", "TrafficManager"]


class TmDriver(Protocol):
    """A thread that runs a traffic manager's egress beside its own work (`io.RawPorts`)."""

    def attach(self, service: Callable[[], float]) -> Callable[[], None]:
        """Call `service()` on the driver's thread after each batch of work and at the
        time (on `time.monotonic`) it returned, until detached; returns a `wake()` any
        thread may call so that the driver calls `service()` soon."""
        ...

    def detach(self, service: Callable[[], float]) -> None:
        """Stop calling `service`."""
        ...


class _Port:
    __slots__ = ("queues", "amount", "busy_until", "paused_until", "paused_since", "paused_total",
                 "next_ok", "last_pause_rx", "storm", "wd_ref")

    def __init__(self, n: int) -> None:
        # entries (item, ingress port, time queued, amount charged in the buffer's unit)
        self.queues: list[collections.deque] = [collections.deque() for _ in range(n)]
        self.amount = [0] * n  # what each queue holds, in the buffer's unit
        self.busy_until = 0.0
        self.paused_until = [0.0] * n
        self.paused_since: list[float | None] = [None] * n  # start of the current pause
        self.paused_total = [0.0] * n  # seconds paused, closed intervals
        self.next_ok = [0.0] * n  # rate limit: earliest next dequeue per queue
        self.last_pause_rx = [-INF] * n  # last PAUSE (quanta > 0) received
        self.storm = [False] * n  # watchdog: PFC storm detected
        self.wd_ref = [-INF] * n  # watchdog: a storm ended here; detection counts from then


class TrafficManager:
    """Queues + scheduler. Thread-safe: every entry point takes the TM's own lock."""

    def __init__(self, deliver: Callable[[int, int, Any, int], None], config: TmConfig, *,
                 send_raw: Callable[[int, bytes], None] | None = None,
                 size_of: Callable[[Any], int] = lambda item: 0,
                 clock: Callable[[], float] = time.monotonic, threaded: bool = True,
                 on_drop: Callable[[Any], None] | None = None,
                 driver: TmDriver | None = None) -> None:
        self.deliver = deliver
        self.config = config
        self.settings = Settings(config)
        self.send_raw = send_raw
        self.size_of = size_of
        self.clock = clock
        self.on_drop = on_drop
        self.cv = threading.Condition()
        self.ports: dict[int, _Port] = {}
        C = collections.Counter
        self.drops: collections.Counter[tuple[int, int]] = C()  # tail drops
        self.wd_drops: collections.Counter[tuple[int, int]] = C()
        self.enqueued: collections.Counter[tuple[int, int]] = C()
        self.dequeued: collections.Counter[tuple[int, int]] = C()
        self.pauses_sent: collections.Counter[tuple[int, int]] = C()  # XOFF incl. refreshes
        self.resumes_sent: collections.Counter[tuple[int, int]] = C()
        self.pauses_received: collections.Counter[tuple[int, int]] = C()
        self.storms: collections.Counter[tuple[int, int]] = C()
        self.charge: collections.Counter[tuple[int, int]] = C()  # per PG, in the unit
        self.headroom_used: collections.Counter[tuple[int, int]] = C()  # per PG, in the unit
        self.pool_used = 0  # what the queues hold outside PFC headroom, in the unit
        self.xoff: dict[tuple[int, int], float] = {}  # (ingress port, prio) -> next refresh time
        self.max_depth: collections.Counter[tuple[int, int]] = C()
        self.in_flight = 0
        self.queued = 0  # packets in every queue: an idle traffic manager is told at once
        # Round robin over the ports: `_order` lists them as created, `_next` is where the
        # next pick starts (just after the port served last).
        self._order: list[tuple[int, _Port]] = []
        self._next = 0
        self._stop = False
        self.driver = driver
        # Driven: a packet may leave up to `slack` seconds before its port is free (the
        # schedule stays exact, see _take), so packets due close together leave in one
        # wake-up, and a fast port does not cost a timer per packet.
        self.slack = DRIVEN_SLACK if driver is not None else 0.0
        self._wake: Callable[[], None] | None = None
        self.threaded = threaded and driver is None
        self.thread: threading.Thread | None = None
        if driver is not None:
            self._wake = driver.attach(self.service)
        elif threaded:
            self.thread = threading.Thread(target=self._run, name="p4switch-tm", daemon=True)
            self.thread.start()

    def _notify(self) -> None:
        """Something due may have changed (caller holds the lock): tell whoever runs egress."""
        if self._wake is not None:
            self._wake()
        else:
            self.cv.notify()

    # ------------------------------------------------------------ queues
    def _port(self, port: int) -> _Port:
        p = self.ports.get(port)
        if p is None:
            p = self.ports[port] = _Port(self.config.queues)
            self._order.append((port, p))
        return p

    def depth(self, port: int, prio: int) -> int:
        """Packets queued now on (port, prio)."""
        p = self.ports.get(port)
        return len(p.queues[prio]) if p is not None else 0

    def enqueue(self, port: int, prio: int, item: Any, ingress_port: int | None = None) -> int | None:
        """Queue an item; returns the queue's depth found in packets (BMv2 enq_qdepth), None
        when dropped."""
        frames: list[tuple[int, dict[int, int]]] = []
        amount = self.size_of(item) if self.settings.buffer.unit == "bytes" else 1
        with self.cv:
            p = self._port(port)
            q = p.queues[prio]
            depth = len(q)
            k = (port, prio)
            if p.storm[prio] and self._wd_action(port, prio) == "drop":
                self.wd_drops[k] += 1
                return None
            where = self._admit(p, port, prio, amount, ingress_port)
            if where is None:
                self.drops[k] += 1
                return None
            if where == "headroom":
                self.headroom_used[(ingress_port, prio)] += amount  # type: ignore[index]
            else:
                self.pool_used += amount
            q.append((item, ingress_port, self.clock(), amount))
            p.amount[prio] += amount
            self.queued += 1
            self.enqueued[k] += 1
            if depth + 1 > self.max_depth[k]:
                self.max_depth[k] = depth + 1
            if ingress_port is not None:
                self._charge(ingress_port, prio, +amount, frames)
            self._notify()
        self._send(frames)
        return depth

    def _free_after(self, amount: int) -> float:
        """What the shared pool has left once `amount` more is in it (inf: no pool)."""
        pool = self.settings.buffer.pool
        return INF if pool is None else pool - self.pool_used - amount

    def _admit(self, p: _Port, port: int, prio: int, amount: int,
               ingress_port: int | None) -> str | None:
        """Where a packet of `amount` goes: "pool" (the buffer), "headroom" (its PG's), or
        None (tail drop: the egress queue is full, or, for a lossless class, the PG is).

        A priority that PFC covers on the ingress port is lossless: what bounds it is the
        ingress accounting (XOFF, then headroom for what was already on the wire), as a
        switch's per-(port, priority group) buffer does, not the egress queue that many
        ingress ports share.
        """
        settings = self.settings
        cfg = settings.pfc_for(ingress_port, prio) if ingress_port is not None else None
        if ingress_port is not None and cfg is not None:
            pg = (ingress_port, prio)
            xoff, _, _, headroom = cfg
            charged = self.charge[pg]
            if headroom is None:  # the PG is bounded by its port's queue depth
                return None if charged + amount > settings.depth_of(ingress_port, prio) else "pool"
            in_headroom = self.headroom_used[pg]
            if (not in_headroom and charged + amount <= self._xoff_point(xoff, amount)
                    and self._free_after(amount) >= 0):
                return "pool"
            return "headroom" if in_headroom + amount <= headroom else None
        held = p.amount[prio] + amount
        if held > settings.depth_of(port, prio):
            return None
        free = self._free_after(amount)
        alpha = settings.buffer.alpha
        if free < 0 or (alpha is not None and held > alpha * free):
            return None
        return "pool"

    def _xoff_point(self, xoff: int, amount: int = 0) -> float:
        """A PG's XOFF point: `xoff`, or with `alpha` alpha x the pool left free if lower."""
        alpha = self.settings.buffer.alpha
        return xoff if alpha is None else min(xoff, alpha * max(0.0, self._free_after(amount)))

    def _wd_action(self, port: int, prio: int) -> str | None:
        cfg = self.settings.watchdog_of(port, prio)
        return cfg.action if cfg is not None else None

    def _pause_time(self, port: int, quanta: int) -> float:
        return quanta * 512 / self.settings.speed_of(port)

    def _charge(self, ingress_port: int, prio: int, delta: int, frames: list) -> None:
        k = (ingress_port, prio)
        n = self.charge[k] + delta
        self.charge[k] = n
        cfg = self.settings.pfc_for(ingress_port, prio)
        if cfg is None:
            if k in self.xoff and delta < 0 and n <= 0:  # PFC switched off while asserted
                del self.xoff[k]
                self.resumes_sent[k] += 1
                frames.append((ingress_port, {prio: 0}))
            return
        xoff, xon, quanta, _ = cfg
        on: float = xoff
        off: float = xon
        point = self._xoff_point(xoff)
        if point < xoff:  # dynamic: XON in the same proportion below the lowered point
            on, off = point, xon * point / xoff
        if delta > 0 and n >= on and k not in self.xoff:
            self.xoff[k] = self.clock() + self._pause_time(ingress_port, quanta) / 2
            self.pauses_sent[k] += 1
            frames.append((ingress_port, {prio: quanta}))
        elif delta < 0 and n <= off and k in self.xoff:
            del self.xoff[k]
            self.resumes_sent[k] += 1
            frames.append((ingress_port, {prio: 0}))

    def _send(self, frames: list[tuple[int, dict[int, int]]]) -> None:
        if self.send_raw is None:
            return
        for port, quanta in frames:
            try:
                self.send_raw(port, build_pause_frame(quanta, port_mac(port)))
            except Exception:  # a port that cannot send must not stop the TM
                log.exception("sending a PFC frame on port %d failed", port)

    # ------------------------------------------------------------ PFC input
    def receive_pause(self, port: int, frame: bytes) -> bool:
        """Handle a frame received on `port`; True when it was MAC control (consumed)."""
        if not is_mac_control(frame):
            return False
        quanta = parse_pause_frame(frame)
        if not quanta:
            return True  # other MAC control (802.3x PAUSE...): consumed, not forwarded
        with self.cv:
            now = self.clock()
            p = self._port(port)
            for prio, q in quanta.items():
                if prio >= self.config.queues or self.settings.pfc_for(port, prio) is None:
                    continue
                self.pauses_received[(port, prio)] += 1
                if q:
                    p.last_pause_rx[prio] = now
                    self._pause(p, prio, now, now + self._pause_time(port, q))
                else:
                    self._resume(p, prio, now)
            self._notify()
        return True

    @staticmethod
    def _pause(p: _Port, prio: int, now: float, until: float) -> None:
        since = p.paused_since[prio]
        if since is not None and p.paused_until[prio] < now:  # the last pause had expired
            p.paused_total[prio] += p.paused_until[prio] - since
            since = None
        if since is None:
            p.paused_since[prio] = now
        p.paused_until[prio] = until

    @staticmethod
    def _resume(p: _Port, prio: int, now: float) -> None:
        since = p.paused_since[prio]
        if since is not None:
            p.paused_total[prio] += min(now, p.paused_until[prio]) - since
            p.paused_since[prio] = None
        p.paused_until[prio] = 0.0

    def paused(self, port: int, prio: int) -> bool:
        """Whether (port, prio) is paused by a received PAUSE right now."""
        p = self.ports.get(port)
        return p is not None and p.paused_until[prio] > self.clock()

    # ------------------------------------------------------------ scheduler
    def _housekeeping(self, now: float, frames: list) -> float:
        """PAUSE refreshes and watchdog transitions due by `now`; returns the next such time."""
        wake = INF
        for k, due in list(self.xoff.items()):
            port, prio = k
            cfg = self.settings.pfc_for(port, prio)
            if cfg is None:
                continue
            if due <= now:
                self.pauses_sent[k] += 1
                frames.append((port, {prio: cfg[2]}))
                due = self.xoff[k] = now + self._pause_time(port, cfg[2]) / 2
            wake = min(wake, due)
        if not self.settings.watchdog or not any(self.settings.watchdog.values()):
            return wake
        for port, p in self.ports.items():
            for prio in range(len(p.queues)):
                wcfg = self.settings.watchdog_of(port, prio)
                if wcfg is None:
                    if p.storm[prio]:
                        p.storm[prio] = False
                    continue
                if p.storm[prio]:
                    end = p.last_pause_rx[prio] + wcfg.restoration_s
                    if end <= now:
                        p.storm[prio] = False
                        p.wd_ref[prio] = now
                        log.info("PFC storm on port %d priority %d ended", port, prio)
                    else:
                        wake = min(wake, end)
                        continue
                since = p.paused_since[prio]
                if since is None or p.paused_until[prio] <= now:
                    continue
                start = max(since, p.wd_ref[prio]) + wcfg.detection_s
                # a storm is PAUSE still arriving: a single long PAUSE long ago is not one
                if start <= now and now - p.last_pause_rx[prio] < wcfg.restoration_s:
                    p.storm[prio] = True
                    self.storms[(port, prio)] += 1
                    log.warning("PFC storm on port %d priority %d: %s", port, prio, wcfg.action)
                    if wcfg.action == "drop":
                        self._wd_flush(port, prio, p, frames)
                    wake = min(wake, p.last_pause_rx[prio] + wcfg.restoration_s)
                elif now < start < p.paused_until[prio]:
                    wake = min(wake, start)
        return wake

    def _release(self, p: _Port, prio: int, entry: tuple, frames: list) -> None:
        """Book a packet out of its queue (sent or dropped): its amount leaves the queue, its
        PG's headroom first and then the pool, and its PG's charge."""
        _, ingress_port, _, amount = entry
        self.queued -= 1
        p.amount[prio] -= amount
        from_headroom = 0
        if ingress_port is not None:
            pg = (ingress_port, prio)
            from_headroom = min(self.headroom_used[pg], amount)
            if from_headroom:
                self.headroom_used[pg] -= from_headroom
        self.pool_used -= amount - from_headroom
        if ingress_port is not None:
            self._charge(ingress_port, prio, -amount, frames)

    def _wd_flush(self, port: int, prio: int, p: _Port, frames: list) -> None:
        q = p.queues[prio]
        while q:
            entry = q.popleft()
            self.wd_drops[(port, prio)] += 1
            self._release(p, prio, entry, frames)
            if self.on_drop is not None:
                self.on_drop(entry[0])

    def _pick(self, now: float) -> tuple[float, tuple | None]:
        """(earliest time something may become ready, (port, prio, entry) ready now or None)."""
        wake = INF
        slack = self.slack
        ready = now + slack
        # Ports are served round robin (each port is its own transmitter): a port whose
        # queues are always ready (a PFC hold looping) must not starve the others.
        order = self._order
        n = len(order)
        start = self._next
        for j in range(n):
            port, p = order[(start + j) % n]
            if p.busy_until > ready:
                if any(p.queues):
                    wake = min(wake, p.busy_until - slack)
                continue
            queues = p.queues
            for prio in range(len(queues) - 1, -1, -1):
                q = queues[prio]
                if not q:
                    continue
                pu = p.paused_until[prio]
                if pu > now and not p.storm[prio]:
                    if pu < wake:
                        wake = pu
                    continue
                nxt = p.next_ok[prio]
                if nxt > ready:
                    if nxt - slack < wake:
                        wake = nxt - slack
                    continue
                self._next = (start + j + 1) % n
                return now, (port, prio, q.popleft())
        return wake, None

    def _take(self, now: float, frames: list) -> tuple[float, tuple | None]:
        """Housekeeping then one ready packet (bookkept as dequeued); caller holds the lock."""
        wake = self._housekeeping(now, frames)
        w2, got = self._pick(now)
        if got is None:
            return min(wake, w2), None
        port, prio, entry = got
        item = entry[0]
        p = self.ports[port]
        # With slack, a port keeps its own schedule: the next packet's time counts from when
        # this one was due, not from when the driver got to it (up to `slack` early or late),
        # so the driver's wake-up latency costs no emulated bandwidth.
        slack = self.slack
        rate = self.settings.rate_of(port, prio)
        if rate:
            due = p.next_ok[prio]
            p.next_ok[prio] = (due if slack and due >= now - slack else now) + 1.0 / rate
        speed = self.settings.speed_set(port)
        if speed:
            due = p.busy_until
            p.busy_until = ((due if slack and due >= now - slack else now)
                            + self.size_of(item) * 8 / speed)
        self.dequeued[(port, prio)] += 1
        self.in_flight += 1
        self._release(p, prio, entry, frames)
        return now, (port, prio, item, len(p.queues[prio]))

    def _deliver(self, got: tuple) -> None:
        port, prio, item, deq_depth = got
        try:
            self.deliver(port, prio, item, deq_depth)
        except Exception:
            log.exception("egress processing failed")
        finally:
            with self.cv:
                self.in_flight -= 1
                self.cv.notify_all()

    def _run(self) -> None:
        while True:
            frames: list = []
            with self.cv:
                while True:
                    if self._stop:
                        return
                    now = self.clock()
                    wake, got = self._take(now, frames)
                    if got is not None or frames:
                        break
                    self.cv.wait(None if wake == INF else max(0.0, wake - now))
            self._send(frames)
            if got is not None:
                self._deliver(got)

    def service(self, limit: int = 256) -> float:
        """Driven mode: deliver what is ready now (at most `limit` packets, so that the
        driver's own work is not starved); returns when to be called next (inf: when
        woken)."""
        settings = self.settings
        for _ in range(limit):
            frames: list = []
            with self.cv:
                if self._stop:
                    return INF
                # Nothing queued, no PAUSE to refresh, no watchdog: nothing will be due.
                if not self.queued and not self.xoff and not any(settings.watchdog.values()):
                    return INF
                wake, got = self._take(self.clock(), frames)
            if frames:
                self._send(frames)
            if got is None:
                return wake
            self._deliver(got)
        return self.clock()

    def poll(self) -> int:
        """Manual mode: deliver everything ready at the clock's current time; returns how many."""
        n = 0
        while True:
            frames: list = []
            with self.cv:
                _, got = self._take(self.clock(), frames)
            self._send(frames)
            if got is None:
                return n
            self._deliver(got)
            n += 1

    def next_event(self) -> float:
        """Manual mode: the time of the next thing the TM will do (inf: nothing pending)."""
        with self.cv:
            frames: list = []
            now = self.clock()
            wake = self._housekeeping(now, frames)
            w2, got = self._pick(now)
            if got is not None:  # put it back: this was a peek
                port, prio, entry = got
                self.ports[port].queues[prio].appendleft(entry)
                w2 = now
        self._send(frames)
        return min(wake, w2)

    def advance(self, seconds: float) -> int:
        """Manual mode with a VirtualClock: move time forward, running every event on the way."""
        clock = self.clock
        if not isinstance(clock, VirtualClock):
            raise TypeError("advance() needs a VirtualClock")
        end = clock.t + seconds
        n = self.poll()
        while True:
            t = self.next_event()
            if t > end:
                clock.t = end
                return n + self.poll()
            if t <= clock.t:  # nothing moved at this instant: step past it
                t = clock.t + 1e-9
            clock.t = t
            n += self.poll()

    # ------------------------------------------------------------ run-time settings
    def set_depth(self, port: int | None, depth: int, prio: int | None = None) -> None:
        """Queue depth (in the buffer's unit) of a port (None: every port), all queues or one
        priority."""
        if int(depth) < 0:
            raise ValueError("queue depth must be >= 0")
        with self.cv:
            self.settings.put("depth", port if prio is None else (port, prio), int(depth))

    def set_rate(self, port: int | None, pps: float | None, prio: int | None = None) -> None:
        """Drain rate in packets/s of a port's queues or one priority (None or 0: unlimited)."""
        if pps is not None and float(pps) < 0:
            raise ValueError("queue rate must be >= 0")
        with self.cv:
            self.settings.put("rate", port if prio is None else (port, prio),
                              float(pps) if pps else None)
            self._notify()

    def set_speed(self, port: int | None, bps: float | None) -> None:
        """Port speed in bits/s (None: every port; None or 0 bps: no serialisation delay)."""
        if bps is not None and float(bps) < 0:
            raise ValueError("port speed must be >= 0")
        with self.cv:
            self.settings.put("speed", port, float(bps) if bps else None)
            self._notify()

    def set_pfc(self, port: int | None, cfg: PfcConfig | None) -> None:
        """PFC of a port (None: every port; cfg None: off); resumes upstream ports now uncovered."""
        frames: list = []
        with self.cv:
            self.settings.put("pfc", port, cfg)
            for k in list(self.xoff):  # release upstream ports no longer covered
                if (port is None or k[0] == port) and self.settings.pfc_for(*k) is None:
                    del self.xoff[k]
                    self.resumes_sent[k] += 1
                    frames.append((k[0], {k[1]: 0}))
            self._notify()
        self._send(frames)

    def set_thresholds(self, port: int | None, prio: int, xoff: int, xon: int,
                       headroom: int | None = None) -> None:
        """XOFF/XON thresholds and headroom (in the buffer's unit; headroom None: the port's
        PfcConfig's) of one (ingress port, priority)."""
        if not 0 <= xon < xoff:
            raise ValueError(f"PFC thresholds need 0 <= xon < xoff, got xoff={xoff} xon={xon}")
        if headroom is not None and int(headroom) < 0:
            raise ValueError(f"PFC headroom must be >= 0, got {headroom}")
        with self.cv:
            self.settings.put("thresholds", (port, prio),
                              (int(xoff), int(xon), None if headroom is None else int(headroom)))

    def clear_thresholds(self, port: int | None, prios: Iterable[int]) -> None:
        """Forget what `set_thresholds` gave (port, prio) for each of `prios`: the port's
        PfcConfig's hold again."""
        with self.cv:
            for prio in prios:
                self.settings.drop("thresholds", (port, prio))

    def set_buffer(self, pool: int | None, alpha: float | None = None) -> None:
        """The shared pool (in the buffer's unit; None: none) and its dynamic thresholds'
        alpha (None: static). The unit is fixed when the traffic manager starts."""
        with self.cv:
            unit = self.settings.buffer.unit
            self.settings.buffer = BufferConfig(unit=unit, pool=pool, alpha=alpha)
            self._notify()

    def set_watchdog(self, port: int | None, cfg: WatchdogConfig | None) -> None:
        """PFC watchdog config of a port (None: every port; cfg None: off)."""
        with self.cv:
            self.settings.put("watchdog", port, cfg)
            self._notify()

    # ------------------------------------------------------------ reading
    def stats(self) -> dict[str, Any]:
        """Counters and depths per "port/priority" (JSON-friendly); times in seconds."""
        with self.cv:
            now = self.clock()
            keys = set(self.enqueued) | set(self.drops) | set(self.pauses_sent) | \
                set(self.pauses_received) | set(self.charge) | {
                    (port, q) for port, p in self.ports.items() for q in range(len(p.queues))}
            out = {}
            for port, q in sorted(keys):
                p = self.ports.get(port)
                k = (port, q)
                paused_time = 0.0
                if p is not None:
                    paused_time = p.paused_total[q]
                    since = p.paused_since[q]
                    if since is not None:
                        paused_time += min(now, p.paused_until[q]) - since
                pfc = self.settings.pfc_for(port, q)
                wd = self.settings.watchdog_of(port, q)
                out[f"{port}/{q}"] = {
                    "depth": len(p.queues[q]) if p else 0,
                    "max_depth": self.max_depth[k],
                    "capacity": self.settings.depth_of(port, q),
                    "rate_pps": self.settings.rate_of(port, q),
                    "enqueued": self.enqueued[k],
                    "dequeued": self.dequeued[k],
                    "dropped": self.drops[k],
                    "wd_dropped": self.wd_drops[k],
                    "paused": bool(p and p.paused_until[q] > now),
                    "paused_time": paused_time,
                    "pauses_received": self.pauses_received[k],
                    "pauses_sent": self.pauses_sent[k],
                    "resumes_sent": self.resumes_sent[k],
                    "held": p.amount[q] if p else 0,
                    "xoff": k in self.xoff,
                    "charge": self.charge[k],
                    "headroom_used": self.headroom_used[k],
                    "pfc": None if pfc is None else {"xoff": pfc[0], "xon": pfc[1], "quanta": pfc[2],
                                                     "headroom": pfc[3]},
                    "watchdog": None if wd is None else {
                        "action": wd.action, "detection_s": wd.detection_s,
                        "restoration_s": wd.restoration_s, "storm": bool(p and p.storm[q]),
                        "storms": self.storms[k]},
                }
            return out

    def buffer_stats(self) -> dict[str, Any]:
        """The buffer: its unit, shared pool and alpha (None: none), what the queues hold in
        the pool and in PFC headroom."""
        with self.cv:
            b = self.settings.buffer
            return {"unit": b.unit, "pool": b.pool, "alpha": b.alpha, "pool_used": self.pool_used,
                    "headroom_used": sum(self.headroom_used.values())}

    def port_stats(self) -> dict[str, Any]:
        """Per port (as a string key) its configured speed in bits/s (None: unset)."""
        with self.cv:
            return {str(port): {"speed_bps": self.settings.speed_set(port)}
                    for port in sorted(self.ports)}

    def flush(self) -> int:
        """Drop everything queued (a new program is loaded); returns how many."""
        frames: list = []
        with self.cv:
            n = 0
            for p in self.ports.values():
                for q in p.queues:
                    n += len(q)
                    q.clear()
                p.amount = [0] * len(p.queues)
            self.queued = 0
            self.pool_used = 0
            self.charge.clear()
            self.headroom_used.clear()
            for k in list(self.xoff):
                del self.xoff[k]
                self.resumes_sent[k] += 1
                frames.append((k[0], {k[1]: 0}))
            self.cv.notify_all()
            if self._wake is not None:
                self._wake()
        self._send(frames)
        return n

    def idle(self) -> bool:
        """Whether nothing is queued or being delivered."""
        with self.cv:
            return self.in_flight == 0 and not any(any(p.queues) for p in self.ports.values())

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait until every queue is empty and nothing is being delivered (threaded mode)."""
        if not self.threaded and self.driver is None:
            self.poll()
            return self.idle()
        end = time.monotonic() + timeout
        with self.cv:
            while self.in_flight or any(any(p.queues) for p in self.ports.values()):
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cv.wait(min(left, 0.05))
        return True

    def close(self) -> None:
        """Stop the scheduler thread (queued packets are not sent; `drain` first for that)."""
        with self.cv:
            self._stop = True
            self.cv.notify_all()
        if self.driver is not None:
            self.driver.detach(self.service)
        if self.thread is not None and threading.current_thread() is not self.thread:
            self.thread.join(timeout=2.0)
