"""P4Runtime value encoding: Python values <-> P4Runtime bytestrings.

One encode/decode/format trio per value kind (model: finsy `p4values.py`):
integers, MAC addresses ("02:a1:00:00:00:01"), IPv4 addresses
("10.0.0.1"). Encoding produces the canonical form of the P4Runtime spec
(the shortest big-endian string, at least one byte); decoding accepts any
length, so padded values read from older servers compare equal. Every
out-of-range value raises `SchemaError` through `_bad`, so messages read the
same everywhere.

Names defined here: `to_int`, `encode`, `decode`, `format_value`,
`encode_mac`, `encode_ipv4`.
"""

from __future__ import annotations

import ipaddress
import re

from .errors import SchemaError

__all__ = ["decode", "encode", "encode_ipv4", "encode_mac", "format_value", "to_int"]

_MAC = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


def _bad(value: object, bitwidth: int, why: str) -> SchemaError:
    return SchemaError(f"value {value!r} does not fit bit<{bitwidth}>: {why}")


def to_int(value: int | str | bytes, bitwidth: int) -> int:
    """An int from an int, a MAC / IPv4 / decimal / 0x string, or bytes."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, bytes):
        n = int.from_bytes(value, "big")
    elif isinstance(value, int):
        n = value
    elif isinstance(value, str):
        text = value.strip()
        if _MAC.match(text):
            n = int(text.replace(":", ""), 16)
        elif _IPV4.match(text):
            try:
                n = int(ipaddress.IPv4Address(text))
            except ValueError:
                raise _bad(value, bitwidth, "not an IPv4 address") from None
        else:
            try:
                n = int(text, 0)
            except ValueError:
                raise _bad(value, bitwidth, "not a number, MAC or IPv4 address") from None
    else:
        raise _bad(value, bitwidth, f"unsupported type {type(value).__name__}")
    if n < 0:
        raise _bad(value, bitwidth, "negative")
    if n >> bitwidth:
        raise _bad(value, bitwidth, f"needs {n.bit_length()} bits")
    return n


def encode(value: int | str | bytes, bitwidth: int) -> bytes:
    """The canonical P4Runtime bytestring of `value` (shortest, at least one byte)."""
    n = to_int(value, bitwidth)
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    """The integer a bytestring holds (canonical or padded)."""
    return int.from_bytes(data, "big")


def encode_mac(mac: str) -> bytes:
    return encode(mac, 48)


def encode_ipv4(ip: str) -> bytes:
    return encode(ip, 32)


def format_value(n: int, bitwidth: int, hint: str = "") -> str:
    """For people: MACs and IPv4 addresses in their usual form, else decimal."""
    if hint == "mac" or (bitwidth == 48 and not hint):
        return ":".join(f"{(n >> (8 * i)) & 0xFF:02x}" for i in reversed(range(6)))
    if hint == "ipv4" or (bitwidth == 32 and hint == "ip"):
        return str(ipaddress.IPv4Address(n))
    return str(n)
