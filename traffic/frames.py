"""RoCEv2 frames on the transport's hot path: header templates, ICRC by zlib, a light decoder.

scapy builds or dissects one RoCEv2 packet in tens of microseconds; an
agent that paces thousands of packets per second per NIC on a shared
2-core machine cannot pay that per packet. This module makes the same bytes
as ``traffic.builders``' scapy builders (the tests compare them opcode by
opcode, pad by pad) from per-flow templates, and reads received frames with
``struct`` at fixed offsets:

- ``Flow``: one direction of one QP's traffic (MACs, IPv4 addresses, UDP
  source port, destination QP, DSCP/ECN). It caches, per IPv4 total length,
  the Ethernet/IPv4/UDP header (IPv4 checksum included) and the CRC-32 of
  the masked pseudo-header the ICRC starts with (annex A17.3.1: 8 bytes of
  ones for the LRH, then IPv4 with TOS, TTL and checksum set to ones, UDP
  with its checksum set to ones), so a frame costs one ``struct.pack`` for
  the BTH, two ``zlib.crc32`` calls and a join. ``frame`` makes any BTH
  packet; ``ack``, ``cnp`` and ``ud_send`` the fixed kinds.
- ``Rx`` / ``decode``: the fields of a received RoCEv2 frame (BTH, and the
  RETH, ImmDt, AETH or DETH its opcode carries), its payload as a
  memoryview and whether its ICRC is right; ``None`` for frames that are not
  IPv4/UDP to port 4791 for the given address. ``FrameError`` for frames
  that claim to be RoCEv2 and cannot be read.
- ``reth``, ``immdt``: the extended headers a requester puts after the BTH.
- ``pattern(addr, n)``: the payload bytes that belong at remote address
  ``addr``: a fixed pseudo-random pattern (64 KiB, repeating), so that a
  receiver checks every byte it places without any shared state.
- ``WRITE_FIRST`` ... ``WRITE_ONLY_IMM``, ``ACKNOWLEDGE``, ``CNP``,
  ``UD_SEND_ONLY``: the opcodes used here (IBTA vol 1 table 38).

Frames are untagged IPv4 without options, as the hosts send them; the
decoder handles IPv4 options, and leaves 802.1Q-tagged frames to
``traffic.parser.parse``.
"""

from __future__ import annotations

import random
import socket
import struct
import zlib

from traffic.endpoint import Endpoint
from traffic.roce import ROCEV2_UDP_PORT, Opcode, Syndrome

__all__ = [
    "ACKNOWLEDGE",
    "CNP",
    "PATTERN_SIZE",
    "UD_SEND_ONLY",
    "WRITE_FIRST",
    "WRITE_LAST",
    "WRITE_LAST_IMM",
    "WRITE_MIDDLE",
    "WRITE_ONLY",
    "WRITE_ONLY_IMM",
    "Flow",
    "FrameError",
    "Rx",
    "decode",
    "immdt",
    "mac_bytes",
    "pattern",
    "reth",
]

WRITE_FIRST = Opcode.RC_RDMA_WRITE_FIRST
WRITE_MIDDLE = Opcode.RC_RDMA_WRITE_MIDDLE
WRITE_LAST = Opcode.RC_RDMA_WRITE_LAST
WRITE_LAST_IMM = Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE
WRITE_ONLY = Opcode.RC_RDMA_WRITE_ONLY
WRITE_ONLY_IMM = Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE
ACKNOWLEDGE = Opcode.RC_ACKNOWLEDGE
CNP = Opcode.CNP
UD_SEND_ONLY = Opcode.UD_SEND_ONLY

PATTERN_SIZE = 1 << 16
_MAX_PAYLOAD = 4096  # the largest InfiniBand path MTU
# The same bytes in every process: a fixed seed.
_PATTERN = memoryview(random.Random(0x4791).randbytes(PATTERN_SIZE + _MAX_PAYLOAD))

_BTH = struct.Struct("!BBHII")
_RETH = struct.Struct("!QII")
_U32 = struct.Struct("!I")
_ICRC = struct.Struct("<I")  # scapy (and the wire) carry the CRC-32 little-endian
_IPV4 = struct.Struct("!BBHHHBBH4s4s")
_UDP = struct.Struct("!HHHH")
_AETH = struct.Struct("!I")
_DETH = struct.Struct("!II")
_PADS = (b"", b"\x00", b"\x00\x00", b"\x00\x00\x00")
_LRH_ONES_CRC = zlib.crc32(b"\xff" * 8)
_CNP_RESERVED = b"\x00" * 16
_IP_DF = 0x4000
_ETH_IPV4 = b"\x08\x00"
_UDP_4791 = ROCEV2_UDP_PORT.to_bytes(2, "big")

# Opcode -> (RETH, ImmDt, AETH, DETH) after the BTH; others carry none.
_EXT: dict[int, tuple[bool, bool, bool, bool]] = {
    WRITE_FIRST: (True, False, False, False),
    WRITE_LAST_IMM: (False, True, False, False),
    WRITE_ONLY: (True, False, False, False),
    WRITE_ONLY_IMM: (True, True, False, False),
    ACKNOWLEDGE: (False, False, True, False),
    UD_SEND_ONLY: (False, False, False, True),
    Opcode.UD_SEND_ONLY_WITH_IMMEDIATE: (False, True, False, True),
    Opcode.RC_SEND_LAST_WITH_IMMEDIATE: (False, True, False, False),
    Opcode.RC_SEND_ONLY_WITH_IMMEDIATE: (False, True, False, False),
}


class FrameError(ValueError):
    """A frame to UDP port 4791 that cannot be read as RoCEv2."""


def mac_bytes(mac: str) -> bytes:
    """``"02:00:00:00:00:01"`` -> 6 bytes."""
    raw = bytes.fromhex(mac.replace(":", "").replace("-", ""))
    if len(raw) != 6:
        raise ValueError(f"{mac!r} is not a MAC address")
    return raw


def pattern(addr: int, n: int) -> memoryview:
    """The ``n`` payload bytes (n <= 4096) that belong at remote address ``addr``."""
    start = addr % PATTERN_SIZE
    return _PATTERN[start : start + n]


def reth(va: int, rkey: int, dlen: int) -> bytes:
    """RETH bytes: virtual address, R_Key, DMA length."""
    return _RETH.pack(va, rkey, dlen)


def immdt(imm: int) -> bytes:
    """ImmDt bytes."""
    return _U32.pack(imm)


class Flow:
    """Frames of one direction of one QP, from endpoint ``src`` to ``dst`` (addresses, UDP
    source port, the destination QP: ``traffic.endpoint.Endpoint``) in one class (TOS)."""

    __slots__ = (
        "_dqpn",
        "_dst",
        "_eth",
        "_heads",
        "_ipsum",
        "_pkey",
        "_sport",
        "_src",
        "_tos",
        "_ttl",
        "dest_qp",
    )

    def __init__(
        self,
        *,
        src: Endpoint,
        dst: Endpoint,
        dscp: int,
        ecn: int = 0,
        ttl: int = 64,
        pkey: int = 0xFFFF,
    ) -> None:
        for name, value, bits in (
            ("dscp", dscp, 6),
            ("ecn", ecn, 2),
            ("ttl", ttl, 8),
            ("pkey", pkey, 16),
        ):
            if not 0 <= value < 1 << bits:
                raise ValueError(f"{name}={value!r} does not fit in {bits} bits")
        self._eth = mac_bytes(dst.mac) + mac_bytes(src.mac) + _ETH_IPV4
        self._src = socket.inet_aton(src.ip)
        self._dst = socket.inet_aton(dst.ip)
        self._tos = dscp << 2 | ecn
        self._ttl = ttl
        self._sport = src.port
        self._pkey = pkey
        self.dest_qp = dst.qpn
        self._dqpn = dst.qpn
        # One's-complement sum of the IPv4 header words that never change
        # (all but total length and checksum); ID 0 and DF, as rdma_write builds.
        words = struct.unpack("!4H", self._src + self._dst)
        self._ipsum = (0x45 << 8 | self._tos) + _IP_DF + (ttl << 8 | 17) + sum(words)
        self._heads: dict[int, tuple[bytes, int]] = {}

    def _head(self, total: int) -> tuple[bytes, int]:
        """(Ethernet+IPv4+UDP header, CRC-32 of the masked pseudo-header) for an IPv4 length."""
        cached = self._heads.get(total)
        if cached is not None:
            return cached
        s = self._ipsum + total
        s = (s & 0xFFFF) + (s >> 16)
        s = (s & 0xFFFF) + (s >> 16)
        ip = _IPV4.pack(0x45, self._tos, total, 0, _IP_DF, self._ttl, 17, ~s & 0xFFFF,
                        self._src, self._dst)
        udp = _UDP.pack(self._sport, ROCEV2_UDP_PORT, total - 20, 0)
        masked_ip = _IPV4.pack(0x45, 0xFF, total, 0, _IP_DF, 0xFF, 17, 0xFFFF, self._src, self._dst)
        masked_udp = _UDP.pack(self._sport, ROCEV2_UDP_PORT, total - 20, 0xFFFF)
        entry = (self._eth + ip + udp, zlib.crc32(masked_ip + masked_udp, _LRH_ONES_CRC))
        self._heads[total] = entry
        return entry

    def frame(
        self,
        opcode: int,
        psn: int,
        *,
        ackreq: bool = False,
        ext: bytes = b"",
        payload: bytes | memoryview = b"",
        becn: bool = False,
    ) -> bytes:
        """One frame: BTH(opcode, PSN, AckReq, pad count) / ``ext`` headers / payload / pad / ICRC."""
        n = len(payload)
        pad = -n & 3
        head, crc = self._head(44 + len(ext) + n + pad)  # 20 IPv4 + 8 UDP + 12 BTH + 4 ICRC
        flags = pad << 4
        word2 = (0x40000000 if becn else 0) | self._dqpn
        word3 = (0x80000000 if ackreq else 0) | psn
        bth = _BTH.pack(opcode, flags, self._pkey, word2, word3)
        # The ICRC masks the BTH byte that holds FECN, BECN and resv6.
        crc = zlib.crc32(_BTH.pack(opcode, flags, self._pkey, 0xFF000000 | self._dqpn, word3) + ext,
                         crc)
        if n:
            crc = zlib.crc32(payload, crc)
        if pad:
            crc = zlib.crc32(_PADS[pad], crc)
        return b"".join((head, bth, ext, payload, _PADS[pad], _ICRC.pack(crc)))

    def ack(self, psn: int, syndrome: int = Syndrome.ACK_UNLIMITED, msn: int = 0) -> bytes:
        """An RC ACKNOWLEDGE (ACK or NAK by ``syndrome``) for ``psn``."""
        return self.frame(ACKNOWLEDGE, psn, ext=_AETH.pack(syndrome << 24 | msn))

    def cnp(self) -> bytes:
        """A RoCEv2 CNP (opcode 0x81, BECN, PSN 0, 16 reserved bytes)."""
        return self.frame(CNP, 0, becn=True, ext=_CNP_RESERVED)

    def ud_send(self, psn: int, *, qkey: int, src_qp: int, payload: bytes) -> bytes:
        """A UD SEND Only: BTH / DETH(Q_Key, source QP) / payload."""
        return self.frame(UD_SEND_ONLY, psn, ext=_DETH.pack(qkey, src_qp), payload=payload)


class Rx:
    """The fields of one received RoCEv2 frame that the transport reads."""

    __slots__ = (
        "ackreq",
        "becn",
        "dlen",
        "dqpn",
        "ecn",
        "icrc_ok",
        "imm",
        "msn",
        "opcode",
        "payload",
        "psn",
        "qkey",
        "rkey",
        "src_ip",
        "src_qp",
        "syndrome",
        "va",
    )

    opcode: int
    dqpn: int
    psn: int
    ackreq: bool
    becn: bool
    ecn: int
    src_ip: bytes  # 4 bytes, network order
    va: int
    rkey: int
    dlen: int
    imm: int | None
    syndrome: int
    msn: int
    qkey: int
    src_qp: int
    payload: memoryview
    icrc_ok: bool


def decode(frame: bytes, dst_ip: bytes | None = None) -> Rx | None:
    """Read a RoCEv2 frame addressed to ``dst_ip`` (4 bytes; None: any address).

    Returns None for anything else (ARP, PFC, other UDP, other addresses,
    802.1Q tags). Raises ``FrameError`` when a frame to UDP port 4791 is
    truncated or its lengths disagree. A wrong ICRC is not an error here:
    ``Rx.icrc_ok`` says it, and the caller drops and counts the packet.
    """
    if len(frame) < 34 or frame[12:14] != _ETH_IPV4:
        return None
    vihl = frame[14]
    if vihl >> 4 != 4 or frame[23] != 17:
        return None
    ihl = (vihl & 0x0F) * 4
    udp = 14 + ihl
    if ihl < 20 or len(frame) < udp + 8 or frame[udp + 2 : udp + 4] != _UDP_4791:
        return None
    if dst_ip is not None and frame[30:34] != dst_ip:
        return None
    total = frame[16] << 8 | frame[17]
    end = 14 + total
    if len(frame) < end or total < ihl + 8 + 16:
        raise FrameError(f"IPv4 total length {total} does not fit a {len(frame)}-byte frame")
    if (frame[20] & 0x3F) or frame[21]:
        raise FrameError("IPv4 fragment (RoCEv2 is never fragmented)")
    if (frame[udp + 4] << 8 | frame[udp + 5]) != total - ihl:
        raise FrameError("UDP length does not match the IPv4 payload")
    bth = udp + 8
    opcode, flags, _pkey, word2, word3 = _BTH.unpack_from(frame, bth)
    rx = Rx()
    rx.opcode = opcode
    rx.dqpn = word2 & 0xFFFFFF
    rx.becn = bool(word2 & 0x40000000)
    rx.psn = word3 & 0xFFFFFF
    rx.ackreq = bool(word3 & 0x80000000)
    rx.ecn = frame[15] & 3
    rx.src_ip = frame[26:30]
    rx.imm = None
    off = bth + 12
    has_reth, has_imm, has_aeth, has_deth = _EXT.get(opcode, (False, False, False, False))
    if opcode == CNP:
        off += 16
    if has_deth:
        rx.qkey, word = _DETH.unpack_from(frame, off)
        rx.src_qp = word & 0xFFFFFF
        off += 8
    if has_reth:
        rx.va, rx.rkey, rx.dlen = _RETH.unpack_from(frame, off)
        off += 16
    if has_imm:
        rx.imm = _U32.unpack_from(frame, off)[0]
        off += 4
    if has_aeth:
        word = _AETH.unpack_from(frame, off)[0]
        rx.syndrome = word >> 24
        rx.msn = word & 0xFFFFFF
        off += 4
    pad = flags >> 4 & 3
    if off + pad > end - 4:
        raise FrameError(f"opcode {opcode:#04x}: headers and pad overrun the frame")
    view = memoryview(frame)
    rx.payload = view[off : end - 4 - pad]
    # ICRC: the same masked pseudo-header the sender covered.
    head = bytearray(view[14:bth + 12])
    head[1] = 0xFF  # TOS
    head[8] = 0xFF  # TTL
    head[10] = head[11] = 0xFF  # IPv4 checksum
    u = ihl + 6
    head[u] = head[u + 1] = 0xFF  # UDP checksum
    head[ihl + 12] = 0xFF  # BTH FECN, BECN, resv6
    crc = zlib.crc32(view[bth + 12 : end - 4], zlib.crc32(head, _LRH_ONES_CRC))
    rx.icrc_ok = _ICRC.pack(crc) == frame[end - 4 : end]
    return rx
