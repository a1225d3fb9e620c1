"""Tests for topologies.mtu: a link's IP MTU, the RoCE path MTU it carries, the frames."""

from __future__ import annotations

import pytest

from topologies.mtu import (
    DEFAULT_MTU,
    MTU_FRAME,
    ROCE_FRAME,
    mtu_frame,
    roce_frame,
    roce_ip_packet,
    roce_path_mtu,
)


@pytest.mark.parametrize(("mtu", "path_mtu"), [
    (1500, 1024),  # Ethernet's default: 1,024 + 64 = 1,088 fits, 2,048 + 64 does not
    (9000, 4096),  # jumbo
    (9216, 4096),
    (4160, 4096),  # 4,096 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 + ICRC 4
    (4159, 2048),
    (2112, 2048),
    (2111, 1024),
    (1280, 1024),  # IPv6's minimum link MTU
    (320, 256),
])
def test_the_largest_ib_mtu_whose_packets_fit(mtu: int, path_mtu: int) -> None:
    assert roce_path_mtu(mtu) == path_mtu


def test_a_link_too_small_for_any_roce_packet_is_refused() -> None:
    with pytest.raises(ValueError, match=r"mtu 319: below 320"):
        roce_path_mtu(319)


def test_the_largest_ip_packet_of_a_path_mtu() -> None:
    """A full WRITE Only with Immediate: IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 +
    payload + ICRC 4."""
    assert roce_ip_packet(1024) == 1088
    assert roce_ip_packet(4096) == 4160
    assert roce_ip_packet(256) == 320


def test_frame_sizes() -> None:
    """A WRITE Middle frame: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4; a
    full-size frame: the IP MTU + 14."""
    assert roce_frame(1024) == 1082
    assert roce_frame(4096) == 4154
    assert mtu_frame(9000) == 9014
    assert (DEFAULT_MTU, MTU_FRAME, ROCE_FRAME) == (1500, 1514, 1082)
