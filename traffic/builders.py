"""RoCEv2 packet builders: RDMA WRITEs segmented by path MTU, ACK/NAKs, CNPs, UD SENDs.

- ``rdma_write``: one RDMA WRITE packet (First, Middle, Last or Only).
- ``acknowledge``: an RC ACKNOWLEDGE (ACK or NAK) with its AETH.
- ``cnp``: a RoCEv2 congestion notification packet (annex A17.9.3).
- ``ud_send``: a UD SEND Only (with or without immediate) with its DETH.
- ``segment_write``: one RDMA WRITE message as First/Middle.../Last packets
  (or one Only packet) with consecutive PSNs, each payload exactly the path
  MTU except the last (§9.7.2).

Every builder takes the packet's two ends as ``traffic.endpoint.Endpoint``
values (``src``: MAC, IP, UDP source port and, for UD, the source QP;
``dst``: MAC, IP, the QP the BTH addresses; UDP to 4791) and the optional header fields
of ``HeaderFields`` as keywords. The UDP checksum is left at zero by
default, as Linux rxe and RoCE NICs send it: the ICRC protects the packet
end to end and the checksum would cover the variant fields the switches
rewrite.
"""

from __future__ import annotations

from typing import Any, Unpack

from scapy.contrib.roce import AETH, BTH, CNPPadding
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from traffic.endpoint import Endpoint, HeaderFields
from traffic.roce import (
    DEFAULT_DSCP,
    DETH,
    IB_MTUS,
    RETH,
    ROCEV2_UDP_PORT,
    ImmDt,
    Opcode,
    Syndrome,
    psn_add,
)

__all__ = [
    "CNP_DSCP",
    "acknowledge",
    "cnp",
    "rdma_write",
    "segment_write",
    "ud_send",
]

CNP_DSCP = 48  # a CNP's default class: the control class, above the data it slows down
_WRITE_OPCODES = {
    # (position, with immediate) -> RC opcode
    ("first", False): Opcode.RC_RDMA_WRITE_FIRST,
    ("middle", False): Opcode.RC_RDMA_WRITE_MIDDLE,
    ("last", False): Opcode.RC_RDMA_WRITE_LAST,
    ("last", True): Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
    ("only", False): Opcode.RC_RDMA_WRITE_ONLY,
    ("only", True): Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
}


def _check_range(name: str, value: int, bits: int) -> None:
    if not 0 <= value < (1 << bits):
        raise ValueError(f"{name}={value!r} does not fit in {bits} bits")


def rdma_write(
    *,
    src: Endpoint,
    dst: Endpoint,
    psn: int,
    payload: bytes,
    va: int = 0,
    rkey: int = 0,
    dlen: int | None = None,
    position: str = "only",
    imm: int | None = None,
    ackreq: bool | None = None,
    transport: str = "RC",
    **fields: Unpack[HeaderFields],
) -> Packet:
    """Build one RDMA WRITE packet from ``src`` to QP ``dst.qpn`` as a scapy ``Ether``.

    ``position`` is ``first``, ``middle``, ``last`` or ``only``; ``first`` and
    ``only`` carry a RETH (``va``, ``rkey``, ``dlen``, the whole message's
    length, default ``len(payload)``), ``last`` and ``only`` carry an ImmDt
    when ``imm`` is given. The payload is padded to 4 bytes with the BTH pad
    count set. ``ackreq`` defaults to True on ``last``/``only``. ``fields``:
    DSCP (default 26), ECN, TTL, IP ID, UDP checksum, P_Key. ``bytes()`` of
    the result is the frame on the wire, IPv4 checksum and ICRC included.
    """
    if (position, imm is not None) not in _WRITE_OPCODES:
        raise ValueError(
            f"position={position!r} with imm={imm!r}: position must be first, middle, last "
            "or only, and only last/only carry immediate data"
        )
    if transport not in ("RC", "UC"):
        raise ValueError(f"transport={transport!r}: RDMA WRITE exists on RC and UC only")
    _check_range("psn", psn, 24)
    _check_range("va", va, 64)
    _check_range("rkey", rkey, 32)
    if imm is not None:
        _check_range("imm", imm, 32)
    opcode = _WRITE_OPCODES[(position, imm is not None)] + (Opcode.UC if transport == "UC" else 0)
    if ackreq is None:
        ackreq = position in ("last", "only")
    pad = -len(payload) % 4
    l4: Packet = BTH(opcode=opcode, padcount=pad, pkey=_pkey(fields), dqpn=dst.qpn,
                     ackreq=int(ackreq), psn=psn)
    if position in ("first", "only"):
        length = len(payload) if dlen is None else dlen
        _check_range("dlen", length, 32)
        l4 = l4 / RETH(va=va, rkey=rkey, dlen=length)
    if imm is not None:
        l4 = l4 / ImmDt(imm=imm)
    return _encap(l4 / Raw(bytes(payload) + b"\x00" * pad), src, dst, fields)


def _pkey(fields: HeaderFields) -> int:
    pkey = fields.get("pkey", 0xFFFF)
    _check_range("pkey", pkey, 16)
    return pkey


def _encap(l4: Packet, src: Endpoint, dst: Endpoint, fields: HeaderFields,
           dscp: int = DEFAULT_DSCP) -> Packet:
    """Ethernet / IPv4 (DF) / UDP from ``src.port`` to 4791 around the transport headers
    ``l4``; ``dscp`` when ``fields`` names none."""
    dscp = fields.get("dscp", dscp)
    ecn, ttl, ip_id = fields.get("ecn", 0), fields.get("ttl", 64), fields.get("ip_id", 0)
    _check_range("dscp", dscp, 6)
    _check_range("ecn", ecn, 2)
    _check_range("ttl", ttl, 8)
    _check_range("ip_id", ip_id, 16)
    udp = UDP(sport=src.port, dport=ROCEV2_UDP_PORT)
    if not fields.get("udp_checksum", False):
        udp.chksum = 0
    return (
        Ether(src=src.mac, dst=dst.mac)
        / IP(src=src.ip, dst=dst.ip, tos=(dscp << 2) | ecn, ttl=ttl, id=ip_id, flags="DF")
        / udp
        / l4
    )


def acknowledge(
    *,
    src: Endpoint,
    dst: Endpoint,
    psn: int,
    syndrome: int = Syndrome.ACK_UNLIMITED,
    msn: int = 0,
    **fields: Unpack[HeaderFields],
) -> Packet:
    """Build an RC ACKNOWLEDGE: an ACK or NAK (``syndrome``) of ``psn`` to QP ``dst.qpn``.

    An ACK's PSN is the last one it acknowledges (coalesced: all before it
    too); a PSN-sequence-error NAK's PSN is the one the responder expects.
    ``msn`` is the responder's message sequence number.
    """
    _check_range("psn", psn, 24)
    _check_range("syndrome", syndrome, 8)
    _check_range("msn", msn, 24)
    l4 = BTH(opcode=Opcode.RC_ACKNOWLEDGE, pkey=_pkey(fields), dqpn=dst.qpn, psn=psn) / AETH(
        syndrome=syndrome, msn=msn
    )
    return _encap(l4, src, dst, fields)


def cnp(*, src: Endpoint, dst: Endpoint, **fields: Unpack[HeaderFields]) -> Packet:
    """Build a RoCEv2 CNP (annex A17.9.3) to QP ``dst.qpn``, whose packets arrived CE-marked.

    BTH opcode 0x81 with BECN set, PSN 0, 16 reserved bytes, ICRC: scapy's
    ``cnp()`` layers, framed like the other packets; DSCP 48 unless
    ``fields`` says otherwise.
    """
    l4 = BTH(opcode=Opcode.CNP, becn=1, pkey=_pkey(fields), dqpn=dst.qpn) / CNPPadding()
    return _encap(l4, src, dst, fields, dscp=CNP_DSCP)


def ud_send(
    *,
    src: Endpoint,
    dst: Endpoint,
    qkey: int,
    psn: int,
    payload: bytes,
    imm: int | None = None,
    **fields: Unpack[HeaderFields],
) -> Packet:
    """Build a UD SEND Only from QP ``src.qpn`` to QP ``dst.qpn`` (with immediate if ``imm``
    is given): BTH / DETH [/ ImmDt] / payload."""
    _check_range("qkey", qkey, 32)
    _check_range("psn", psn, 24)
    pad = -len(payload) % 4
    opcode = Opcode.UD_SEND_ONLY if imm is None else Opcode.UD_SEND_ONLY_WITH_IMMEDIATE
    l4: Packet = BTH(opcode=opcode, padcount=pad, pkey=_pkey(fields), dqpn=dst.qpn,
                     psn=psn) / DETH(qkey=qkey, srcqp=src.qpn)
    if imm is not None:
        _check_range("imm", imm, 32)
        l4 = l4 / ImmDt(imm=imm)
    return _encap(l4 / Raw(bytes(payload) + b"\x00" * pad), src, dst, fields)


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
    keyword arguments of ``rdma_write`` (``src``, ``dst``, ``rkey``, header fields...).
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
