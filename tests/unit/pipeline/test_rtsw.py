"""The aizone RTSW program on the pipeline: ECMP selector hashing as BMv2, E-ECMP, packet I/O."""

from __future__ import annotations

import struct

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4switch.pipeline import hashes
from p4switch.pipeline.state import ActionCall, FieldMatch, Group, Member, TableEntry

R = "FabricIngress.routing."
MEMBER_PORTS = {1: 11, 2: 12, 3: 13, 4: 14}


@pytest.fixture
def sw(make_switch):
    h = make_switch("rtsw", cpu_port=255, packet_in=True)
    s = h.switch
    for mid, port in MEMBER_PORTS.items():
        s.member_insert(R + "ecmp_selector", Member(member_id=mid, action=ActionCall(
            action=R + "set_output", args=(port, 0x0200000000AA, 0x0200000000BB))))
    s.group_insert(R + "ecmp_selector", Group(group_id=1, members=[(m, 1) for m in MEMBER_PORTS]))
    s.table_insert(R + "next_hop", TableEntry(match={0: FieldMatch(kind="exact", value=1)}, group_id=1))
    s.table_insert(R + "ipv4_route", TableEntry(match={0: FieldMatch(kind="lpm", value=0x0A000000, prefix_len=8)},
                                                action=ActionCall(action=R + "set_next_id", args=(1,))))
    return h


def roce(sport: int, qp: int, dst: str = "10.0.1.2") -> bytes:
    bth = struct.pack(">BBHII", 0x0A, 0, 0xFFFF, qp & 0xFFFFFF, 0)
    return bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
                 / IP(src="10.0.0.1", dst=dst, ttl=64) / UDP(sport=sport, dport=4791) / bth / (b"\x00" * 16))


ECMP_MIX = 0x9E3779B1  # p4/include/define.p4


def expected_port(sport: int, qp_in_hash: int, salt: int = 0) -> int:
    """p4/include/control/hashing.p4's ecmp_key, then BMv2: crc16(key) % members in handle order."""
    flow = hashes.crc32(hashes.pack_fields([(0x0A000001, 128), (0x0A000102, 128), (17, 8), (sport, 16),
                                            (4791, 16), (qp_in_hash, 24)]))
    key = ((flow ^ salt) * ECMP_MIX) & 0xFFFFFFFF
    return MEMBER_PORTS[hashes.crc16(key.to_bytes(4, "big")) % 4 + 1]


@pytest.mark.parametrize("sport", [1000, 1001, 4242, 50000], ids=lambda s: f"sport{s}")
def test_ecmp_member_is_crc16_of_selector_fields(sw, sport):
    """The chosen member is the one BMv2 picks: crc16(packed selector keys) % group size."""
    (port, data), = sw.send(1, roce(sport, qp=77))
    assert port == expected_port(sport, 0)
    assert Ether(data)[IP].ttl == 63


def test_eecmp_mode_hashes_destination_qp(sw):
    """In E-ECMP mode the BTH destination QP joins the hash."""
    sw.switch.table_set_default("FabricIngress.config.switch_config",
                                ActionCall(action="FabricIngress.config.set_config", args=(2, 0)))
    ports = set()
    for qp in range(1, 40):
        (port, _), = sw.send(1, roce(1000, qp=qp))
        assert port == expected_port(1000, qp)
        ports.add(port)
    assert len(ports) > 1


def test_group_modify_and_member_delete_refused_while_used(sw):
    """A member in a group cannot be deleted; after removing it from the group it can."""
    from p4switch.pipeline.state import Code, StateError

    s = sw.switch
    with pytest.raises(StateError) as ei:
        s.member_delete(R + "ecmp_selector", 4)
    assert ei.value.code == Code.FAILED_PRECONDITION
    s.group_modify(R + "ecmp_selector", Group(group_id=1, members=[(2, 1)]))
    s.member_delete(R + "ecmp_selector", 4)
    (port, _), = sw.send(1, roce(1000, qp=1))
    assert port == 12


def test_packet_out_goes_to_the_named_port(sw):
    """A PacketOut with egress_port metadata leaves on that port without its header."""
    frame = bytes(Ether(dst="02:00:00:00:00:09") / IP(dst="10.9.9.9") / UDP())
    sw.switch.packet_out(frame, {"egress_port": 7, "_pad": 0})
    out = sw.take()
    assert out == [(7, frame)]


def test_packet_to_cpu_port_becomes_packet_in_with_metadata(sw):
    """Traffic sent to the CPU port reaches the packet-in handler with ingress_port."""
    s = sw.switch
    s.member_insert(R + "ecmp_selector", Member(member_id=9, action=ActionCall(
        action=R + "set_output", args=(255, 1, 2))))
    s.table_insert(R + "next_hop", TableEntry(match={0: FieldMatch(kind="exact", value=2)}, member_id=9))
    s.table_insert(R + "ipv4_route", TableEntry(match={0: FieldMatch(kind="lpm", value=0x0B000000, prefix_len=8)},
                                                action=ActionCall(action=R + "set_next_id", args=(2,))))
    assert sw.send(6, roce(1, 1, dst="11.0.0.1")) == []
    (payload, meta), = sw.packet_ins
    assert meta == {"ingress_port": 6, "_pad": 0}
    assert Ether(payload)[IP].dst == "11.0.0.1"


def test_counters_count_rx_and_tx_per_port(sw):
    """rx_port and tx_port counters count what went through."""
    sw.send(3, roce(1000, 1))
    assert sw.switch.counter_read("FabricIngress.counters.rx_port", 3)[0] == 1
    port = expected_port(1000, 0)
    assert sw.switch.counter_read("FabricEgress.counters.tx_port", port)[0] == 1
