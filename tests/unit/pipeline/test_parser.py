"""Parser and control-flow features (program: p4/parse.p4); the program reports in a 'res' header."""

from __future__ import annotations

import struct

import pytest

from p4switch.pipeline.state import ActionCall, FieldMatch, TableEntry

ETH = bytes.fromhex("020000000001") + bytes.fromhex("020000000002")
RES = struct.Struct(">BBIHBBH")
RES_FIELDS = ("path", "nlabels", "info", "err", "misc1", "misc2", "misc3")


def res(frame: bytes) -> dict[str, int]:
    return dict(zip(RES_FIELDS, RES.unpack_from(frame, 14), strict=False))


def mpls(label: int, bos: int, ttl: int = 64) -> bytes:
    return struct.pack(">I", (label << 12) | (bos << 8) | ttl)


def ipv4(ihl: int = 5, options: bytes = b"") -> bytes:
    return bytes([0x40 | ihl]) + bytes(7) + bytes([64, 17, 0, 0]) + bytes(8) + options


@pytest.fixture
def sw(make_switch):
    return make_switch("parse")


def one(sw, frame: bytes) -> bytes:
    out = sw.send(1, frame)
    assert len(out) == 1, out
    return out[0][1]


@pytest.mark.parametrize("etype,path", [
    (0x9ABC, 3), (0x1234, 4), (0x2000, 0), (0x0800, 1),
], ids=["mask", "range", "default", "exact"])
def test_select_exact_mask_range_default(sw, etype, path):
    """select picks the first matching case: exact, value &&& mask, range, default."""
    body = ipv4() if etype == 0x0800 else b"\x00" * 30
    assert res(one(sw, ETH + etype.to_bytes(2, "big") + body))["path"] == path


def test_value_set_matches_after_control_plane_write(sw):
    """A value_set member makes its select case match."""
    frame = ETH + b"\x77\x77" + b"\x00" * 30
    assert res(one(sw, frame))["path"] == 0
    sw.switch.value_set_write("P.vs", [(0x7777, 0xFFFF)])
    assert res(one(sw, frame))["path"] == 5


def test_range_state_advances_over_two_bytes(sw):
    """advance(16) skips two bytes: they are not in the output."""
    frame = ETH + b"\x10\x00" + b"\xaa\xbb" + b"rest"
    data = one(sw, frame)
    assert data.endswith(b"rest") and b"\xaa\xbb" not in data[14 + 12:]


def test_header_stack_extracts_labels_until_bos(sw):
    """mpls.next extracts up to bottom-of-stack; lookahead picks IPv4 after it."""
    frame = ETH + b"\x88\x47" + mpls(10, 0) + mpls(20, 0) + mpls(30, 1) + ipv4() + b"pay"
    data = one(sw, frame)
    r = res(data)
    assert r["nlabels"] == 3 and r["path"] == 1 and r["err"] == 0
    # pop_front(1) removed the first label; the new first label is 20 with ttl 64
    labels = data[26:26 + 8]
    assert labels == mpls(20, 0, 63 + 1)[:3] + bytes([64]) + mpls(30, 1)
    assert data.endswith(b"pay")


def test_header_stack_overflow_is_stack_out_of_bounds(sw):
    """A fourth label overflows mpls[3]: parser_error StackOutOfBounds, packet continues."""
    frame = ETH + b"\x88\x47" + mpls(1, 0) + mpls(2, 0) + mpls(3, 0) + mpls(4, 1)
    r = res(one(sw, frame))
    assert r["err"] == 3 and r["nlabels"] == 3


def test_varbit_options_extracted_and_emitted(sw):
    """extract(hdr, bits) reads the IPv4 options as a varbit; emit writes them back."""
    opts = b"\x01\x02\x03\x04\x05\x06\x07\x08"
    frame = ETH + b"\x08\x00" + ipv4(ihl=7, options=opts) + b"tail"
    data = one(sw, frame)
    assert data[14 + 12:] == ipv4(ihl=7, options=opts) + b"tail"


def test_verify_failure_sets_custom_error(sw):
    """verify(false, error.BadIhl) ends the parser with that error."""
    r = res(one(sw, ETH + b"\x08\x00" + ipv4(ihl=4) + b"x" * 10))
    assert r["err"] == 9


def test_varbit_larger_than_packet_is_packet_too_short(sw):
    """Options longer than the packet: PacketTooShort."""
    r = res(one(sw, ETH + b"\x08\x00" + ipv4(ihl=15)))
    assert r["err"] == 1


def test_lookahead_past_end_is_packet_too_short(sw):
    """lookahead beyond the packet end fails the parser with PacketTooShort."""
    r = res(one(sw, ETH + b"\x88\x47" + mpls(5, 1)))
    assert r["err"] == 1 and r["nlabels"] == 1


def test_ternary_range_priority_and_switch_on_action_run(sw):
    """The highest-priority matching entry wins; switch(action_run) sees its action."""
    s = sw.switch
    s.table_insert("I.classify", TableEntry(
        match={0: FieldMatch(kind="ternary", value=0x02, mask=0x0F)}, priority=10,
        action=ActionCall(action="I.set_info", args=(111,))))
    s.table_insert("I.classify", TableEntry(
        match={0: FieldMatch(kind="ternary", value=0x02, mask=0xFF),
               1: FieldMatch(kind="range", value=0, high=0x10)}, priority=20,
        action=ActionCall(action="I.set_info", args=(222,))))
    r = res(one(sw, ETH + b"\x20\x00" + b"\x00" * 30))
    assert r["info"] == 222 and r["path"] == 0x80
    s.table_delete("I.classify", TableEntry(
        match={0: FieldMatch(kind="ternary", value=0x02, mask=0xFF),
               1: FieldMatch(kind="range", value=0, high=0x10)}, priority=20))
    assert res(one(sw, ETH + b"\x20\x00" + b"\x00" * 30))["info"] == 111


@pytest.mark.parametrize("etype,misc1", [(0x0800, 1), (0x88AA, 2), (0x2000, 3)],
                         ids=["first", "second", "wildcard"])
def test_const_entries_in_order(sw, etype, misc1):
    """const entries: the first matching entry in program order wins."""
    body = ipv4() if etype == 0x0800 else b"\x00" * 30
    assert res(one(sw, ETH + etype.to_bytes(2, "big") + body))["misc1"] == misc1


def test_const_entries_table_refuses_writes(sw):
    """A table with const entries cannot be written."""
    from p4switch.pipeline.state import Code, StateError

    with pytest.raises(StateError) as ei:
        sw.switch.table_insert("I.consts", TableEntry(
            match={0: FieldMatch(kind="ternary", value=1, mask=1)}, priority=1,
            action=ActionCall(action="I.set_misc", args=(1,))))
    assert ei.value.code == Code.PERMISSION_DENIED


@pytest.mark.parametrize("src_lo,path", [(1, 11), (2, 23), (3, 23), (9, 99)],
                         ids=["case1", "fallthrough2", "case3", "default"])
def test_arithmetic_functions_subcontrols_and_switch(sw, src_lo, path):
    """Saturating ops, signed concat, a function, a sub-control's inout, slice write, switch."""
    eth = bytes.fromhex("020000000001") + bytes.fromhex("0200000000") + bytes([src_lo])
    r = res(one(sw, eth + b"\x08\x01" + b"\x00" * 30))
    assert r["misc2"] == 255 ^ 0 ^ 6
    assert r["misc3"] == 0xFB12
    assert r["info"] == 0xAB00002A
    assert r["path"] == path
