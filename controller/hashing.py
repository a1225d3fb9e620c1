"""The P4 programs' ECMP member choice, computed exactly as the switches compute it.

The one implementation in the project of `p4/include/control/hashing.p4`
(the ECMP key) and of BMv2's action selector over it (`routing.p4`'s
`ecmp_selector`); `aizone trace`, the flow-level model and the tests call
it. Per packet, on a switch whose `switch_config` says (mode, salt):

    flow     = crc32(src, dst, proto, sport, dport, qp) % 0xFFFFFFFF
               (40 bytes packed MSB first: addresses as bit<128>, IPv4
               zero-extended on the left, proto bit<8>, ports bit<16>, qp
               bit<24>; pin: only dst, the rest 0; ecmp: qp 0; eecmp: qp =
               the BTH destination QP, 0 for packets that are not RoCEv2)
    ecmp_key = ((flow ^ salt) * ECMP_MIX) mod 2^32
    member   = crc16(ecmp_key as 4 bytes, big-endian) % (members in the group)

and the members are taken in BMv2's handle order, which is ascending member
id for groups the controller writes (it creates members in ascending id and
never re-creates them; `controller.routes` makes member id = port).

How it is fast: both CRCs are affine over GF(2) for inputs of a fixed
length (CRC-16/ARC is even linear), so a CRC of the whole input is the XOR
of per-byte-position tables plus the CRC of all zeros. The tables are built
once with `zlib.crc32` and `crc16` of single bytes, so every flow costs a
handful of numpy gathers and XORs, never a per-packet Python loop. IPv4
addresses (the only kind route computation writes) take the vectorised
path; `flow_hash_bytes` hashes any packed input byte by byte for IPv6 and
for checking.

Names defined here: `ECMP_MIX`, `MODE_PIN`, `MODE_ECMP`, `MODE_EECMP`,
`MODES`, `FIELD_WIDTHS`, `pack_fields`, `crc16`, `flow_hash`,
`flow_hash_bytes`, `ecmp_key`, `member_hash`, `member_index`, `choose_member`,
`choose_member_one`.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = [
    "ECMP_MIX",
    "FIELD_WIDTHS",
    "MODES",
    "MODE_ECMP",
    "MODE_EECMP",
    "MODE_PIN",
    "choose_member",
    "choose_member_one",
    "crc16",
    "ecmp_key",
    "flow_hash",
    "flow_hash_bytes",
    "member_hash",
    "member_index",
    "pack_fields",
]

# p4/include/define.p4
ECMP_MIX = 0x9E3779B1
MODE_PIN, MODE_ECMP, MODE_EECMP = 0, 1, 2
MODES = {"pin": MODE_PIN, "ecmp": MODE_ECMP, "eecmp": MODE_EECMP}
# The hash inputs of hashing.p4, in order, with their widths in bits.
FIELD_WIDTHS = (("src", 128), ("dst", 128), ("proto", 8), ("sport", 16), ("dport", 16),
                ("qp", 24))
_INPUT_BYTES = sum(w for _, w in FIELD_WIDTHS) // 8  # 40
_FLOW_MAX = 0xFFFFFFFF  # hash(..., max) in hashing.p4: base + h % max

U32 = npt.NDArray[np.uint32]
ArrayLike = npt.ArrayLike


def pack_fields(values: Iterable[tuple[int, int]]) -> bytes:
    """(value, width) pairs packed MSB first, the end zero-padded to a byte (BMv2's hash input)."""
    acc = nbits = 0
    for value, width in values:
        acc = (acc << width) | (value & ((1 << width) - 1))
        nbits += width
    pad = (-nbits) % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")


@functools.cache
def _crc16_table() -> tuple[int, ...]:
    # CRC-16/ARC: polynomial 0x8005 reflected (0xA001), init 0, no final xor.
    out = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
        out.append(c)
    return tuple(out)


def crc16(data: bytes) -> int:
    """CRC-16/ARC (poly 0x8005 reflected, init 0, xorout 0): BMv2's `crc16`."""
    t = _crc16_table()
    crc = 0
    for b in data:
        crc = (crc >> 8) ^ t[(crc ^ b) & 0xFF]
    return crc


def _check_mode(mode: str) -> int:
    try:
        return MODES[mode]
    except KeyError:
        raise ValueError(f"unknown routing mode {mode!r} (choose from "
                         f"{', '.join(MODES)})") from None


def _masked_fields(mode: str, src: int, dst: int, proto: int, sport: int, dport: int,
                   qp: int) -> tuple[int, int, int, int, int, int]:
    m = _check_mode(mode)
    if m == MODE_PIN:
        return 0, dst, 0, 0, 0, 0
    return src, dst, proto, sport, dport, qp if m == MODE_EECMP else 0


def flow_hash_bytes(src: int, dst: int, proto: int, sport: int, dport: int, qp: int, *,
                    mode: str) -> int:
    """`flow` of hashing.p4 for one packet, from the packed input (any address width).

    `src`/`dst` are integers (IPv4 or IPv6); fields the mode leaves out are
    zeroed here, as the program does.
    """
    fields = _masked_fields(mode, src, dst, proto, sport, dport, qp)
    data = pack_fields(zip(fields, (w for _, w in FIELD_WIDTHS), strict=True))
    return (zlib.crc32(data) & 0xFFFFFFFF) % _FLOW_MAX


@functools.cache
def _crc32_tables() -> tuple[int, npt.NDArray[np.uint32]]:
    """(crc32 of 40 zero bytes, [position][byte] -> its XOR contribution)."""
    zero = bytes(_INPUT_BYTES)
    c0 = zlib.crc32(zero)
    table = np.zeros((_INPUT_BYTES, 256), dtype=np.uint32)
    for pos in range(_INPUT_BYTES):
        buf = bytearray(zero)
        for b in range(1, 256):
            buf[pos] = b
            table[pos, b] = zlib.crc32(bytes(buf)) ^ c0
    return c0, table


@functools.cache
def _crc16_word_tables() -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint16]]:
    """crc16 of a 4-byte key = HI[key >> 16] ^ LO[key & 0xFFFF] (CRC-16/ARC is linear)."""
    per_byte = np.zeros((4, 256), dtype=np.uint16)
    for pos in range(4):
        for b in range(256):
            buf = bytearray(4)
            buf[pos] = b
            per_byte[pos, b] = crc16(bytes(buf))
    words = np.arange(1 << 16, dtype=np.uint32)
    hi = per_byte[0][words >> 8] ^ per_byte[1][words & 0xFF]
    lo = per_byte[2][words >> 8] ^ per_byte[3][words & 0xFF]
    return hi.astype(np.uint16), lo.astype(np.uint16)


def _u32(x: ArrayLike) -> U32:
    return np.asarray(x, dtype=np.int64).astype(np.uint32)


def _xor_bytes(acc: U32, table: npt.NDArray[np.uint32], first: int, value: U32,
               nbytes: int) -> None:
    """acc ^= contributions of `value`'s `nbytes` bytes placed at input position `first`."""
    for i in range(nbytes):
        shift = 8 * (nbytes - 1 - i)
        acc ^= table[first + i][(value >> np.uint32(shift)) & np.uint32(0xFF)]


def flow_hash(src: ArrayLike, dst: ArrayLike, proto: ArrayLike, sport: ArrayLike,
              dport: ArrayLike, qp: ArrayLike, *, mode: str) -> U32:
    """`flow` of hashing.p4 for arrays of IPv4 packets (broadcast together), as uint32."""
    m = _check_mode(mode)
    c0, table = _crc32_tables()
    arrays = np.broadcast_arrays(_u32(src), _u32(dst), _u32(proto), _u32(sport), _u32(dport),
                                 _u32(qp))
    s, d, pr, sp, dp, q = arrays
    acc = np.full(s.shape, c0, dtype=np.uint32)
    # IPv4 addresses are the last 4 bytes of their bit<128> field.
    _xor_bytes(acc, table, 28, d, 4)
    if m != MODE_PIN:
        _xor_bytes(acc, table, 12, s, 4)
        _xor_bytes(acc, table, 32, pr, 1)
        _xor_bytes(acc, table, 33, sp, 2)
        _xor_bytes(acc, table, 35, dp, 2)
        if m == MODE_EECMP:
            _xor_bytes(acc, table, 37, q, 3)
    acc[acc == np.uint32(_FLOW_MAX)] = 0  # % 0xFFFFFFFF
    return acc


def ecmp_key(flow: ArrayLike, salt: ArrayLike) -> U32:
    """((flow ^ salt) * ECMP_MIX) mod 2^32, elementwise."""
    f = _u32(flow).astype(np.uint64)
    s = _u32(salt).astype(np.uint64)
    return (((f ^ s) * np.uint64(ECMP_MIX)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def member_hash(key: ArrayLike) -> npt.NDArray[np.int64]:
    """crc16(key as 4 big-endian bytes), the selector's hash before the modulo."""
    k = _u32(key)
    hi, lo = _crc16_word_tables()
    return (hi[k >> np.uint32(16)] ^ lo[k & np.uint32(0xFFFF)]).astype(np.int64)


def member_index(key: ArrayLike, members: ArrayLike) -> npt.NDArray[np.int64]:
    """crc16(key as 4 big-endian bytes) % members: the index into the group's member list."""
    h = member_hash(key)
    n = np.asarray(members, dtype=np.int64)
    if np.any(n < 1):
        raise ValueError("a group needs at least one member")
    return h % n


def choose_member(src: ArrayLike, dst: ArrayLike, proto: ArrayLike, sport: ArrayLike,
                  dport: ArrayLike, qp: ArrayLike, *, mode: str, salt: ArrayLike,
                  members: ArrayLike) -> npt.NDArray[np.int64]:
    """Index of the member each packet takes in a group of `members` (ascending member id)."""
    return member_index(ecmp_key(flow_hash(src, dst, proto, sport, dport, qp, mode=mode), salt),
                        members)


def choose_member_one(src: int, dst: int, proto: int, sport: int, dport: int, qp: int, *,
                      mode: str, salt: int, members: int) -> int:
    """`choose_member` for one packet (IPv4 or IPv6 addresses as integers)."""
    if members < 1:
        raise ValueError("a group needs at least one member")
    flow = flow_hash_bytes(src, dst, proto, sport, dport, qp, mode=mode)
    key = ((flow ^ (salt & 0xFFFFFFFF)) * ECMP_MIX) & 0xFFFFFFFF
    return crc16(key.to_bytes(4, "big")) % members
