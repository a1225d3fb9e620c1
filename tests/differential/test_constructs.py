"""The constructs p4switch once refused or ran differently, on both targets with hand-made frames.

The corpus-wide run (test_corpus.py) draws its frames at random, so it may
miss the one path that exercises a construct. Here every construct gets the
frames (and entries) that reach it, worked out by hand: BMv2 must send what
p4switch sends, and both must send the frames written below.

Names defined here: `CASES`, `Case`, `entry`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from p4switch.proto import p4i, p4r

from .deviations import DEVIATIONS
from .rig import Outputs

VALID = Path(__file__).resolve().parents[1] / "unit" / "frontend" / "corpus" / "valid"
ETH = bytes.fromhex("020000000001" "020000000002" "1234")
ETH_SE = bytes.fromhex("020000000001" "020000000002" "88b5")
PAD = bytes(46)  # frames of at least 60 bytes, as any port sends them


@dataclass(frozen=True, kw_only=True)
class Entry:
    """A table entry by P4Info names: key values (an int, or (value, mask) for ternary)."""

    table: str
    keys: dict[str, int | tuple[int, int]]
    action: str
    params: tuple[int, ...] = ()
    priority: int = 0


def _canonical(v: int) -> bytes:
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def entry(info: p4i.P4Info, e: Entry) -> p4r.Update:
    """The INSERT of `e` in `info`'s ids."""
    table = next(t for t in info.tables if t.preamble.name == e.table)
    action = next(a for a in info.actions if a.preamble.name == e.action)
    te = p4r.TableEntry(table_id=table.preamble.id, priority=e.priority)
    for mf in table.match_fields:
        v = e.keys[mf.name]
        fm = te.match.add(field_id=mf.id)
        if isinstance(v, tuple):
            fm.ternary.value, fm.ternary.mask = _canonical(v[0] & v[1]), _canonical(v[1])
        else:
            fm.exact.value = _canonical(v)
    te.action.action.action_id = action.preamble.id
    for p, v in zip(action.params, e.params, strict=True):
        te.action.action.params.add(param_id=p.id, value=_canonical(v))
    return p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=te))


@dataclass(frozen=True, kw_only=True)
class Case:
    """Frames into port 1 of `program` (after `entries`) and what must come out, per port."""

    program: str
    frames: tuple[bytes, ...]
    out: dict[int, tuple[bytes, ...]]
    entries: tuple[Entry, ...] = ()


def _op(op: int, idx: int, a: int, b: int, items: bytes = bytes([1, 2, 3, 4, 5, 6])) -> bytes:
    return ETH + bytes([op, idx, a, b]) + items + b"pay" + PAD


EXIT_ENTRIES = (
    Entry(table="I.t_exit", keys={"hdr.op.a": 5}, action="I.set_and_exit", params=(0x22,)),
    Entry(table="I.t_exit2", keys={"hdr.op.a": 5}, action="I.set_and_exit", params=(0x33,)),
    Entry(table="I.t_stack", keys={"hdr.items[0].v": (0x10, 0xF0)}, action="I.setbyte", params=(0x44,), priority=1),
    Entry(table="I.t_after", keys={"hdr.items[1].v": (0x20, 0xF0)}, action="I.add", priority=1),
)


def _union(op: int, after: str) -> tuple[bytes, bytes]:
    head = ETH + bytes([1, 2, op])
    return head + bytes.fromhex("11" "2233") + b"pay" + PAD, head + bytes.fromhex(after) + b"pay" + PAD


def _nested(dst_low: int, kind: int, y: int, src_low: int, x: int, y_out: int) -> tuple[bytes, bytes]:
    return (bytes([2, 0, 0, 0, 0, dst_low]) + bytes(6) + b"\x12\x34" + bytes([kind, 0, y]) + b"pay" + PAD,
            bytes([2, 0, 0, 0, 0, dst_low, 0, 0, 0, 0, 0, src_low]) + b"\x12\x34" + bytes([kind, x, y_out])
            + b"pay" + PAD)


UNIONS = [_union(0, "11" "2233"), _union(1, "11" "2233" "11"), _union(2, "2233" "2233"),
          _union(3, "2233" "11" "2234"), _union(4, "11" "2233" "5a")]
NESTED = [_nested(1, 0x13, 0, 0xB1, 1, 0x92), _nested(2, 0x13, 0, 0xD1, 1, 0x81),
          _nested(1, 0x25, 4, 0x00, 2, 0x45), _nested(1, 0x31, 0, 0xFF, 0, 0x00)]
LOOK_IN = [ETH + bytes.fromhex("14aa1234" "8005") + b"pay" + PAD, ETH + bytes.fromhex("27bb" "c007") + b"pay" + PAD,
           ETH + bytes.fromhex("33cc") + b"pay" + PAD]
LOOK_OUT = [bytes.fromhex("020000000001" "0200000000aa" "1234" "14aa1234" "8406") + b"pay" + PAD,
            bytes.fromhex("020000000001" "0200000000bb" "1234" "27bb" "3f08") + b"pay" + PAD,
            bytes.fromhex("020000000001" "0200000000cc" "1234" "33cc") + b"pay" + PAD]

def _lenient(a: int, b: int, tag: int, c: int, d: int) -> bytes:
    return ETH + bytes([a, b]) + tag.to_bytes(2, "big") + bytes([c, d]) + b"pay" + PAD


def _equality(etype: int, opts: str, flags: int) -> tuple[bytes, bytes]:
    """header_equality.p4: a frame (options `opts`, 3 bytes each) and what leaves with `flags` in front."""
    head = bytes.fromhex("020000000001" "020000000002")
    tail = bytes.fromhex(opts) + b"pay" + PAD
    return head + etype.to_bytes(2, "big") + tail, head + bytes.fromhex("88b6") + bytes([flags]) + tail


# flags: 1 first == rest[0], 2 their varbit data equal, 4 {first, rest[0]} == rest, 8 rest[0] != rest[1]
EQUALITY = [_equality(1, "010203" "010203", 0x0B), _equality(1, "010203" "010204", 0x08),
            _equality(2, "010203" "010203" "010203", 0x07), _equality(2, "010203" "010203" "010204", 0x0B),
            _equality(2, "050203" "010203" "010203", 0x02)]

def _stamped(etype: int, src_low: int) -> bytes:
    return bytes.fromhex("020000000001" "0200000000") + bytes([src_low]) + etype.to_bytes(2, "big") + b"pay" + PAD


def _kinds(kind: int, by_table: int, by_parser: int) -> tuple[bytes, bytes]:
    head = bytes.fromhex("020000000001" "020000000002") + kind.to_bytes(2, "big")
    return head + bytes(2) + b"pay" + PAD, head + bytes([by_table, by_parser]) + b"pay" + PAD


# enum_int_masks.p4: (kind, the table's mark, the parser's mark)
KINDS = [_kinds(0x1234, 1, 1), _kinds(0x56AB, 2, 2), _kinds(0x0001, 3, 0), _kinds(0x00F1, 3, 0),
         _kinds(0x1235, 0, 0)]

def _indexed(i: int, out: str = "") -> bytes:
    """stack_computed_index.p4: op (index i) then items a1 a2 a3 a4, or the given op and items."""
    body = bytes.fromhex(out) if out else bytes([i, 0, 0, 0, 0xA1, 0xA2, 0xA3, 0xA4])
    return bytes.fromhex("020000000001" "020000000002" "1234") + body + b"pay" + PAD


# op: i, got = items[i] ^ the parser's items[i] (+ 1 when a2), next = items[i + 1] + 1 (i < 3), low =
# items[i] & 0x0f; items[i] + 0x10 for i < 2; the index is i's low two bits (frames too short for four
# items, which the control leaves alone, come from test_corpus.py's random frames)
INDEXED = [(_indexed(i), _indexed(i, out)) for i, out in
           ((0, "0000a301" "b1a2a3a4"), (1, "0101a402" "a1b2a3a4"), (2, "0200a503" "a1a2a3a4"),
            (3, "03000004" "a1a2a3a4"), (0xF6, "f600a503" "a1a2a3a4"))]

LENIENT_ENTRIES = (
    Entry(table="I.by_a", keys={"h.op.a": 3}, action="I.set_c", params=(0x33,)),
    Entry(table="I.with_prop", keys={"h.op.a": 3}, action="I.set_d", params=(0x55,)),
)

CASES = {
    # out/inout calls inside expressions (side_effect_calls.p4; test_sideeffects.py works them out)
    "calls-in-expressions": Case(
        program="side_effect_calls",
        frames=(ETH_SE + bytes([3, 0, 10, 5, 0, 20, 0, 9]) + b"payload" + PAD,
                ETH_SE + bytes([6, 0, 0, 1, 0, 0, 0, 0]) + b"p" + PAD),
        out={2: (bytes.fromhex("020000000001" "020000000b09" "88b5") + bytes([4, 8, 21, 7, 11, 21, 21, 63])
                 + b"payload" + PAD,
                 # a = 6: parser h 1, n 1 -> 2; a 7, b = 7 + 7; c = 0 + bump(c) = 1; `a == 7 ||` skips
                 # step, the && one runs (d 2): e 3; m = twice(g, a) = 14 (g 7); h = twice(g, bump(f))
                 # + g = 2 + 1 (f 1, g 1); switch (bump(m)): m 15, e |= 8; src = n 2, m 15
                 bytes.fromhex("020000000001" "02000000020f" "88b5") + bytes([7, 14, 1, 2, 11, 1, 1, 3])
                 + b"p" + PAD),
             }),
    "unions-in-stacks-and-structs": Case(
        program="union_stack", frames=tuple(f for f, _ in UNIONS), out={2: tuple(o for _, o in UNIONS)}),
    "struct-lookahead-and-struct-field": Case(program="lookahead_struct", frames=tuple(LOOK_IN), out={2: tuple(LOOK_OUT)}),
    "nested-action-run-control-argument-enum-masks": Case(
        program="nested_action_run", frames=tuple(f for f, _ in NESTED), out={2: tuple(o for _, o in NESTED)}),
    "exit-copies-out": Case(
        program="exit_copy_out", entries=EXIT_ENTRIES,
        frames=(_op(1, 0, 5, 0), _op(2, 0, 5, 0), _op(2, 0, 6, 1), _op(6, 0, 5, 0), _op(4, 2, 0, 0),
                _op(7, 0, 5, 0), _op(8, 0, 5, 0), _op(9, 0, 5, 0)),
        out={2: (_op(1, 0, 5, 0x11), _op(2, 0, 5, 0x22), _op(2, 0, 0xEE, 0x81), _op(6, 0, 0x33, 0),
                 _op(4, 2, 0, 0, bytes([1, 2, 3, 4, 5, 0x55])),
                 # alias_exit(items[0]): its direct write of items[0].v is undone by the copy-out
                 _op(7, 0, 5, 0, bytes([1, 0x66, 3, 4, 5, 6])),
                 # make_exit(out items[1]): the out header is copied back, exit or not
                 _op(8, 0, 5, 0, bytes([1, 2, 0x42, 0x43, 5, 6])),
                 # sub.apply(items[2], op.a): the sub-control's exit still copies both out
                 _op(9, 0, 0x32, 0, bytes([1, 2, 3, 4, 5, 0x31])))}),
    "stack-keyed-tables-bound-arguments-in-switch": Case(
        program="exit_copy_out", entries=EXIT_ENTRIES,
        frames=(_op(3, 1, 0, 0), _op(5, 0, 0, 0, bytes([0x11, 2, 0x23, 4, 5, 6])),
                _op(5, 0, 0, 0, bytes([0x01, 2, 0x23, 4, 5, 6]))),
        out={2: (_op(3, 1, 0, 0x80, bytes([1, 2, 4, 4, 5, 6])),
                 _op(5, 0, 0, 0x80, bytes([0x11, 2, 0x23, 0x44, 6, 6])),
                 _op(5, 0, 0x77, 0x80, bytes([0x01, 2, 0x23, 4, 5, 6])))}),
    # p4c_lenient.p4: what p4c compiles with a warning (or silently) runs as on BMv2
    "p4c-lenient-shapes": Case(
        program="p4c_lenient", entries=LENIENT_ENTRIES,
        frames=(_lenient(1, 0, 0, 0, 0), _lenient(2, 0, 0, 0, 0), _lenient(3, 7, 0, 0, 0), _lenient(4, 9, 0, 0, 0)),
        # a = 1, 2: the switch sets b; a = 3: both tables hit (the selector key ignored), the direct
        # meter's color (green, 0) read outside the action adds nothing; a = 4: tag 7 from an int literal
        out={2: (_lenient(1, 1, 0x5A5A, 0, 0), _lenient(2, 2, 0x5A5A, 0, 0),
                 _lenient(3, 7, 0x5A5A, 0x33, 0x55), _lenient(4, 9, 7, 0, 0))}),
    "header-and-stack-equality": Case(
        program="header_equality", frames=tuple(f for f, _ in EQUALITY), out={2: tuple(o for _, o in EQUALITY)}),
    # control_by_name.p4: Guard(s1) applies I's s1 when the type is not 0; s1's table I.s1.amount adds
    # its entry's n (5 for 0x1234) or the default's 1 to the source MAC
    "control-instance-passed-by-name": Case(
        program="control_by_name",
        entries=(Entry(table="I.s1.amount", keys={"h.eth.type": 0x1234}, action="I.s1.add", params=(5,)),),
        frames=(_stamped(0, 0x10), _stamped(0x1234, 0x10), _stamped(0x9999, 0x10)),
        out={2: (_stamped(0, 0x10), _stamped(0x1234, 0x15), _stamped(0x9999, 0x11))}),
    "int-masks-on-enum-keys": Case(
        program="enum_int_masks", frames=tuple(f for f, _ in KINDS), out={2: tuple(o for _, o in KINDS)}),
    "stack-elements-at-computed-indices": Case(
        program="stack_computed_index", frames=tuple(f for f, _ in INDEXED), out={2: tuple(o for _, o in INDEXED)}),
    "const-entries-priority": Case(
        program="const_entry_priority", frames=(b"\x01\x00" + PAD + bytes(12), b"\x02\x00" + PAD + bytes(12)),
        out={1: (b"\x01\x03" + PAD + bytes(12), b"\x02\x02" + PAD + bytes(12))}),
}


def _sorted(out: Outputs) -> dict[int, list[bytes]]:
    return {p: sorted(fs) for p, fs in out.items()}


# `path` as a parameter: conftest has p4c compile the programs ahead, in collection order
@pytest.mark.parametrize(("path", "case"), [(VALID / f"{c.program}.p4", c) for c in CASES.values()], ids=list(CASES))
def test_construct_runs_as_on_bmv2(path: Path, case: Case, rig, compiled) -> None:
    """BMv2 and p4switch send the same frames, and those are the ones worked out by hand."""
    prog = compiled(path)
    rig.load(prog)
    codes = rig.write([entry(prog.p4info, e) for e in case.entries])
    assert all(c == 0 for t in codes.values() for c, _ in t), codes
    got = rig.exchange([(1, f) for f in case.frames])
    want = {p: sorted(fs) for p, fs in case.out.items()}
    assert {t: _sorted(o) for t, o in got.items()} == {"bmv2": want, "p4switch": want}


# ---------------------------------------------------------------------- hash() over an invalid header
def _crc16_arc(data: bytes) -> int:
    crc = 0
    for b in data:
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if (crc ^ b) & 1 else crc >> 1
            b >>= 1
    return crc


def _ipv4(proto: int, l4: bytes) -> bytes:
    return (bytes.fromhex("020000000001" "020000000002" "0800" "4500") + (20 + len(l4)).to_bytes(2, "big")
            + bytes(4) + bytes([64, proto]) + bytes(2) + bytes([10, 0, 0, 1, 10, 0, 0, 2]) + l4)


def test_bmv2_hashes_what_an_invalid_header_held_before(rig, compiled) -> None:
    """hash_invalid_header.p4, UDP frames before and after TCP ones, one at a time.

    p4switch leaves the invalid TCP header out of hash(): the same UDP frame
    hashes the same every time. BMv2 hashes the TCP fields as they are in
    its PHV: zeros on a fresh pipeline, then the ports of the last TCP frame
    (p4c-bm2-ss copies hash() inputs into metadata first, and BMv2 keeps an
    invalid header's field values from packet to packet). The checksums,
    computed from the header fields, skip the invalid header on both.
    That is the deviation invalid-header-fields.
    """
    assert "invalid-header-fields" in {d.name for d in DEVIATIONS}
    rig.load(compiled(VALID / "hash_invalid_header.p4"))
    udp = _ipv4(17, bytes.fromhex("1234" "12b7" "0008" "0000"))
    tcp1, tcp2 = _ipv4(6, bytes.fromhex("aabb" "ccdd") + bytes(4)), _ipv4(6, bytes.fromhex("0102" "0304") + bytes(4))
    got: dict[str, list[bytes]] = {"bmv2": [], "p4switch": []}
    for frame in (udp, tcp1, udp, tcp2, udp):
        out = rig.exchange([(1, frame)])
        for t in got:
            (data,) = out[t][2]
            if frame is udp:
                got[t].append(data[len(frame):])
    ips = bytes([10, 0, 0, 1, 10, 0, 0, 2])
    ck = _crc16_arc(bytes.fromhex("1234") + ips[:4]).to_bytes(2, "big")  # {tcp.sport, udp.sport, ipv4.src}
    verr = b"\x01"  # ipv4.id 0 is not the crc16 of {ipv4.src, tcp.sport, udp.dport}

    def res(tcp_ports: bytes | None) -> bytes:
        sport = tcp_ports[:2] if tcp_ports is not None else b""
        h16 = _crc16_arc(ips + b"\x11" + (tcp_ports or b"")).to_bytes(2, "big")
        h32 = zlib.crc32(sport + bytes.fromhex("1234" "0800" "12b7")).to_bytes(4, "big")
        return h16 + h32 + ck + verr

    assert got["p4switch"] == [res(None)] * 3
    assert got["bmv2"] == [res(bytes(4)), res(bytes.fromhex("aabbccdd")), res(bytes.fromhex("01020304"))]
