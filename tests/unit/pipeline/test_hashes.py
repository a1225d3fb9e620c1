"""Known-answer values for the hash algorithms (as BMv2 computes them)."""

from __future__ import annotations

import pytest

from p4switch.pipeline import hashes


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
