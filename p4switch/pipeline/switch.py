"""`Switch`: a running v1model program, the `Device` the P4Runtime server drives.

All packet processing and every state write happen under one lock, so a
packet sees the state entirely before or after a write. With one queue per
port and no rate/speed limit, `process()` runs the packet to the wire on the
caller's thread; otherwise a `TrafficManager` thread runs egress.

Names defined here: `Switch`, `SwitchError`.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from .. import ir
from ..tm import PfcConfig, TmConfig, TrafficManager, VirtualClock, WatchdogConfig
from . import runtime
from .codegen import CodegenError
from .state import (
    ActionCall,
    CloneSession,
    Code,
    Group,
    Member,
    MulticastGroup,
    StateError,
    TableEntry,
)
from .tables import Table
from .v1model import CompiledProgram, V1Model, compile_program

_T = TypeVar("_T")

log = logging.getLogger("p4switch.pipeline")

SwitchError = CodegenError


def _size_of(pk: runtime.Packet) -> int:
    """Bytes on the wire (serialisation time): the frame as it will leave, at least 60."""
    return max(60, pk.length)


def _per_port(value: Any, conv: Callable[[Any], Any]) -> tuple[Any, dict[int, Any]]:
    """A scalar or {port|None: value} option as (default, per-port dict)."""
    if value is None:
        return None, {}
    if not isinstance(value, dict):
        return conv(value), {}
    default = conv(value[None]) if None in value else None
    return default, {int(k): conv(v) for k, v in value.items() if k is not None}


def _gbps(v: Any) -> float:
    return float(v) * 1e9


def _pfc(v: Any) -> PfcConfig:
    if isinstance(v, PfcConfig):
        return v
    prios = v if isinstance(v, (set, frozenset, list, tuple)) else [int(x) for x in str(v).split(",") if x.strip()]
    return PfcConfig(priorities=frozenset(_prio(p) for p in prios))


def _prio(p: Any) -> int:
    p = int(p)
    if not 0 <= p <= 7:
        raise ValueError(f"priority {p} is not in 0..7 (IEEE 802.1Qbb classes)")
    return p


def _watchdog(v: Any) -> WatchdogConfig:
    if isinstance(v, WatchdogConfig):
        return v
    if isinstance(v, dict):
        return WatchdogConfig(priorities=frozenset(_prio(p) for p in v.get("priorities", ())),
                              detection_s=float(v.get("detection_ms", 200)) / 1e3,
                              restoration_s=float(v.get("restoration_ms", 200)) / 1e3,
                              action=str(v.get("action", "drop")))
    return WatchdogConfig(priorities=_pfc(v).priorities)


class Switch:
    """A v1model switch running `program`; output frames go to `transmit(port, data)`.

    Traffic-manager options take a scalar (every port) or {port or None: value}:
    `queue_depth` (packets), `queue_rate` (packets/s), `port_speed` (Gb/s),
    `pfc` (priorities, e.g. "3,4"), `pfc_watchdog` (priorities, or a dict as
    `set_pfc_watchdog` takes). `clock`: a `tm.VirtualClock` runs the traffic
    manager without a thread, moved by `advance(seconds)` (deterministic tests).
    """

    def __init__(self, program: ir.Program, transmit: Callable[[int, bytes], None], *,
                 cpu_port: int | None = None, drop_port: int = 511, priority_queues: int = 1,
                 queue_depth: Any = None, queue_rate: Any = None, port_speed: Any = None,
                 pfc: Any = None, pfc_watchdog: Any = None, egress_spec_init_to_drop: bool = False,
                 clock: Callable[[], float] | None = None) -> None:
        self.transmit = transmit
        self.cpu_port = cpu_port
        self.drop_port = drop_port
        self.queues = max(1, int(priority_queues))
        self.spec_init = egress_spec_init_to_drop
        self.clock = clock or time.monotonic
        self.manual = isinstance(clock, VirtualClock)
        self.lock = threading.RLock()
        self.packet_in_handler: Callable[[bytes, dict[str, int]], None] | None = None
        self.digest_handler: Callable[[str, tuple], None] | None = None
        self.digests: collections.deque = collections.deque(maxlen=1024)
        self.mac_control_rx = 0
        depth, port_depth = _per_port(queue_depth, int)
        rate, port_rate = _per_port(queue_rate, float)
        speed, port_speed_d = _per_port(port_speed, _gbps)
        pfc_default, pfc_ports = _per_port(pfc, _pfc)
        pfc_map: dict[int | None, PfcConfig] = dict(pfc_ports.items())
        if pfc_default is not None:
            pfc_map[None] = pfc_default
        wd_default, wd_ports = _per_port(pfc_watchdog, _watchdog)
        wd_map: dict[int | None, WatchdogConfig] = dict(wd_ports.items())
        if wd_default is not None:
            wd_map[None] = wd_default
        self.tm_config = TmConfig(queues=self.queues, depth=depth or 64, port_depth=port_depth,
                                  rate_pps=rate, port_rate_pps=port_rate, speed_bps=speed,
                                  port_speed_bps=port_speed_d, pfc=pfc_map, watchdog=wd_map)
        self.tm: TrafficManager | None = None
        if self.manual or self.queues > 1 or rate or port_rate or speed or port_speed_d or pfc_map \
                or port_depth or queue_depth is not None:
            self._start_tm()
        self._pending: collections.deque = collections.deque()
        self._out: list[tuple] = []
        self._busy = False
        self.load(program)

    def _start_tm(self) -> TrafficManager:
        if self.tm is None:
            self.tm = TrafficManager(self._tm_deliver, self.tm_config, send_raw=self._send_raw,
                                     size_of=_size_of, clock=self.clock, threaded=not self.manual,
                                     on_drop=self._tm_dropped)
            if getattr(self, "v1", None) is not None:
                self.v1.pending = None
        return self.tm

    def _tm_dropped(self, pk: Any) -> None:
        self.v1.stats["dropped"] += 1

    # ------------------------------------------------------------ traffic manager settings
    def set_port_speed(self, port: int | None, gbps: float) -> None:
        """Port speed in Gb/s (serialisation delay; PFC pause duration); 0: unlimited."""
        with self.lock:
            self._start_tm().set_speed(port, float(gbps) * 1e9)

    def set_queue_depth(self, port: int | None, depth: int, priority: int | None = None) -> None:
        """Egress queue depth in packets for a port (all queues or one priority)."""
        with self.lock:
            self._start_tm().set_depth(port, int(depth), None if priority is None else _prio(priority))

    def set_queue_rate(self, port: int | None, pps: float, priority: int | None = None) -> None:
        """Egress drain rate in packets/s (0: unlimited)."""
        with self.lock:
            self._start_tm().set_rate(port, pps, None if priority is None else _prio(priority))

    def set_pfc(self, port: int | None, priorities: Any, xoff: int | None = None,
                xon: int | None = None, quanta: int | None = None) -> None:
        """Enable PFC on a port (None: every port) for exactly these priorities (empty: disable).

        `xoff`/`xon` (packets charged to the ingress port and priority) and the
        PAUSE `quanta` apply to every listed priority; see `set_pfc_thresholds`.
        """
        prios = frozenset(_prio(p) for p in (priorities or ()))
        cfg = None
        if prios:
            base = PfcConfig(priorities=prios)
            cfg = PfcConfig(priorities=prios, xoff=base.xoff if xoff is None else int(xoff),
                            xon=base.xon if xon is None else int(xon),
                            quanta=base.quanta if quanta is None else int(quanta))
            if not 0 <= cfg.xon < cfg.xoff or not 0 < cfg.quanta <= 0xFFFF:
                raise ValueError(f"PFC needs 0 <= xon < xoff and 0 < quanta <= 65535, "
                                 f"got xoff={cfg.xoff} xon={cfg.xon} quanta={cfg.quanta}")
        with self.lock:
            tm = self._start_tm()
            tm.set_pfc(port, cfg)
            for p in prios:
                tm.settings.thresholds.pop((port, p), None)

    def set_pfc_thresholds(self, port: int | None, priority: int, xoff: int, xon: int) -> None:
        """XOFF/XON thresholds (packets) for one (ingress port, priority)."""
        with self.lock:
            self._start_tm().set_thresholds(port, _prio(priority), int(xoff), int(xon))

    def set_pfc_watchdog(self, port: int | None, priorities: Any, detection_ms: float = 200,
                         restoration_ms: float = 200, action: str = "drop") -> None:
        """PFC watchdog for these priorities of a port (None: every port; empty: off).

        A queue paused without a break for `detection_ms` is in a storm: its
        packets are dropped (`action` "drop") or sent ignoring PAUSE
        ("forward") until no PAUSE arrived on it for `restoration_ms`.
        """
        prios = frozenset(_prio(p) for p in (priorities or ()))
        cfg = None
        if prios:
            cfg = WatchdogConfig(priorities=prios, detection_s=float(detection_ms) / 1e3,
                                 restoration_s=float(restoration_ms) / 1e3, action=action)
        with self.lock:
            self._start_tm().set_watchdog(port, cfg)

    def tm_stats(self) -> dict[str, Any]:
        """Per "port/priority" queue counters, per port settings, and the pipeline's counters."""
        tm = self.tm
        pipeline = dict(self.v1.stats)
        pipeline["mac_control_rx"] = self.mac_control_rx
        return {"queues": tm.stats() if tm is not None else {},
                "ports": tm.port_stats() if tm is not None else {},
                "pipeline": pipeline}

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

    # ------------------------------------------------------------ packets
    # Output (frames, packet-ins, digests) is collected while the lock is held
    # and delivered after it is released: a transmit callback that feeds
    # another switch (or this one) can never deadlock on switch locks.

    def process(self, ingress_port: int, data: bytes) -> None:
        """Run one packet received on `ingress_port` through the pipeline."""
        if len(data) > 13 and data[12] == 0x88 and data[13] == 0x08:
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
        pk = runtime.Packet(data if data.__class__ is bytes else bytes(data), ingress_port)
        with self.lock:
            if self._busy:  # re-entrant call (a handler fed us): queued behind the current packet
                self._pending.append(("i", pk, True))
                return
            self._busy = True
            try:
                try:
                    self.v1.ingress(pk)
                except Exception as e:  # malformed input or a failed assert: drop and count
                    self._failed(e)
                if self._pending:
                    self._run_pending()
            finally:
                self._busy = False
                out, self._out = self._out, []
        if out:
            self._deliver(out)
        if self.manual and self.tm is not None:  # a manual clock starts the TM in __init__
            self.tm.poll()

    def _failed(self, e: Exception) -> None:
        self.v1.stats["errors"] += 1
        self.v1.stats["dropped"] += 1
        log.debug("packet dropped: %s: %s", type(e).__name__, e)

    def _run_pending(self) -> None:
        pend = self._pending
        v1 = self.v1
        while pend:
            item = pend.popleft()
            try:
                if item[0] == "i":
                    v1.ingress(item[1], item[2])
                else:
                    _, port, prio, pk = item
                    v1.egress(port, prio, pk, 0)
            except Exception as e:  # malformed input or a failed assert: drop and count
                self._failed(e)

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
        if out:
            self._deliver(out)

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

    # ------------------------------------------------------------ tables
    def _table(self, name: str) -> Table:
        t = self.cp.tables.get(name)
        if t is None:
            raise StateError(Code.NOT_FOUND, f"no table '{name}'")
        return t

    def table_insert(self, table: str, entry: TableEntry) -> None:
        """Add an entry (StateError when one with its key exists or the table is full)."""
        with self.lock:
            self._table(table).insert(entry)

    def table_modify(self, table: str, entry: TableEntry) -> None:
        """Replace the action and direct resources of an existing entry."""
        with self.lock:
            self._table(table).modify(entry)

    def table_delete(self, table: str, entry: TableEntry) -> None:
        """Remove the entry with this key (StateError when there is none)."""
        with self.lock:
            self._table(table).delete(entry)

    def table_set_default(self, table: str, action: ActionCall | None) -> None:
        """Set the default action (None: back to the program's); refused when it is const."""
        with self.lock:
            self._table(table).set_default(action)

    def table_write_many(self, table: str, ops: list[tuple[str, TableEntry]]) -> list[StateError | None]:
        """Apply ("insert" | "modify" | "delete", entry) ops in order under one lock.

        For a P4Runtime server that has already validated the entries: no
        re-validation of keys/actions (action profile references are still
        checked, being state) and no copies (the switch keeps the entry
        objects given to insert/modify: do not reuse them). Each op gets its
        result (None or the StateError); a failing op changes nothing and
        the others still apply. "modify" of an entry with `is_default` sets
        the default action.
        """
        t = self._table(table)
        out: list[StateError | None] = []
        with self.lock:
            for op, entry in ops:
                try:
                    if op == "insert":
                        t.insert(entry, trusted=True)
                    elif op == "modify":
                        if entry.is_default:
                            t.set_default(entry.action)
                        else:
                            t.modify(entry, trusted=True)
                    elif op == "delete":
                        t.delete(entry)
                    else:
                        raise StateError(Code.INVALID_ARGUMENT, f"unknown table write '{op}'")
                    out.append(None)
                except StateError as e:
                    out.append(e)
        return out

    def table_entries(self, table: str, copy: bool = True) -> Sequence[TableEntry]:
        """The table's entries: copies, or (copy=False) a read-only live view, nothing copied.

        The view's entries are the switch's own objects (read, never change
        them); iterate it while no write runs concurrently (e.g. on the
        thread that writes).
        """
        with self.lock:
            return self._table(table).entries(copy)

    def table_default(self, table: str) -> TableEntry:
        """The default entry, with its direct counter (misses) and meter config."""
        with self.lock:
            return self._table(table).default_entry()

    def table_idle_entries(self, table: str, now_ns: int | None = None, *,
                           once: bool = True) -> list[TableEntry]:
        """Entries of `table` idle for at least their `idle_timeout_ns` (time.monotonic_ns base).

        Each entry's `last_hit_ns` is its last hit (or insert) time. With
        `once` an expired entry is returned once until it is hit again.
        """
        with self.lock:
            return self._table(table).idle_entries(now_ns, once=once)

    def table_clear(self, table: str) -> None:
        """Remove every entry of `table`."""
        with self.lock:
            self._table(table).clear()

    def direct_counter_write(self, table: str, entry: TableEntry, packets: int, bytes_: int) -> None:
        """Set an entry's direct counter; `entry.is_default`: the default entry's (it counts misses)."""
        with self.lock:
            self._table(table).set_direct(entry, packets=packets, bytes_=bytes_)

    def direct_meter_set(self, table: str, entry: TableEntry,
                         config: tuple[int, int, int, int] | None) -> None:
        """Configure an entry's direct meter (None: unconfigured, all GREEN); `is_default`: the default entry's."""
        with self.lock:
            self._table(table).set_direct(entry, meter_config=config)

    # ------------------------------------------------------------ profiles
    def _profile(self, name: str) -> Any:
        p = self.cp.profiles.get(name)
        if p is None:
            raise StateError(Code.NOT_FOUND, f"no action profile '{name}'")
        return p

    def member_insert(self, profile: str, member: Member) -> None:
        """Add a member to an action profile (StateError when its id exists or it is full)."""
        with self.lock:
            self._profile(profile).member_insert(member)

    def member_modify(self, profile: str, member: Member) -> None:
        """Replace an action profile member (StateError when there is none with its id)."""
        with self.lock:
            self._profile(profile).member_modify(member)

    def member_delete(self, profile: str, member_id: int) -> None:
        """Remove an action profile member (StateError when missing or still referenced)."""
        with self.lock:
            self._profile(profile).member_delete(member_id)

    def members(self, profile: str) -> Iterable[Member]:
        """The members of an action profile (a list, taken under the lock)."""
        with self.lock:
            return list(self._profile(profile).members.values())

    def group_insert(self, profile: str, group: Group) -> None:
        """Add a group to an action selector (StateError when its id exists or it is invalid)."""
        with self.lock:
            self._profile(profile).group_insert(group)

    def group_modify(self, profile: str, group: Group) -> None:
        """Replace an action selector group (StateError when there is none with its id)."""
        with self.lock:
            self._profile(profile).group_modify(group)

    def group_delete(self, profile: str, group_id: int) -> None:
        """Remove an action selector group (StateError when missing or still used)."""
        with self.lock:
            self._profile(profile).group_delete(group_id)

    def groups(self, profile: str) -> Iterable[Group]:
        """The groups of an action selector (a list, taken under the lock)."""
        with self.lock:
            return list(self._profile(profile).groups.values())

    # ------------------------------------------------------------ externs
    def _extern(self, name: str, kind: type[_T]) -> _T:
        obj = self.cp.externs.get(name)
        if not isinstance(obj, kind):
            raise StateError(Code.NOT_FOUND, f"no {kind.__name__} '{name}'")
        return obj

    def counter_read(self, counter: str, index: int) -> tuple[int, int]:
        """(packets, bytes) at `index` of an indexed counter (StateError when out of range)."""
        from .externs import CounterArray

        with self.lock:
            return self._extern(counter, CounterArray).read(index)

    def counter_write(self, counter: str, index: int, packets: int, bytes_: int) -> None:
        """Set (packets, bytes) at `index` of an indexed counter."""
        from .externs import CounterArray

        with self.lock:
            self._extern(counter, CounterArray).write(index, packets, bytes_)

    def counter_size(self, counter: str) -> int:
        """The number of indexes of an indexed counter."""
        from .externs import CounterArray

        return self._extern(counter, CounterArray).size

    def register_read(self, register: str, index: int) -> int:
        """The value at `index` of a register (StateError when out of range)."""
        from .externs import RegisterArray

        with self.lock:
            return self._extern(register, RegisterArray).cp_read(index)

    def register_write(self, register: str, index: int, value: int) -> None:
        """Set the value at `index` of a register, wrapped to its element width."""
        from .externs import RegisterArray

        with self.lock:
            self._extern(register, RegisterArray).cp_write(index, value)

    def meter_set(self, meter: str, index: int, config: tuple[int, int, int, int] | None) -> None:
        """Configure `index` of an indexed meter (None: unconfigured, all GREEN)."""
        from .externs import MeterArray

        with self.lock:
            self._extern(meter, MeterArray).set(index, config)

    def meter_get(self, meter: str, index: int) -> tuple[int, int, int, int] | None:
        """The (cir, cburst, pir, pburst) at `index` of an indexed meter, or None."""
        from .externs import MeterArray

        with self.lock:
            return self._extern(meter, MeterArray).get(index)

    def value_set_write(self, value_set: str, members: list[tuple[int, int]]) -> None:
        """Replace a parser value_set's members: (value, mask) pairs (mask -1 = exact)."""
        with self.lock:
            vs = self.cp.value_sets.get(value_set)
            if vs is None:
                raise StateError(Code.NOT_FOUND, f"no value_set '{value_set}'")
            vs.set_members(members)

    # ------------------------------------------------------------ PRE
    def mcast_group_set(self, group: MulticastGroup | None, group_id: int) -> None:
        """Install a multicast group under `group_id` (None: remove it)."""
        with self.lock:
            self.v1.set_mcast(group_id, group)

    def clone_session_set(self, session: CloneSession | None, session_id: int) -> None:
        """Install a clone session under `session_id` (None: remove it)."""
        with self.lock:
            self.v1.set_session(session_id, session)
