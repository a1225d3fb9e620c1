"""Hash and checksum algorithms computed exactly as BMv2 computes them.

BMv2 feeds every algorithm the same input: the listed fields packed bit by bit
(most significant first, no per-field padding), the whole buffer zero-padded at
the end to a byte boundary; fields of invalid headers are skipped.

Names defined here: `pack_fields`, `crc16`, `crc32`, `crc_ccitt`, `csum16`,
`xor16`, `identity`, `cached`, `ALGORITHMS` (v1model `HashAlgorithm` member name ->
function(bytes) -> int) and `compute(algo, data)`.
"""

from __future__ import annotations

import random as _random
import sys
import zlib
from collections.abc import Callable, Iterable


def pack_fields(values: Iterable[tuple[int, int]]) -> bytes:
    """Pack (value, width) pairs MSB first and pad the end to a byte boundary."""
    acc = 0
    nbits = 0
    for value, width in values:
        acc = (acc << width) | (value & ((1 << width) - 1))
        nbits += width
    pad = (-nbits) % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")


def _reflect(v: int, nbits: int) -> int:
    r = 0
    for _ in range(nbits):
        r = (r << 1) | (v & 1)
        v >>= 1
    return r


def _make_reflected_table(poly: int, width: int) -> list[int]:
    """Table for a reflected CRC (LSB-first), built from the normal polynomial."""
    rpoly = _reflect(poly, width)
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ rpoly if c & 1 else c >> 1
        table.append(c)
    return table


def _make_normal_table(poly: int, width: int) -> list[int]:
    top = 1 << (width - 1)
    mask = (1 << width) - 1
    table = []
    for i in range(256):
        c = i << (width - 8)
        for _ in range(8):
            c = ((c << 1) ^ poly) & mask if c & top else (c << 1) & mask
        table.append(c)
    return table


_CRC16_TABLE = _make_reflected_table(0x8005, 16)
_CCITT_TABLE = _make_normal_table(0x1021, 16)


_CRC16_WORDS: list[int] = []


def _crc16_words() -> list[int]:
    """Table for two bytes at a time: index = crc ^ (b0 | b1 << 8)."""
    if not _CRC16_WORDS:
        t = _CRC16_TABLE
        _CRC16_WORDS.extend((t[x & 0xFF] >> 8) ^ t[((x >> 8) ^ t[x & 0xFF]) & 0xFF]
                            for x in range(1 << 16))
    return _CRC16_WORDS


def crc16(data: bytes) -> int:
    """CRC-16/ARC (poly 0x8005, reflected, init 0, xorout 0): BMv2 `crc16`."""
    crc = 0
    n = len(data) & ~1
    if n:
        t2 = _crc16_words()
        for w in memoryview(data[:n]).cast("H") if _LITTLE else _words(data[:n]):
            crc = t2[crc ^ w]
    if len(data) & 1:
        crc = (crc >> 8) ^ _CRC16_TABLE[(crc ^ data[-1]) & 0xFF]
    return crc


_LITTLE = sys.byteorder == "little"


def _words(data: bytes) -> list[int]:
    return [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]


def cached(fn: Callable[[bytes], int], size: int = 1 << 16) -> Callable[[bytes], int]:
    """Memoise a hash of bytes (AI traffic has few flows: the same inputs recur)."""
    cache: dict[bytes, int] = {}

    def hashed(data: bytes) -> int:
        """`fn(data)`, from the cache when seen before."""
        r = cache.get(data)
        if r is None:
            if len(cache) >= size:
                cache.clear()
            r = cache[data] = fn(data)
        return r

    hashed.__name__ = fn.__name__
    hashed.__doc__ = fn.__doc__
    return hashed


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3): BMv2 `crc32`."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc_ccitt(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected): BMv2 `crcCCITT`."""
    crc = 0xFFFF
    t = _CCITT_TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ t[((crc >> 8) ^ b) & 0xFF]
    return crc


def csum16(data: bytes) -> int:
    """Internet checksum (RFC 1071): ones' complement of the ones' complement sum."""
    if len(data) % 2:
        data = data + b"\x00"
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def xor16(data: bytes) -> int:
    """XOR of the big-endian 16-bit words, the tail padded with zeros."""
    if len(data) % 2:
        data = data + b"\x00"
    r = 0
    for i in range(0, len(data), 2):
        r ^= (data[i] << 8) | data[i + 1]
    return r


def identity(data: bytes) -> int:
    """The first (up to) 8 bytes as a big-endian integer."""
    return int.from_bytes(data[:8], "big")


def _random_hash(data: bytes) -> int:
    return _random.getrandbits(32)


_crc16_cached = cached(crc16)

ALGORITHMS: dict[str, Callable[[bytes], int]] = {
    "crc16": _crc16_cached,
    "crc16_custom": _crc16_cached,  # BMv2 default config of crc16_custom equals crc16
    "crc32": crc32,
    "crc32_custom": crc32,  # likewise
    "crcCCITT": cached(crc_ccitt),
    "csum16": cached(csum16),
    "xor16": xor16,
    "identity": identity,
    "random": _random_hash,
}


def compute(algo: str, data: bytes) -> int:
    """Run the named algorithm; unknown names raise KeyError."""
    return ALGORITHMS[algo](data)


__all__ = ["pack_fields", "crc16", "crc32", "crc_ccitt", "csum16", "xor16", "identity", "cached",
           "ALGORITHMS", "compute"]
