"""Known-answer values for the hash algorithms (as BMv2 computes them), and what goes into them."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness, hashes


@pytest.mark.parametrize("algo,want", [
    ("crc16", 0xBB3D), ("crc32", 0xCBF43926), ("crcCCITT", 0x29B1),
    ("identity", 0x3132333435363738), ("xor16", 0x3132 ^ 0x3334 ^ 0x3536 ^ 0x3738 ^ 0x3900),
], ids=["crc16-arc", "crc32", "ccitt-false", "identity", "xor16"])
def test_check_values(algo, want):
    """Each algorithm gives the catalogue check value for b'123456789'."""
    assert hashes.compute(algo, b"123456789") == want


def test_csum16_of_ipv4_header_is_zero_with_checksum():
    """The Internet checksum of a header including its checksum is 0."""
    hdr = bytes.fromhex("45000073000040004011b861c0a80001c0a800c7")
    assert hashes.csum16(hdr) == 0
    assert hashes.csum16(hdr[:10] + b"\x00\x00" + hdr[12:]) == 0xB861


def test_pack_fields_is_bitwise_msb_first_padded_at_end():
    """Fields pack without per-field padding; the buffer pads at its end."""
    assert hashes.pack_fields([(1, 1), (0, 3), (0xF, 4), (0x3, 2)]) == bytes([0x8F, 0xC0])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 64], ids=lambda n: f"len{n}")
def test_crc16_word_table_matches_bytewise(n):
    """The two-bytes-at-a-time CRC-16 equals the bytewise definition."""
    data = bytes((i * 37 + 11) & 0xFF for i in range(n))
    crc = 0
    for b in data:
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if (crc ^ b) & 1 else crc >> 1
            b >>= 1
    assert hashes.crc16(data) == crc


# ---------------------------------------------------------------------- invalid headers in field lists
HASH_PROGRAM = Path(__file__).resolve().parents[1] / "frontend" / "corpus" / "valid" / "hash_invalid_header.p4"


def _crc16_arc(data: bytes) -> int:
    crc = 0
    for b in data:
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if (crc ^ b) & 1 else crc >> 1
            b >>= 1
    return crc


def _ipv4(proto: int, ident: int, l4: bytes) -> bytes:
    src, dst = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    return (bytes.fromhex("020000000001" "020000000002" "0800") + bytes([0x45, 0]) + (20 + len(l4)).to_bytes(2, "big")
            + ident.to_bytes(2, "big") + bytes(2) + bytes([64, proto]) + bytes(2) + src + dst + l4)


@pytest.mark.parametrize("proto", [17, 6], ids=["udp-packet-tcp-fields", "tcp-packet-udp-fields"])
def test_fields_of_an_invalid_header_are_left_out_of_hash_and_checksum_inputs(proto: int) -> None:
    """hash() and the checksum field lists skip the header that is not valid (BMv2's input)."""
    src, dst, etype = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]), b"\x08\x00"
    if proto == 17:
        sport, dport = b"\x12\x34", b"\x12\xb7"
        l4 = sport + dport + b"\x00\x08\x00\x00"
        h16 = _crc16_arc(src + dst + bytes([17]))  # tcp ports left out
        h32 = zlib.crc32(sport + etype + dport)  # {tcp.sport, udp.sport, etype, udp.dport}
        verify_input = src + dport  # {ipv4.src, tcp.sport, udp.dport}
    else:
        sport, dport = b"\x04\xd2", b"\x00\x50"
        l4 = sport + dport + bytes(4)
        h16 = _crc16_arc(src + dst + bytes([6]) + sport + dport)
        h32 = zlib.crc32(sport + etype)
        verify_input = src + sport
    ck = _crc16_arc(sport + src)  # {tcp.sport, udp.sport, ipv4.src}
    frame = _ipv4(proto, _crc16_arc(verify_input), l4)  # ipv4.id holds the right checksum
    with PortHarness(compile_file(HASH_PROGRAM)) as h:
        (port, data), = h.send(1, frame)
    res = h16.to_bytes(2, "big") + h32.to_bytes(4, "big") + ck.to_bytes(2, "big") + b"\x00"  # verr 0
    assert (port, data) == (2, frame + res)
