"""TableEntry, DirectCounterEntry and DirectMeterEntry: validation, writes, reads.

Translates P4Runtime table entries into `p4switch.pipeline.state.TableEntry`
(checking every rule of P4Runtime spec §9.1 first, so a refused update never
reaches the device) and back for reads, in canonical form.

Names defined here: `write_table_entry`, `read_table_entries`,
`write_direct_counter`, `read_direct_counters`, `write_direct_meter`,
`read_direct_meters`.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4switch.pipeline.state import ActionCall, FieldMatch, TableEntry
from p4switch.proto import p4i, p4r
from p4switch.server.pipeline_state import PipelineState, entry_key
from p4switch.translate import (
    INVALID_ARGUMENT,
    NOT_FOUND,
    PERMISSION_DENIED,
    P4RTError,
    decode_value,
    encode_value,
    invalid,
)

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
_NEEDS_PRIORITY = {"ternary", "range", "optional"}


# --------------------------------------------------------------------------
# P4Runtime -> state
# --------------------------------------------------------------------------


def decode_match(st: PipelineState, t: p4i.Table, fields) -> dict[int, FieldMatch]:
    """The key of an entry, canonical, by key position; don't-care fields are absent."""
    tid = t.preamble.id
    known = st.index.match_fields[tid]
    pos = st.key_pos[tid]
    out: dict[int, FieldMatch] = {}
    seen: set[int] = set()
    for fm in fields:
        if fm.field_id not in known:
            raise invalid(f"table {t.preamble.name!r} has no match field id {fm.field_id}")
        if fm.field_id in seen:
            raise invalid(f"match field id {fm.field_id} given twice")
        seen.add(fm.field_id)
        _, mf = known[fm.field_id]
        kind = st.index.match_type(mf)
        which = fm.WhichOneof("field_match_type")
        if which != kind:
            raise invalid(f"match field {mf.name!r} is {kind}, got {which}")
        w = mf.bitwidth
        what = f"match field {mf.name!r}"
        if kind == "exact":
            out[pos[fm.field_id]] = FieldMatch(kind="exact", value=decode_value(fm.exact.value, w, what))
        elif kind == "optional":
            out[pos[fm.field_id]] = FieldMatch(kind="optional", value=decode_value(fm.optional.value, w, what))
        elif kind == "lpm":
            plen = fm.lpm.prefix_len
            value = decode_value(fm.lpm.value, w, what)
            if plen <= 0 or plen > w:
                raise invalid(f"{what}: prefix length {plen} not in 1..{w} (omit don't-care fields)")
            if value & ((1 << (w - plen)) - 1):
                raise invalid(f"{what}: value has bits set beyond the /{plen} prefix")
            out[pos[fm.field_id]] = FieldMatch(kind="lpm", value=value, prefix_len=plen)
        elif kind == "ternary":
            value = decode_value(fm.ternary.value, w, what)
            mask = decode_value(fm.ternary.mask, w, what + " mask")
            if mask == 0:
                raise invalid(f"{what}: mask is zero (omit don't-care fields)")
            if value & ~mask:
                raise invalid(f"{what}: value has bits set outside the mask")
            out[pos[fm.field_id]] = FieldMatch(kind="ternary", value=value, mask=mask)
        elif kind == "range":
            low = decode_value(fm.range.low, w, what + " low")
            high = decode_value(fm.range.high, w, what + " high")
            if low > high:
                raise invalid(f"{what}: low bound {low} is above high bound {high}")
            if low == 0 and high == (1 << w) - 1:
                raise invalid(f"{what}: full range (omit don't-care fields)")
            out[pos[fm.field_id]] = FieldMatch(kind="range", value=low, high=high)
        else:
            raise P4RTError(INVALID_ARGUMENT, f"{what}: match kind {kind} is not supported")
    for fid, (_, mf) in known.items():
        if fid not in seen and st.index.match_type(mf) == "exact":
            raise invalid(f"exact match field {mf.name!r} is missing")
    return out


def needs_priority(st: PipelineState, t: p4i.Table) -> bool:
    return any(st.index.match_type(mf) in _NEEDS_PRIORITY for mf in t.match_fields)


def decode_action(st: PipelineState, t: p4i.Table | None, action: p4r.Action,
                  *, default: bool = False) -> ActionCall:
    """An Action spec, checked against the table's action refs and scopes."""
    a = st.index.action(action.action_id) if action.action_id in st.index.actions else None
    if a is None:
        raise invalid(f"unknown action id {action.action_id}")
    if t is not None:
        ref = st.index.action_refs[t.preamble.id].get(action.action_id)
        if ref is None:
            raise invalid(f"action {a.preamble.name!r} is not an action of table {t.preamble.name!r}")
        if default and ref.scope == p4i.ActionRef.TABLE_ONLY:
            raise P4RTError(PERMISSION_DENIED, f"action {a.preamble.name!r} is @tableonly")
        if not default and ref.scope == p4i.ActionRef.DEFAULT_ONLY:
            raise P4RTError(PERMISSION_DENIED, f"action {a.preamble.name!r} is @defaultonly")
    given = {}
    for p in action.params:
        if p.param_id in given:
            raise invalid(f"action {a.preamble.name!r}: parameter id {p.param_id} given twice")
        given[p.param_id] = p.value
    args = []
    for p in a.params:
        if p.id not in given:
            raise invalid(f"action {a.preamble.name!r}: parameter {p.name!r} is missing")
        args.append(decode_value(given.pop(p.id), p.bitwidth, f"parameter {p.name!r}"))
    if given:
        raise invalid(f"action {a.preamble.name!r} has no parameter id {sorted(given)[0]}")
    return ActionCall(action=a.preamble.name, args=tuple(args))


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


def encode_match(st: PipelineState, t: p4i.Table, match: dict[int, FieldMatch]) -> list[p4r.FieldMatch]:
    pos = st.key_pos[t.preamble.id]
    out = []
    for fid, p in pos.items():
        m = match.get(p)
        if m is None:
            continue
        fm = p4r.FieldMatch(field_id=fid)
        if m.kind == "exact":
            fm.exact.value = encode_value(m.value)
        elif m.kind == "optional":
            fm.optional.value = encode_value(m.value)
        elif m.kind == "lpm":
            fm.lpm.value = encode_value(m.value)
            fm.lpm.prefix_len = m.prefix_len
        elif m.kind == "ternary":
            fm.ternary.value = encode_value(m.value)
            fm.ternary.mask = encode_value(m.mask)
        elif m.kind == "range":
            fm.range.low = encode_value(m.value)
            fm.range.high = encode_value(m.high)
        out.append(fm)
    return out


def encode_action(st: PipelineState, call: ActionCall) -> p4r.Action:
    a = st.index.action_by_name.get(call.action)
    if a is None:
        raise P4RTError(13, f"pipeline action {call.action!r} is not in the P4Info")
    msg = p4r.Action(action_id=a.preamble.id)
    for p, v in zip(a.params, call.args, strict=False):
        msg.params.add(param_id=p.id, value=encode_value(v))
    return msg


def encode_entry(st: PipelineState, t: p4i.Table, e: TableEntry, req: p4r.TableEntry) -> p4r.TableEntry:
    """A pipeline entry as P4Runtime; direct resources only when the request asks for them."""
    tid = t.preamble.id
    out = p4r.TableEntry(table_id=tid)
    if e.is_default:
        out.is_default_action = True
    else:
        out.match.extend(encode_match(st, t, e.match))
        out.priority = e.priority
    if e.action is not None:
        out.action.action.CopyFrom(encode_action(st, e.action))
    elif e.member_id is not None:
        out.action.action_profile_member_id = e.member_id
    elif e.group_id is not None:
        out.action.action_profile_group_id = e.group_id
    elif e.action_set is not None:
        aset = out.action.action_profile_action_set
        for call, weight in e.action_set:
            aset.action_profile_actions.add(action=encode_action(st, call), weight=weight)
    if e.metadata:
        out.metadata = e.metadata
    if e.idle_timeout_ns:
        out.idle_timeout_ns = e.idle_timeout_ns
    if not e.is_default:
        cm = st.controller_metadata.get((tid, entry_key(e.match, e.priority)))
        if cm:
            out.controller_metadata = cm
    if t.is_const_table and not e.is_default:
        out.is_const = True
    if req.HasField("counter_data") and tid in st.index.table_counter:
        out.counter_data.packet_count = e.counter_packets
        out.counter_data.byte_count = e.counter_bytes
    if req.HasField("meter_config") and tid in st.index.table_meter and e.meter_config:
        cir, cburst, pir, pburst = e.meter_config
        out.meter_config.CopyFrom(p4r.MeterConfig(cir=cir, cburst=cburst, pir=pir, pburst=pburst))
    if req.HasField("time_since_last_hit"):
        out.time_since_last_hit.elapsed_ns = 0
    return out


# --------------------------------------------------------------------------
# Writes
# --------------------------------------------------------------------------


def _device(st: PipelineState):
    assert st.device is not None
    return st.device


def find_entry(st: PipelineState, t: p4i.Table, match: dict[int, FieldMatch], priority: int) -> TableEntry:
    """The live entry with this key (with counters), or NOT_FOUND."""
    key = entry_key(match, priority)
    for e in _device(st).table_entries(t.preamble.name):
        if not e.is_default and entry_key(e.match, e.priority) == key:
            return e
    raise P4RTError(NOT_FOUND, f"table {t.preamble.name!r}: no entry with this key")


def _decode_table_action(st: PipelineState, t: p4i.Table, ta: p4r.TableAction, entry: TableEntry) -> None:
    which = ta.WhichOneof("type")
    impl = t.implementation_id
    if which is None:
        raise invalid("table action is empty")
    if impl == 0:
        if which != "action":
            raise invalid(f"table {t.preamble.name!r} is direct: use an action, not {which}")
        entry.action = decode_action(st, t, ta.action)
        return
    prof = st.index.profile(impl)
    pid = prof.preamble.id
    if which == "action":
        raise invalid(f"table {t.preamble.name!r} is indirect: use a member, group or action set")
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
                raise P4RTError(12, "watch_port is not supported")
            actions.append((decode_action(st, t, apa.action), apa.weight))
            total += apa.weight
        if not actions:
            raise invalid("one-shot action set is empty")
        if prof.max_group_size:
            size = len(actions) if prof.HasField("sum_of_members") else total
            if size > prof.max_group_size:
                raise invalid(f"one-shot action set exceeds max_group_size {prof.max_group_size}")
        entry.action_set = tuple(actions)


def _direct_resources(st: PipelineState, t: p4i.Table, msg: p4r.TableEntry) -> dict:
    """The direct counter/meter writes a TableEntry asks for, checked, as set_direct() options."""
    tid = t.preamble.id
    out: dict = {}
    if msg.HasField("counter_data"):
        if tid not in st.index.table_counter:
            raise invalid(f"table {t.preamble.name!r} has no direct counter")
        out["packets"] = msg.counter_data.packet_count
        out["bytes_"] = msg.counter_data.byte_count
    if msg.HasField("meter_config"):
        if tid not in st.index.table_meter:
            raise invalid(f"table {t.preamble.name!r} has no direct meter")
        out["meter_config"] = _meter_tuple(msg.meter_config)
    elif tid in st.index.table_meter:
        out["meter_config"] = None  # unset in a write: the default (all GREEN) config
    if msg.HasField("meter_counter_data"):
        if tid not in st.index.table_meter:
            raise invalid(f"table {t.preamble.name!r} has no direct meter")
        _check_meter_counter_data(msg.meter_counter_data)
    return out


def set_direct(st: PipelineState, t: p4i.Table, entry: TableEntry, **kw) -> None:
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


def write_table_entry(st: PipelineState, utype: int, msg: p4r.TableEntry) -> None:
    t = st.index.table(msg.table_id)
    name = t.preamble.name
    dev = _device(st)
    if msg.is_const:
        raise invalid("is_const must be false in a write")
    if msg.HasField("time_since_last_hit"):
        raise invalid("time_since_last_hit must be unset in a write")
    if msg.idle_timeout_ns and t.idle_timeout_behavior == p4i.Table.NO_TIMEOUT:
        raise invalid(f"table {name!r} does not support idle timeout")

    if msg.is_default_action:
        if msg.match or msg.priority:
            raise invalid("the default entry has no match and priority 0")
        if utype != MODIFY:
            raise invalid("the default entry can only be modified")
        if msg.idle_timeout_ns:
            raise invalid("the default entry has no idle timeout")
        if t.const_default_action_id:
            raise P4RTError(PERMISSION_DENIED, f"table {name!r} has a const default action")
        if not msg.HasField("action"):
            dev.table_set_default(name, None)
            return
        if t.implementation_id:
            raise P4RTError(PERMISSION_DENIED,
                            f"table {name!r} is indirect: its default action is const NoAction")
        if msg.action.WhichOneof("type") != "action":
            raise invalid("the default entry of a direct table takes an action")
        dev.table_set_default(name, decode_action(st, t, msg.action.action, default=True))
        return

    if not t.match_fields and utype == INSERT:
        raise invalid(f"table {name!r} is keyless: only its default entry can be set")
    match = decode_match(st, t, msg.match)
    if needs_priority(st, t):
        if msg.priority <= 0:
            raise invalid(f"table {name!r} needs a positive priority (ternary/range/optional key)")
    elif msg.priority != 0:
        raise invalid(f"table {name!r} has no ternary/range/optional key: priority must be 0")
    key = (t.preamble.id, entry_key(match, msg.priority))

    if t.is_const_table and (utype != MODIFY or msg.HasField("action")):
        raise P4RTError(PERMISSION_DENIED, f"table {name!r} is const")

    if utype == DELETE:
        dev.table_delete(name, TableEntry(match=match, priority=msg.priority))
        st.controller_metadata.pop(key, None)
        st.written.pop(key, None)
        return

    entry = TableEntry(match=match, priority=msg.priority, idle_timeout_ns=msg.idle_timeout_ns,
                       metadata=msg.metadata)
    direct = _direct_resources(st, t, msg)
    if utype == INSERT:
        if not msg.HasField("action"):
            raise invalid("INSERT needs an action")
        _decode_table_action(st, t, msg.action, entry)
        entry.counter_packets = direct.get("packets", 0)
        entry.counter_bytes = direct.get("bytes_", 0)
        entry.meter_config = direct.get("meter_config")
        dev.table_insert(name, entry)
    elif utype == MODIFY:
        if msg.HasField("action"):
            _decode_table_action(st, t, msg.action, entry)
        else:
            # Keep the action: from what we wrote, or (const entries) from the device.
            old = st.written.get(key)
            if old is None:
                live = find_entry(st, t, match, msg.priority)
                old = (live.action, live.member_id, live.group_id, live.action_set)
            entry.action, entry.member_id, entry.group_id, entry.action_set = old
        # meter_config None: the device keeps the entry's meter; set_direct() then
        # applies what the request says (a config, or the default when unset).
        dev.table_modify(name, entry)
        set_direct(st, t, entry, **direct)
    else:
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    st.written[key] = (entry.action, entry.member_id, entry.group_id, entry.action_set)
    if entry.action_set is not None or entry.member_id is not None or entry.group_id is not None:
        st.profile_style.setdefault(t.implementation_id,
                                    "oneshot" if entry.action_set is not None else "members")
    if msg.controller_metadata:
        st.controller_metadata[key] = msg.controller_metadata
    else:
        st.controller_metadata.pop(key, None)


# --------------------------------------------------------------------------
# Reads
# --------------------------------------------------------------------------


def read_table_entries(st: PipelineState, req: p4r.TableEntry) -> Iterator[p4r.TableEntry]:
    dev = _device(st)
    if req.table_id == 0:
        for t in st.p4info.tables:
            for e in dev.table_entries(t.preamble.name):
                if not e.is_default:
                    yield encode_entry(st, t, e, req)
        return
    t = st.index.table(req.table_id)
    if req.is_default_action:
        yield encode_entry(st, t, dev.table_default(t.preamble.name), req)
        return
    key = None
    if req.match:
        key = entry_key(decode_match(st, t, req.match), req.priority)
    want_action = req.action.action.action_id if req.action.WhichOneof("type") == "action" else 0
    for e in dev.table_entries(t.preamble.name):
        if e.is_default:
            continue
        if key is not None and entry_key(e.match, e.priority) != key:
            continue
        if req.priority and e.priority != req.priority:
            continue
        if req.metadata and e.metadata != req.metadata:
            continue
        out = encode_entry(st, t, e, req)
        if want_action and out.action.action.action_id != want_action:
            continue
        if req.controller_metadata and out.controller_metadata != req.controller_metadata:
            continue
        yield out


# --------------------------------------------------------------------------
# Direct counters and meters
# --------------------------------------------------------------------------


def _direct_target(st: PipelineState, te: p4r.TableEntry, what: dict, kind: str,
                   *, live: bool = True) -> tuple[p4i.Table, TableEntry]:
    """The entry a direct resource belongs to; `live=False` gives only its key (writes
    then get NOT_FOUND from the device, without scanning the table)."""
    t = st.index.table(te.table_id)
    if t.preamble.id not in what:
        raise invalid(f"table {t.preamble.name!r} has no direct {kind}")
    if te.is_default_action:
        return t, _device(st).table_default(t.preamble.name)
    match = decode_match(st, t, te.match)
    if not live:
        return t, TableEntry(match=match, priority=te.priority)
    return t, find_entry(st, t, match, te.priority)


def write_direct_counter(st: PipelineState, utype: int, msg: p4r.DirectCounterEntry) -> None:
    if utype != MODIFY:
        raise invalid("DirectCounterEntry can only be modified")
    t, e = _direct_target(st, msg.table_entry, st.index.table_counter, "counter",
                          live=not msg.HasField("data"))
    if not msg.HasField("data"):
        return
    if e.is_default:
        raise P4RTError(12, "writing the default entry's direct counter is not supported")
    set_direct(st, t, e, packets=msg.data.packet_count, bytes_=msg.data.byte_count)


def read_direct_counters(st: PipelineState, msg: p4r.DirectCounterEntry) -> Iterator[p4r.DirectCounterEntry]:
    te = msg.table_entry
    req = p4r.TableEntry(counter_data=p4r.CounterData())
    if te.table_id == 0:
        tables = [st.index.tables[tid] for tid in st.index.table_counter]
    else:
        t = st.index.table(te.table_id)
        if t.preamble.id not in st.index.table_counter:
            raise invalid(f"table {t.preamble.name!r} has no direct counter")
        tables = [t]
        if te.match or te.is_default_action:
            _, e = _direct_target(st, te, st.index.table_counter, "counter")
            yield p4r.DirectCounterEntry(table_entry=encode_entry(st, t, e, p4r.TableEntry()),
                                         data=encode_entry(st, t, e, req).counter_data)
            return
    for t in tables:
        for e in _device(st).table_entries(t.preamble.name):
            if e.is_default:
                continue
            yield p4r.DirectCounterEntry(table_entry=encode_entry(st, t, e, p4r.TableEntry()),
                                         data=p4r.CounterData(packet_count=e.counter_packets,
                                                              byte_count=e.counter_bytes))


def write_direct_meter(st: PipelineState, utype: int, msg: p4r.DirectMeterEntry) -> None:
    if utype != MODIFY:
        raise invalid("DirectMeterEntry can only be modified")
    t, e = _direct_target(st, msg.table_entry, st.index.table_meter, "meter", live=False)
    if msg.HasField("counter_data"):
        _check_meter_counter_data(msg.counter_data)
    if e.is_default:
        raise P4RTError(12, "configuring the default entry's direct meter is not supported")
    cfg = _meter_tuple(msg.config) if msg.HasField("config") else None
    set_direct(st, t, e, meter_config=cfg)


def read_direct_meters(st: PipelineState, msg: p4r.DirectMeterEntry) -> Iterator[p4r.DirectMeterEntry]:
    te = msg.table_entry
    req = p4r.TableEntry(meter_config=p4r.MeterConfig())

    def one(t: p4i.Table, e: TableEntry) -> p4r.DirectMeterEntry:
        out = p4r.DirectMeterEntry(table_entry=encode_entry(st, t, e, p4r.TableEntry()))
        full = encode_entry(st, t, e, req)
        if full.HasField("meter_config"):
            out.config.CopyFrom(full.meter_config)
        return out

    if te.table_id == 0:
        for tid in st.index.table_meter:
            t = st.index.tables[tid]
            for e in _device(st).table_entries(t.preamble.name):
                if not e.is_default:
                    yield one(t, e)
        return
    t = st.index.table(te.table_id)
    if te.match or te.is_default_action:
        _, e = _direct_target(st, te, st.index.table_meter, "meter")
        yield one(t, e)
        return
    if t.preamble.id not in st.index.table_meter:
        raise invalid(f"table {t.preamble.name!r} has no direct meter")
    for e in _device(st).table_entries(t.preamble.name):
        if not e.is_default:
            yield one(t, e)
