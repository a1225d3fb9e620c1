"""P4-16's operator precedence, through the pipeline: bitwise operators bind tighter than
comparisons (`a & m == v` is `(a & m) == v`), `&` than `^` than `|`, shifts than all three.

The program is the corpus's precedence.p4; every expected frame below is worked out by hand
from it (C's precedence would not even type-check most of these conditions).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import compile_file
from p4switch.pipeline import PortHarness

PROGRAM = Path(__file__).resolve().parents[1] / "frontend" / "corpus" / "valid" / "precedence.p4"
ETH = bytes.fromhex("020000000001" "020000000002" "0800")


def _ipv4(*, tos: int, total: int, ident: int, ttl: int, proto: int, csum: int, src_low: int,
          dst_low: int) -> bytes:
    return (bytes([0x45, tos]) + total.to_bytes(2, "big") + ident.to_bytes(2, "big") + b"\x40\x00"
            + bytes([ttl, proto]) + csum.to_bytes(2, "big") + bytes([10, 0, 0, src_low])
            + bytes([10, 0, 1, dst_low]))


@pytest.fixture
def switch():
    with PortHarness(compile_file(PROGRAM)) as h:
        yield h


def test_and_binds_tighter_than_equality(switch) -> None:
    """ttl 0x47: (0x47 & 0xf0) == 0x40, so port 2; ttl 0x50 stays on port 1. The rest of the
    header, the same both times: protocol 6 (6 & 0x0f = 6, not < 4), equal low address bytes
    (xor 0), tos 0 (0 ^ 0x0c = 0x0c, not >= 0x10), id 0x0012 ((0x12 >> 4) & 0x0f = 1, not > 7),
    totalLen 0x0200 (| 0x8000 = 0x8200, not <= 0x8100): no marks, tos 0."""
    for ttl, port in ((0x47, 2), (0x50, 1)):
        sent = _ipv4(tos=0, total=0x0200, ident=0x0012, ttl=ttl, proto=6, csum=0x1234,
                     src_low=7, dst_low=7)
        # id | 0x0ff0 = 0x0ff2; csum: (0x1234 << 4) & 0xff00 | 1 = 0x2301
        out = _ipv4(tos=0, total=0x0200, ident=0x0ff2, ttl=ttl, proto=6, csum=0x2301,
                    src_low=7, dst_low=7)
        assert switch.send(1, ETH + sent) == [(port, ETH + out)]


def test_every_mark_from_its_own_condition(switch) -> None:
    """protocol 0x11: 0x11 & 0x0f = 1 < 4 (0x01); low bytes 7 and 9 differ (0x02); ttl 0x40:
    0x40 | 1 == 0x41, tos 0x30: 0x30 ^ 0x0c = 0x3c >= 0x10 (0x04); id 0x0085: (0x85 >> 4)
    & 0x0f = 8 > 7 (0x08); totalLen 0x0100: 0x8100 <= 0x8100 (0x10). tos = 0x1f; ttl 0x40
    is port 2; id 0x0085 | 0x0ff0 = 0x0ff5; csum 0x00ff: (0x0ff0 & 0xff00) | 1 = 0x0f01."""
    sent = _ipv4(tos=0x30, total=0x0100, ident=0x0085, ttl=0x40, proto=0x11, csum=0x00ff,
                 src_low=7, dst_low=9)
    out = _ipv4(tos=0x1f, total=0x0100, ident=0x0ff5, ttl=0x40, proto=0x11, csum=0x0f01,
                src_low=7, dst_low=9)
    assert switch.send(1, ETH + sent) == [(2, ETH + out)]
