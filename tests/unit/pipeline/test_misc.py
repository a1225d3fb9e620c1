"""Header unions, sub-parsers, stacks, header assignment, enums, direct meters, payload checksums
(program: p4/misc.p4; a 'res' header follows ethernet)."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4switch.pipeline.state import ActionCall, FieldMatch, TableEntry

ETH = bytes.fromhex("020000000001") + bytes.fromhex("020000000002")


def res(frame: bytes) -> dict[str, int]:
    return dict(zip(("union_kind", "kind", "same", "color", "miss", "flag"), frame[14:20], strict=False))


@pytest.fixture
def sw(make_switch):
    return make_switch("misc")


def one(sw, frame: bytes) -> bytes:
    (port, data), = sw.send(1, frame)
    return data


def test_sub_parser_fills_union_member_and_enum(sw):
    """The sub-parser extracts union member b; the serializable enum carries its value."""
    data = one(sw, ETH + b"\x99\x99" + b"\x12\x34" + b"rest")
    r = res(data)
    assert r["union_kind"] == 2 and r["kind"] == 0x42
    assert data[20:] == b"\x12\x34rest"


def test_set_valid_on_union_member_invalidates_the_other(sw):
    """Making union member b valid invalidates a: only b is emitted."""
    data = one(sw, ETH + b"\x99\x99" + b"\xaa" + b"rest")
    r = res(data)
    assert r["union_kind"] == 1 and r["kind"] == 0x41
    assert data[20:] == b"\x12\x34rest"


def test_stack_push_front_and_header_assignment(sw):
    """push_front shifts the stack; header assignment copies value and validity; == compares."""
    data = one(sw, ETH + b"\x77\x77" + b"tail")
    assert res(data)["same"] == 1
    assert data[20:] == b"\x05\x06tail"


def test_direct_meter_colour_and_miss(sw):
    """A hit reads its entry's direct meter colour; a miss runs the @defaultonly default."""
    s = sw.switch
    assert res(one(sw, ETH + b"\x00\x00"))["miss"] == 1
    entry = TableEntry(match={0: FieldMatch(kind="exact", value=0x020000000002)},
                       action=ActionCall(action="I.read_color"))
    s.table_insert("I.metered", entry)
    r = res(one(sw, ETH + b"\x00\x00"))
    assert r["miss"] == 0 and r["color"] == 0
    s.direct_meter_set("I.metered", entry, (1, 10, 1, 1))
    colors = [res(one(sw, ETH + b"\x00\x00"))["color"] for _ in range(3)]
    assert colors[0] == 0 and colors[-1] == 2


def test_defaultonly_action_refused_in_entries(sw):
    """@defaultonly actions cannot be used by entries."""
    from p4switch.pipeline.state import StateError

    with pytest.raises(StateError):
        sw.switch.table_insert("I.metered", TableEntry(
            match={0: FieldMatch(kind="exact", value=1)}, action=ActionCall(action="I.nothing")))


def test_udp_checksum_with_payload_is_correct(sw):
    """update_checksum_with_payload covers the payload: scapy agrees with the result."""
    frame = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
                  / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2, chksum=0) / b"some data!")
    data = one(sw, frame)
    pkt = Ether(data[:14] + data[20:])
    got = pkt[UDP].chksum
    del pkt[UDP].chksum
    assert Ether(bytes(pkt))[UDP].chksum == got


def test_bit_slice_to_bool(sw):
    """A 1-bit slice compared to 1 gives a bool that round-trips through metadata."""
    assert res(one(sw, ETH + b"\x00\x00"))["flag"] == 1  # dst ends in 0x01
    assert res(one(sw, ETH[:5] + b"\x02" + ETH[6:] + b"\x00\x00"))["flag"] == 0
