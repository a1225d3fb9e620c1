"""TableEntry: validation, writes and reads of a P4Runtime table's entries.

Translates P4Runtime table entries into `p4switch.pipeline.state.TableEntry`
(checking every rule of P4Runtime spec §9.1 first, so a refused update never
reaches the device) and back for reads, in canonical form. The direct
counters and meters of these entries are `directentries`.

Names defined here: `write_table_entry`, `plan_table_update`, `Plan`, `read_table_entries`,
`read_table_entries_into`, `decode_match`, `decode_action`, `encode_action`,
`encode_entry`, `find_entry`, `needs_priority`, `set_direct`,
`default_direct_supported`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from p4switch.pipeline.state import ActionCall, Device, FieldMatch, TableEntry
from p4switch.proto import p4i, p4r
from p4switch.server import codecs
from p4switch.server.codecs import TableCodec
from p4switch.server.pipeline_state import PipelineState, entry_key
from p4switch.translate import (
    INTERNAL,
    NOT_FOUND,
    PERMISSION_DENIED,
    UNIMPLEMENTED,
    P4RTError,
    invalid,
)

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


# --------------------------------------------------------------------------
# P4Runtime -> state
# --------------------------------------------------------------------------


def _codec(st: PipelineState, table_id: int) -> TableCodec:
    tc = st.tcodec.get(table_id)
    if tc is None:
        st.index.table(table_id)  # raises the spec's error for an unknown id
    return tc  # type: ignore[return-value]


def decode_match(st: PipelineState, t: p4i.Table, fields: Any) -> dict[int, FieldMatch]:
    """The key of an entry, canonical, by key position; don't-care fields are absent."""
    return codecs.decode_match(st.tcodec[t.preamble.id], fields)


def needs_priority(st: PipelineState, t: p4i.Table) -> bool:
    """Whether entries of `t` need a priority (a ternary, range or optional field)."""
    return st.tcodec[t.preamble.id].needs_priority


def decode_action(st: PipelineState, t: p4i.Table | None, action: p4r.Action,
                  *, default: bool = False) -> ActionCall:
    """An Action spec, checked against the table's action refs and scopes."""
    tc = st.tcodec[t.preamble.id] if t is not None else None
    return codecs.decode_action(tc, st.acodec, action, default=default)


def _meter_tuple(cfg: p4r.MeterConfig) -> tuple[int, int, int, int]:
    if cfg.eburst:
        raise invalid("eburst is only valid for single-rate meters")
    for name in ("cir", "cburst", "pir", "pburst"):
        if getattr(cfg, name) < 0:
            raise invalid(f"meter {name} is negative")
    return (cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)


def _check_meter_counter_data(data: p4r.MeterCounterData) -> None:
    for color in (data.green, data.yellow, data.red):
        if color.byte_count or color.packet_count:
            raise invalid("meter_counter_data may only reset counters to zero")


# --------------------------------------------------------------------------
# state -> P4Runtime
# --------------------------------------------------------------------------


def encode_action(st: PipelineState, call: ActionCall) -> p4r.Action:
    """A pipeline ActionCall as a P4Runtime Action (P4Info ids, canonical values)."""
    msg = p4r.Action()
    _encode_action_into(st, call, msg)
    return msg


def _encode_action_into(st: PipelineState, call: ActionCall, msg: p4r.Action) -> None:
    a = st.acodec_by_name.get(call.action)
    if a is None:
        raise P4RTError(INTERNAL, f"pipeline action {call.action!r} is not in the P4Info")
    codecs.encode_action_into(a, call, msg)


def encode_entry(st: PipelineState, t: p4i.Table, e: TableEntry, req: p4r.TableEntry,
                 out: p4r.TableEntry | None = None) -> p4r.TableEntry:
    """A pipeline entry as P4Runtime (filled into `out` when given); direct resources
    only when the request asks for them."""
    tc = st.tcodec[t.preamble.id]
    if out is None:
        out = p4r.TableEntry()
    out.table_id = tc.id
    if e.is_default:
        out.is_default_action = True
    else:
        if e.match:
            codecs.encode_match_into(tc, e.match, out)
        if e.priority:
            out.priority = e.priority
    if e.action is not None:
        _encode_action_into(st, e.action, out.action.action)
    elif e.member_id is not None:
        out.action.action_profile_member_id = e.member_id
    elif e.group_id is not None:
        out.action.action_profile_group_id = e.group_id
    elif e.action_set is not None:
        aset = out.action.action_profile_action_set
        for call, weight in e.action_set:
            apa = aset.action_profile_actions.add(weight=weight)
            _encode_action_into(st, call, apa.action)
    if e.metadata:
        out.metadata = e.metadata
    if e.idle_timeout_ns:
        out.idle_timeout_ns = e.idle_timeout_ns
    if st.controller_metadata and not e.is_default:
        cm = st.controller_metadata.get((tc.id, entry_key(e.match, e.priority)))
        if cm:
            out.controller_metadata = cm
    if tc.is_const and not e.is_default:
        out.is_const = True
    if tc.counter and req.HasField("counter_data"):
        out.counter_data.packet_count = e.counter_packets
        out.counter_data.byte_count = e.counter_bytes
    if tc.meter and e.meter_config and req.HasField("meter_config"):
        cir, cburst, pir, pburst = e.meter_config
        mc = out.meter_config
        mc.cir, mc.cburst, mc.pir, mc.pburst = cir, cburst, pir, pburst
    if req.HasField("time_since_last_hit"):
        out.time_since_last_hit.elapsed_ns = _elapsed_ns(st, tc, e)
    return out


def _elapsed_ns(st: PipelineState, tc: TableCodec, e: TableEntry) -> int:
    """Time since the entry was last hit (or installed), from the pipeline when it records hits."""
    last = getattr(e, "last_hit_ns", None)
    if last is None:
        return 0
    return max(0, time.monotonic_ns() - last)


# --------------------------------------------------------------------------
# Writes
# --------------------------------------------------------------------------


def _device(st: PipelineState) -> Device:
    assert st.device is not None
    return st.device


def _entries(st: PipelineState, table: str) -> Iterable[TableEntry]:
    """The table's entries, as the Device's own objects when it can hand them out without copies
    (`table_entries(table, copy=False)`); the caller holds the runtime lock and only reads them."""
    fast = st.extra.get("entries_nocopy")
    dev = _device(st)
    if fast is None:
        try:
            fast = "copy" in inspect.signature(dev.table_entries).parameters
        except (TypeError, ValueError):
            fast = False
        st.extra["entries_nocopy"] = fast
    return dev.table_entries(table, copy=False) if fast else dev.table_entries(table)


def find_entry(st: PipelineState, t: p4i.Table, match: dict[int, FieldMatch], priority: int) -> TableEntry:
    """The live entry with this key (with counters), or NOT_FOUND."""
    key = entry_key(match, priority)
    for e in _entries(st, t.preamble.name):
        if not e.is_default and entry_key(e.match, e.priority) == key:
            return e
    raise P4RTError(NOT_FOUND, f"table {t.preamble.name!r}: no entry with this key")


def _decode_table_action(st: PipelineState, tc: TableCodec, ta: p4r.TableAction, entry: TableEntry) -> None:
    which = ta.WhichOneof("type")
    impl = tc.impl_id
    if which is None:
        raise invalid("table action is empty")
    if impl == 0:
        if which != "action":
            raise invalid(f"table {tc.name!r} is direct: use an action, not {which}")
        entry.action = codecs.decode_action(tc, st.acodec, ta.action)
        return
    prof = st.index.profile(impl)
    pid = prof.preamble.id
    if which == "action":
        raise invalid(f"table {tc.name!r} is indirect: use a member, group or action set")
    style = "oneshot" if which == "action_profile_action_set" else "members"
    if st.profile_style.get(pid, style) != style:
        raise invalid(f"action profile {prof.preamble.name!r} is programmed with "
                      f"{st.profile_style[pid]} entries; do not mix one-shot and member/group styles")
    if which == "action_profile_member_id":
        entry.member_id = ta.action_profile_member_id
    elif which == "action_profile_group_id":
        if not prof.with_selector:
            raise invalid(f"action profile {prof.preamble.name!r} has no selector: groups are not allowed")
        entry.group_id = ta.action_profile_group_id
    else:
        if not prof.with_selector:
            raise invalid(f"action profile {prof.preamble.name!r} has no selector: action sets are not allowed")
        actions = []
        total = 0
        for apa in ta.action_profile_action_set.action_profile_actions:
            if apa.weight <= 0:
                raise invalid("action profile action weight must be positive")
            if apa.watch_port:
                raise P4RTError(UNIMPLEMENTED, "watch_port is not supported")
            actions.append((codecs.decode_action(tc, st.acodec, apa.action), apa.weight))
            total += apa.weight
        if not actions:
            raise invalid("one-shot action set is empty")
        if prof.max_group_size:
            size = len(actions) if prof.HasField("sum_of_members") else total
            if size > prof.max_group_size:
                raise invalid(f"one-shot action set exceeds max_group_size {prof.max_group_size}")
        entry.action_set = tuple(actions)


def _direct_resources(st: PipelineState, tc: TableCodec, msg: p4r.TableEntry) -> dict:
    """The direct counter/meter writes a TableEntry asks for, checked, as set_direct() options."""
    out: dict = {}
    if msg.HasField("counter_data"):
        if not tc.counter:
            raise invalid(f"table {tc.name!r} has no direct counter")
        out["packets"] = msg.counter_data.packet_count
        out["bytes_"] = msg.counter_data.byte_count
    if msg.HasField("meter_config"):
        if not tc.meter:
            raise invalid(f"table {tc.name!r} has no direct meter")
        out["meter_config"] = _meter_tuple(msg.meter_config)
    elif tc.meter:
        out["meter_config"] = None  # unset in a write: the default (all GREEN) config
    if msg.HasField("meter_counter_data"):
        if not tc.meter:
            raise invalid(f"table {tc.name!r} has no direct meter")
        _check_meter_counter_data(msg.meter_counter_data)
    return out


def set_direct(st: PipelineState, t: p4i.Table, entry: TableEntry, **kw: Any) -> None:
    """Write the direct counter (`packets`, `bytes_`) / meter (`meter_config`) of an entry.

    Devices keep direct resources across table_modify and write them with
    `direct_counter_write` / `direct_meter_set`; a device without those is
    treated as full-snapshot: modify with the values set.
    """
    if not kw:
        return
    dev = _device(st)
    name = t.preamble.name
    counter = getattr(dev, "direct_counter_write", None)
    meter = getattr(dev, "direct_meter_set", None)
    if counter is not None and meter is not None:
        if "packets" in kw:
            counter(name, entry, kw["packets"], kw["bytes_"])
        if "meter_config" in kw:
            meter(name, entry, kw["meter_config"])
        return
    live = find_entry(st, t, entry.match, entry.priority)
    if "packets" in kw:
        live.counter_packets, live.counter_bytes = kw["packets"], kw["bytes_"]
    if "meter_config" in kw:
        live.meter_config = kw["meter_config"]
    dev.table_modify(name, live)


def _check_fields(tc: TableCodec, msg: p4r.TableEntry) -> None:
    """Fields a written TableEntry must not set (§9.1)."""
    if msg.is_const:
        raise invalid("is_const must be false in a write")
    if msg.HasField("time_since_last_hit"):
        raise invalid("time_since_last_hit must be unset in a write")
    if msg.idle_timeout_ns and not tc.idle_ok:
        raise invalid(f"table {tc.name!r} does not support idle timeout")


def _entry_key(st: PipelineState, tc: TableCodec, utype: int, msg: p4r.TableEntry, has_action: bool
               ) -> tuple[dict[int, FieldMatch], int, tuple | None]:
    """Match, priority and controller_metadata key of a non-default entry, checked."""
    name = tc.name
    if tc.keyless and utype == INSERT:
        raise invalid(f"table {name!r} is keyless: only its default entry can be set")
    match = codecs.decode_match(tc, msg.match)
    priority = msg.priority
    if tc.needs_priority:
        if priority <= 0:
            raise invalid(f"table {name!r} needs a positive priority (ternary/range/optional key)")
    elif priority != 0:
        raise invalid(f"table {name!r} has no ternary/range/optional key: priority must be 0")
    if tc.is_const and (utype != MODIFY or has_action):
        raise P4RTError(PERMISSION_DENIED, f"table {name!r} is const")
    # controller_metadata is P4Runtime-only state, keyed by the entry; most
    # controllers never set it, so the key is only built when it matters.
    key = (tc.id, entry_key(match, priority)) if msg.controller_metadata or st.controller_metadata else None
    return match, priority, key


def _set_cmeta(st: PipelineState, key: tuple | None, cmeta: int) -> None:
    if key is not None:
        if cmeta:
            st.controller_metadata[key] = cmeta
        else:
            st.controller_metadata.pop(key, None)


# One TableEntry update as a Device operation: (table, op, entry, after) — `op`
# ("insert" | "modify" | "delete") of `entry` on `table`, and `after()` (or
# None) to run once the Device applied it. A plain tuple: one is built per
# update of a batch, and a class's __init__ costs several times as much.
Plan = tuple[str, str, TableEntry, Callable[[], None] | None]


def plan_table_update(st: PipelineState, utype: int, msg: p4r.TableEntry) -> Plan | None:
    """A checked TableEntry update as one Device operation, for `table_write_many`.

    None when the update needs `write_table_entry` (the default entry, a MODIFY
    that keeps the action or sets direct resources, the first entry of an
    action profile). Raises P4RTError exactly as `write_table_entry` would.
    This is the per-entry cost of a large batch, hence written out flat.
    """
    tc = st.tcodec.get(msg.table_id)
    if tc is None or msg.is_default_action:
        return None
    has_action = msg.HasField("action")
    if utype == MODIFY and (not has_action or tc.meter or msg.HasField("counter_data")):
        return None
    impl = tc.impl_id
    if impl and impl not in st.profile_style:
        return None
    if msg.is_const or msg.HasField("time_since_last_hit") or (msg.idle_timeout_ns and not tc.idle_ok):
        _check_fields(tc, msg)  # raises the precise error
    if tc.keyless or tc.is_const:
        match, priority, key = _entry_key(st, tc, utype, msg, has_action)
    else:
        match = codecs.decode_match(tc, msg.match)
        priority = msg.priority
        if tc.needs_priority:
            if priority <= 0:
                raise invalid(f"table {tc.name!r} needs a positive priority (ternary/range/optional key)")
        elif priority:
            raise invalid(f"table {tc.name!r} has no ternary/range/optional key: priority must be 0")
        cmeta = msg.controller_metadata
        key = (tc.id, entry_key(match, priority)) if cmeta or st.controller_metadata else None
    after = None
    if key is not None:
        cmeta = 0 if utype == DELETE else msg.controller_metadata
        after = lambda: _set_cmeta(st, key, cmeta)  # noqa: E731
    if utype == DELETE:
        return (tc.name, "delete", TableEntry(match=match, priority=priority), after)
    entry = TableEntry(match=match, priority=priority, idle_timeout_ns=msg.idle_timeout_ns,
                       metadata=msg.metadata)
    # A meter always has a config to write (unset: the default); otherwise only the
    # fields the entry sets ask for anything (or, on a table without, raise).
    if tc.meter or msg.HasField("counter_data") or msg.HasField("meter_config") \
            or msg.HasField("meter_counter_data"):
        direct = _direct_resources(st, tc, msg)
    else:
        direct = None
    if utype == INSERT:
        if not has_action:
            raise invalid("INSERT needs an action")
        if impl:
            _decode_table_action(st, tc, msg.action, entry)
        else:
            ta = msg.action
            if not ta.HasField("action"):  # HasField: half the cost of WhichOneof
                _decode_table_action(st, tc, ta, entry)  # raises the precise error
            entry.action = codecs.decode_action(tc, st.acodec, ta.action)
        if direct:
            entry.counter_packets = direct.get("packets", 0)
            entry.counter_bytes = direct.get("bytes_", 0)
            entry.meter_config = direct.get("meter_config")
        return (tc.name, "insert", entry, after)
    _decode_table_action(st, tc, msg.action, entry)
    return (tc.name, "modify", entry, after)


def write_table_entry(st: PipelineState, utype: int, msg: p4r.TableEntry) -> None:
    """Apply one TableEntry update (INSERT, MODIFY or DELETE), default entries included."""
    tc = _codec(st, msg.table_id)
    name = tc.name
    dev = _device(st)
    _check_fields(tc, msg)
    if msg.is_default_action:
        _write_default(st, tc, utype, msg)
        return
    has_action = msg.HasField("action")
    match, priority, key = _entry_key(st, tc, utype, msg, has_action)
    if utype == DELETE:
        dev.table_delete(name, TableEntry(match=match, priority=priority))
        _set_cmeta(st, key, 0)
        return

    entry = TableEntry(match=match, priority=priority, idle_timeout_ns=msg.idle_timeout_ns,
                       metadata=msg.metadata)
    direct = _direct_resources(st, tc, msg)
    if utype == INSERT:
        if not has_action:
            raise invalid("INSERT needs an action")
        _decode_table_action(st, tc, msg.action, entry)
        if direct:
            entry.counter_packets = direct.get("packets", 0)
            entry.counter_bytes = direct.get("bytes_", 0)
            entry.meter_config = direct.get("meter_config")
        dev.table_insert(name, entry)
    elif utype == MODIFY:
        if has_action:
            _decode_table_action(st, tc, msg.action, entry)
        else:
            # Keep the entry's action (e.g. only its direct resources change).
            live = find_entry(st, tc.table, match, priority)
            entry.action, entry.member_id, entry.group_id, entry.action_set = (
                live.action, live.member_id, live.group_id, live.action_set)
        # meter_config None: the device keeps the entry's meter; set_direct() then
        # applies what the request says (a config, or the default when unset).
        dev.table_modify(name, entry)
        set_direct(st, tc.table, entry, **direct)
    else:
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    if tc.impl_id and (entry.action_set is not None or entry.member_id is not None
                       or entry.group_id is not None):
        st.profile_style.setdefault(tc.impl_id, "oneshot" if entry.action_set is not None else "members")
    _set_cmeta(st, key, msg.controller_metadata)


def default_direct_supported(dev: object) -> bool:
    """Whether the Device keeps direct counters/meters on the default entry (it counts misses).

    p4switch's Switch does since it has `table_write_many`: `table_default()` then
    carries the miss counters and meter config, and `direct_counter_write` /
    `direct_meter_set` accept the default entry (`is_default`).
    """
    return hasattr(dev, "table_write_many") and hasattr(dev, "direct_counter_write") \
        and hasattr(dev, "direct_meter_set")


def _default_entry() -> TableEntry:
    return TableEntry(match={}, is_default=True)


def _write_default(st: PipelineState, tc: TableCodec, utype: int, msg: p4r.TableEntry) -> None:
    """MODIFY of the default entry (§9.1.4): its action (unset: the program's, with direct
    resource configs back to their defaults) and its direct resources, checked before anything
    changes."""
    name = tc.name
    dev = _device(st)
    if msg.match or msg.priority:
        raise invalid("the default entry has no match and priority 0")
    if utype != MODIFY:
        raise invalid("the default entry can only be modified")
    if msg.idle_timeout_ns:
        raise invalid("the default entry has no idle timeout")
    wants_direct = msg.HasField("counter_data") or msg.HasField("meter_config") \
        or msg.HasField("meter_counter_data")
    direct = _direct_resources(st, tc, msg) if (wants_direct or tc.meter) else {}
    supported = default_direct_supported(dev)
    if wants_direct and not supported:
        raise P4RTError(UNIMPLEMENTED, "direct counters/meters of the default entry are not "
                                       "supported by this pipeline (it does not count misses)")
    if tc.const_default:
        raise P4RTError(PERMISSION_DENIED, f"table {name!r} has a const default action")
    call = None
    if msg.HasField("action"):
        if tc.impl_id:
            raise P4RTError(PERMISSION_DENIED,
                            f"table {name!r} is indirect: its default action is const NoAction")
        if msg.action.WhichOneof("type") != "action":
            raise invalid("the default entry of a direct table takes an action")
        call = codecs.decode_action(tc, st.acodec, msg.action.action, default=True)
    if supported and direct:
        entry = _default_entry()
        if "meter_config" in direct:  # unset in a MODIFY (or a reset): the default, all GREEN
            dev.direct_meter_set(name, entry, direct["meter_config"])
        if "packets" in direct:
            dev.direct_counter_write(name, entry, direct["packets"], direct["bytes_"])
    dev.table_set_default(name, call)  # None: back to the program's default


# --------------------------------------------------------------------------
# Reads
# --------------------------------------------------------------------------


def read_table_entries_into(st: PipelineState, req: p4r.TableEntry,
                            new: Callable[[], p4r.TableEntry]) -> None:
    """Answer a TableEntry read: each match is filled into a fresh message from `new()`."""
    dev = _device(st)
    if req.table_id == 0:
        for t in st.p4info.tables:
            for e in _entries(st, t.preamble.name):
                if not e.is_default:
                    encode_entry(st, t, e, req, new())
        return
    tc = _codec(st, req.table_id)
    t = tc.table
    if req.is_default_action:
        encode_entry(st, t, dev.table_default(tc.name), req, new())
        return
    key = entry_key(codecs.decode_match(tc, req.match), req.priority) if req.match else None
    # Filters, checked on the pipeline's entry before anything is encoded.
    want_action = None
    if req.action.WhichOneof("type") == "action":
        a = st.acodec.get(req.action.action.action_id)
        want_action = a.name if a is not None else ""
    want_prio, want_meta, want_cm = req.priority, req.metadata, req.controller_metadata
    for e in _entries(st, tc.name):
        if e.is_default:
            continue
        if key is not None and entry_key(e.match, e.priority) != key:
            continue
        if want_prio and e.priority != want_prio:
            continue
        if want_meta and e.metadata != want_meta:
            continue
        if want_action is not None and (e.action is None or e.action.action != want_action):
            continue
        if want_cm and st.controller_metadata.get((tc.id, entry_key(e.match, e.priority))) != want_cm:
            continue
        encode_entry(st, t, e, req, new())


def read_table_entries(st: PipelineState, req: p4r.TableEntry) -> Iterator[p4r.TableEntry]:
    """Answer a TableEntry read: the matching entries as fresh messages."""
    out: list[p4r.TableEntry] = []

    def new() -> p4r.TableEntry:
        """A fresh TableEntry, appended to the answer."""
        out.append(p4r.TableEntry())
        return out[-1]

    read_table_entries_into(st, req, new)
    return iter(out)


__all__ = ["write_table_entry", "plan_table_update", "Plan", "read_table_entries",
           "read_table_entries_into", "decode_match", "decode_action", "encode_action",
           "encode_entry", "find_entry", "needs_priority", "set_direct",
           "default_direct_supported"]
