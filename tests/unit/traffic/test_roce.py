"""RoCEv2 packets: known answers, build -> bytes -> dissect, segmentation, parse robustness."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import checksum

from traffic.builders import rdma_write, segment_write
from traffic.endpoint import Endpoint
from traffic.parser import Malformed, RoceInfo, icrc_ok, parse
from traffic.roce import RETH, ImmDt, Opcode, psn_add, psn_diff

# A CNP captured on a ConnectX-4 Lx NIC (ICRC 0x82fd002a).
CAPTURED_CNP = bytes.fromhex(
    "e41d2dab2bc27cfe9064 3b32080045c2003c718c"
    "400040119161 0a001101 0a001201"  # IPv4 10.0.17.1 -> 10.0.18.1
    "000012b700280000"  # UDP 0 -> 4791, checksum 0
    "8100ffff400001180000 0000"  # BTH: CNP, BECN, dest QP 0x118
    "00000000000000000000000000000000"  # 16 reserved bytes
    "82fd002a".replace(" ", "")
)
# A UC SEND Only with 18 payload bytes, 2 pad bytes, UDP checksum present.
UC_SEND_ONLY = bytes.fromhex(
    "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007"
    "c00012b7002caca2"
    "2460ffff000000d300cf1710"
    "4630818be28935d90e9a95505401be885e500000"
    "78f353f3"
)

SRC = Endpoint(mac="02:00:00:00:00:01", ip="10.9.0.1", port=49152)
DST = Endpoint(mac="02:00:00:00:00:02", ip="10.9.0.2", qpn=0x123456)
HEADERS: dict[str, Any] = {"src": SRC, "dst": DST, "rkey": 0xCAFE0001}


def _parsed(data: bytes) -> RoceInfo:
    info = parse(data)
    assert isinstance(info, RoceInfo), info
    return info


def _fix_ip_checksum(frame: bytearray) -> None:
    frame[24:26] = b"\x00\x00"
    frame[24:26] = struct.pack("!H", checksum(bytes(frame[14:34])))


def test_captured_cnp_frame_has_the_icrc_the_nic_computed() -> None:
    """scapy's ICRC over a real NIC's CNP matches the ICRC the NIC put on the wire."""
    info = _parsed(CAPTURED_CNP)
    assert info.icrc == 0x82FD002A
    assert info.icrc_ok
    assert info.opcode_name == "CNP"
    assert info.becn and not info.fecn
    assert info.dest_qp == 0x118
    assert info.ip_checksum_ok
    assert info.udp_checksum_ok is None


def test_uc_send_only_known_answers() -> None:
    """IPv4 checksum 0xb4d5, UDP checksum 0xaca2 and ICRC 0x78f353f3 all verify."""
    info = _parsed(UC_SEND_ONLY)
    assert (info.icrc, info.icrc_ok) == (0x78F353F3, True)
    assert info.ip_checksum_ok and info.udp_checksum_ok
    assert (info.opcode_name, info.dest_qp, info.psn, info.padcount) == (
        "UC_SEND_ONLY",
        211,
        13571856,
        2,
    )
    assert len(info.payload) == 18


def test_flipping_one_payload_bit_breaks_the_icrc() -> None:
    """Any change to an invariant byte is caught by the ICRC."""
    frame = bytearray(UC_SEND_ONLY)
    frame[60] ^= 0x01
    assert _parsed(bytes(frame)).icrc_ok is False


def test_variant_fields_are_masked_out_of_the_icrc() -> None:
    """TTL, DSCP/ECN, IP and UDP checksums and BTH FECN/BECN may change in flight: ICRC holds."""
    frame = bytearray(CAPTURED_CNP)
    frame[40:42] = b"\x12\x34"  # UDP checksum
    frame[22] = 7  # TTL
    frame[15] = 0x03  # DSCP 0, ECN CE
    frame[46] ^= 0xC0  # BTH FECN, BECN
    _fix_ip_checksum(frame)
    info = _parsed(bytes(frame))
    assert info.ip_checksum_ok and info.icrc_ok
    assert info.udp_checksum_ok is False
    assert info.fecn and not info.becn and info.ecn == 3


@pytest.mark.parametrize(
    ("position", "imm", "opcode", "has_reth"),
    [
        ("first", None, Opcode.RC_RDMA_WRITE_FIRST, True),
        ("middle", None, Opcode.RC_RDMA_WRITE_MIDDLE, False),
        ("last", None, Opcode.RC_RDMA_WRITE_LAST, False),
        ("last", 0xDEADBEEF, Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, False),
        ("only", None, Opcode.RC_RDMA_WRITE_ONLY, True),
        ("only", 0xDEADBEEF, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, True),
    ],
    ids=["first", "middle", "last", "last-imm", "only", "only-imm"],
)
def test_rdma_write_round_trips_through_bytes(
    position: str, imm: int | None, opcode: int, has_reth: bool
) -> None:
    """build -> bytes -> parse gives back every field, with valid checksums and ICRC."""
    payload = bytes(range(256)) * 4
    data = bytes(
        rdma_write(
            psn=0xABCDEF,
            payload=payload,
            va=0x1122334455667788,
            position=position,
            imm=imm,
            dlen=4096 if position == "first" else None,
            **HEADERS,
        )
    )
    info = _parsed(data)
    assert info.opcode == opcode
    assert (info.dest_qp, info.psn, info.src_port) == (0x123456, 0xABCDEF, 49152)
    assert (info.src_ip, info.dst_ip, info.src_mac, info.dst_mac) == (
        "10.9.0.1",
        "10.9.0.2",
        "02:00:00:00:00:01",
        "02:00:00:00:00:02",
    )
    assert info.payload == payload
    assert info.imm == imm
    assert info.ackreq == (position in ("last", "only"))
    if has_reth:
        assert info.reth is not None
        assert (info.reth.va, info.reth.rkey) == (0x1122334455667788, 0xCAFE0001)
        assert info.reth.dlen == (4096 if position == "first" else len(payload))
    else:
        assert info.reth is None
    assert info.icrc_ok and info.ip_checksum_ok
    assert info.dscp == 26


def test_scapy_dissects_reth_then_immdt_after_bth() -> None:
    """The RETH and ImmDt layers are bound so scapy itself dissects them."""
    pkt = Ether(bytes(rdma_write(psn=1, payload=b"abcd", va=0x10, imm=5, **HEADERS)))
    assert pkt.layers() == [Ether, IP, UDP, BTH, RETH, ImmDt, Raw]
    assert (pkt[RETH].va, pkt[RETH].rkey, pkt[RETH].dlen, pkt[ImmDt].imm) == (
        0x10,
        0xCAFE0001,
        4,
        5,
    )


def test_reth_wire_layout_is_va_rkey_dlen_big_endian() -> None:
    """RETH is 64-bit VA, 32-bit R_Key, 32-bit DMA length, right after the 12-byte BTH."""
    data = bytes(rdma_write(psn=0, payload=b"", va=0x0102030405060708, **HEADERS))
    reth = data[14 + 20 + 8 + 12 : 14 + 20 + 8 + 12 + 16]
    assert reth == bytes.fromhex("0102030405060708cafe000100000000")


def test_payload_is_padded_to_four_bytes_with_pad_count() -> None:
    """A 5-byte payload travels as 8 bytes with BTH PadCnt 3; parse strips the pad."""
    data = bytes(rdma_write(psn=0, payload=b"hello", **HEADERS))
    assert Ether(data)[BTH].padcount == 3
    assert len(data) == 14 + 20 + 8 + 12 + 16 + 8 + 4
    assert _parsed(data).payload == b"hello"


def test_udp_checksum_is_zero_unless_asked() -> None:
    """Like rxe and RoCE NICs, the UDP checksum is 0 by default; computed on request."""
    plain = _parsed(bytes(rdma_write(psn=0, payload=b"abcd", **HEADERS)))
    with_sum = _parsed(bytes(rdma_write(psn=0, payload=b"abcd", udp_checksum=True, **HEADERS)))
    assert plain.udp_checksum_ok is None
    assert with_sum.udp_checksum_ok is True and with_sum.icrc_ok


def test_ip_header_checksum_is_valid() -> None:
    """The IPv4 header of a built packet sums to zero."""
    data = bytes(rdma_write(psn=0, payload=b"abcd", **HEADERS))
    assert checksum(data[14:34]) == 0
    assert data[14 + 6] & 0x40  # DF: RoCEv2 is never fragmented


def test_icrc_ok_accepts_built_and_dissected_packets() -> None:
    """icrc_ok works on a freshly built packet as well as on a dissected one."""
    pkt = rdma_write(psn=3, payload=b"abcd", **HEADERS)
    assert icrc_ok(pkt) and icrc_ok(Ether(bytes(pkt)))


@pytest.mark.parametrize(
    ("size", "opcodes", "last_len"),
    [
        (0, [Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE], 0),
        (1024, [Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE], 1024),
        (1025, [Opcode.RC_RDMA_WRITE_FIRST, Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE], 1),
        (
            3000,
            [
                Opcode.RC_RDMA_WRITE_FIRST,
                Opcode.RC_RDMA_WRITE_MIDDLE,
                Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
            ],
            952,
        ),
    ],
    ids=["empty", "exactly-one-mtu", "one-byte-over", "three-packets"],
)
def test_segment_write_splits_by_path_mtu(size: int, opcodes: list[int], last_len: int) -> None:
    """First/Middle/Last (or Only) with full-MTU payloads, RETH first, immediate last."""
    message = bytes(i % 251 for i in range(size))
    packets = segment_write(message=message, path_mtu=1024, psn=100, va=0x5000, imm=77, **HEADERS)
    infos = [_parsed(bytes(p)) for p in packets]
    assert [i.opcode for i in infos] == opcodes
    assert [i.psn for i in infos] == list(range(100, 100 + len(opcodes)))
    assert all(len(i.payload) == 1024 for i in infos[:-1])
    assert len(infos[-1].payload) == last_len
    assert b"".join(i.payload for i in infos) == message
    assert infos[0].reth is not None and (infos[0].reth.va, infos[0].reth.dlen) == (0x5000, size)
    assert all(i.reth is None for i in infos[1:])
    assert [i.imm for i in infos] == [None] * (len(infos) - 1) + [77]
    assert [i.ackreq for i in infos] == [False] * (len(infos) - 1) + [True]
    assert all(i.icrc_ok for i in infos)


def test_segment_write_psns_wrap_at_24_bits() -> None:
    """PSNs continue 0xfffffe, 0xffffff, 0, 1."""
    packets = segment_write(message=bytes(4096), path_mtu=1024, psn=0xFFFFFE, **HEADERS)
    assert [_parsed(bytes(p)).psn for p in packets] == [0xFFFFFE, 0xFFFFFF, 0, 1]


def test_segment_write_rejects_a_path_mtu_infiniband_does_not_define() -> None:
    """Path MTU is one of 256, 512, 1024, 2048, 4096."""
    with pytest.raises(ValueError, match="path_mtu"):
        segment_write(message=b"x", path_mtu=1500, psn=0, **HEADERS)


@pytest.mark.parametrize(
    ("field", "value"),
    [("psn", -1), ("rkey", 1 << 32), ("dscp", 64), ("ttl", 256), ("pkey", 1 << 16)],
    ids=["psn", "rkey", "dscp", "ttl", "pkey"],
)
def test_rdma_write_rejects_out_of_range_fields(field: str, value: int) -> None:
    """A field that does not fit its header width is a ValueError naming it."""
    args = {**HEADERS, "psn": 0, "payload": b"", field: value}
    with pytest.raises(ValueError, match=field):
        rdma_write(**args)


@pytest.mark.parametrize(
    ("field", "value"),
    [("qpn", 1 << 24), ("port", 70000), ("ip", "10.9.0")],
    ids=["qp", "port", "ip"],
)
def test_an_endpoint_rejects_what_does_not_fit_its_header(field: str, value: object) -> None:
    """An endpoint's QP, UDP port and address are checked where the value is made."""
    args: dict[str, Any] = {"mac": "02:00:00:00:00:02", "ip": "10.9.0.2", field: value}
    with pytest.raises(ValueError, match=field):
        Endpoint(**args)


def test_rdma_write_rejects_immediate_on_first_and_middle() -> None:
    """Only Last and Only packets carry immediate data."""
    with pytest.raises(ValueError, match="immediate"):
        rdma_write(psn=0, payload=b"", position="first", imm=1, **HEADERS)


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        bytes(Ether() / ARP()),
        bytes(Ether() / IP() / TCP(dport=4791)),
        bytes(Ether() / IP() / UDP(dport=4792) / Raw(b"x" * 40)),
        bytes(Ether(type=0x8808) / Raw(b"\x01\x01" + bytes(40))),
    ],
    ids=["empty", "arp", "tcp", "other-udp-port", "pfc"],
)
def test_parse_returns_none_for_frames_that_are_not_rocev2(frame: bytes) -> None:
    """Other traffic is not RoCEv2: None, not an error."""
    assert parse(frame) is None


@pytest.mark.parametrize(
    ("cut", "reason"),
    [(60, "IPv4 total length"), (46, "IPv4 total length")],
    ids=["lost-tail", "lost-bth"],
)
def test_parse_reports_truncated_rocev2_as_malformed(cut: int, reason: str) -> None:
    """A frame to UDP 4791 shorter than its IP length is Malformed with a reason."""
    info = parse(CAPTURED_CNP[:cut])
    assert isinstance(info, Malformed) and reason in info.reason


def test_parse_reports_bth_too_short_for_its_opcode() -> None:
    """An RDMA WRITE First without room for its RETH is Malformed."""
    pkt = (
        Ether()
        / IP(dst="10.0.0.1")
        / UDP(sport=1, dport=4791, chksum=0)
        / Raw(bytes([Opcode.RC_RDMA_WRITE_FIRST]) + bytes(11) + bytes(8))
    )
    info = parse(bytes(pkt))
    assert isinstance(info, Malformed) and "header bytes" in info.reason


def test_parse_ignores_ethernet_padding_after_the_datagram() -> None:
    """Trailing bytes past the IPv4 length (minimum-frame padding) do not upset the ICRC."""
    info = _parsed(CAPTURED_CNP + bytes(8))
    assert info.icrc_ok


def test_parse_reads_vlan_tagged_frames() -> None:
    """One 802.1Q tag (PCP-based PFC deployments) is skipped."""
    pkt = rdma_write(psn=9, payload=b"abcd", **HEADERS)
    tagged = (
        Ether(src=SRC.mac, dst=DST.mac) / Dot1Q(prio=3, vlan=10) / pkt[IP]
    )
    info = _parsed(bytes(tagged))
    assert info.psn == 9 and info.icrc_ok


def test_every_prefix_of_a_valid_frame_is_never_a_good_packet() -> None:
    """Truncating anywhere yields None or Malformed, never an exception or a RoceInfo."""
    data = bytes(segment_write(message=bytes(100), path_mtu=256, psn=0, imm=1, **HEADERS)[0])
    for cut in range(len(data)):
        assert not isinstance(parse(data[:cut]), RoceInfo)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_parse_never_raises_on_random_bytes(data: bytes) -> None:
    """Arbitrary bytes give None, Malformed or RoceInfo, never an exception."""
    assert parse(data) is None or isinstance(parse(data), Malformed | RoceInfo)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 200), st.integers(0, 255))
def test_parse_never_raises_on_corrupted_rocev2(pos: int, byte: int) -> None:
    """A valid frame with any one byte replaced still parses without raising."""
    frame = bytearray(UC_SEND_ONLY)
    frame[pos % len(frame)] = byte
    assert parse(bytes(frame)) is None or isinstance(parse(bytes(frame)), Malformed | RoceInfo)


@pytest.mark.parametrize(
    ("a", "n", "expected"),
    [(0, 1, 1), (0xFFFFFF, 1, 0), (0xFFFFF0, 0x20, 0x10)],
    ids=["plain", "wrap", "wrap-far"],
)
def test_psn_add_wraps_at_24_bits(a: int, n: int, expected: int) -> None:
    """PSN arithmetic is modulo 2**24."""
    assert psn_add(a, n) == expected
    assert psn_diff(expected, a) == n
