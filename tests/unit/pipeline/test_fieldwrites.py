"""Header-field write analysis and the deparser's use of it (program: p4/writes.p4)."""

from __future__ import annotations

from conftest import program

from p4switch.pipeline import PortHarness, hashes
from p4switch.pipeline.codegen import TypeInfo
from p4switch.pipeline.fieldwrites import ALL, header_writes


def test_assignment_and_extern_out_argument_mark_fields():
    """a.x (assigned) and a.h (hash's out argument) are written; a.y, c_t are not."""
    got = header_writes(program("writes"), TypeInfo(program("writes")).resolve)
    assert got["a_t"] == {"x", "h"}
    assert "c_t" not in got


def test_whole_header_assignment_marks_every_field():
    """hdr.b2 = hdr.b writes all of b_t."""
    got = header_writes(program("writes"), TypeInfo(program("writes")).resolve)
    assert got["b_t"] == {ALL}


def _keeps_bytes(src: str, header: str) -> bool:
    """Does the generated class of `header` keep the extracted bytes (`_raw`)?"""
    body = src.split(f"class T_{header}_", 1)[1].split("\n\n", 1)[0]
    return "_raw = None" in body


def test_rtsw_keeps_extracted_bytes_only_for_headers_it_never_writes():
    """udp/tcp/bth are only read by rtsw.p4; ethernet and ipv4 are rewritten by routing."""
    with PortHarness(program("rtsw")) as h:
        src = h.switch.cp.source
    assert {n: _keeps_bytes(src, n + "_t") for n in ("ethernet", "ipv4", "udp", "tcp", "bth")} == {
        "ethernet": False, "ipv4": False, "udp": True, "tcp": True, "bth": True}


def test_deparser_emits_written_fields_and_copies_and_unchanged_bytes():
    """x incremented, h = crc16(c.p), b2 = b, c and payload as received."""
    frame = bytes(range(1, 17)) + b"pay"
    with PortHarness(program("writes")) as h:
        (port, out), = h.send(1, frame)
    crc = hashes.crc16(frame[12:14])
    assert port == 2
    assert out == bytes([2, 2]) + crc.to_bytes(2, "big") + frame[4:8] + frame[4:8] + frame[12:]
