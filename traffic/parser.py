"""RoCEv2 frame parser: bytes to ``RoceInfo``, ``Malformed`` or ``None``, and ICRC checks.

- ``parse``: bytes -> ``RoceInfo`` (a RoCEv2 packet), ``Malformed`` (claims
  to be RoCEv2 but cannot be read) or ``None`` (not RoCEv2). Never raises.
- ``icrc_ok``: recompute the ICRC of a frame with scapy and compare.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from scapy.contrib.roce import AETH, BTH
from scapy.layers.inet import IP, UDP, in4_chksum
from scapy.layers.l2 import Ether
from scapy.packet import Packet
from scapy.utils import checksum

from traffic.roce import DETH, RETH, ROCEV2_UDP_PORT, ImmDt, headers_length

__all__ = [
    "Malformed",
    "Reth",
    "RoceInfo",
    "icrc_ok",
    "parse",
]

_ETH_LEN = 14
_VLAN_LEN = 4
_UDP_LEN = 8
_BTH_LEN = 12
_ICRC_LEN = 4
_ETHERTYPE_IPV4 = 0x0800
_ETHERTYPE_VLAN = 0x8100


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
    ext = headers_length(opcode)
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
