"""RoCEv2 packets: build RDMA WRITEs, segment messages by path MTU, parse frames.

RoCEv2 (IBTA vol 1, annex A17) is Ethernet / IPv4 / UDP (destination port
4791) / InfiniBand transport headers / payload / ICRC. scapy's
``scapy.contrib.roce`` provides the BTH (with opcodes), AETH and the ICRC
computation (invariant fields covered, variant ones masked as annex A17
prescribes); this module adds the extended transport headers scapy lacks and
the few functions the host agents need:

- ``RETH``: RDMA Extended Transport Header (IBTA vol 1 §9.3.3): virtual
  address, R_Key, DMA length. Follows the BTH of RDMA WRITE First/Only (with
  or without immediate) and RDMA READ Request.
- ``ImmDt``: Immediate Data Extended Transport Header (§9.3.6), 32 bits,
  on SEND/RDMA WRITE Last/Only "with immediate".
- ``DETH``: Datagram Extended Transport Header: Q_Key and source
  QP of a UD packet (the clear-to-send grants of receiver-driven admission
  travel as UD SEND Only).
- ``Syndrome``: AETH syndromes: ACK, and the NAK codes RC uses.
- ``rdma_write``: one RDMA WRITE packet (First, Middle, Last or Only).
- ``acknowledge``: an RC ACKNOWLEDGE (ACK or NAK) with its AETH.
- ``cnp``: a RoCEv2 congestion notification packet (annex A17.9.3).
- ``ud_send``: a UD SEND Only (with or without immediate) with its DETH.
- ``segment_write``: one RDMA WRITE message as First/Middle.../Last packets
  (or one Only packet) with consecutive PSNs, each payload exactly the path
  MTU except the last (§9.7.2).
- ``parse``: bytes -> ``RoceInfo`` (a RoCEv2 packet), ``Malformed`` (claims
  to be RoCEv2 but cannot be read) or ``None`` (not RoCEv2). Never raises.
- ``icrc_ok``: recompute the ICRC of a frame with scapy and compare.
- ``psn_add`` / ``psn_diff``: 24-bit PSN arithmetic.

The UDP checksum is left at zero by default, as Linux rxe and RoCE NICs send
it: the ICRC protects the packet end to end and the checksum would cover the
variant fields the switches rewrite.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from scapy.contrib.roce import AETH, BTH, CNPPadding
from scapy.fields import BitField, IntField, XByteField, XIntField, XLongField
from scapy.layers.inet import IP, UDP, in4_chksum
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, bind_layers
from scapy.utils import checksum

__all__ = [
    "CNP_OPCODE",
    "DEFAULT_DSCP",
    "DETH",
    "IB_MTUS",
    "ROCEV2_UDP_PORT",
    "ImmDt",
    "Malformed",
    "Opcode",
    "RETH",
    "Reth",
    "RoceInfo",
    "Syndrome",
    "acknowledge",
    "cnp",
    "icrc_ok",
    "parse",
    "psn_add",
    "psn_diff",
    "rdma_write",
    "segment_write",
    "ud_send",
]

ROCEV2_UDP_PORT = 4791
# Path MTUs InfiniBand defines (bytes of payload per packet).
IB_MTUS = (256, 512, 1024, 2048, 4096)
# DSCP 26 (AF31) is the customary RoCE lossless class on NICs and switches.
DEFAULT_DSCP = 26
PSN_MOD = 1 << 24

_ETH_LEN = 14
_VLAN_LEN = 4
_UDP_LEN = 8
_BTH_LEN = 12
_RETH_LEN = 16
_IMMDT_LEN = 4
_AETH_LEN = 4
_DETH_LEN = 8
_ICRC_LEN = 4
_ETHERTYPE_IPV4 = 0x0800
_ETHERTYPE_VLAN = 0x8100


class Opcode:
    """BTH opcodes of the Reliable (RC) and Unreliable (UC) Connected services."""

    RC_SEND_LAST_WITH_IMMEDIATE = 0x03
    RC_SEND_ONLY_WITH_IMMEDIATE = 0x05
    RC_RDMA_WRITE_FIRST = 0x06
    RC_RDMA_WRITE_MIDDLE = 0x07
    RC_RDMA_WRITE_LAST = 0x08
    RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09
    RC_RDMA_WRITE_ONLY = 0x0A
    RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B
    RC_RDMA_READ_REQUEST = 0x0C
    RC_RDMA_READ_RESPONSE_FIRST = 0x0D
    RC_RDMA_READ_RESPONSE_LAST = 0x0F
    RC_RDMA_READ_RESPONSE_ONLY = 0x10
    RC_ACKNOWLEDGE = 0x11
    UC = 0x20  # add to an RC opcode for the same operation on UC
    UD_SEND_ONLY = 0x64
    UD_SEND_ONLY_WITH_IMMEDIATE = 0x65
    CNP = 0x81


CNP_OPCODE = Opcode.CNP


class Syndrome:
    """AETH syndromes (IBTA vol 1 ch. 9, the AETH): bits 6-5 say ACK, RNR NAK or NAK."""

    ACK = 0x00  # bits 4-0: end-to-end credit count
    ACK_UNLIMITED = 0x1F  # credit count "invalid": no end-to-end flow control
    RNR_NAK = 0x20  # bits 4-0: the RNR timer
    NAK = 0x60  # bits 4-0: the NAK code below
    NAK_PSN_SEQUENCE_ERROR = 0x60
    NAK_INVALID_REQUEST = 0x61
    NAK_REMOTE_ACCESS_ERROR = 0x62
    NAK_REMOTE_OPERATIONAL_ERROR = 0x63
    NAK_INVALID_RD_REQUEST = 0x64


# Opcodes whose BTH is followed by a RETH / by an ImmDt / by an AETH.
_WITH_RETH = frozenset(
    base + op
    for base in (0x00, Opcode.UC)
    for op in (
        Opcode.RC_RDMA_WRITE_FIRST,
        Opcode.RC_RDMA_WRITE_ONLY,
        Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
    )
) | {Opcode.RC_RDMA_READ_REQUEST}
_RETH_THEN_IMMDT = frozenset(
    {Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.UC + Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE}
)
_BTH_THEN_IMMDT = frozenset(
    base + op
    for base in (0x00, Opcode.UC)
    for op in (
        Opcode.RC_SEND_LAST_WITH_IMMEDIATE,
        Opcode.RC_SEND_ONLY_WITH_IMMEDIATE,
        Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
    )
)
_WITH_DETH = frozenset({Opcode.UD_SEND_ONLY, Opcode.UD_SEND_ONLY_WITH_IMMEDIATE})
# scapy binds AETH to ACKNOWLEDGE only; READ responses First/Last/Only carry one too.
_WITH_AETH = frozenset(
    {
        Opcode.RC_ACKNOWLEDGE,
        Opcode.RC_RDMA_READ_RESPONSE_FIRST,
        Opcode.RC_RDMA_READ_RESPONSE_LAST,
        Opcode.RC_RDMA_READ_RESPONSE_ONLY,
    }
)
_WRITE_OPCODES = {
    # (position, with immediate) -> RC opcode
    ("first", False): Opcode.RC_RDMA_WRITE_FIRST,
    ("middle", False): Opcode.RC_RDMA_WRITE_MIDDLE,
    ("last", False): Opcode.RC_RDMA_WRITE_LAST,
    ("last", True): Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
    ("only", False): Opcode.RC_RDMA_WRITE_ONLY,
    ("only", True): Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
}


class RETH(Packet):
    """RDMA Extended Transport Header (IBTA vol 1 §9.3.3)."""

    name = "RETH"
    fields_desc = [
        XLongField("va", 0),
        XIntField("rkey", 0),
        IntField("dlen", 0),
    ]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        """ImmDt after a WRITE Only with immediate (per the BTH opcode), else Raw."""
        # Only WRITE Only-with-immediate stacks an ImmDt after the RETH; the
        # decision belongs to the BTH opcode, which bind_layers cannot see.
        bth = self.underlayer
        if isinstance(bth, BTH) and bth.opcode in _RETH_THEN_IMMDT:
            return ImmDt
        return Raw


class ImmDt(Packet):
    """Immediate Data Extended Transport Header (IBTA vol 1 §9.3.6)."""

    name = "ImmDt"
    fields_desc = [XIntField("imm", 0)]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        """The payload after the immediate data (Raw)."""
        return Raw


class DETH(Packet):
    """Datagram Extended Transport Header (IBTA vol 1 ch. 9): Q_Key, source QP."""

    name = "DETH"
    fields_desc = [
        XIntField("qkey", 0),
        XByteField("reserved", 0),
        BitField("srcqp", 0, 24),
    ]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        """ImmDt after a UD SEND Only with immediate, else Raw."""
        bth = self.underlayer
        if isinstance(bth, BTH) and bth.opcode == Opcode.UD_SEND_ONLY_WITH_IMMEDIATE:
            return ImmDt
        return Raw


for _op in _WITH_RETH:
    bind_layers(BTH, RETH, opcode=_op)
for _op in _WITH_DETH:
    bind_layers(BTH, DETH, opcode=_op)
for _op in _BTH_THEN_IMMDT:
    bind_layers(BTH, ImmDt, opcode=_op)
for _op in _WITH_AETH - {Opcode.RC_ACKNOWLEDGE}:
    bind_layers(BTH, AETH, opcode=_op)


def psn_add(psn: int, n: int) -> int:
    """Return ``psn + n`` modulo 2**24 (PSNs are 24-bit and wrap)."""
    return (psn + n) % PSN_MOD


def psn_diff(a: int, b: int) -> int:
    """Return the signed distance ``a - b`` between two PSNs, in (-2**23, 2**23]."""
    d = (a - b) % PSN_MOD
    return d - PSN_MOD if d > PSN_MOD // 2 else d


def _check_range(name: str, value: int, bits: int) -> None:
    if not 0 <= value < (1 << bits):
        raise ValueError(f"{name}={value!r} does not fit in {bits} bits")


def rdma_write(
    *,
    src_mac: str,
    dst_mac: str,
    src_ip: str,
    dst_ip: str,
    src_port: int,
    dest_qp: int,
    psn: int,
    payload: bytes,
    va: int = 0,
    rkey: int = 0,
    dlen: int | None = None,
    position: str = "only",
    imm: int | None = None,
    ackreq: bool | None = None,
    transport: str = "RC",
    dscp: int = DEFAULT_DSCP,
    ecn: int = 0,
    ttl: int = 64,
    pkey: int = 0xFFFF,
    ip_id: int = 0,
    udp_checksum: bool = False,
) -> Packet:
    """Build one RDMA WRITE packet as a scapy ``Ether`` with IPv4 checksum and ICRC.

    ``position`` is ``first``, ``middle``, ``last`` or ``only``; ``first`` and
    ``only`` carry a RETH (``va``, ``rkey``, ``dlen``, the whole message's
    length, default ``len(payload)``), ``last`` and ``only`` carry an ImmDt
    when ``imm`` is given. The payload is padded to 4 bytes with the BTH pad
    count set. ``ackreq`` defaults to True on ``last``/``only``. ``bytes()``
    of the result is the frame on the wire.
    """
    if (position, imm is not None) not in _WRITE_OPCODES:
        raise ValueError(
            f"position={position!r} with imm={imm!r}: position must be first, middle, last "
            "or only, and only last/only carry immediate data"
        )
    if transport not in ("RC", "UC"):
        raise ValueError(f"transport={transport!r}: RDMA WRITE exists on RC and UC only")
    _check_range("dest_qp", dest_qp, 24)
    _check_range("psn", psn, 24)
    _check_range("src_port", src_port, 16)
    _check_range("va", va, 64)
    _check_range("rkey", rkey, 32)
    _check_range("dscp", dscp, 6)
    _check_range("ecn", ecn, 2)
    _check_range("pkey", pkey, 16)
    if imm is not None:
        _check_range("imm", imm, 32)
    opcode = _WRITE_OPCODES[(position, imm is not None)] + (Opcode.UC if transport == "UC" else 0)
    if ackreq is None:
        ackreq = position in ("last", "only")
    pad = -len(payload) % 4
    l4: Packet = BTH(
        opcode=opcode, padcount=pad, pkey=pkey, dqpn=dest_qp, ackreq=int(ackreq), psn=psn
    )
    if position in ("first", "only"):
        length = len(payload) if dlen is None else dlen
        _check_range("dlen", length, 32)
        l4 = l4 / RETH(va=va, rkey=rkey, dlen=length)
    if imm is not None:
        l4 = l4 / ImmDt(imm=imm)
    return _encap(
        l4 / Raw(bytes(payload) + b"\x00" * pad),
        src_mac=src_mac,
        dst_mac=dst_mac,
        src_ip=src_ip,
        dst_ip=dst_ip,
        src_port=src_port,
        dscp=dscp,
        ecn=ecn,
        ttl=ttl,
        ip_id=ip_id,
        udp_checksum=udp_checksum,
    )


def _encap(
    l4: Packet,
    *,
    src_mac: str,
    dst_mac: str,
    src_ip: str,
    dst_ip: str,
    src_port: int,
    dscp: int,
    ecn: int,
    ttl: int,
    ip_id: int,
    udp_checksum: bool,
) -> Packet:
    """Ethernet / IPv4 (DF) / UDP to 4791 around the transport headers ``l4``."""
    _check_range("src_port", src_port, 16)
    _check_range("dscp", dscp, 6)
    _check_range("ecn", ecn, 2)
    udp = UDP(sport=src_port, dport=ROCEV2_UDP_PORT)
    if not udp_checksum:
        udp.chksum = 0
    return (
        Ether(src=src_mac, dst=dst_mac)
        / IP(src=src_ip, dst=dst_ip, tos=(dscp << 2) | ecn, ttl=ttl, id=ip_id, flags="DF")
        / udp
        / l4
    )


def acknowledge(
    *,
    src_mac: str,
    dst_mac: str,
    src_ip: str,
    dst_ip: str,
    src_port: int,
    dest_qp: int,
    psn: int,
    syndrome: int = Syndrome.ACK_UNLIMITED,
    msn: int = 0,
    dscp: int = DEFAULT_DSCP,
    ecn: int = 0,
    ttl: int = 64,
    pkey: int = 0xFFFF,
    ip_id: int = 0,
    udp_checksum: bool = False,
) -> Packet:
    """Build an RC ACKNOWLEDGE: an ACK or NAK (``syndrome``) of ``psn`` to the requester's QP.

    An ACK's PSN is the last one it acknowledges (coalesced: all before it
    too); a PSN-sequence-error NAK's PSN is the one the responder expects.
    ``msn`` is the responder's message sequence number.
    """
    _check_range("dest_qp", dest_qp, 24)
    _check_range("psn", psn, 24)
    _check_range("syndrome", syndrome, 8)
    _check_range("msn", msn, 24)
    l4 = BTH(opcode=Opcode.RC_ACKNOWLEDGE, pkey=pkey, dqpn=dest_qp, psn=psn) / AETH(
        syndrome=syndrome, msn=msn
    )
    return _encap(
        l4,
        src_mac=src_mac,
        dst_mac=dst_mac,
        src_ip=src_ip,
        dst_ip=dst_ip,
        src_port=src_port,
        dscp=dscp,
        ecn=ecn,
        ttl=ttl,
        ip_id=ip_id,
        udp_checksum=udp_checksum,
    )


def cnp(
    *,
    src_mac: str,
    dst_mac: str,
    src_ip: str,
    dst_ip: str,
    src_port: int,
    dest_qp: int,
    dscp: int = 48,
    ecn: int = 0,
    ttl: int = 64,
    pkey: int = 0xFFFF,
    ip_id: int = 0,
    udp_checksum: bool = False,
) -> Packet:
    """Build a RoCEv2 CNP (annex A17.9.3) to the QP whose packets arrived CE-marked.

    BTH opcode 0x81 with BECN set, PSN 0, 16 reserved bytes, ICRC: scapy's
    ``cnp()`` layers, framed like the other packets.
    """
    _check_range("dest_qp", dest_qp, 24)
    l4 = BTH(opcode=Opcode.CNP, becn=1, pkey=pkey, dqpn=dest_qp) / CNPPadding()
    return _encap(
        l4,
        src_mac=src_mac,
        dst_mac=dst_mac,
        src_ip=src_ip,
        dst_ip=dst_ip,
        src_port=src_port,
        dscp=dscp,
        ecn=ecn,
        ttl=ttl,
        ip_id=ip_id,
        udp_checksum=udp_checksum,
    )


def ud_send(
    *,
    src_mac: str,
    dst_mac: str,
    src_ip: str,
    dst_ip: str,
    src_port: int,
    dest_qp: int,
    src_qp: int,
    qkey: int,
    psn: int,
    payload: bytes,
    imm: int | None = None,
    dscp: int = DEFAULT_DSCP,
    ecn: int = 0,
    ttl: int = 64,
    pkey: int = 0xFFFF,
    ip_id: int = 0,
    udp_checksum: bool = False,
) -> Packet:
    """Build a UD SEND Only (with immediate if ``imm`` is given): BTH / DETH [/ ImmDt] / payload."""
    for name, value, bits in (
        ("dest_qp", dest_qp, 24),
        ("src_qp", src_qp, 24),
        ("qkey", qkey, 32),
        ("psn", psn, 24),
    ):
        _check_range(name, value, bits)
    pad = -len(payload) % 4
    opcode = Opcode.UD_SEND_ONLY if imm is None else Opcode.UD_SEND_ONLY_WITH_IMMEDIATE
    l4: Packet = BTH(opcode=opcode, padcount=pad, pkey=pkey, dqpn=dest_qp, psn=psn) / DETH(
        qkey=qkey, srcqp=src_qp
    )
    if imm is not None:
        _check_range("imm", imm, 32)
        l4 = l4 / ImmDt(imm=imm)
    return _encap(
        l4 / Raw(bytes(payload) + b"\x00" * pad),
        src_mac=src_mac,
        dst_mac=dst_mac,
        src_ip=src_ip,
        dst_ip=dst_ip,
        src_port=src_port,
        dscp=dscp,
        ecn=ecn,
        ttl=ttl,
        ip_id=ip_id,
        udp_checksum=udp_checksum,
    )


def segment_write(
    *,
    message: bytes,
    path_mtu: int,
    psn: int,
    va: int = 0,
    imm: int | None = None,
    **headers: Any,
) -> list[Packet]:
    """Split one RDMA WRITE message into packets by path MTU (IBTA vol 1 §9.7.2).

    Returns ``[Only]`` when the message fits in one packet (a zero-length
    WRITE included), else ``[First, Middle..., Last]``; PSNs count up from
    ``psn`` (wrapping at 2**24); every payload but the last is exactly
    ``path_mtu`` bytes; the RETH on the first packet carries ``va`` and the
    whole length; ``imm`` rides on the last packet. ``headers`` are the other
    keyword arguments of ``rdma_write`` (addresses, ``dest_qp``, ``rkey``...).
    """
    if path_mtu not in IB_MTUS:
        raise ValueError(f"path_mtu={path_mtu!r}: must be one of {', '.join(map(str, IB_MTUS))}")
    for reserved in ("payload", "position", "dlen"):
        if reserved in headers:
            raise ValueError(f"segment_write sets {reserved} itself")
    chunks = [message[i : i + path_mtu] for i in range(0, len(message), path_mtu)] or [b""]
    packets = []
    for i, chunk in enumerate(chunks):
        if len(chunks) == 1:
            position = "only"
        else:
            position = "first" if i == 0 else "last" if i == len(chunks) - 1 else "middle"
        packets.append(
            rdma_write(
                payload=chunk,
                position=position,
                psn=psn_add(psn, i),
                va=va,
                dlen=len(message),
                imm=imm if position in ("last", "only") else None,
                **headers,
            )
        )
    return packets


@dataclass(frozen=True, kw_only=True)
class Reth:
    """The RETH fields of a parsed packet."""

    va: int
    rkey: int
    dlen: int


@dataclass(frozen=True, kw_only=True)
class RoceInfo:
    """What a receiver needs from one RoCEv2 packet (IPv4)."""

    src_mac: str
    dst_mac: str
    src_ip: str
    dst_ip: str
    src_port: int
    dscp: int
    ecn: int
    opcode: int
    opcode_name: str
    dest_qp: int
    psn: int
    ackreq: bool
    solicited: bool
    fecn: bool
    becn: bool
    pkey: int
    padcount: int
    reth: Reth | None
    imm: int | None
    aeth_syndrome: int | None
    aeth_msn: int | None
    deth_qkey: int | None = None
    deth_src_qp: int | None = None
    payload: bytes  # pad bytes removed
    icrc: int  # as read from the wire, big-endian
    icrc_ok: bool
    ip_checksum_ok: bool
    udp_checksum_ok: bool | None  # None: checksum zero, i.e. not used


@dataclass(frozen=True)
class Malformed:
    """A frame that claims to be RoCEv2 (UDP port 4791) but cannot be read."""

    reason: str


def _headers_length(opcode: int) -> int:
    """Bytes of extended transport headers the opcode puts after the BTH."""
    n = 0
    if opcode in _WITH_RETH:
        n += _RETH_LEN
    if opcode in _WITH_DETH:
        n += _DETH_LEN
    if (
        opcode in _RETH_THEN_IMMDT
        or opcode in _BTH_THEN_IMMDT
        or opcode == Opcode.UD_SEND_ONLY_WITH_IMMEDIATE
    ):
        n += _IMMDT_LEN
    if opcode in _WITH_AETH:
        n += _AETH_LEN
    return n


def icrc_ok(pkt: Packet) -> bool:
    """Return whether the ICRC of a packet (built or dissected) matches scapy's recomputation."""
    bth = pkt.getlayer(BTH)
    if bth is not None and bth.icrc is None:
        bth = Ether(bytes(pkt)).getlayer(BTH)
    if bth is None:
        return False
    return bool(bth.compute_icrc(b"") == struct.pack("!I", bth.icrc))


def parse(data: bytes) -> RoceInfo | Malformed | None:
    """Read one Ethernet frame; never raises.

    Returns ``None`` for anything that is not IPv4/UDP to port 4791 (ARP,
    PFC, other UDP...), ``Malformed(reason)`` when a frame to port 4791 is
    truncated or inconsistent, else a ``RoceInfo``. One 802.1Q tag is
    skipped. Ethernet padding after the IP datagram is ignored.
    """
    try:
        return _parse(bytes(data))
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"
        return Malformed(f"cannot dissect: {type(exc).__name__}: {exc}")


def _parse(data: bytes) -> RoceInfo | Malformed | None:
    # Check the framing by hand first: scapy dissects whatever it is given
    # (short fields become Raw, lengths are trusted), so a truncated packet
    # would otherwise look like a RoCE packet with garbage fields.
    off = _ETH_LEN
    if len(data) < off:
        return None
    ethertype = int.from_bytes(data[12:14], "big")
    if ethertype == _ETHERTYPE_VLAN:
        if len(data) < off + _VLAN_LEN:
            return None
        ethertype = int.from_bytes(data[16:18], "big")
        off += _VLAN_LEN
    if ethertype != _ETHERTYPE_IPV4 or len(data) < off + 20:
        return None
    if data[off] >> 4 != 4:
        return None
    ihl = (data[off] & 0x0F) * 4
    total = int.from_bytes(data[off + 2 : off + 4], "big")
    proto = data[off + 9]
    if proto != 17 or ihl < 20 or len(data) < off + ihl + _UDP_LEN:
        return None
    udp_off = off + ihl
    if int.from_bytes(data[udp_off + 2 : udp_off + 4], "big") != ROCEV2_UDP_PORT:
        return None
    # From here on the frame says it is RoCEv2.
    if total < ihl + _UDP_LEN or len(data) < off + total:
        return Malformed(f"IPv4 total length {total} does not match the frame")
    if int.from_bytes(data[off + 6 : off + 8], "big") & 0x3FFF:
        return Malformed("IPv4 fragment (RoCEv2 is never fragmented)")
    udp_len = int.from_bytes(data[udp_off + 4 : udp_off + 6], "big")
    if udp_len != total - ihl:
        return Malformed(f"UDP length {udp_len} does not match IPv4 payload {total - ihl}")
    transport = udp_len - _UDP_LEN
    if transport < _BTH_LEN + _ICRC_LEN:
        return Malformed(f"{transport} bytes after UDP: too short for BTH and ICRC")
    bth_off = udp_off + _UDP_LEN
    opcode = data[bth_off]
    padcount = (data[bth_off + 1] >> 4) & 0x3
    ext = _headers_length(opcode)
    payload_len = transport - _BTH_LEN - ext - _ICRC_LEN
    if payload_len < 0:
        return Malformed(f"opcode {opcode:#04x} needs {ext} header bytes after the BTH")
    if padcount > payload_len:
        return Malformed(f"pad count {padcount} exceeds payload of {payload_len} bytes")

    frame = data[: off + total]  # drop Ethernet padding: it is not under the ICRC
    pkt = Ether(frame)
    ip, udp, bth = pkt[IP], pkt[UDP], pkt[BTH]
    reth = pkt.getlayer(RETH)
    immdt = pkt.getlayer(ImmDt)
    aeth = pkt.getlayer(AETH)
    deth = pkt.getlayer(DETH)
    l4_payload = frame[len(frame) - _ICRC_LEN - payload_len : len(frame) - _ICRC_LEN]
    udp_bytes = frame[udp_off : off + total]
    return RoceInfo(
        src_mac=pkt[Ether].src,
        dst_mac=pkt[Ether].dst,
        src_ip=ip.src,
        dst_ip=ip.dst,
        src_port=udp.sport,
        dscp=ip.tos >> 2,
        ecn=ip.tos & 0x3,
        opcode=opcode,
        opcode_name=str(bth.get_field("opcode").i2repr(bth, opcode)),
        dest_qp=bth.dqpn,
        psn=bth.psn,
        ackreq=bool(bth.ackreq),
        solicited=bool(bth.solicited),
        fecn=bool(bth.fecn),
        becn=bool(bth.becn),
        pkey=bth.pkey,
        padcount=padcount,
        reth=Reth(va=reth.va, rkey=reth.rkey, dlen=reth.dlen) if reth is not None else None,
        imm=immdt.imm if immdt is not None else None,
        aeth_syndrome=aeth.syndrome if aeth is not None else None,
        aeth_msn=aeth.msn if aeth is not None else None,
        deth_qkey=deth.qkey if deth is not None else None,
        deth_src_qp=deth.srcqp if deth is not None else None,
        payload=l4_payload[: payload_len - padcount],
        icrc=bth.icrc,
        icrc_ok=icrc_ok(pkt),
        ip_checksum_ok=checksum(frame[off:udp_off]) == 0,
        udp_checksum_ok=None if udp.chksum == 0 else in4_chksum(17, ip, udp_bytes) == 0,
    )
