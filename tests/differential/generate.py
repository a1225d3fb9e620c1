"""Inputs for the differential runs: P4Runtime writes from a P4Info, frames from hypothesis.

`Pools` holds the values the packets should carry to reach the program's
entries and parser states: every key value written (by width), the
constants of the parser's `select` transitions (read from the BMv2 JSON) and
the usual protocol numbers. `program_writes(info, rng, pools)` builds, from
the P4Info alone, random but valid writes for every table: entries of every
match kind (canonical values, priorities where the key needs them), members
and groups of 1-16 members for tables with an action profile, and the
default action of tables whose default is not const (a keyless table such as
`switch_config` gets its mode and salt that way). Writes come back in
dependency order (members, groups, entries, defaults).

`frames(pools)` is a hypothesis strategy of Ethernet frames: IPv4 and IPv6
with UDP/TCP, RoCEv2 (UDP 4791 + BTH with random destination QPs), ARP,
DSCP/ECN and TTL edge values, EtherTypes and protocol numbers the parser
selects on, truncated frames and plain random bytes.

Names defined here: `Pools`, `program_writes`, `bmv2_room`, `frames`, `counter_reads`.
"""

from __future__ import annotations

import json
import random
import struct
from dataclasses import dataclass, field

from hypothesis import strategies as st

from p4switch.proto import p4i, p4r

from .rig import CPU, PORTS

MAX_ENTRIES = 24
TTLS = (0, 1, 2, 64, 255)


@dataclass
class Pools:
    """Values by width in bits: what the packet generator draws header fields from."""

    by_width: dict[int, list[int]] = field(default_factory=dict)

    def add(self, width: int, value: int) -> None:
        vals = self.by_width.setdefault(width, [])
        if value not in vals:
            vals.append(value)

    def pick(self, width: int) -> list[int]:
        return self.by_width.get(width, [])

    @classmethod
    def from_bmv2_json(cls, bmv2_json: bytes) -> Pools:
        pools = cls()
        for w, v in ((16, 0x0800), (16, 0x86DD), (16, 0x0806), (16, 0x8100), (8, 6), (8, 17), (16, 4791)):
            pools.add(w, v)
        doc = json.loads(bmv2_json)
        for prs in doc.get("parsers", []):
            for state in prs.get("parse_states", []):
                for tr in state.get("transitions", []):
                    v = tr.get("value")
                    if isinstance(v, str) and v.startswith("0x"):
                        hexpart = v[2:]
                        nbytes = max(1, len(hexpart) // 2)
                        # a select on several fields is one concatenated value: keep its parts too
                        pools.add(nbytes * 8, int(hexpart, 16))
                        for i in range(0, len(hexpart) - 1, 2):
                            pools.add(8, int(hexpart[i:i + 2], 16))
                        if nbytes >= 2:
                            for i in range(0, len(hexpart) - 3, 4):
                                pools.add(16, int(hexpart[i:i + 4], 16))
        return pools


# ---------------------------------------------------------------------- writes
def _enc(value: int, width: int) -> bytes:
    """P4Runtime's canonical bytestring: the shortest big-endian form, at least one byte."""
    value &= (1 << width) - 1
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def _value(rng: random.Random, width: int, pools: Pools) -> int:
    if width == 9 and rng.random() < 0.9:
        return rng.choice(PORTS + (CPU,) if rng.random() < 0.1 else PORTS)
    if width == 1:
        return rng.randrange(2)
    cands = pools.pick(width)
    if cands and rng.random() < 0.5:
        return rng.choice(cands)
    v = rng.getrandbits(width)
    if width == 32 and rng.random() < 0.7:
        v = (10 << 24) | (rng.randrange(4) << 16) | (rng.randrange(4) << 8) | rng.randrange(1, 8)
    return v


def _translated(info: p4i.P4Info, type_name: str) -> bool:
    nt = info.type_info.new_types.get(type_name) if type_name else None
    return nt is not None and nt.HasField("translated_type")


def _field_match(rng: random.Random, mf: p4i.MatchField, pools: Pools) -> p4r.FieldMatch | None:
    w = mf.bitwidth
    fm = p4r.FieldMatch(field_id=mf.id)
    v = _value(rng, w, pools)
    kind = mf.match_type
    if kind == p4i.MatchField.EXACT:
        fm.exact.value = _enc(v, w)
    elif kind == p4i.MatchField.LPM:
        plen = rng.choice([w, w, max(1, w - 8), max(1, w // 2), rng.randrange(1, w + 1)])
        mask = ((1 << w) - 1) ^ ((1 << (w - plen)) - 1)
        fm.lpm.value = _enc(v & mask, w)
        fm.lpm.prefix_len = plen
    elif kind == p4i.MatchField.TERNARY:
        mask = rng.choice([(1 << w) - 1, rng.getrandbits(w), ((1 << w) - 1) ^ ((1 << (w // 2)) - 1)])
        if mask == 0:
            return None  # don't care: left out (P4Runtime §9.1.1)
        fm.ternary.value = _enc(v & mask, w)
        fm.ternary.mask = _enc(mask, w)
    elif kind == p4i.MatchField.RANGE:
        lo = rng.choice([v, max(0, v - rng.randrange(1, 64)), 0])
        hi = min((1 << w) - 1, v + rng.randrange(0, 64))
        if lo == 0 and hi == (1 << w) - 1:
            return None
        fm.range.low, fm.range.high = _enc(lo, w), _enc(hi, w)
    elif kind == p4i.MatchField.OPTIONAL:
        if rng.random() < 0.3:
            return None
        fm.optional.value = _enc(v, w)
    else:
        return None
    for width_pool in (w,):
        pools.add(width_pool, v)
    return fm


def _action(rng: random.Random, info: p4i.P4Info, action_id: int, pools: Pools) -> p4r.Action:
    act = next(a for a in info.actions if a.preamble.id == action_id)
    out = p4r.Action(action_id=action_id)
    for p in act.params:
        out.params.add(param_id=p.id, value=_enc(_value(rng, p.bitwidth, pools), p.bitwidth))
    return out


def _usable_actions(info: p4i.P4Info, t: p4i.Table, scope_ok: tuple[int, ...]) -> list[int]:
    acts = {a.preamble.id: a for a in info.actions}
    out = []
    for ref in t.action_refs:
        a = acts.get(ref.id)
        if a is None or ref.scope not in scope_ok:
            continue
        if any(_translated(info, p.type_name.name) for p in a.params):
            continue
        out.append(ref.id)
    return out


def bmv2_room(bmv2_json: bytes) -> dict[str, int]:
    """Table name -> how many more entries BMv2 takes: its `max_size` less the program's initial entries.

    p4c-bm2-ss gives a table that has `entries` and no `size` the number of
    those entries as BMv2's size, whatever P4Info says (deviations.py,
    table-size-with-entries): the generator stays within that room.
    """
    doc = json.loads(bmv2_json)
    return {t["name"]: int(t.get("max_size", 1024)) - len(t.get("entries", []))
            for p in doc.get("pipelines", []) for t in p.get("tables", [])}


def program_writes(info: p4i.P4Info, rng: random.Random, pools: Pools,
                   room: dict[str, int] | None = None) -> list[p4r.Update]:
    """Valid random writes for every table of `info`, in dependency order.

    `room` (table name -> free entries, `bmv2_room`) caps the entries per table.
    """
    members: list[p4r.Update] = []
    groups: list[p4r.Update] = []
    entries: list[p4r.Update] = []
    defaults: list[p4r.Update] = []
    profiles = {p.preamble.id: p for p in info.action_profiles}
    prof_members: dict[int, list[int]] = {}
    prof_groups: dict[int, list[int]] = {}
    for t in info.tables:
        if any(_translated(info, mf.type_name.name) for mf in t.match_fields):
            continue
        entry_actions = _usable_actions(info, t, (p4i.ActionRef.TABLE_AND_DEFAULT, p4i.ActionRef.TABLE_ONLY))
        default_actions = _usable_actions(info, t, (p4i.ActionRef.TABLE_AND_DEFAULT, p4i.ActionRef.DEFAULT_ONLY))
        prof = profiles.get(t.implementation_id)
        if prof is not None and prof.preamble.id not in prof_members and entry_actions:
            ids = []
            for i in range(rng.randrange(2, 20)):
                mid = i + 1
                members.append(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(action_profile_member=p4r.ActionProfileMember(
                    action_profile_id=prof.preamble.id, member_id=mid,
                    action=_action(rng, info, rng.choice(entry_actions), pools)))))
                ids.append(mid)
            prof_members[prof.preamble.id] = ids
            gids = []
            if prof.with_selector:
                limit = prof.max_group_size or 16
                for g in range(rng.randrange(1, 6)):
                    n = rng.randrange(1, min(16, limit, len(ids)) + 1)
                    grp = p4r.ActionProfileGroup(action_profile_id=prof.preamble.id, group_id=g + 1,
                                                 max_size=min(16, limit) if limit else 0)
                    for m in sorted(rng.sample(ids, n)):
                        grp.members.add(member_id=m, weight=1)
                    groups.append(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(action_profile_group=grp)))
                    gids.append(g + 1)
            prof_groups[prof.preamble.id] = gids
        needs_priority = any(mf.match_type in (p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL)
                             for mf in t.match_fields)
        if t.match_fields and not t.is_const_table and (entry_actions or prof is not None):
            seen: set[bytes] = set()
            prios = rng.sample(range(1, 10_000), MAX_ENTRIES)
            free = (room or {}).get(t.preamble.name, t.size or 1024)
            for i in range(min(MAX_ENTRIES, max(0, free), rng.randrange(4, MAX_ENTRIES + 1))):
                te = p4r.TableEntry(table_id=t.preamble.id)
                for mf in t.match_fields:
                    fm = _field_match(rng, mf, pools)
                    if fm is not None:
                        te.match.append(fm)
                if needs_priority:
                    te.priority = prios[i]
                elif not te.match:
                    continue
                key = b"".join(m.SerializeToString() for m in te.match) + struct.pack(">i", te.priority)
                if key in seen:
                    continue
                seen.add(key)
                if prof is not None:
                    gids, mids = prof_groups.get(prof.preamble.id, []), prof_members.get(prof.preamble.id, [])
                    if gids and rng.random() < 0.7:
                        te.action.action_profile_group_id = rng.choice(gids)
                    elif mids:
                        te.action.action_profile_member_id = rng.choice(mids)
                    else:
                        continue
                else:
                    te.action.action.CopyFrom(_action(rng, info, rng.choice(entry_actions), pools))
                entries.append(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=te)))
        if prof is None and not t.const_default_action_id and default_actions and rng.random() < 0.8:
            te = p4r.TableEntry(table_id=t.preamble.id, is_default_action=True)
            te.action.action.CopyFrom(_action(rng, info, rng.choice(default_actions), pools))
            defaults.append(p4r.Update(type=p4r.Update.MODIFY, entity=p4r.Entity(table_entry=te)))
    return members + groups + entries + defaults


def counter_reads(info: p4i.P4Info) -> list[p4r.Entity]:
    """Wildcard reads of every indirect counter and every direct counter of P4Info."""
    out = [p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=c.preamble.id)) for c in info.counters]
    out += [p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=p4r.TableEntry(table_id=c.direct_table_id))) for c in info.direct_counters]
    return out


# ---------------------------------------------------------------------- frames
def _mac(pools: Pools) -> st.SearchStrategy[bytes]:
    known = pools.pick(48)
    rand = st.binary(min_size=6, max_size=6)
    if not known:
        return rand
    return st.one_of(st.sampled_from([k.to_bytes(6, "big") for k in known]), rand)


def _bits(pools: Pools, width: int) -> st.SearchStrategy[int]:
    known = [v for v in pools.pick(width) if v < (1 << width)]
    rand = st.integers(0, (1 << width) - 1)
    return st.one_of(st.sampled_from(known), rand) if known else rand


def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack(f">{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


@st.composite
def _l4(draw: st.DrawFn, pools: Pools, proto: int) -> bytes:
    payload = draw(st.binary(max_size=48))
    if proto == 17:
        dport = draw(st.one_of(st.just(4791), _bits(pools, 16)))
        body = b""
        if dport == 4791:
            opcode = draw(st.sampled_from([0x04, 0x0A, 0x06, 0x11, 0x81, draw(st.integers(0, 255))]))
            qp = draw(st.integers(0, (1 << 24) - 1))
            psn = draw(st.integers(0, (1 << 24) - 1))
            body = struct.pack(">BBHII", opcode, 0x40, 0xFFFF, qp, psn) + payload + draw(st.binary(min_size=4, max_size=4))
        else:
            body = payload
        sport = draw(st.integers(0, 0xFFFF))
        return struct.pack(">HHHH", sport, dport, 8 + len(body), draw(st.sampled_from([0, 0x1234]))) + body
    if proto == 6:
        return struct.pack(">HHIIBBHHH", draw(st.integers(0, 0xFFFF)), draw(_bits(pools, 16)),
                           draw(st.integers(0, 2**32 - 1)), 0, 0x50, draw(st.integers(0, 255)), 1024, 0, 0) + payload
    return payload


@st.composite
def _ipv4(draw: st.DrawFn, pools: Pools) -> bytes:
    proto = draw(st.one_of(st.sampled_from([17, 17, 6, 1]), _bits(pools, 8)))
    l4 = draw(_l4(pools, proto))
    tos = draw(st.integers(0, 63)) << 2 | draw(st.integers(0, 3))
    ttl = draw(st.one_of(st.sampled_from(TTLS), st.integers(0, 255)))
    src = draw(_bits(pools, 32))
    dst = draw(_bits(pools, 32))
    ihl_opts = draw(st.sampled_from([b"", b"", b"\x01\x01\x01\x00", b"\x44\x08\x05\x00" + bytes(4)]))
    ihl = 5 + len(ihl_opts) // 4
    hdr = struct.pack(">BBHHHBBHII", 0x40 | ihl, tos, 20 + len(ihl_opts) + len(l4), draw(st.integers(0, 0xFFFF)),
                      draw(st.sampled_from([0, 0x4000])), ttl, proto, 0, src, dst) + ihl_opts
    if draw(st.booleans()):
        hdr = hdr[:10] + struct.pack(">H", _csum(hdr)) + hdr[12:]
    return hdr + l4


@st.composite
def _ipv6(draw: st.DrawFn, pools: Pools) -> bytes:
    nh = draw(st.one_of(st.sampled_from([17, 6, 58]), _bits(pools, 8)))
    l4 = draw(_l4(pools, nh))
    tc = draw(st.integers(0, 255))
    flow = draw(st.integers(0, (1 << 20) - 1))
    hop = draw(st.one_of(st.sampled_from(TTLS), st.integers(0, 255)))
    src = draw(st.one_of(_bits(pools, 128), st.just(0xFD00 << 112 | draw(st.integers(0, 0xFFFF)))))
    dst = draw(st.one_of(_bits(pools, 128), st.just(0xFD00 << 112 | draw(st.integers(0, 0xFFFF)))))
    return (struct.pack(">IHBB", 6 << 28 | tc << 20 | flow, len(l4), nh, hop)
            + src.to_bytes(16, "big") + dst.to_bytes(16, "big") + l4)


@st.composite
def _arp(draw: st.DrawFn, pools: Pools) -> bytes:
    op = draw(st.sampled_from([1, 2, 3]))
    return (struct.pack(">HHBBH", 1, 0x0800, 6, 4, op) + draw(_mac(pools)) + struct.pack(">I", draw(_bits(pools, 32)))
            + bytes(6) + struct.pack(">I", draw(_bits(pools, 32))))


@st.composite
def _frame(draw: st.DrawFn, pools: Pools) -> tuple[int, bytes]:
    port = draw(st.sampled_from(PORTS))
    dst, src = draw(_mac(pools)), draw(_mac(pools))
    kind = draw(st.sampled_from(["ipv4"] * 5 + ["ipv6"] * 2 + ["arp", "etype", "etype", "vlan", "raw", "short",
                                                              "pause"]))
    if kind == "ipv4":
        body, etype = draw(_ipv4(pools)), 0x0800
    elif kind == "ipv6":
        body, etype = draw(_ipv6(pools)), 0x86DD
    elif kind == "arp":
        body, etype = draw(_arp(pools)), 0x0806
    elif kind == "vlan":
        inner = draw(st.sampled_from([0x0800, 0x86DD]))
        body = struct.pack(">HH", draw(st.integers(0, 0xFFFF)), inner) + draw(_ipv4(pools) if inner == 0x0800 else _ipv6(pools))
        etype = 0x8100
    elif kind == "etype":
        etype = draw(_bits(pools, 16))
        if etype == 0x8808:
            etype = 0x88B5  # MAC control only as the "pause" kind below (no random quanta)
        body = draw(st.one_of(_ipv4(pools), st.binary(min_size=0, max_size=64)))
    elif kind == "short":
        etype = draw(st.sampled_from([0x0800, 0x86DD, 0x0806]))
        body = draw(_ipv4(pools))[: draw(st.integers(0, 19))]
    elif kind == "pause":
        # 802.3x PAUSE, or PFC with quanta 0 (XON): a PFC frame that pauses a class makes
        # the programs hold that class's packets by recirculation for a time (pfc.p4), and
        # how often a held packet goes round depends on each target's speed, so counters
        # would differ by timing alone. Pausing is held to the same behaviour on both
        # targets by tests/dataplane/test_pfc.py instead.
        dst, etype = b"\x01\x80\xc2\x00\x00\x01", 0x8808
        opcode = draw(st.sampled_from([0x0001, 0x0101]))
        quanta = ([draw(st.integers(0, 0xFFFF))] + [0] * 7 if opcode == 0x0001 else [0] * 8)
        body = struct.pack(">HH8H", opcode, draw(st.integers(0, 255)), *quanta) + bytes(26)
    else:
        return port, draw(st.binary(min_size=14, max_size=80))
    return port, dst + src + struct.pack(">H", etype) + body


def frames(pools: Pools) -> st.SearchStrategy[tuple[int, bytes]]:
    """(ingress port, Ethernet frame) pairs aimed at the program's entries and parser."""
    return _frame(pools)
