"""Byte-string codec and controller-header framing (P4Runtime spec §8.4)."""

from __future__ import annotations

import pytest

from p4switch.proto import p4i
from p4switch.translate import (
    OUT_OF_RANGE,
    P4RTError,
    decode_value,
    encode_value,
    pack_controller_header,
    unpack_controller_header,
)


@pytest.mark.parametrize("width,data,value", [
    (8, b"\x63", 99), (16, b"\x00\x63", 99), (16, b"\x63", 99), (16, b"\x00\x30\x64", 12388),
    (12, b"\x00\x00\x63", 99), (9, b"\x01\xff", 511),
], ids=["bit8", "bit16-padded", "bit16", "bit16-extra-zero-byte", "bit12-two-zero-bytes", "bit9-max"])
def test_valid_bytestrings_decode(width, data, value) -> None:
    """Spec table of valid encodings: any zero padding is accepted."""
    assert decode_value(data, width, "x") == value


@pytest.mark.parametrize("width,data", [
    (8, b"\x01\x63"), (8, b""), (16, b"\x01\x00\x63"), (12, b"\x10\x63"), (12, b"\x01\x00\x63"),
], ids=["bit8-wide", "empty", "bit16-wide", "bit12-wide", "bit12-wide-padded"])
def test_invalid_bytestrings_are_out_of_range(width, data) -> None:
    """Spec table of invalid encodings."""
    with pytest.raises(P4RTError) as e:
        decode_value(data, width, "x")
    assert e.value.code == OUT_OF_RANGE


@pytest.mark.parametrize("value,data", [(0, b"\x00"), (99, b"\x63"), (0x3064, b"\x30\x64"), (256, b"\x01\x00")],
                         ids=["zero", "one-byte", "two-bytes", "carry"])
def test_encode_is_canonical(value, data) -> None:
    """Reads use the shortest string; 0 is one zero byte."""
    assert encode_value(value) == data


def cpm() -> p4i.ControllerPacketMetadata:
    m = p4i.ControllerPacketMetadata()
    m.preamble.name = "packet_in"
    m.metadata.add(id=1, name="ingress_port", bitwidth=9)
    m.metadata.add(id=2, name="flag", bitwidth=1)
    return m


def test_controller_header_round_trip() -> None:
    """BMv2 framing: fields MSB first, padded to whole bytes, then the payload."""
    header = pack_controller_header(cpm(), {1: 0x1FF, 2: 1})
    assert header == bytes([0xFF, 0xC0])
    assert unpack_controller_header(cpm(), header + b"payload") == ({1: 0x1FF, 2: 1}, b"payload")
