"""Packets the dataplane tests send, and what a routed packet must look like.

Addresses: the switch's MAC on port p is `switch_mac(p)`, the neighbour
behind port p has `peer_mac(p)`, hosts send from `host_mac(p)`. Frames are
at least 64 bytes so no target pads them and byte counters are exact.

Names defined here: `switch_mac`, `peer_mac`, `host_mac`, `udp4`, `udp6`,
`roce4`, `cnp4`, `arp_request`, `pfc_pause`, `mac_pause`, `lldp`,
`routed`, `flow_tag`, `MIN_FRAME`.
"""

from __future__ import annotations

import struct

from scapy.contrib.roce import BTH, CNPPadding
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Packet, Raw

from traffic.builders import acknowledge, rdma_write
from traffic.endpoint import Endpoint

__all__ = [
    "MIN_FRAME",
    "arp_request",
    "cnp4",
    "flow_tag",
    "host_mac",
    "lldp",
    "mac_pause",
    "peer_mac",
    "pfc_pause",
    "roce4",
    "routed",
    "switch_mac",
    "udp4",
    "udp6",
]

MIN_FRAME = 64


def switch_mac(port: int) -> str:
    return f"02:aa:00:00:00:{port:02x}"


def peer_mac(port: int) -> str:
    return f"02:bb:00:00:00:{port:02x}"


def host_mac(port: int) -> str:
    return f"02:cc:00:00:00:{port:02x}"


def _pad(pkt: Packet) -> Packet:
    short = MIN_FRAME - len(bytes(pkt))
    return pkt / Raw(b"\x00" * short) if short > 0 else pkt


def _tag(tag: int) -> bytes:
    return b"AZ" + struct.pack(">I", tag)


def flow_tag(frame: bytes) -> int | None:
    """The tag a test packet carries in its payload (None for other frames)."""
    i = frame.find(b"AZ", 34)
    return struct.unpack(">I", frame[i + 2:i + 6])[0] if i >= 0 and len(frame) >= i + 6 else None


def udp4(src: str, dst: str, *, sport: int = 1234, dport: int = 5000, ttl: int = 64,
         dscp: int = 0, ecn: int = 0, tag: int = 0, in_port: int = 1, size: int = 0) -> Packet:
    payload = _tag(tag) + b"\x00" * max(0, size)
    return _pad(Ether(src=host_mac(in_port), dst=switch_mac(in_port))
                / IP(src=src, dst=dst, ttl=ttl, tos=(dscp << 2) | ecn, id=tag & 0xFFFF)
                / UDP(sport=sport, dport=dport) / Raw(payload))


def udp6(src: str, dst: str, *, sport: int = 1234, dport: int = 5000, hlim: int = 64,
         dscp: int = 0, ecn: int = 0, tag: int = 0, in_port: int = 1) -> Packet:
    return _pad(Ether(src=host_mac(in_port), dst=switch_mac(in_port))
                / IPv6(src=src, dst=dst, hlim=hlim, tc=(dscp << 2) | ecn)
                / UDP(sport=sport, dport=dport) / Raw(_tag(tag)))


def roce4(src: str, dst: str, *, qp: int, sport: int = 49152, dscp: int = 26, ecn: int = 0,
          tag: int = 0, in_port: int = 1, ttl: int = 64) -> Packet:
    """An RDMA WRITE Only to `qp` (the RoCEv2 data packet the fabric carries)."""
    return rdma_write(src=Endpoint(mac=host_mac(in_port), ip=src, port=sport),
                      dst=Endpoint(mac=switch_mac(in_port), ip=dst, qpn=qp), psn=tag & 0xFFFFFF,
                      payload=_tag(tag) + b"\x00" * 10, dscp=dscp, ecn=ecn, ttl=ttl,
                      ip_id=tag & 0xFFFF)


def ack4(src: str, dst: str, *, qp: int, sport: int = 49152, dscp: int = 26, tag: int = 0,
         in_port: int = 1) -> Packet:
    """An RC ACKNOWLEDGE (BTH opcode 0x11 and an AETH, no payload) of PSN `tag` to `qp`."""
    return acknowledge(src=Endpoint(mac=host_mac(in_port), ip=src, port=sport),
                       dst=Endpoint(mac=switch_mac(in_port), ip=dst, qpn=qp),
                       psn=tag & 0xFFFFFF, dscp=dscp, ip_id=tag & 0xFFFF)


def cnp4(src: str, dst: str, *, qp: int, sport: int = 49152, dscp: int = 0, tag: int = 0,
         in_port: int = 1) -> Packet:
    """A RoCEv2 Congestion Notification Packet (BTH opcode 0x81)."""
    return (Ether(src=host_mac(in_port), dst=switch_mac(in_port))
            / IP(src=src, dst=dst, tos=dscp << 2, id=tag & 0xFFFF)
            / UDP(sport=sport, dport=4791) / BTH(opcode=0x81, dqpn=qp, psn=tag & 0xFFFFFF)
            / CNPPadding())


def arp_request(sender_ip: str, target_ip: str, *, in_port: int = 1) -> Packet:
    return _pad(Ether(src=host_mac(in_port), dst="ff:ff:ff:ff:ff:ff")
                / ARP(op=1, hwsrc=host_mac(in_port), psrc=sender_ip, hwdst="00:00:00:00:00:00",
                      pdst=target_ip))


def pfc_pause(quanta: dict[int, int], *, in_port: int = 1) -> bytes:
    """An IEEE 802.1Qbb PFC frame: priority -> pause quanta (0 resumes)."""
    enable = 0
    times = [0] * 8
    for prio, q in quanta.items():
        enable |= 1 << prio
        times[prio] = q
    body = (bytes.fromhex("0180c2000001") + bytes.fromhex(host_mac(in_port).replace(":", ""))
            + b"\x88\x08" + struct.pack(">HH8H", 0x0101, enable, *times))
    return body + b"\x00" * (MIN_FRAME - len(body))


def mac_pause(quanta: int, *, in_port: int = 1) -> bytes:
    """An IEEE 802.3x PAUSE frame (MAC control opcode 0x0001)."""
    body = (bytes.fromhex("0180c2000001") + bytes.fromhex(host_mac(in_port).replace(":", ""))
            + b"\x88\x08" + struct.pack(">HH", 0x0001, quanta))
    return body + b"\x00" * (MIN_FRAME - len(body))


def lldp(*, in_port: int = 1, tag: int = 0) -> bytes:
    """A link-check frame (LLDP ethertype 0x88cc) the controller wants to see."""
    body = (bytes.fromhex("0180c200000e") + bytes.fromhex(host_mac(in_port).replace(":", ""))
            + b"\x88\xcc" + b"AZ" + struct.pack(">I", tag))
    return body + b"\x00" * (MIN_FRAME - len(body))


def routed(sent: Packet, out_port: int) -> Packet:
    """`sent` as it must leave a router on `out_port`: MACs rewritten, TTL / hop limit - 1,
    IPv4 header checksum recomputed; nothing else changes (the UDP checksum stays)."""
    p = Ether(bytes(sent))
    p[Ether].src = switch_mac(out_port)
    p[Ether].dst = peer_mac(out_port)
    if IP in p:
        p[IP].ttl -= 1
        del p[IP].chksum
    else:
        p[IPv6].hlim -= 1
    return Ether(bytes(p))
