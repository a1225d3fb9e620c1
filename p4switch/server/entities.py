"""Every P4Runtime entity except tables: writes and reads.

Action profile members and groups, indexed counters, meters and registers,
the packet replication engine (multicast groups, clone sessions) and digest
configs. Each `write_*` checks the update as P4Runtime spec §9 prescribes and
either changes state or raises `P4RTError` with nothing changed; each
`read_*` yields entities in canonical form, wildcards included.

Names defined here: `WRITERS`, `READERS`, `READERS_INTO` (entity oneof name -> function),
and the functions they map to (`write_member`, `read_members` ...); `PORT_BITS`, `RID_MAX`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from p4switch.pipeline.state import CloneSession, Group, Member, MulticastGroup, Replica
from p4switch.proto import p4d, p4i, p4r
from p4switch.server import directentries, tableentries
from p4switch.server.pipeline_state import PipelineState
from p4switch.translate import (
    ALREADY_EXISTS,
    NOT_FOUND,
    OUT_OF_RANGE,
    RESOURCE_EXHAUSTED,
    UNIMPLEMENTED,
    P4RTError,
    decode_value,
    encode_value,
    invalid,
)

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE

# Widths of v1model's PRE fields (BMv2): egress port 9 bits, egress_rid 16 bits.
PORT_BITS = 32  # SDN port numbers are 32-bit in P4Runtime
RID_MAX = (1 << 16) - 1


def _dev(st: PipelineState) -> Any:
    assert st.device is not None
    return st.device


# --------------------------------------------------------------------------
# Action profiles
# --------------------------------------------------------------------------


def _profile_for_members(st: PipelineState, pid: int) -> p4i.ActionProfile:
    prof = st.index.profile(pid)
    if st.profile_style.get(pid) == "oneshot":
        raise invalid(f"action profile {prof.preamble.name!r} is programmed with one-shot "
                      "entries; do not mix one-shot and member/group styles")
    return prof


def _profile_table(st: PipelineState, prof: p4i.ActionProfile) -> p4i.Table | None:
    return st.index.tables.get(prof.table_ids[0]) if prof.table_ids else None


def write_member(st: PipelineState, utype: int, msg: p4r.ActionProfileMember) -> None:
    """Apply one ActionProfileMember update (INSERT, MODIFY or DELETE)."""
    prof = _profile_for_members(st, msg.action_profile_id)
    name = prof.preamble.name
    if msg.member_id == 0:
        raise invalid("member_id 0 is not valid")
    if utype == DELETE:
        _dev(st).member_delete(name, msg.member_id)
        return
    if utype not in (INSERT, MODIFY):
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    if not msg.HasField("action"):
        raise invalid("an action profile member needs an action")
    call = tableentries.decode_action(st, _profile_table(st, prof), msg.action)
    member = Member(member_id=msg.member_id, action=call)
    if utype == INSERT:
        _dev(st).member_insert(name, member)
    else:
        _dev(st).member_modify(name, member)
    st.profile_style.setdefault(msg.action_profile_id, "members")


def read_members(st: PipelineState, msg: p4r.ActionProfileMember) -> Iterator[p4r.ActionProfileMember]:
    """The members of one action profile (or all, for id 0), one-shot members left out."""
    profs = [st.index.profile(msg.action_profile_id)] if msg.action_profile_id else list(st.index.profiles.values())
    for prof in profs:
        if st.profile_style.get(prof.preamble.id) == "oneshot":
            continue  # one-shot members are an implementation detail, never read back
        for m in _dev(st).members(prof.preamble.name):
            if msg.member_id and m.member_id != msg.member_id:
                continue
            yield p4r.ActionProfileMember(action_profile_id=prof.preamble.id, member_id=m.member_id,
                                          action=tableentries.encode_action(st, m.action))


def write_group(st: PipelineState, utype: int, msg: p4r.ActionProfileGroup) -> None:
    """Apply one ActionProfileGroup update (INSERT, MODIFY or DELETE) to a selector."""
    prof = _profile_for_members(st, msg.action_profile_id)
    name = prof.preamble.name
    if not prof.with_selector:
        raise invalid(f"action profile {name!r} has no selector: it has no groups")
    if msg.group_id == 0:
        raise invalid("group_id 0 is not valid")
    if utype == DELETE:
        _dev(st).group_delete(name, msg.group_id)
        return
    if utype not in (INSERT, MODIFY):
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    if msg.max_size < 0:
        raise invalid("max_size is negative")
    if prof.max_group_size and (msg.max_size == 0 or msg.max_size > prof.max_group_size):
        raise invalid(f"max_size must be in 1..{prof.max_group_size}")
    members: list[tuple[int, int]] = []
    seen: set[int] = set()
    for m in msg.members:
        if m.member_id in seen:
            raise invalid(f"member {m.member_id} appears twice in the group")
        seen.add(m.member_id)
        if m.weight <= 0:
            raise invalid("member weight must be positive")
        if m.watch_port or m.watch:
            raise P4RTError(UNIMPLEMENTED, "watch ports are not supported")
        members.append((m.member_id, m.weight))
    limit = msg.max_size or prof.max_group_size
    if limit:
        size = len(members) if prof.HasField("sum_of_members") else sum(w for _, w in members)
        if size > limit:
            raise P4RTError(RESOURCE_EXHAUSTED, f"group size {size} exceeds max_size {limit}")
    existing = {m.member_id for m in _dev(st).members(name)}
    for mid, _ in members:
        if mid not in existing:
            raise P4RTError(NOT_FOUND, f"member {mid} does not exist in {name!r}")
    group = Group(group_id=msg.group_id, members=members, max_size=msg.max_size)
    if utype == INSERT:
        _dev(st).group_insert(name, group)
    else:
        old = next((g for g in _dev(st).groups(name) if g.group_id == msg.group_id), None)
        if old is None:
            raise P4RTError(NOT_FOUND, f"group {msg.group_id} does not exist in {name!r}")
        if old.max_size != msg.max_size:
            raise invalid("max_size cannot change after the group is inserted")
        _dev(st).group_modify(name, group)
    st.profile_style.setdefault(msg.action_profile_id, "members")


def read_groups(st: PipelineState, msg: p4r.ActionProfileGroup) -> Iterator[p4r.ActionProfileGroup]:
    """The groups of one action selector (or all, for id 0), one-shot groups left out."""
    profs = [st.index.profile(msg.action_profile_id)] if msg.action_profile_id else list(st.index.profiles.values())
    for prof in profs:
        if not prof.with_selector or st.profile_style.get(prof.preamble.id) == "oneshot":
            continue
        for g in _dev(st).groups(prof.preamble.name):
            if msg.group_id and g.group_id != msg.group_id:
                continue
            out = p4r.ActionProfileGroup(action_profile_id=prof.preamble.id, group_id=g.group_id,
                                         max_size=g.max_size)
            for mid, w in g.members:
                out.members.add(member_id=mid, weight=w)
            yield out


# --------------------------------------------------------------------------
# Indexed counters, meters, registers
# --------------------------------------------------------------------------


def _indexes(obj: Any, msg: Any) -> range:
    """The cells an (optionally wildcard) index selects; checks the index."""
    if not msg.HasField("index"):
        return range(obj.size)
    i = msg.index.index
    if i < 0:
        raise invalid(f"index {i} is negative")
    if i >= obj.size:
        raise P4RTError(OUT_OF_RANGE, f"index {i} is out of range (size {obj.size})")
    return range(i, i + 1)


def write_counter(st: PipelineState, utype: int, msg: p4r.CounterEntry) -> None:
    """Set the data of one index (or every index) of an indexed counter (MODIFY only)."""
    if utype != MODIFY:
        raise invalid("CounterEntry can only be modified")
    c = st.index.counter(msg.counter_id)
    cells = _indexes(c, msg)
    if not msg.HasField("data"):
        return
    for i in cells:
        _dev(st).counter_write(c.preamble.name, i, msg.data.packet_count, msg.data.byte_count)


def _counter_data(unit: int, packets: int, bytes_: int) -> p4r.CounterData:
    out = p4r.CounterData()
    if unit in (p4i.CounterSpec.PACKETS, p4i.CounterSpec.BOTH, p4i.CounterSpec.UNSPECIFIED):
        out.packet_count = packets
    if unit in (p4i.CounterSpec.BYTES, p4i.CounterSpec.BOTH, p4i.CounterSpec.UNSPECIFIED):
        out.byte_count = bytes_
    return out


def read_counters(st: PipelineState, msg: p4r.CounterEntry) -> Iterator[p4r.CounterEntry]:
    """The cells of one counter (or of all, for id 0), each as a CounterEntry."""
    counters = [st.index.counter(msg.counter_id)] if msg.counter_id else list(st.index.counters.values())
    for c in counters:
        for i in (_indexes(c, msg) if msg.counter_id else range(c.size)):
            pk, by = _dev(st).counter_read(c.preamble.name, i)
            out = p4r.CounterEntry(counter_id=c.preamble.id, data=_counter_data(c.spec.unit, pk, by))
            out.index.index = i
            yield out


def write_meter(st: PipelineState, utype: int, msg: p4r.MeterEntry) -> None:
    """Configure one index (or every index) of an indexed meter; no config resets it."""
    if utype != MODIFY:
        raise invalid("MeterEntry can only be modified")
    m = st.index.meter(msg.meter_id)
    cells = _indexes(m, msg)
    cfg = tableentries._meter_tuple(msg.config) if msg.HasField("config") else None
    if msg.HasField("counter_data"):
        tableentries._check_meter_counter_data(msg.counter_data)
    for i in cells:
        _dev(st).meter_set(m.preamble.name, i, cfg)
        if cfg is None:
            st.meters.pop((m.preamble.id, i), None)
        else:
            st.meters[(m.preamble.id, i)] = p4r.MeterConfig(cir=cfg[0], cburst=cfg[1], pir=cfg[2], pburst=cfg[3])


def read_meters(st: PipelineState, msg: p4r.MeterEntry) -> Iterator[p4r.MeterEntry]:
    """The cells of one meter (or of all, for id 0), each with its config if set."""
    meters = [st.index.meter(msg.meter_id)] if msg.meter_id else list(st.index.meters.values())
    for m in meters:
        for i in (_indexes(m, msg) if msg.meter_id else range(m.size)):
            out = p4r.MeterEntry(meter_id=m.preamble.id)
            out.index.index = i
            cfg = st.meters.get((m.preamble.id, i))
            if cfg is not None:
                out.config.CopyFrom(cfg)
            yield out


def _register_width(r: p4i.Register) -> int:
    ts = r.type_spec
    if ts.WhichOneof("type_spec") == "bitstring":
        bs = ts.bitstring
        kind = bs.WhichOneof("type_spec")
        if kind == "bit":
            return bs.bit.bitwidth
        if kind == "int":
            return bs.int.bitwidth
    raise P4RTError(UNIMPLEMENTED, f"register {r.preamble.name!r}: only bit<W> registers are supported")


def write_register(st: PipelineState, utype: int, msg: p4r.RegisterEntry) -> None:
    """Set one index (or every index) of a register from a bitstring (MODIFY only)."""
    if utype != MODIFY:
        raise invalid("RegisterEntry can only be modified")
    r = st.index.register(msg.register_id)
    cells = _indexes(r, msg)
    w = _register_width(r)
    if msg.data.WhichOneof("data") != "bitstring":
        raise invalid(f"register {r.preamble.name!r} holds bit<{w}>: data must be a bitstring")
    value = decode_value(msg.data.bitstring, w, f"register {r.preamble.name!r}")
    for i in cells:
        _dev(st).register_write(r.preamble.name, i, value)


def read_registers(st: PipelineState, msg: p4r.RegisterEntry) -> Iterator[p4r.RegisterEntry]:
    """The cells of one register (or of all, for id 0), each value as a bitstring."""
    regs = [st.index.register(msg.register_id)] if msg.register_id else list(st.index.registers.values())
    for r in regs:
        _register_width(r)
        for i in (_indexes(r, msg) if msg.register_id else range(r.size)):
            value = _dev(st).register_read(r.preamble.name, i)
            out = p4r.RegisterEntry(register_id=r.preamble.id,
                                    data=p4d.P4Data(bitstring=encode_value(value & ((1 << 4096) - 1))))
            out.index.index = i
            yield out


# --------------------------------------------------------------------------
# Packet replication engine
# --------------------------------------------------------------------------


def _replicas(reps: Any) -> list[Replica]:
    out: list[Replica] = []
    seen: set[tuple[int, int]] = set()
    for r in reps:
        if r.backup_replicas:
            raise P4RTError(UNIMPLEMENTED, "backup replicas are not supported")
        which = r.WhichOneof("port_kind")
        port = decode_value(r.port, PORT_BITS, "replica port") if which == "port" else r.egress_port
        if r.instance > RID_MAX:
            raise invalid(f"replica instance {r.instance} exceeds {RID_MAX}")
        if (port, r.instance) in seen:
            raise invalid(f"replica (port {port}, instance {r.instance}) appears twice")
        seen.add((port, r.instance))
        out.append(Replica(egress_port=port, instance=r.instance))
    return out


def _canonical_replicas(src: Any, dst: Any) -> None:
    for r in src:
        if r.WhichOneof("port_kind") == "port":
            dst.add(port=encode_value(int.from_bytes(r.port, "big")), instance=r.instance)
        else:
            dst.add(egress_port=r.egress_port, instance=r.instance)


def write_pre(st: PipelineState, utype: int, msg: p4r.PacketReplicationEngineEntry) -> None:
    """Apply one multicast group or clone session update (INSERT, MODIFY or DELETE)."""
    which = msg.WhichOneof("type")
    if utype not in (INSERT, MODIFY, DELETE):
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    if which == "multicast_group_entry":
        g = msg.multicast_group_entry
        gid = g.multicast_group_id
        if gid == 0:
            raise invalid("multicast_group_id 0 is not valid in a write")
        _check_exists(st.mcast, gid, utype, "multicast group")
        if utype == DELETE:
            _dev(st).mcast_group_set(None, gid)
            del st.mcast[gid]
            return
        reps = _replicas(g.replicas)
        _dev(st).mcast_group_set(MulticastGroup(group_id=gid, replicas=reps), gid)
        saved = p4r.MulticastGroupEntry(multicast_group_id=gid, metadata=g.metadata)
        _canonical_replicas(g.replicas, saved.replicas)
        st.mcast[gid] = saved
    elif which == "clone_session_entry":
        c = msg.clone_session_entry
        sid = c.session_id
        if sid == 0:
            raise invalid("session_id 0 is not valid in a write")
        _check_exists(st.clone, sid, utype, "clone session")
        if utype == DELETE:
            _dev(st).clone_session_set(None, sid)
            del st.clone[sid]
            return
        if c.class_of_service > 7:
            raise invalid(f"class_of_service {c.class_of_service} is not in 0..7")
        if c.packet_length_bytes < 0:
            raise invalid("packet_length_bytes is negative")
        reps = _replicas(c.replicas)
        _dev(st).clone_session_set(
            CloneSession(session_id=sid, replicas=reps, class_of_service=c.class_of_service,
                         packet_length_bytes=c.packet_length_bytes), sid)
        saved = p4r.CloneSessionEntry(session_id=sid, class_of_service=c.class_of_service,
                                      packet_length_bytes=c.packet_length_bytes)
        _canonical_replicas(c.replicas, saved.replicas)
        st.clone[sid] = saved
    else:
        raise invalid("PacketReplicationEngineEntry has no entry set")


def _check_exists(table: dict, key: int, utype: int, what: str) -> None:
    if utype == INSERT and key in table:
        raise P4RTError(ALREADY_EXISTS, f"{what} {key} already exists")
    if utype in (MODIFY, DELETE) and key not in table:
        raise P4RTError(NOT_FOUND, f"{what} {key} does not exist")


def read_pre(st: PipelineState, msg: p4r.PacketReplicationEngineEntry) -> Iterator[p4r.PacketReplicationEngineEntry]:
    """The multicast groups and/or clone sessions a PRE read asks for, by id."""
    which = msg.WhichOneof("type")
    if which == "multicast_group_entry":
        gid = msg.multicast_group_entry.multicast_group_id
        for k in sorted(st.mcast):
            if gid in (0, k):
                yield p4r.PacketReplicationEngineEntry(multicast_group_entry=st.mcast[k])
    elif which == "clone_session_entry":
        sid = msg.clone_session_entry.session_id
        for k in sorted(st.clone):
            if sid in (0, k):
                yield p4r.PacketReplicationEngineEntry(clone_session_entry=st.clone[k])
    else:
        # An empty PRE entry reads both kinds (wildcard over the PRE).
        for k in sorted(st.mcast):
            yield p4r.PacketReplicationEngineEntry(multicast_group_entry=st.mcast[k])
        for k in sorted(st.clone):
            yield p4r.PacketReplicationEngineEntry(clone_session_entry=st.clone[k])


# --------------------------------------------------------------------------
# Digests
# --------------------------------------------------------------------------


def write_digest(st: PipelineState, utype: int, msg: p4r.DigestEntry) -> None:
    """Apply one DigestEntry config update (INSERT, MODIFY or DELETE)."""
    d = st.index.digest(msg.digest_id)
    _check_exists(st.digests, d.preamble.id, utype, "digest config for")
    if utype == DELETE:
        del st.digests[d.preamble.id]
        return
    if utype not in (INSERT, MODIFY):
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    cfg = msg.config
    if cfg.max_timeout_ns < 0 or cfg.max_list_size < 0 or cfg.ack_timeout_ns < 0:
        raise invalid("digest config values must not be negative")
    saved = p4r.DigestEntry.Config()
    saved.CopyFrom(cfg)
    st.digests[d.preamble.id] = saved


def read_digests(st: PipelineState, msg: p4r.DigestEntry) -> Iterator[p4r.DigestEntry]:
    """The digest configs set (one digest's, or all for id 0)."""
    if msg.digest_id:
        st.index.digest(msg.digest_id)
    for did in sorted(st.digests):
        if msg.digest_id in (0, did):
            yield p4r.DigestEntry(digest_id=did, config=st.digests[did])


# --------------------------------------------------------------------------
# Parser value sets
# --------------------------------------------------------------------------


def _value_set_field(st: PipelineState, mf: p4i.MatchField, fm: p4r.FieldMatch | None,
                     out: p4r.ValueSetMember) -> tuple[int, int]:
    """(value, mask) of one field of a member; appends its canonical FieldMatch to `out`."""
    kind = st.index.match_type(mf)
    w = mf.bitwidth
    full = (1 << w) - 1
    if fm is None:
        if kind == "exact":
            raise invalid(f"value set field {mf.name!r} is exact and cannot be omitted")
        return 0, 0
    which = fm.WhichOneof("field_match_type")
    if which != kind:
        raise invalid(f"value set field {mf.name!r} is {kind}, got {which}")
    what = f"value set field {mf.name!r}"
    c = out.match.add(field_id=mf.id)
    if kind in ("exact", "optional"):
        v = decode_value(getattr(fm, kind).value, w, what)
        getattr(c, kind).value = encode_value(v)
        return v, full
    if kind == "ternary":
        v = decode_value(fm.ternary.value, w, what)
        m = decode_value(fm.ternary.mask, w, what + " mask")
        if m == 0 or v & ~m:
            raise invalid(f"{what}: bad ternary value/mask")
        c.ternary.value, c.ternary.mask = encode_value(v), encode_value(m)
        return v, m
    if kind == "lpm":
        v = decode_value(fm.lpm.value, w, what)
        plen = fm.lpm.prefix_len
        m = full ^ ((1 << (w - plen)) - 1) if 0 < plen <= w else -1
        if m < 0 or v & ~m:
            raise invalid(f"{what}: bad prefix")
        c.lpm.value, c.lpm.prefix_len = encode_value(v), plen
        return v, m
    raise P4RTError(UNIMPLEMENTED, f"{what}: {kind} matches in value sets are not supported")


def write_value_set(st: PipelineState, utype: int, msg: p4r.ValueSetEntry) -> None:
    """Replace the members of a parser value set (MODIFY only)."""
    if utype != MODIFY:
        raise invalid("ValueSetEntry can only be modified")
    vs = st.index.value_sets.get(msg.value_set_id)
    if vs is None:
        raise invalid(f"unknown value set id {msg.value_set_id}")
    members: list[tuple[int, int]] = []
    canonical: list[p4r.ValueSetMember] = []
    seen: set[bytes] = set()
    for m in msg.members:
        by_id: dict[int, p4r.FieldMatch] = {}
        for fm in m.match:
            if fm.field_id in by_id:
                raise invalid(f"value set field id {fm.field_id} given twice")
            by_id[fm.field_id] = fm
        out = p4r.ValueSetMember()
        value = mask = 0
        for mf in vs.match:
            v, k = _value_set_field(st, mf, by_id.pop(mf.id, None), out)
            value, mask = (value << mf.bitwidth) | v, (mask << mf.bitwidth) | k
        if by_id:
            raise invalid(f"value set {vs.preamble.name!r} has no field id {sorted(by_id)[0]}")
        key = out.SerializeToString(deterministic=True)
        if key in seen:
            raise P4RTError(ALREADY_EXISTS, "duplicate member in value set")
        seen.add(key)
        members.append((value, mask))
        canonical.append(out)
    if vs.size and len(members) > vs.size:
        raise P4RTError(RESOURCE_EXHAUSTED, f"value set {vs.preamble.name!r} holds at most {vs.size} members")
    fn = getattr(_dev(st), "value_set_write", None)
    if fn is None:
        raise P4RTError(UNIMPLEMENTED, "the pipeline has no parser value sets")
    fn(vs.preamble.name, members)
    st.value_sets[vs.preamble.id] = canonical


def read_value_sets(st: PipelineState, msg: p4r.ValueSetEntry) -> Iterator[p4r.ValueSetEntry]:
    """The members of one parser value set (or of all, for id 0)."""
    if msg.value_set_id and msg.value_set_id not in st.index.value_sets:
        raise invalid(f"unknown value set id {msg.value_set_id}")
    for vid in sorted(st.index.value_sets):
        if msg.value_set_id in (0, vid):
            yield p4r.ValueSetEntry(value_set_id=vid, members=st.value_sets.get(vid, []))


def _unimplemented(what: str) -> Callable[..., Any]:
    def fn(st: PipelineState, *args: Any) -> Any:
        """Refuse the entity as UNIMPLEMENTED."""
        raise P4RTError(UNIMPLEMENTED, f"{what} is not supported by p4switch")
    return fn


WRITERS: dict[str, Callable[[PipelineState, int, Any], None]] = {
    "table_entry": tableentries.write_table_entry,
    "action_profile_member": write_member,
    "action_profile_group": write_group,
    "counter_entry": write_counter,
    "direct_counter_entry": directentries.write_direct_counter,
    "meter_entry": write_meter,
    "direct_meter_entry": directentries.write_direct_meter,
    "register_entry": write_register,
    "packet_replication_engine_entry": write_pre,
    "digest_entry": write_digest,
    "value_set_entry": write_value_set,
    "extern_entry": _unimplemented("ExternEntry"),
}

# Readers that fill messages in place: fn(state, request, new) where new() gives a fresh message.
READERS_INTO: dict[str, Callable[[PipelineState, Any, Callable[[], Any]], None]] = {
    "table_entry": tableentries.read_table_entries_into,
}

READERS: dict[str, Callable[[PipelineState, Any], Iterator[Any]]] = {
    "table_entry": tableentries.read_table_entries,
    "action_profile_member": read_members,
    "action_profile_group": read_groups,
    "counter_entry": read_counters,
    "direct_counter_entry": directentries.read_direct_counters,
    "meter_entry": read_meters,
    "direct_meter_entry": directentries.read_direct_meters,
    "register_entry": read_registers,
    "packet_replication_engine_entry": read_pre,
    "digest_entry": read_digests,
    "value_set_entry": read_value_sets,
    "extern_entry": _unimplemented("ExternEntry"),
}


__all__ = ["WRITERS", "READERS", "READERS_INTO", "write_member", "read_members", "PORT_BITS",
           "RID_MAX", "write_group", "read_groups", "write_counter", "read_counters",
           "write_meter", "read_meters", "write_register", "read_registers", "write_pre",
           "read_pre", "write_digest", "read_digests", "write_value_set", "read_value_sets"]
