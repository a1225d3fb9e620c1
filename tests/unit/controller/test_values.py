"""Tests for controller.values: P4Runtime bytestrings for ints, MACs and IPv4 addresses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.errors import SchemaError
from controller.values import decode, encode, format_value, to_int


@pytest.mark.parametrize(
    ("value", "width", "expected"),
    [(0, 9, b"\x00"), (1, 9, b"\x01"), (256, 9, b"\x01\x00"), ("10.0.0.3", 32, b"\x0a\x00\x00\x03"),
     ("02:a1:00:00:00:01", 48, b"\x02\xa1\x00\x00\x00\x01"), ("0x10", 8, b"\x10")],
    ids=["zero", "one", "two-bytes", "ipv4", "mac", "hex-string"],
)
def test_encode_is_canonical(value, width: int, expected: bytes) -> None:
    """Shortest big-endian bytes, at least one."""
    assert encode(value, width) == expected


@given(st.integers(min_value=1, max_value=128).flatmap(
    lambda w: st.tuples(st.just(w), st.integers(min_value=0, max_value=(1 << w) - 1))))
def test_decode_inverts_encode(wv: tuple[int, int]) -> None:
    """decode(encode(n)) == n for every n that fits."""
    width, n = wv
    assert decode(encode(n, width)) == n


def test_padded_bytes_decode_the_same() -> None:
    """A padded value (older servers) decodes like the canonical one."""
    assert decode(b"\x00\x00\x01") == decode(b"\x01") == 1


@pytest.mark.parametrize(("value", "width"), [(512, 9), (-1, 8), ("300.0.0.1", 32), ("x", 8)],
                         ids=["too-wide", "negative", "bad-ip", "not-a-number"])
def test_bad_values_raise_schema_error(value, width: int) -> None:
    """Values that do not fit are SchemaErrors naming the width."""
    with pytest.raises(SchemaError, match=f"bit<{width}>"):
        to_int(value, width)


def test_format_value_for_people() -> None:
    """MACs and IPv4 addresses print in their usual form."""
    assert format_value(0x02A1_0000_0001, 48) == "02:a1:00:00:00:01"
    assert format_value(0x0A000003, 32, "ipv4") == "10.0.0.3"
