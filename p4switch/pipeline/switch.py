"""The control-plane facade: `Switch`, the `state.Device` the P4Runtime server drives, with locked table, profile, extern, PRE and traffic-manager accessors over a `PacketPath`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from .. import ir
from ..tm import TmDriver
from ..tmconfig import BufferConfig, PfcConfig, TmConfig, VirtualClock, WatchdogConfig
from .codegen import CodegenError
from .externs import CounterArray, MeterArray, RegisterArray
from .matchtable import Table
from .packetpath import PacketPath
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

__all__ = ["Switch", "SwitchError"]

_T = TypeVar("_T")

SwitchError = CodegenError
DEFAULT_DEPTH = 64  # packets of a queue no depth was given for
FULL_FRAME = 1514  # bytes of a full frame: a default depth counted in bytes is 64 of them


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


def _pfc(v: Any, unit: str = "packets") -> PfcConfig:
    """PFC for these priorities (a PfcConfig as it is) with the default thresholds: XOFF/XON
    48/32 packets, or as many full frames' bytes in a buffer that counts bytes."""
    if isinstance(v, PfcConfig):
        return v
    prios = v if isinstance(v, (set, frozenset, list, tuple)) else [int(x) for x in str(v).split(",") if x.strip()]
    base = PfcConfig(priorities=frozenset(_prio(p) for p in prios))
    if unit == "packets":
        return base
    return replace(base, xoff=base.xoff * FULL_FRAME, xon=base.xon * FULL_FRAME)


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


class Switch(PacketPath):
    """A v1model switch running `program`; output frames go to `transmit(port, data)`.

    Traffic-manager options take a scalar (every port) or {port or None: value}:
    `queue_depth` (in `buffer_unit`; by default 64 packets, or 64 x 1,514 bytes),
    `queue_rate` (packets/s), `port_speed`
    (Gb/s), `pfc` (priorities, e.g. "3,4"), `pfc_watchdog` (priorities, or a
    dict as `set_pfc_watchdog` takes). The buffer: `buffer_unit` ("packets" or
    "bytes"), `shared_buffer` (a pool every queue draws from, in that unit)
    and `alpha` (its dynamic thresholds), see `tmconfig.BufferConfig`.
    `clock`: a `tm.VirtualClock` runs the traffic
    manager without a thread, moved by `advance(seconds)` (deterministic tests);
    `tm_driver` (`io.RawPorts`): the traffic manager runs on the ports' thread.
    Every accessor takes the packet path's lock.
    """

    def __init__(self, program: ir.Program, transmit: Callable[[int, bytes], None], *,
                 cpu_port: int | None = None, drop_port: int = 511, priority_queues: int = 1,
                 queue_depth: Any = None, queue_rate: Any = None, port_speed: Any = None,
                 pfc: Any = None, pfc_watchdog: Any = None, egress_spec_init_to_drop: bool = False,
                 buffer_unit: str = "packets", shared_buffer: int | None = None,
                 alpha: float | None = None, clock: Callable[[], float] | None = None,
                 tm_driver: TmDriver | None = None) -> None:
        queues = max(1, int(priority_queues))
        depth, port_depth = _per_port(queue_depth, int)
        rate, port_rate = _per_port(queue_rate, float)
        speed, port_speed_d = _per_port(port_speed, _gbps)
        pfc_default, pfc_ports = _per_port(pfc, lambda v: _pfc(v, buffer_unit))
        pfc_map: dict[int | None, PfcConfig] = dict(pfc_ports.items())
        if pfc_default is not None:
            pfc_map[None] = pfc_default
        wd_default, wd_ports = _per_port(pfc_watchdog, _watchdog)
        wd_map: dict[int | None, WatchdogConfig] = dict(wd_ports.items())
        if wd_default is not None:
            wd_map[None] = wd_default
        if not depth:  # 64 packets, or as many full frames' bytes
            depth = DEFAULT_DEPTH if buffer_unit == "packets" else DEFAULT_DEPTH * FULL_FRAME
        tm_config = TmConfig(queues=queues, depth=depth, port_depth=port_depth,
                             rate_pps=rate, port_rate_pps=port_rate, speed_bps=speed,
                             port_speed_bps=port_speed_d, pfc=pfc_map, watchdog=wd_map,
                             buffer=BufferConfig(unit=buffer_unit, pool=shared_buffer, alpha=alpha))
        start_tm = bool(isinstance(clock, VirtualClock) or queues > 1 or rate or port_rate or speed
                        or port_speed_d or pfc_map or port_depth or queue_depth is not None
                        or buffer_unit != "packets" or shared_buffer is not None)
        super().__init__(program, transmit, tm_config, start_tm=start_tm, cpu_port=cpu_port,
                         drop_port=drop_port, egress_spec_init_to_drop=egress_spec_init_to_drop,
                         clock=clock, tm_driver=tm_driver)

    # ------------------------------------------------------------ traffic manager settings
    def set_port_speed(self, port: int | None, gbps: float) -> None:
        """Port speed in Gb/s (serialisation delay; PFC pause duration); 0: unlimited."""
        with self.lock:
            self._start_tm().set_speed(port, float(gbps) * 1e9)

    def set_queue_depth(self, port: int | None, depth: int, priority: int | None = None) -> None:
        """Egress queue depth (in the buffer's unit) for a port (all queues or one priority)."""
        with self.lock:
            self._start_tm().set_depth(port, int(depth), None if priority is None else _prio(priority))

    def set_queue_rate(self, port: int | None, pps: float, priority: int | None = None) -> None:
        """Egress drain rate in packets/s (0: unlimited)."""
        with self.lock:
            self._start_tm().set_rate(port, pps, None if priority is None else _prio(priority))

    def set_pfc(self, port: int | None, priorities: Any, xoff: int | None = None,
                xon: int | None = None, quanta: int | None = None,
                headroom: int | None = None) -> None:
        """Enable PFC on a port (None: every port) for exactly these priorities (empty: disable).

        `xoff`/`xon` (what is charged to the ingress port and priority, in the
        buffer's unit), the `headroom` beyond XOFF (None: none apart) and the
        PAUSE `quanta` apply to every listed priority; see `set_pfc_thresholds`.
        """
        prios = frozenset(_prio(p) for p in (priorities or ()))
        cfg = None
        if prios:
            base = _pfc(prios, self.tm_config.buffer.unit)
            cfg = PfcConfig(priorities=prios, xoff=base.xoff if xoff is None else int(xoff),
                            xon=base.xon if xon is None else int(xon),
                            quanta=base.quanta if quanta is None else int(quanta),
                            headroom=None if headroom is None else int(headroom))
            if not 0 <= cfg.xon < cfg.xoff or not 0 < cfg.quanta <= 0xFFFF:
                raise ValueError(f"PFC needs 0 <= xon < xoff and 0 < quanta <= 65535, "
                                 f"got xoff={cfg.xoff} xon={cfg.xon} quanta={cfg.quanta}")
        with self.lock:
            tm = self._start_tm()
            tm.set_pfc(port, cfg)
            tm.clear_thresholds(port, prios)

    def set_pfc_thresholds(self, port: int | None, priority: int, xoff: int, xon: int,
                           headroom: int | None = None) -> None:
        """XOFF/XON thresholds and headroom (in the buffer's unit) for one (ingress port,
        priority)."""
        with self.lock:
            self._start_tm().set_thresholds(port, _prio(priority), int(xoff), int(xon),
                                            None if headroom is None else int(headroom))

    def set_shared_buffer(self, size: int | None = None, alpha: float | None = None) -> None:
        """The shared pool every queue draws from (in the buffer's unit; None or 0: none) and
        its dynamic thresholds' alpha (None: static)."""
        with self.lock:
            self._start_tm().set_buffer(int(size) if size else None,
                                        None if alpha is None else float(alpha))

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
                "buffer": tm.buffer_stats() if tm is not None else {},
                "pipeline": pipeline}

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
        with self.lock:
            return self._extern(counter, CounterArray).read(index)

    def counter_write(self, counter: str, index: int, packets: int, bytes_: int) -> None:
        """Set (packets, bytes) at `index` of an indexed counter."""
        with self.lock:
            self._extern(counter, CounterArray).write(index, packets, bytes_)

    def register_read(self, register: str, index: int) -> int:
        """The value at `index` of a register (StateError when out of range)."""
        with self.lock:
            return self._extern(register, RegisterArray).cp_read(index)

    def register_write(self, register: str, index: int, value: int) -> None:
        """Set the value at `index` of a register, wrapped to its element width."""
        with self.lock:
            self._extern(register, RegisterArray).cp_write(index, value)

    def meter_set(self, meter: str, index: int, config: tuple[int, int, int, int] | None) -> None:
        """Configure `index` of an indexed meter (None: unconfigured, all GREEN)."""
        with self.lock:
            self._extern(meter, MeterArray).set(index, config)

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
