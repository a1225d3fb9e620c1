"""The packet path: `PacketPath` takes each received frame through the v1model pipeline and the traffic manager to the wire."""

from __future__ import annotations

import collections
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from .. import ir
from ..pfcframe import is_mac_control
from ..tm import TmDriver, TrafficManager
from ..tmconfig import TmConfig, VirtualClock
from . import runtime
from .state import Code, StateError
from .v1compile import CompiledProgram, compile_program
from .v1model import V1Model

__all__ = ["PENDING_SLICE", "PacketPath"]

log = logging.getLogger("p4switch.pipeline")

PENDING_SLICE = 1024
"""Most pipeline passes (resubmitted, recirculated, cloned or replicated packets) one hold
of the lock runs for a frame; the rest waits in a backlog that the ports' loop (or, with no
loop, the caller between holds) takes up next. No finite program of ours comes near it; a
program that resubmits or clones forever then costs the switch CPU, as on BMv2, but not its
other ports' frames or its control plane, which a lock held for ever would stop."""


def _size_of(pk: runtime.Packet) -> int:
    """Bytes on the wire (serialisation time): the frame as it will leave, at least 60."""
    return max(60, pk.length)


class PacketPath:
    """A v1model program's packet path; output frames go to `transmit(port, data)`.

    All packet processing and every state write happen under one lock, so a
    packet sees the state entirely before or after a write. With one queue per
    port and no rate/speed limit, `process()` runs the packet to the wire on the
    caller's thread; otherwise a `TrafficManager` thread runs egress.

    `tm_config` holds the traffic manager's initial settings; it runs when
    `start_tm` is set or `clock` is a `tm.VirtualClock` (then without a
    thread, moved by `advance(seconds)`). With a `tm_driver` (`io.RawPorts`)
    the traffic manager has no thread of its own: egress runs on the driver's
    thread, the one that calls `process()`. `switch.Switch` (the control-plane
    accessors) builds on this class and turns its user-facing options into these.
    """

    def __init__(self, program: ir.Program, transmit: Callable[[int, bytes], None],
                 tm_config: TmConfig, *, start_tm: bool, cpu_port: int | None, drop_port: int,
                 egress_spec_init_to_drop: bool, clock: Callable[[], float] | None,
                 tm_driver: TmDriver | None = None) -> None:
        self.transmit = transmit
        self.cpu_port = cpu_port
        self.drop_port = drop_port
        self.queues = tm_config.queues
        self.spec_init = egress_spec_init_to_drop
        self.clock = clock or time.monotonic
        self.manual = isinstance(clock, VirtualClock)
        self.tm_driver = None if self.manual else tm_driver
        self.lock = threading.RLock()
        self.packet_in_handler: Callable[[bytes, dict[str, int]], None] | None = None
        self.digest_handler: Callable[[str, tuple], None] | None = None
        self.digests: collections.deque = collections.deque(maxlen=1024)
        self.mac_control_rx = 0
        self.tm_config = tm_config
        self.tm: TrafficManager | None = None
        if self.manual or start_tm:
            self._start_tm()
        self._pending: collections.deque = collections.deque()
        self._backlog: collections.deque = collections.deque()
        self._out: list[tuple] = []
        self._busy = False
        self._wake_driver: Callable[[], None] | None = None
        if self.tm_driver is not None:
            self._wake_driver = self.tm_driver.attach(self._run_backlog)
        self.load(program)

    def _start_tm(self) -> TrafficManager:
        if self.tm is None:
            self.tm = TrafficManager(self._tm_deliver, self.tm_config, send_raw=self._send_raw,
                                     size_of=_size_of, clock=self.clock, threaded=not self.manual,
                                     on_drop=self._tm_dropped, driver=self.tm_driver)
            if getattr(self, "v1", None) is not None:
                self.v1.pending = None
        return self.tm

    def _tm_dropped(self, pk: Any) -> None:
        self.v1.stats["dropped"] += 1

    def advance(self, seconds: float) -> int:
        """With a VirtualClock: move time on, running the traffic manager's events on the way."""
        if not self.manual or self.tm is None:
            raise TypeError("advance() needs Switch(clock=VirtualClock())")
        return self.tm.advance(seconds)

    # ------------------------------------------------------------ program
    def load(self, program: ir.Program) -> None:
        """Install a program (all state reset). Raises CodegenError when it cannot run."""
        cp = compile_program(program, drop_port=self.drop_port)
        with self.lock:
            if self.tm is not None:
                self.tm.flush()  # queued packets belong to the old program
            self._backlog.clear()
            self.cp: CompiledProgram = cp
            self.v1 = V1Model(cp, drop_port=self.drop_port, enqueue=self._enqueue, output=self._output,
                              reinject=self._reinject, digest=self._digest, queues=self.queues,
                              egress_spec_init_to_drop=self.spec_init, clock=self.clock)
            self.v1.pending = self._pending if self.tm is None else None

    @property
    def stats(self) -> dict[str, int]:
        """The pipeline's packet counters by name (live, not a copy)."""
        return self.v1.stats

    def close(self) -> None:
        """Stop the traffic manager, if one runs; queued packets are not sent."""
        if self.tm is not None:
            self.tm.close()
            self.tm = None
        if self._wake_driver is not None and self.tm_driver is not None:
            self.tm_driver.detach(self._run_backlog)
            self._wake_driver = None
        self._backlog.clear()

    # ------------------------------------------------------------ packets
    # Output (frames, packet-ins, digests) is collected while the lock is held
    # and delivered after it is released: a transmit callback that feeds
    # another switch (or this one) can never deadlock on switch locks.

    def process(self, ingress_port: int, data: bytes) -> None:
        """Run one packet received on `ingress_port` through the pipeline."""
        if is_mac_control(data):
            # MAC control (PAUSE/PFC): a port with native PFC (`pfc`) consumes it
            # (the traffic manager honours it); elsewhere it goes to the program,
            # which honours PFC itself (p4/include/control/pfc.p4) and drops it, as
            # on BMv2.
            self.mac_control_rx += 1
            if self.tm is not None and self.tm.settings.pfc_of(ingress_port) is not None:
                self.tm.receive_pause(ingress_port, data)
                if self.manual:
                    self.tm.poll()
                return
        self._run(ingress_port, (data,), 0)
        if self.manual and self.tm is not None:  # a manual clock starts the TM in __init__
            self.tm.poll()

    def process_many(self, ingress_port: int, frames: Sequence[bytes]) -> None:
        """`process` for each of `frames`, in order, with the same result: the frames
        received on `ingress_port` in one batch of the port loop's.

        The lock is taken once for a run of frames, not once a frame, and their output is
        delivered at the run's end, in the same order (the port loop sends what they
        transmit at the end of its round anyway). A MAC control frame ends a run and goes
        through `process`, as does every frame with a manual clock (whose traffic manager
        is polled after each).
        """
        if self.manual:
            for data in frames:
                self.process(ingress_port, data)
            return
        i, n = 0, len(frames)
        while i < n:
            data = frames[i]
            if is_mac_control(data):
                self.process(ingress_port, data)  # MAC control: `process` decides who takes it
                i += 1
            else:
                i = self._run(ingress_port, frames, i)

    def _run(self, ingress_port: int, frames: Sequence[bytes], i: int) -> int:
        """Run `frames[i]`, then the frames after it up to the next MAC control frame,
        through ingress under one hold of the lock; deliver their output once the lock is
        released. Returns the index of the first frame not run. A re-entrant call (a
        handler fed us) only queues `frames[i]` behind the current packet."""
        new_packet = runtime.Packet
        n = len(frames)
        with self.lock:
            if self._busy:
                data = frames[i]
                self._pending.append(("i", new_packet(data if data.__class__ is bytes else bytes(data),
                                                      ingress_port), True))
                return i + 1
            self._busy = True
            try:
                v1 = self.v1
                pending = self._pending
                first = i
                while i < n:
                    data = frames[i]
                    if i > first and is_mac_control(data):
                        break  # MAC control: the caller hands it to `process`
                    i += 1
                    try:
                        v1.ingress(new_packet(data if data.__class__ is bytes else bytes(data), ingress_port))
                    except Exception as e:  # malformed input or a failed assert: drop and count
                        self._failed(e)
                    if pending:
                        self._run_pending()
            finally:
                self._busy = False
                out, self._out = self._out, []
        self._after_hold(out)
        return i

    def _failed(self, e: Exception) -> None:
        self.v1.stats["errors"] += 1
        self.v1.stats["dropped"] += 1
        log.debug("packet dropped: %s: %s", type(e).__name__, e)

    def _run_pending(self) -> None:
        """Run what the packet just run left (its resubmissions, recirculations, clones
        and replicas), at most PENDING_SLICE passes; what is left then goes to the backlog."""
        pend = self._pending
        v1 = self.v1
        budget = PENDING_SLICE
        while pend:
            if not budget:
                self._backlog.extend(pend)
                pend.clear()
                return
            budget -= 1
            item = pend.popleft()
            try:
                if item[0] == "i":
                    v1.ingress(item[1], item[2])
                else:
                    _, port, prio, pk = item
                    v1.egress(port, prio, pk, 0)
            except Exception as e:  # malformed input or a failed assert: drop and count
                self._failed(e)

    def _run_backlog(self) -> float:
        """Run a slice of the backlog under one hold of the lock, as the driver's service;
        returns inf when there was none, else 0: come back at once, for the rest or for
        what the slice queued in the traffic manager, whose service may have run already."""
        if not self._backlog:
            return math.inf
        with self.lock:
            if self._busy:  # re-entered from a handler: the outer hold's caller comes back
                return 0.0
            self._busy = True
            try:
                self._pending.extend(self._backlog)
                self._backlog.clear()
                self._run_pending()
            finally:
                self._busy = False
                out, self._out = self._out, []
        if out:
            self._deliver(out)
        return 0.0

    def _after_hold(self, out: list[tuple]) -> None:
        """Once a hold of the lock has ended: deliver its output, and see to a backlog it
        left: a driver's loop takes it up (woken if this is another thread); with none, the
        caller runs it slice by slice, letting the lock go between slices."""
        if out:
            self._deliver(out)
        if not self._backlog:
            return
        if self._wake_driver is not None:
            self._wake_driver()
            return
        while self._backlog:
            self._run_backlog()

    def _enqueue(self, port: int, prio: int, pk: runtime.Packet) -> int | None:
        if self.tm is None:
            self._pending.append(("e", port, prio, pk))
            return 0
        return self.tm.enqueue(port, prio, pk, pk.in_port if pk.sm.instance_type == 0 else None)

    def _reinject(self, pk: runtime.Packet) -> None:
        self._pending.appendleft(("i", pk, False))

    def _tm_deliver(self, port: int, prio: int, pk: runtime.Packet, deq_depth: int) -> None:
        with self.lock:
            self._busy = True
            try:
                try:
                    self.v1.egress(port, prio, pk, deq_depth)
                except Exception as e:
                    self._failed(e)
                self._run_pending()
            finally:
                self._busy = False
                out, self._out = self._out, []
        self._after_hold(out)

    def _send_raw(self, port: int, frame: bytes) -> None:
        """PFC frames from the TM: buffered when sent while processing, else sent now."""
        if self._busy and self._lock_owned():
            self._out.append((0, port, frame))
        else:
            self._deliver([(0, port, frame)])

    def _lock_owned(self) -> bool:
        return self.lock._is_owned()  # type: ignore[attr-defined]  # RLock internal, not in typeshed

    def _output(self, port: int, data: bytes) -> None:
        self._out.append((0, port, data))

    def _digest(self, name: str, values: tuple) -> None:
        self.digests.append((name, values))
        self._out.append((1, name, values))

    def _deliver(self, out: list[tuple]) -> None:
        for kind, a, b in out:
            try:
                if kind == 1:
                    if self.digest_handler is not None:
                        self.digest_handler(a, b)
                elif a == self.cpu_port and self.packet_in_handler is not None:
                    self._packet_in(b)
                else:
                    self.transmit(a, b)
            except Exception:  # a failing sink must not lose the rest of the output
                log.exception("delivering output of the pipeline failed")

    def _packet_in(self, data: bytes) -> None:
        fields = self.cp.controller_headers.get("packet_in")
        meta: dict[str, int] = {}
        if fields:
            total = sum(w for _, w in fields)
            nb = (total + 7) // 8
            if len(data) >= nb:
                v = int.from_bytes(data[:nb], "big") >> (nb * 8 - total)
                for name, w in reversed(fields):
                    meta[name] = v & ((1 << w) - 1)
                    v >>= w
                data = data[nb:]
        self.packet_in_handler(data, meta)  # type: ignore[misc]  # _deliver checked it is set

    def set_packet_in_handler(self, fn: Callable[[bytes, dict[str, int]], None]) -> None:
        """fn(payload, packet_in metadata by name) for each packet sent to the CPU port."""
        self.packet_in_handler = fn

    def set_digest_handler(self, fn: Callable[[str, tuple], None]) -> None:
        """fn(digest struct name, member values) for each digest() at the end of ingress."""
        self.digest_handler = fn

    def packet_out(self, payload: bytes, metadata: dict[str, int]) -> None:
        """Inject a PacketOut: the packet_out header is built from `metadata` and prepended."""
        if self.cpu_port is None:
            raise StateError(Code.FAILED_PRECONDITION, "no CPU port configured")
        fields = self.cp.controller_headers.get("packet_out")
        header = b""
        if fields:
            v = 0
            total = 0
            for name, w in fields:
                val = int(metadata.get(name, 0))
                if not 0 <= val < (1 << w):
                    raise StateError(Code.INVALID_ARGUMENT, f"packet_out metadata {name}={val} does not fit in {w} bits")
                v = (v << w) | val
                total += w
            pad = (-total) % 8
            header = (v << pad).to_bytes((total + pad) // 8, "big")
        self.process(self.cpu_port, header + bytes(payload))

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait until the traffic manager has sent everything (no-op without one)."""
        return True if self.tm is None else self.tm.drain(timeout)
