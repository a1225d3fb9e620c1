"""One primary P4Runtime session per switch, on finsy, kept equal to the intent.

`FabricSessions(plan, programs, intent)` makes a finsy `Switch` per switch
of the plan (P4Info and device config of its role, device id, an election
id above any the CLI's observers use) and runs them all in one finsy
`Controller`: each connects, wins arbitration, gets its pipeline pushed
first when the switch holds another one (finsy compares the pipeline
cookie), and reconnects by itself when the switch goes away and comes back.

Every time a switch becomes ready as primary (first start, a restarted
switch process, a restarted daemon re-attaching) its ready handler applies
the port settings that a pipeline push resets (`configure`) and
*reconciles*: it reads the owned tables and the selector's members and
groups back, diffs them with the intent (`controller.intent.diff`) and
writes only the difference, in make-before-break order. The result (counts
and seconds) is kept per switch and sent to `on_event`. `apply()` does the
same on demand, on every switch in parallel, after the intent changed (a
mode switch, a failed or restored link).

Reads for statistics (`read_counters`, `read_registers`) take explicit
indexes, so a poll reads the cells of the ports that exist, not every cell
of a 4,096-cell counter; `read_counter_sets`, `read_register_sets` and
`write_register_sets` take several counters or registers at once, so a
statistics poll asks each switch one Read for its counters, one for its
registers and at most one Write (each RPC costs a switch far more than
another entity in it does). Link probes go out as packet-outs
(`packet_out`) and come back through `on_packet_in`.

Names defined here: `FabricSessions`, `Reconcile`, `CounterCell`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, cast

import finsy as fy
from finsy import switch as finsy_switch
from finsy.p4client import P4ClientError

from topologies.addressing import AddressPlan
from topologies.pki import FabricPki

from .build import CompiledProgram
from .entities import Entity, TableEntry, describe
from .errors import P4RuntimeError, WriteError
from .intent import OWNED_TABLES, Diff, FabricIntent, diff
from .routes import NAMES
from .wire import encode, from_finsy, update, write_error
from .writelog import WriteLog

__all__ = ["CounterCell", "FabricSessions", "Reconcile"]

LOG = logging.getLogger("aizone.sessions")
# finsy waits 10 s before reconnecting to a switch whose session failed within
# 2 s (a process still starting); ours restart in about a second, and that wait
# would be most of a restarted switch's time to reconcile.
finsy_switch._FAIL_THROTTLE_SECS = 1.0
# The daemon's election id; `aizone shell` and read-only observers use lower ones.
ELECTION_ID = 100
WRITE_BATCH = 500


@dataclass(frozen=True, kw_only=True)
class Reconcile:
    """One reconciliation of a switch: what was written and how long it took."""

    switch: str
    reason: str
    counts: dict[str, int]
    seconds: float
    at: float  # wall clock

    def to_json(self) -> dict[str, Any]:
        """The reconciliation as a JSON-able dict (`seconds` rounded to 0.1 ms)."""
        return {"switch": self.switch, "reason": self.reason, "counts": self.counts,
                "seconds": round(self.seconds, 4), "at": self.at}


@dataclass(frozen=True, kw_only=True)
class CounterCell:
    """One cell of an indexed counter as read: its index, packets and bytes."""

    index: int
    packets: int
    bytes: int


Event = Callable[[str, dict[str, Any]], object]
PacketIn = Callable[[str, int, bytes], Awaitable[None] | None]


class FabricSessions:
    """Sessions to every switch of a plan (see the module docstring)."""

    def __init__(self, plan: AddressPlan, programs: dict[str, CompiledProgram],
                 intent: FabricIntent, *, on_event: Event | None = None,
                 on_packet_in: PacketIn | None = None,
                 packet_in_types: Iterable[int] = (),
                 configure: Callable[[str], Awaitable[None]] | None = None,
                 tls: FabricPki | None = None, write_log: WriteLog | None = None) -> None:
        """`tls`: the fabric's CA and the controller's certificate (mutual TLS to every
        switch, `topologies.pki`); None talks plaintext to switches started without it.
        `write_log`: where every Write of entities is recorded with its reason
        (`controller.writelog`); None records nothing."""
        self.plan = plan
        self.intent = intent
        self.on_event = on_event or (lambda _kind, _data: None)
        self.on_packet_in = on_packet_in
        self.packet_in_types = tuple(packet_in_types)
        self.configure = configure
        self.write_log = write_log
        self.switches: dict[str, fy.Switch] = {}
        self.last: dict[str, Reconcile] = {}
        self.ready: dict[str, asyncio.Event] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._out_locks: dict[str, asyncio.Lock] = {}
        self._no_registers: set[str] = set()  # targets that serve no register entries
        self._stack: AsyncExitStack | None = None
        credentials = None if tls is None else fy.GRPCCredentialsTLS(
            cacert=tls.ca, cert=tls.client_cert, private_key=tls.client_key)
        for s in plan.switches:
            prog = programs[s.role]
            opts = fy.SwitchOptions(p4info=prog.p4info, p4blob=prog.device_config,
                                    device_id=s.device_id, initial_election_id=ELECTION_ID,
                                    ready_handler=self._on_ready,
                                    channel_credentials=credentials)
            self.switches[s.name] = fy.Switch(s.name, s.grpc_addr, opts)
            self.ready[s.name] = asyncio.Event()
            self._locks[s.name] = asyncio.Lock()
            self._out_locks[s.name] = asyncio.Lock()

    # --- lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        """Run every switch's session (they connect and reconcile in the background)."""
        self._stack = AsyncExitStack()
        controller = fy.Controller(list(self.switches.values()))
        await self._stack.enter_async_context(controller)

    async def wait_ready(self, timeout: float, names: Iterable[str] | None = None) -> None:
        """Wait until every (named) switch reconciled once; raises `P4RuntimeError` on timeout."""
        wanted = list(names or self.switches)
        try:
            await asyncio.wait_for(
                asyncio.gather(*(self.ready[n].wait() for n in wanted)), timeout)
        except TimeoutError:
            late = [n for n in wanted if not self.ready[n].is_set()]
            raise P4RuntimeError(
                f"{', '.join(late)}: no P4Runtime session became ready within {timeout:.0f} s "
                f"(switch log: see `aizone status`)", "DEADLINE_EXCEEDED") from None

    async def stop(self) -> None:
        """Close every switch's session (a second call does nothing)."""
        if self._stack is not None:
            stack, self._stack = self._stack, None
            await stack.aclose()

    def is_ready(self, name: str) -> bool:
        """Whether `name` reconciled since it came up and its session is up and primary."""
        sw = self.switches[name]
        return self.ready[name].is_set() and sw.is_up and sw.is_primary

    def forget(self, name: str) -> None:
        """The switch went away: it is not ready until its next reconciliation."""
        self.ready[name].clear()

    # --- reconciliation ------------------------------------------------------

    async def _on_ready(self, sw: fy.Switch) -> None:
        if not sw.is_primary:
            return
        reason = "start" if sw.name not in self.last else "reconnect"
        if self.configure is not None:
            # Port settings that live in the pipeline (p4switch's PFC
            # thresholds, BMv2's queue rates) are set again after each push.
            await self.configure(sw.name)
        await self.reconcile(sw.name, reason)
        self.ready[sw.name].set()
        if self.on_packet_in is not None and self.packet_in_types:
            sw.create_task(self._packet_ins(sw), name="packet_ins")

    async def _packet_ins(self, sw: fy.Switch) -> None:
        assert self.on_packet_in is not None
        # finsy's overloads type its async generators as coroutines.
        packets = cast(AsyncIterator[Any], cast(Any, sw).read_packets(
            eth_types=self.packet_in_types, queue_size=1000))
        async for pkt in packets:
            port = int(pkt.metadata.get("ingress_port", 0))
            got = self.on_packet_in(sw.name, port, pkt.payload)
            if got is not None:
                await got

    async def reconcile(self, name: str, reason: str) -> Reconcile:
        """Read `name` back, diff with the intent, write the difference."""
        async with self._locks[name]:
            t0 = time.monotonic()
            current = await self.read_state(name)
            d = diff(self.intent.for_switch(name), current)
            await self._write(name, d, reason)
            result = Reconcile(switch=name, reason=reason, counts=d.counts(),
                               seconds=time.monotonic() - t0, at=time.time())
        self.last[name] = result
        self.on_event("reconciled", result.to_json())
        return result

    async def apply(self, reason: str, names: Iterable[str] | None = None) -> dict[str, Reconcile]:
        """Reconcile every (named) ready switch in parallel; the intent changed."""
        wanted = [n for n in (names or self.switches) if self.is_ready(n)]
        results = await asyncio.gather(*(self.reconcile(n, reason) for n in wanted))
        return {r.switch: r for r in results}

    async def _write(self, name: str, d: Diff, reason: str) -> None:
        if d.empty:
            return
        sw = self.switches[name]
        writes = d.updates()
        for start in range(0, len(writes), WRITE_BATCH):
            chunk = writes[start:start + WRITE_BATCH]
            try:
                updates = [update(kind, e) for kind, e in chunk]
                if self.write_log is not None:
                    schema = self.schema(name)
                    self.write_log.record(name, reason,
                                          [u.encode_update(schema) for u in updates])
                await sw.write(updates)
            except P4ClientError as exc:
                raise write_error(name, exc, [f"{k.upper()} {describe(e)}" for k, e in chunk]) \
                    from None
            except (ValueError, KeyError, TypeError, OverflowError):
                # finsy could not encode one of them: say which, before anything is sent
                schema = self.schema(name)
                for _kind, e in chunk:
                    encode(e, schema)
                raise

    async def write(self, name: str, kind: str, entities: Sequence[Entity]) -> None:
        """Write entities outside the intent (tests, experiments); raises `WriteError`."""
        d = Diff(inserts=tuple(entities)) if kind == "insert" else (
            Diff(modifies=tuple(entities)) if kind == "modify" else Diff(deletes=tuple(entities)))
        async with self._locks[name]:
            await self._write(name, d, "direct")

    # --- reads -----------------------------------------------------------------

    def schema(self, name: str) -> fy.P4Schema:
        """The P4Info of `name`'s program, as finsy's schema."""
        return self.switches[name].p4info

    async def _read(self, name: str, entities: list[Any]) -> list[Any]:
        sw = self.switches[name]
        if not sw.is_up:
            raise P4RuntimeError(f"{name}: the P4Runtime session is down", "UNAVAILABLE")
        try:
            reply = cast(AsyncIterator[Any], cast(Any, sw).read(entities))
            return [e async for e in reply]
        except P4ClientError as exc:
            raise P4RuntimeError(f"{name}: Read failed: {exc.code.name}: {exc.message}",
                                 exc.code.name) from None

    async def read_state(self, name: str) -> list[Entity]:
        """Members, groups, owned tables' entries, default actions and clone sessions the
        switch holds."""
        schema = self.schema(name)
        present = {t.name for t in schema.tables}
        reads: list[Any] = [fy.P4ActionProfileMember(NAMES["selector"]),
                            fy.P4ActionProfileGroup(NAMES["selector"])]
        reads += [fy.P4TableEntry(t) for t in OWNED_TABLES if t in present]
        reads.append(fy.P4TableEntry(NAMES["config_table"], is_default_action=True))
        reads.append(fy.P4CloneSessionEntry())  # every clone session (PFC frames')
        out: list[Entity] = []
        for e in await self._read(name, reads):
            if isinstance(e, fy.P4TableEntry) and e.is_const:
                continue
            out.append(from_finsy(e, schema))
        return out

    async def read_table(self, name: str, table: str) -> list[TableEntry]:
        """Every entry of `table` that `name` holds, read now."""
        schema = self.schema(name)
        got = await self._read(name, [fy.P4TableEntry(table)])
        return [x for x in (from_finsy(e, schema) for e in got) if isinstance(x, TableEntry)]

    async def read_counters(self, name: str, counter: str,
                            indexes: Iterable[int]) -> dict[int, CounterCell]:
        """The cells `indexes` of an indexed counter (one Read for all of them)."""
        return (await self.read_counter_sets(name, {counter: indexes}))[counter]

    async def read_counter_sets(self, name: str, wanted: Mapping[str, Iterable[int]]
                                ) -> dict[str, dict[int, CounterCell]]:
        """The cells of several indexed counters (counter -> indexes) in one Read: each
        counter's cells by index, empty for a counter the program does not have."""
        schema = self.schema(name)
        out: dict[str, dict[int, CounterCell]] = {c: {} for c in wanted}
        # finsy names what it read by the counter's alias: back to the name asked for
        named = {schema.counters[c].alias: c for c in wanted if schema.counters.get(c) is not None}
        reads = [fy.P4CounterEntry(c, index=i) for c in named.values() for i in wanted[c]]
        if not reads:
            return out
        for e in await self._read(name, reads):
            data = e.data
            out[named[e.counter_id]][e.index] = CounterCell(
                index=e.index, packets=data.packet_count if data else 0,
                bytes=data.byte_count if data else 0)
        return out

    async def read_registers(self, name: str, register: str,
                             indexes: Iterable[int]) -> dict[int, int]:
        """The cells `indexes` of a register; empty when the program or the target has none."""
        return (await self.read_register_sets(name, {register: indexes}))[register]

    async def read_register_sets(self, name: str, wanted: Mapping[str, Iterable[int]]
                                 ) -> dict[str, dict[int, int]]:
        """The cells of several registers (register -> indexes) in one Read: each register's
        values by index, empty for one the program or the target does not have.

        BMv2's P4Runtime server does not serve register entries (UNIMPLEMENTED):
        such a switch is remembered and not asked again.
        """
        schema = self.schema(name)
        out: dict[str, dict[int, int]] = {r: {} for r in wanted}
        if name in self._no_registers:
            return out
        named = {schema.registers[r].alias: r for r in wanted
                 if schema.registers.get(r) is not None}
        reads = [fy.P4RegisterEntry(r, index=i) for r in named.values() for i in wanted[r]]
        if not reads:
            return out
        try:
            got = await self._read(name, reads)
        except P4RuntimeError as exc:
            if exc.code == "UNIMPLEMENTED":
                self._no_registers.add(name)
                return out
            raise
        for e in got:
            out[named[e.register_id]][e.index] = _register_int(e.data)
        return out

    async def write_registers(self, name: str, register: str, values: dict[int, int]) -> None:
        """Set register cells (index -> value) in one Write; raises `WriteError`."""
        await self.write_register_sets(name, {register: values})

    async def write_register_sets(self, name: str, values: Mapping[str, dict[int, int]]) -> None:
        """Set the cells of several registers (register -> {index: value}) in one Write;
        raises `WriteError`.

        Nothing is written to a register the program does not have, nor on a
        target that serves none (see `read_register_sets`).
        """
        schema = self.schema(name)
        if name in self._no_registers:
            return
        updates = [~fy.P4RegisterEntry(r, index=i, data=v) for r, cells in values.items()
                   if schema.registers.get(r) is not None for i, v in cells.items()]
        if not updates:
            return
        sw = self.switches[name]
        try:
            await sw.write(updates)
        except P4ClientError as exc:
            raise WriteError(name, len(updates), [], exc.code.name) from None

    async def packet_out(self, name: str, frames: Sequence[tuple[int, bytes]]) -> None:
        """Send (port, frame) packet-outs through `name`, one after the other.

        One call per switch at a time: a gRPC stream takes one write at a
        time, so concurrent writes on one stream would break it.
        """
        sw = self.switches[name]
        if not sw.is_up or not frames:
            return
        async with self._out_locks[name]:
            await sw.write([fy.P4PacketOut(frame, egress_port=port, _pad=0)
                            for port, frame in frames])


def _register_int(data: Any) -> int:
    """A register cell as an int (finsy returns the P4Data value decoded)."""
    if data is None:
        return 0
    if isinstance(data, int):
        return data
    if isinstance(data, bytes):
        return int.from_bytes(data, "big")
    return int(data)
