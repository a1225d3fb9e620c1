"""One P4Runtime device: its pipeline configs, Write batches and Reads.

`DeviceRuntime` owns what SetForwardingPipelineConfig changes (the committed
and the saved `PipelineState`), builds Devices through a factory, and applies
Write updates and Read requests under one lock (so batches are strictly
serialisable). What the StreamChannel carries for the committed pipeline
(packet-in and packet-out, digests, idle timeouts) is its `stream`, a
`stream.DeviceStream`.

Consecutive TableEntry updates of one table go to the Device in one
`table_write_many` call (one lock, one dispatch) when the Device has it;
`roles.RoleAccess` limits what a configured role may write and read.

`gc_paused` holds the cyclic garbage collector off while a Read or a
Write runs. A Read allocates a bounded amount that reference counting frees;
a Write's new table objects are then looked at once, by the first young
collection after it, instead of by the collections the batch itself would
trigger, which include full ones over everything written since the last
commit: measured with bench/p4rt_write.py, batches of 1,000 then keep
~100k entries/s where unpaused runs dip to 65-75k.

Each commit ends with `refreeze_heap()`: the long-lived objects (the pipeline
and everything loaded with it) leave the collector's sight, so the full
collections that growing tables trigger stay short.

A Write that left many new objects ends with `settle_heap()`: one young
collection (the batch's cyclic garbage, if any, is freed) and the survivors,
mostly the table entries just written, frozen like the pipeline. Left to the
collector, each would be traversed again by the middle generation's
collection and by every full one: measured (gc callbacks around
bench/p4rt_write.py, 20,000 routes in batches of 100 and 500) 3-6 µs of
collector time per entry written, 0.5-1.4 µs once settled. Objects frozen this way that
later become cyclic garbage are freed by the next `refreeze_heap()`, which
runs at each commit and once settling has frozen REFREEZE_AFTER times what
the last one froze (objects live during a Write that die in a cycle later:
a stream's or a concurrent call's, few next to the entries).

Names defined here: `DeviceRuntime`, `DeviceFactory`, `load_program`,
`gc_paused`, `refreeze_heap`, `settle_heap`, `READ_CHUNK`.
"""

from __future__ import annotations

import functools
import gc
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf import text_format

from p4switch import ir
from p4switch.pipeline.state import Device, StateError
from p4switch.proto import p4i, p4r
from p4switch.server import tableentries
from p4switch.server.devconfig import DeviceConfigError, program_bytes
from p4switch.server.entities import READERS, READERS_INTO, WRITERS
from p4switch.server.pipeline_state import PipelineState
from p4switch.server.roles import RoleAccess, entity_p4_id
from p4switch.server.stream import DeviceStream, Transmit
from p4switch.translate import (
    FAILED_PRECONDITION,
    INTERNAL,
    INVALID_ARGUMENT,
    NOT_FOUND,
    OK,
    PERMISSION_DENIED,
    UNIMPLEMENTED,
    P4RTError,
    same_program,
)

log = logging.getLogger("p4switch.server")

DeviceFactory = Callable[[ir.Program, Transmit], Device]


def load_program(device_config: bytes) -> tuple[ir.Program, p4i.P4Info | None]:
    """Parse a device config, a p4switch program file bare or in a P4DeviceConfig (`devconfig`);
    returns the program and its embedded P4Info, if any."""
    try:
        program, p4info_text = ir.from_json(program_bytes(device_config))
    except (DeviceConfigError, ir.ProgramFileError) as e:
        raise P4RTError(INVALID_ARGUMENT, f"device config: {e}") from None
    except Exception as e:  # a corrupt file can fail anywhere in decoding
        raise P4RTError(INVALID_ARGUMENT, f"device config: corrupt program file ({e})") from None
    info: p4i.P4Info | None = None
    if p4info_text:
        info = p4i.P4Info()
        try:
            text_format.Parse(p4info_text, info)
        except text_format.ParseError as e:
            raise P4RTError(INVALID_ARGUMENT, f"device config: bad embedded P4Info ({e})") from None
    else:
        from p4switch.p4info import P4InfoError, build_p4info

        try:
            info = build_p4info(program)
        except P4InfoError as e:
            raise P4RTError(INVALID_ARGUMENT, f"device config: no P4Info can describe it ({e})") from None
    return program, info


READ_CHUNK = 1000  # entities per ReadResponse message


def _new_part(make: Callable[[], Any], which: str) -> Any:
    """A fresh entity's `which` part, for readers that fill responses in place."""
    return getattr(make(), which)

class _GcPause:
    """No cyclic garbage collection while a block runs (nests across threads).

    A class rather than a generator context manager: it is entered by every
    Write and Read, and costs a fifth as much.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._users == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._users += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0 and self._was_enabled:
                gc.enable()


gc_paused = _GcPause()


def refreeze_heap() -> None:
    """Collect once, then hide every live object from the cyclic collector (`gc.freeze`).

    A full collection traverses every tracked object of the process; with a
    pipeline, its generated code, protobuf descriptors and the port code that
    is 200k+ objects, about 0.1 s under the GIL, and table writes trigger one
    each time the objects they keep grow by a quarter. Frozen objects are not
    traversed, so full collections then cost in proportion to what was written
    since. Called at each commit: the previous pipeline's objects are unfrozen
    and collected first (a frozen cycle is never freed); what else was live at
    that moment and becomes cyclic garbage later waits for the next commit.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    _settled[0] = 0
    _settled[1] = gc.get_freeze_count()  # walks the frozen list: once per refreeze, not per write


# Objects frozen by settle_heap() since the last refreeze_heap() (counted as
# the young objects it found), and how many refreeze_heap() froze.
_settled = [0, 0]

# Young objects (allocations less deallocations since the last collection) a
# Write must leave for settle_heap() to run: about a hundred table entries.
SETTLE_AT = 512
# settle_heap() refreezes (one full collection) once it has frozen this many
# times what the last refreeze_heap() froze: a full traversal per so many
# objects written, and a bound on the cyclic garbage frozen meanwhile.
REFREEZE_AFTER = 4


def settle_heap() -> None:
    """After a Write that left SETTLE_AT or more young objects: collect the young
    generations once and freeze the survivors (see the module docstring).

    Called with the collector paused (it collects all the same), so that what
    it measures is the Write's allocations, before any automatic collection.
    """
    young = gc.get_count()[0]
    if young < SETTLE_AT:
        return
    _settled[0] += young
    if _settled[0] > REFREEZE_AFTER * _settled[1]:
        refreeze_heap()  # bounds the cyclic garbage frozen since (module docstring)
        return
    gc.collect(1)
    gc.freeze()


_TYPES = frozenset((p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE))


class DeviceRuntime:
    """The P4Runtime view of one device (see module docstring)."""

    def __init__(self, device_id: int, factory: DeviceFactory | None, *,
                 transmit: Transmit | None = None, cpu_port: int | None = None) -> None:
        self.device_id = device_id
        self.factory = factory
        self.lock = threading.RLock()
        self.saved: PipelineState | None = None
        self.stream = DeviceStream(self.lock, transmit=transmit, cpu_port=cpu_port)

    @property
    def committed(self) -> PipelineState | None:
        """The committed (forwarding) pipeline config, if any."""
        return self.stream.committed

    # -- pipeline configs ---------------------------------------------------

    def _make_state(self, config: p4r.ForwardingPipelineConfig, *, build_device: bool) -> PipelineState:
        if not config.HasField("p4info"):
            raise P4RTError(INVALID_ARGUMENT, "config has no P4Info")
        if not config.p4_device_config:
            raise P4RTError(INVALID_ARGUMENT, "config has no p4_device_config (a p4switch program file)")
        program, info = load_program(config.p4_device_config)
        if info is not None:
            diff = same_program(config.p4info, info)
            if diff:
                raise P4RTError(INVALID_ARGUMENT, diff)
        device = None
        if build_device:
            device = self._build_device(program)
        cookie = config.cookie.cookie if config.HasField("cookie") else None
        return PipelineState.build(config.p4info, config.p4_device_config, cookie, program, device)

    def _build_device(self, program: ir.Program) -> Device:
        if self.factory is None:
            raise P4RTError(INVALID_ARGUMENT, "this server has no pipeline to run programs")
        try:
            return self.factory(program, self.stream.device_output)
        except P4RTError:
            raise
        except Exception as e:
            raise P4RTError(INVALID_ARGUMENT, f"the pipeline cannot run this program: {e}") from None

    def set_pipeline(self, action: int, config: p4r.ForwardingPipelineConfig | None) -> None:
        """Carry out a SetForwardingPipelineConfig action (P4RTError when it cannot be)."""
        A = p4r.SetForwardingPipelineConfigRequest
        with self.lock:
            if action == A.VERIFY:
                self._make_state(config or p4r.ForwardingPipelineConfig(), build_device=False)
            elif action == A.VERIFY_AND_SAVE:
                # The saved config gets its own (not yet forwarding) Device: writes
                # between SAVE and COMMIT go there, and COMMIT makes it forward.
                self._drop(self.saved)
                self.saved = self._make_state(config or p4r.ForwardingPipelineConfig(), build_device=True)
            elif action == A.VERIFY_AND_COMMIT:
                st = self._make_state(config or p4r.ForwardingPipelineConfig(), build_device=True)
                self._drop(self.saved)  # a newer config replaces any saved one
                self.saved = None
                self._commit(st)
            elif action == A.COMMIT:
                if config is not None:
                    raise P4RTError(INVALID_ARGUMENT, "COMMIT takes no config")
                if self.saved is None:
                    raise P4RTError(NOT_FOUND, "no saved config to commit (VERIFY_AND_SAVE first)")
                st, self.saved = self.saved, None
                self._commit(st)
            elif action == A.RECONCILE_AND_COMMIT:
                raise P4RTError(UNIMPLEMENTED, "RECONCILE_AND_COMMIT is not supported by p4switch")
            else:
                raise P4RTError(INVALID_ARGUMENT, "unspecified SetForwardingPipelineConfig action")

    def install(self, device_config: bytes, p4info: p4i.P4Info | None = None) -> None:
        """Install a program given on the command line (no cookie, like any out-of-band config)."""
        program, info = load_program(device_config)
        info = p4info or info
        if info is None:
            raise P4RTError(INVALID_ARGUMENT, "the program file has no P4Info")
        with self.lock:
            st = PipelineState.build(info, device_config, None, program, self._build_device(program))
            self._commit(st)

    def _commit(self, st: PipelineState) -> None:
        old = self.committed
        self.stream.commit(st)
        log.info("device %d: pipeline committed (%d tables, cookie %s)", self.device_id,
                 len(st.p4info.tables), st.cookie)
        if old is not None and old is not st:
            self._drop(old)
        del old
        refreeze_heap()

    @staticmethod
    def _drop(st: PipelineState | None) -> None:
        if st is not None and st.device is not None:
            close = getattr(st.device, "close", None)
            if close is not None:
                close()

    def close(self) -> None:
        """Close the Devices of both configs and stop the stream's threads."""
        with self.lock:
            self._drop(self.saved)
            self._drop(self.committed)
            self.saved = self.stream.committed = None
        self.stream.close()

    def state_for_writes(self) -> PipelineState:
        """The config writes and reads go to: the saved one, else the committed one."""
        st = self.saved or self.committed
        if st is None:
            raise P4RTError(FAILED_PRECONDITION, "no forwarding pipeline config is set")
        return st

    def get_config(self, response_type: int) -> p4r.ForwardingPipelineConfig | None:
        """The parts of the current config a GetForwardingPipelineConfig asks for (None: no config)."""
        R = p4r.GetForwardingPipelineConfigRequest
        with self.lock:
            st = self.saved or self.committed
            if st is None:
                return None
            out = p4r.ForwardingPipelineConfig()
            if response_type in (R.ALL, R.P4INFO_AND_COOKIE):
                out.p4info.CopyFrom(st.p4info)
            if response_type in (R.ALL, R.DEVICE_CONFIG_AND_COOKIE):
                out.p4_device_config = st.device_config
            if st.cookie is not None:
                out.cookie.cookie = st.cookie
            return out

    # -- Write / Read -------------------------------------------------------

    def write(self, updates: Any, access: RoleAccess | None = None) -> list[P4RTError | None]:
        """Apply updates in order; one result per update (None: OK).

        `access`: the writing role's limits (None: full access).
        """
        n = len(updates)
        with self.lock, gc_paused:  # see the module docstring
            st = self.state_for_writes()
            many = getattr(st.device, "table_write_many", None)
            results = _Batch(st, n, access, many).run(updates)
            settle_heap()
            return results

    def read(self, entities: Any, access: RoleAccess | None = None
             ) -> tuple[list[p4r.ReadResponse], list[P4RTError | None]]:
        """Read responses of at most READ_CHUNK entities each, and one result per entity.

        Entities are filled in place in the responses (no per-entity copies); the
        part of a failed entity's answer that was already filled is taken back.
        `access` (a ReadRequest's role) narrows the answer to that role's entities.
        """
        chunks: list[p4r.ReadResponse] = [p4r.ReadResponse()]
        results: list[P4RTError | None] = []
        count = [0]

        def new_entity() -> p4r.Entity:
            """A fresh Entity in the current response, starting a new one when full."""
            if count[0] == READ_CHUNK:
                chunks.append(p4r.ReadResponse())
                count[0] = 0
            count[0] += 1
            return chunks[-1].entities.add()

        for i, ent in enumerate(entities):
            if not ent.WhichOneof("entity"):
                # a malformed request, not a failed read: the whole call is
                # INVALID_ARGUMENT (P4Runtime §12.2), as PI answers it
                raise P4RTError(INVALID_ARGUMENT, f"entity {i} of the ReadRequest has no entity set")
        with self.lock, gc_paused:
            st = self.state_for_writes()
            for ent in entities:
                which = ent.WhichOneof("entity")
                mark = (len(chunks), count[0])
                try:
                    if which is None:
                        raise P4RTError(INVALID_ARGUMENT, "entity is not set")
                    for msg in _narrow(st, which, getattr(ent, which), access):
                        into = READERS_INTO.get(which)
                        if into is not None:
                            into(st, msg, functools.partial(_new_part, new_entity, which))
                        else:
                            for e in READERS[which](st, msg):
                                getattr(new_entity(), which).CopyFrom(e)
                    results.append(None)
                except Exception as e:
                    del chunks[mark[0]:]
                    del chunks[-1].entities[mark[1]:]
                    count[0] = mark[1]
                    if isinstance(e, P4RTError):
                        results.append(e)
                    elif isinstance(e, StateError):
                        results.append(P4RTError(int(e.code), e.message))
                    else:
                        log.exception("read failed")
                        results.append(P4RTError(INTERNAL, f"internal error: {e}"))
        return chunks, results


class _Batch:
    """One Write request's updates applied in order (see DeviceRuntime.write).

    TableEntry updates that `tableentries.plan_table_update` can turn into plain
    Device operations are collected while they are consecutive and for the
    same table, then applied with one `table_write_many` call; anything else
    first flushes what was collected, so the order of the request is kept.
    """

    def __init__(self, st: PipelineState, n: int, access: RoleAccess | None, many: Any) -> None:
        self.st = st
        self.access = access
        self.many = many
        self.results: list[P4RTError | None] = [None] * n
        # the collected run: update indexes, their (op, entry) for the Device,
        # and the plans with something to do once applied (by index)
        self.indexes: list[int] = []
        self.ops: list[tuple[str, Any]] = []
        self.afters: dict[int, Callable[[], None]] = {}
        self.table = ""

    def run(self, updates: Any) -> list[P4RTError | None]:
        """Apply the updates in order; one result per update (None: OK)."""
        st, access, many, results = self.st, self.access, self.many, self.results
        writers = WRITERS
        plan_update = tableentries.plan_table_update
        types = _TYPES
        for i, u in enumerate(updates):
            try:
                ent = u.entity
                # HasField costs half a WhichOneof: ask for the common entity first
                which = "table_entry" if ent.HasField("table_entry") else ent.WhichOneof("entity")
                if which is None:
                    raise P4RTError(INVALID_ARGUMENT, "update has no entity")
                utype = u.type
                if utype not in types:
                    raise P4RTError(INVALID_ARGUMENT, "update type must be INSERT, MODIFY or DELETE")
                msg = ent.table_entry if which == "table_entry" else getattr(ent, which)
                if access is not None and not access.allows(entity_p4_id(which, msg)):
                    raise P4RTError(PERMISSION_DENIED, f"{which} is not in the scope of this role")
                if many is not None and which == "table_entry":
                    plan = plan_update(st, utype, msg)
                    if plan is not None:
                        table, op, entry, after = plan
                        if table != self.table:
                            if self.ops:
                                self.flush()
                            self.table = table
                        self.indexes.append(i)
                        self.ops.append((op, entry))
                        if after is not None:
                            self.afters[i] = after
                        continue
                if self.ops:
                    self.flush()
                writers[which](st, utype, msg)
            except P4RTError as e:
                results[i] = e
            except StateError as e:
                results[i] = P4RTError(int(e.code), e.message)
            except Exception as e:  # a bug must not take the server down
                log.exception("write failed")
                results[i] = P4RTError(INTERNAL, f"internal error: {e}")
        if self.ops:
            self.flush()
        return results

    def flush(self) -> None:
        """Apply the collected TableEntry updates with one `table_write_many` call."""
        # taken first: whatever happens below, these ops are not applied twice
        indexes, ops, afters = self.indexes, self.ops, self.afters
        if not ops:
            return
        self.indexes, self.ops, self.afters = [], [], {}
        try:
            errors = self.many(self.table, ops)
        except StateError as e:  # the whole call refused (e.g. no such table)
            errors = [e] * len(ops)
        results = self.results
        for i, err in zip(indexes, errors, strict=True):
            if err is None:
                if afters:
                    after = afters.get(i)
                    if after is not None:
                        after()
            else:
                results[i] = P4RTError(int(err.code), err.message)


def _narrow(st: PipelineState, which: str, msg: Any, access: RoleAccess | None) -> list[Any]:
    """The read requests to answer for one entity: itself, or with a role only that role's part
    (a wildcard becomes one request per P4 object of the role)."""
    if access is None:
        return [msg]
    pid = entity_p4_id(which, msg)
    if pid is None:
        return []  # no P4 id: outside every configured role
    if pid:
        return [msg] if access.allows(pid) else []
    field = {"direct_counter_entry": None, "direct_meter_entry": None}.get(which, "")
    indexes: dict[str, Mapping[int, Any]] = {
        "table_entry": st.index.tables, "action_profile_member": st.index.profiles,
        "action_profile_group": st.index.profiles, "counter_entry": st.index.counters,
        "meter_entry": st.index.meters, "register_entry": st.index.registers,
        "digest_entry": st.index.digests, "value_set_entry": st.index.value_sets,
        "direct_counter_entry": st.index.table_counter, "direct_meter_entry": st.index.table_meter,
    }
    ids = indexes.get(which, {})
    out = []
    for oid in sorted(ids):
        if not access.allows(oid):
            continue
        one = type(msg)()
        one.CopyFrom(msg)
        if field is None:
            one.table_entry.table_id = oid
        else:
            setattr(one, _ID_FIELDS[which], oid)
        out.append(one)
    return out


_ID_FIELDS = {
    "table_entry": "table_id", "action_profile_member": "action_profile_id",
    "action_profile_group": "action_profile_id", "counter_entry": "counter_id",
    "meter_entry": "meter_id", "register_entry": "register_id", "digest_entry": "digest_id",
    "value_set_entry": "value_set_id", "extern_entry": "extern_id",
}

__all__ = ["DeviceRuntime", "DeviceFactory", "load_program", "gc_paused", "refreeze_heap",
           "settle_heap", "SETTLE_AT", "REFREEZE_AFTER", "READ_CHUNK", "OK"]
