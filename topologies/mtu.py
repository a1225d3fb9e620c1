"""The links' MTU and the RoCEv2 frames it carries.

A fabric's links all have one IP MTU (`FabricSpec.mtu`, 1,500 unless the topology
says otherwise; 9,000 for jumbo frames). The NICs' RoCE path MTU follows from it as
a RoCE NIC's active MTU follows from its netdev's: the largest IB MTU whose packets
fit (`roce_path_mtu`: 1,024 at 1,500, 4,096 at 9,000). The lossless class is made of
full RC WRITE frames at that path MTU (`roce_frame`): what PFC thresholds and queues
counted in frames are sized in, and what BMv2's queues, paced in packets, count.

The switches spend about the same CPU on a frame whatever its size
(`bench/pps.py --only sizes`, docs/p4switch.md), so a jumbo fabric's 4,154-byte frames
carry about 3.8 times the bytes per switch CPU of 1,082-byte ones.

Names defined here: `DEFAULT_MTU`, `MAX_MTU`, `MTU_FRAME`, `ROCE_FRAME`,
`ROCE_IP_OVERHEAD`, `IB_MTUS`, `roce_ip_packet`, `roce_path_mtu`, `roce_frame`,
`mtu_frame`.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MTU", "IB_MTUS", "MAX_MTU", "MTU_FRAME", "ROCE_FRAME", "ROCE_IP_OVERHEAD",
           "mtu_frame", "roce_frame", "roce_ip_packet", "roce_path_mtu"]

# The IP MTU of the links unless the topology says otherwise (`FabricSpec.mtu`).
DEFAULT_MTU = 1500
# The largest IP MTU a topology may give its links: the usual jumbo limit of switch ports.
MAX_MTU = 9216
# The path MTUs IB and RoCEv2 define (IBTA vol. 1, 7.7.8; RoCEv2 carries the same).
IB_MTUS = (256, 512, 1024, 2048, 4096)
# What a RoCEv2 RC packet adds to its payload inside the IP packet at most: IPv4 20
# + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 + ICRC 4 (a WRITE Only with Immediate).
ROCE_IP_OVERHEAD = 20 + 8 + 12 + 16 + 4 + 4


def mtu_frame(mtu: int) -> int:
    """Bytes of a full-size frame on a link of IP MTU `mtu`: the IP packet + the 14-byte
    Ethernet header (no FCS, preamble or gap: tc counts the same bytes)."""
    return mtu + 14


def roce_ip_packet(path_mtu: int) -> int:
    """Bytes of the largest IP packet a RoCEv2 sender at `path_mtu` sends: a full payload
    and every header of `ROCE_IP_OVERHEAD`. A path MTU fits a link when this is at most
    the link's IP MTU (the one rule `roce_path_mtu` and the traffic engine's check share)."""
    return path_mtu + ROCE_IP_OVERHEAD


def roce_path_mtu(mtu: int) -> int:
    """The RoCE path MTU of a link whose IP MTU is `mtu`: the largest IB MTU whose
    packets, headers and all (`roce_ip_packet`), fit in it (1,500 -> 1,024;
    9,000 -> 4,096). ValueError below the smallest."""
    fits = [ib for ib in IB_MTUS if roce_ip_packet(ib) <= mtu]
    if not fits:
        raise ValueError(f"mtu {mtu}: below {roce_ip_packet(IB_MTUS[0])}, too small for a "
                         f"RoCEv2 packet of the smallest path MTU ({IB_MTUS[0]})")
    return fits[-1]


def roce_frame(path_mtu: int) -> int:
    """Bytes of a full RoCEv2 RC WRITE Middle frame at `path_mtu`: Ethernet 14 + IPv4 20
    + UDP 8 + BTH 12 + payload + ICRC 4."""
    return 14 + 20 + 8 + 12 + path_mtu + 4


# A full-size frame at the default MTU: 1,514 bytes.
MTU_FRAME = mtu_frame(DEFAULT_MTU)
# The frame the default links' lossless class is made of (path MTU 1,024): 1,082 bytes.
ROCE_FRAME = roce_frame(roce_path_mtu(DEFAULT_MTU))
