"""Hot-path RoCEv2 frames: the same bytes as scapy builds, decoded fields, ICRC checks."""

from __future__ import annotations

import struct

import pytest

from traffic import builders, frames
from traffic.endpoint import Endpoint
from traffic.roce import Opcode, Syndrome

SRC = Endpoint(mac="02:00:00:00:00:01", ip="10.9.0.1", port=50000, qpn=0x42)
DST = Endpoint(mac="02:00:00:00:00:02", ip="10.9.0.2", qpn=0x123456)
# A CNP captured on a ConnectX-4 Lx NIC (the same capture test_roce.py checks with scapy).
CAPTURED_CNP = bytes.fromhex(
    "e41d2dab2bc27cfe90643b32080045c2003c718c"
    "4000401191610a0011010a001201"
    "000012b700280000"
    "8100ffff4000011800000000"
    "00000000000000000000000000000000"
    "82fd002a"
)


def _flow(dscp: int = 26, ecn: int = 2) -> frames.Flow:
    return frames.Flow(src=SRC, dst=DST, dscp=dscp, ecn=ecn)


WRITES = [
    ("first", None, Opcode.RC_RDMA_WRITE_FIRST),
    ("middle", None, Opcode.RC_RDMA_WRITE_MIDDLE),
    ("last", None, Opcode.RC_RDMA_WRITE_LAST),
    ("last", 0xDEADBEEF, Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE),
    ("only", None, Opcode.RC_RDMA_WRITE_ONLY),
    ("only", 0xDEADBEEF, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE),
]


@pytest.mark.parametrize(("position", "imm", "opcode"), WRITES,
                         ids=["first", "middle", "last", "last-imm", "only", "only-imm"])
@pytest.mark.parametrize("length", [1, 2, 3, 4, 1021, 1024], ids=lambda n: f"{n}B")
@pytest.mark.parametrize("ackreq", [False, True], ids=["noack", "ackreq"])
def test_write_frames_are_the_bytes_scapy_builds(
    position: str, imm: int | None, opcode: int, length: int, ackreq: bool
) -> None:
    """Every WRITE opcode, every pad count, AckReq on or off: byte for byte scapy's frame."""
    payload = bytes(frames.pattern(0x4242, length))
    expected = bytes(
        builders.rdma_write(payload=payload, position=position, imm=imm, psn=0xFFFFFE,
                            va=0x1122334455667788, rkey=0xCAFE, dlen=9000,
                            dscp=26, ecn=2, ackreq=ackreq, src=SRC, dst=DST)
    )
    ext = b""
    if position in ("first", "only"):
        ext += frames.reth(0x1122334455667788, 0xCAFE, 9000)
    if imm is not None:
        ext += frames.immdt(imm)
    frame = _flow().frame(opcode, 0xFFFFFE, ackreq=ackreq, ext=ext, payload=payload)
    assert frame == expected


def test_empty_write_only_is_the_bytes_scapy_builds() -> None:
    """A zero-length WRITE Only: BTH, RETH (DMA length 0), ICRC."""
    expected = bytes(builders.rdma_write(payload=b"", position="only", psn=7,
                                         va=0x10, rkey=1, dscp=26, ecn=2, src=SRC, dst=DST))
    frame = _flow().frame(Opcode.RC_RDMA_WRITE_ONLY, 7, ackreq=True, ext=frames.reth(0x10, 1, 0))
    assert frame == expected


@pytest.mark.parametrize(
    ("syndrome", "msn"),
    [(Syndrome.ACK_UNLIMITED, 12), (Syndrome.NAK_PSN_SEQUENCE_ERROR, 0),
     (Syndrome.NAK_INVALID_REQUEST, 0xFFFFFF)],
    ids=["ack", "nak-sequence", "nak-invalid"],
)
def test_acknowledge_frames_are_the_bytes_scapy_builds(syndrome: int, msn: int) -> None:
    """ACK and NAKs: BTH opcode 0x11 / AETH(syndrome, MSN), as builders.acknowledge builds them."""
    expected = bytes(builders.acknowledge(psn=0xABCDEF, syndrome=syndrome, msn=msn,
                                          dscp=26, ecn=2, src=SRC, dst=DST))
    assert _flow().ack(0xABCDEF, syndrome, msn) == expected


def test_cnp_frame_is_the_bytes_scapy_builds() -> None:
    """CNP: opcode 0x81, BECN, 16 reserved bytes, in the control class DSCP 48."""
    expected = bytes(builders.cnp(dscp=48, ecn=0, src=SRC, dst=DST))
    assert _flow(dscp=48, ecn=0).cnp() == expected


def test_ud_send_frame_is_the_bytes_scapy_builds() -> None:
    """UD SEND Only: BTH / DETH(Q_Key, source QP) / payload with pad."""
    expected = bytes(builders.ud_send(qkey=0x43545300, psn=5,
                                      payload=b"clear to send", dscp=48, src=SRC, dst=DST))
    frame = _flow(dscp=48, ecn=0).ud_send(5, qkey=0x43545300, src_qp=0x42, payload=b"clear to send")
    assert frame == expected


def test_decode_reads_a_captured_cnp() -> None:
    """A real NIC's CNP: opcode, BECN, destination QP, and its ICRC verifies."""
    rx = frames.decode(CAPTURED_CNP)
    assert rx is not None
    assert (rx.opcode, rx.dqpn, rx.becn, rx.psn, rx.icrc_ok) == (0x81, 0x118, True, 0, True)
    assert rx.ecn == 2 and rx.src_ip == bytes([10, 0, 17, 1])


def test_decode_reads_every_header_of_a_write_only_with_immediate() -> None:
    """RETH, ImmDt, AckReq, PSN and payload come back as sent."""
    payload = bytes(frames.pattern(99, 777))
    frame = _flow().frame(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x10203, ackreq=True,
                          ext=frames.reth(0xAB00, 0x77, 777) + frames.immdt(0x01020304), payload=payload)
    rx = frames.decode(frame, bytes([10, 9, 0, 2]))
    assert rx is not None and rx.icrc_ok
    assert (rx.opcode, rx.dqpn, rx.psn, rx.ackreq) == (0x0B, 0x123456, 0x10203, True)
    assert (rx.va, rx.rkey, rx.dlen, rx.imm) == (0xAB00, 0x77, 777, 0x01020304)
    assert bytes(rx.payload) == payload


def test_decode_reads_the_aeth_of_a_nak() -> None:
    """Syndrome and MSN of a NAK."""
    rx = frames.decode(_flow().ack(5, Syndrome.NAK_PSN_SEQUENCE_ERROR, 9))
    assert rx is not None
    assert (rx.opcode, rx.psn, rx.syndrome, rx.msn) == (0x11, 5, 0x60, 9)


def test_ce_mark_ttl_and_checksum_changes_keep_the_icrc() -> None:
    """A switch that CE-marks, decrements TTL and fixes the checksum leaves the ICRC valid."""
    frame = bytearray(_flow().frame(Opcode.RC_RDMA_WRITE_MIDDLE, 1, payload=b"abcd"))
    frame[15] |= 0x03  # ECN CE
    frame[22] -= 1  # TTL
    frame[24:26] = b"\x12\x34"  # checksum (the ICRC masks it either way)
    rx = frames.decode(bytes(frame))
    assert rx is not None and rx.icrc_ok and rx.ecn == 3


def test_a_flipped_payload_bit_fails_the_icrc() -> None:
    """Corruption of an invariant byte is caught."""
    frame = bytearray(_flow().frame(Opcode.RC_RDMA_WRITE_MIDDLE, 1, payload=b"abcd"))
    frame[-6] ^= 0x01
    rx = frames.decode(bytes(frame))
    assert rx is not None and not rx.icrc_ok


def test_decode_ignores_other_frames_and_other_addresses() -> None:
    """ARP, other UDP ports and RoCEv2 to another address are None."""
    arp = bytes.fromhex("ffffffffffff020000000001" "0806") + bytes(28)
    assert frames.decode(arp) is None
    other = bytearray(_flow().frame(Opcode.RC_RDMA_WRITE_MIDDLE, 1, payload=b"abcd"))
    other[36:38] = struct.pack("!H", 4792)
    assert frames.decode(bytes(other)) is None
    assert frames.decode(_flow().ack(1), dst_ip=bytes([10, 9, 0, 3])) is None


def test_decode_rejects_a_truncated_frame() -> None:
    """A RoCEv2 frame shorter than its IPv4 total length is a FrameError."""
    frame = _flow().frame(Opcode.RC_RDMA_WRITE_MIDDLE, 1, payload=b"abcdefgh")
    with pytest.raises(frames.FrameError):
        frames.decode(frame[:-3])


def test_pattern_repeats_every_64_kib_and_is_fixed() -> None:
    """The payload pattern is a function of the address alone, period 65536."""
    assert frames.pattern(5, 100) == frames.pattern(5 + 65536, 100)
    assert frames.pattern(0, 8) != frames.pattern(1, 8)
    assert len(frames.pattern(65535, 4096)) == 4096
    # random.Random(0x4791).randbytes: the Mersenne Twister gives these bytes on every platform
    assert bytes(frames.pattern(0, 4)).hex() == "af63ce02"
