"""RoCEv2 scapy layers: the extended transport headers scapy lacks, opcodes, syndromes, PSNs.

RoCEv2 (IBTA vol 1, annex A17) is Ethernet / IPv4 / UDP (destination port
4791) / InfiniBand transport headers / payload / ICRC. scapy's
``scapy.contrib.roce`` provides the BTH (with opcodes), AETH and the ICRC
computation (invariant fields covered, variant ones masked as annex A17
prescribes); this module adds the extended transport headers scapy lacks,
binds them after the BTH by opcode, and holds the constants the builders
(``traffic.builders``) and the parser (``traffic.parser``) share:

- ``RETH``: RDMA Extended Transport Header (IBTA vol 1 §9.3.3): virtual
  address, R_Key, DMA length. Follows the BTH of RDMA WRITE First/Only (with
  or without immediate) and RDMA READ Request.
- ``ImmDt``: Immediate Data Extended Transport Header (§9.3.6), 32 bits,
  on SEND/RDMA WRITE Last/Only "with immediate".
- ``DETH``: Datagram Extended Transport Header: Q_Key and source
  QP of a UD packet (the clear-to-send grants of receiver-driven admission
  travel as UD SEND Only).
- ``Syndrome``: AETH syndromes: ACK, and the NAK codes RC uses.
- ``headers_length``: bytes of extended transport headers after the BTH.
- ``psn_add`` / ``psn_diff``: 24-bit PSN arithmetic.
- ``IB_MTUS``: the path MTUs IB defines, kept with the links' MTU in
  ``topologies.mtu`` and passed on here for the transport.
"""

from __future__ import annotations

from scapy.contrib.roce import AETH, BTH
from scapy.fields import BitField, IntField, XByteField, XIntField, XLongField
from scapy.packet import Packet, Raw, bind_layers

from topologies.mtu import IB_MTUS

__all__ = [
    "CNP_OPCODE",
    "DEFAULT_DSCP",
    "DETH",
    "IB_MTUS",
    "ROCEV2_UDP_PORT",
    "ImmDt",
    "Opcode",
    "RETH",
    "Syndrome",
    "headers_length",
    "psn_add",
    "psn_diff",
]

ROCEV2_UDP_PORT = 4791
# DSCP 26 (AF31) is the customary RoCE lossless class on NICs and switches.
DEFAULT_DSCP = 26
PSN_MOD = 1 << 24

_RETH_LEN = 16
_IMMDT_LEN = 4
_AETH_LEN = 4
_DETH_LEN = 8


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


def headers_length(opcode: int) -> int:
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


def psn_add(psn: int, n: int) -> int:
    """Return ``psn + n`` modulo 2**24 (PSNs are 24-bit and wrap)."""
    return (psn + n) % PSN_MOD


def psn_diff(a: int, b: int) -> int:
    """Return the signed distance ``a - b`` between two PSNs, in (-2**23, 2**23]."""
    d = (a - b) % PSN_MOD
    return d - PSN_MOD if d > PSN_MOD // 2 else d
