"""The two ends of a RoCEv2 packet, as values: ``Endpoint`` and the header fields builders share.

A RoCEv2 packet goes from one endpoint to another: each a NIC's MAC and
IPv4 address, the UDP source port its packets carry (the switches hash
it; the destination port is always RoCEv2's 4791) and a QP number: on the
receiving end the QP the BTH addresses, on the sending end its own (named
in a UD SEND's DETH, in no RC header). Both directions of a connection
use the same two endpoints, swapped.
The packet builders (``traffic.builders``) and the hot path's frame
templates (``traffic.frames.Flow``) take ``src`` and ``dst`` endpoints
instead of six address keywords each.

``HeaderFields`` names the optional IP and BTH fields every builder takes
as keywords (DSCP, ECN, TTL, IP ID, UDP checksum, P_Key).

Names: ``Endpoint``, ``HeaderFields``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TypedDict

__all__ = ["Endpoint", "HeaderFields"]



@dataclass(frozen=True, kw_only=True)
class Endpoint:
    """One end of a RoCEv2 packet: MAC, IPv4 address, UDP port, QP number."""

    mac: str
    ip: str
    port: int = 49152  # the UDP source port of packets from this end
    qpn: int = 0  # the QP: addressed on a receiving end, the DETH's on a sending one

    def __post_init__(self) -> None:
        try:
            ipaddress.IPv4Address(self.ip)
        except ValueError:
            raise ValueError(f"endpoint ip={self.ip!r} is not an IPv4 address") from None
        if not 0 <= self.port < 1 << 16:
            raise ValueError(f"endpoint {self.ip}: port={self.port!r} does not fit in 16 bits")
        if not 0 <= self.qpn < 1 << 24:
            raise ValueError(f"endpoint {self.ip}: qpn={self.qpn!r} does not fit in 24 bits")


class HeaderFields(TypedDict, total=False):
    """The optional header fields of every builder (defaults in ``traffic.builders``)."""

    dscp: int
    ecn: int
    ttl: int
    ip_id: int
    udp_checksum: bool
    pkey: int
