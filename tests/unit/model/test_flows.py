"""Tests for model.flows: QP scaling as the agents do it, steps of each pattern, ports and QPs."""

from __future__ import annotations

import numpy as np
import pytest

from model.flows import DPORT, collective_steps, qp_bytes, qp_wire_bytes
from traffic.qpscale import round_robin, split

IPS = [f"10.0.0.{i + 1}" for i in range(1000)]  # NIC i's address


def per_qp(posts, qps: int) -> list[int]:
    out = [0] * qps
    for p in posts:
        out[p.qp_index] += p.length
    return out


@pytest.mark.parametrize("messages,size,qps", [(1, 4096, 4), (8, 65536, 4), (5, 1000, 3),
                                               (3, 7, 16)])
def test_qp_bytes_equal_the_agents_strategies(messages: int, size: int, qps: int) -> None:
    """Bytes per QP of `messages` x `size` equal traffic.qpscale's split and round_robin."""
    assert qp_bytes(messages * size, qps, "split", size) == per_qp(split(messages, size, qps), qps)
    assert qp_bytes(messages * size, qps, "rr", size) == per_qp(round_robin(messages, size, qps),
                                                                qps)


def test_rr_carries_on_from_the_previous_step() -> None:
    """A pair's 3rd message on 4 QPs starts at QP 2 when two came before."""
    assert qp_bytes(300, 4, "rr", 100, first_message=2) == [100, 0, 100, 100]


def test_ring_has_one_variant_per_rr_start_and_2n_minus_2_steps() -> None:
    """Ring of 4, 1 message a step, 4 QPs rr: starts 0,1,2,3,0,1 -> weights 2,2,1,1."""
    s = collective_steps("ring", [0, 1, 2, 3], 4 * 1000, qps=4, strategy="rr", message_size=1000,
                         ips=IPS)
    assert s.steps == 6
    assert [w for w, _ in s.variants] == [2.0, 2.0, 1.0, 1.0]
    w, f = s.variants[1]
    assert f.src.tolist() == [0, 1, 2, 3] and f.dst.tolist() == [1, 2, 3, 0]
    # QP 1 of rank s's connection on the receiver: 0x11 + (2s + 1) x 4 + 1
    assert f.qp.tolist() == [22, 30, 38, 46] and f.size.tolist() == [1000.0] * 4


def test_split_flows_use_every_qp_and_the_agent_ports() -> None:
    """split over 3 QPs: each rank's three QPs on its peer, the pair's port + index, dport 4791."""
    s = collective_steps("permutation", [5, 6], 3000, qps=3, strategy="split", sport_per_qp=True,
                         ips=["", "", "", "", "", "10.0.0.1", "10.0.0.2"])
    (_, f), = s.variants
    assert f.src.tolist() == [5, 5, 5, 6, 6, 6] and f.dst.tolist() == [6, 6, 6, 5, 5, 5]
    # rank 0 -> 1: 0x11 + 1 x 3 + q; rank 1 -> 0: 0x11 + 3 x 3 + q
    assert f.qp.tolist() == [20, 21, 22, 26, 27, 28]
    # 49152 + crc32("10.0.0.1>10.0.0.2") % 16384 = 56915, and 62698 the other way
    assert f.sport.tolist() == [56915, 56916, 56917, 62698, 62699, 62700]
    assert set(f.dport.tolist()) == {DPORT} and f.size.tolist() == [1000.0] * 6


def test_alltoall_steps_are_shifts_and_large_ones_are_sampled() -> None:
    """All-to-all of 4: shifts 1, 2, 3; of 1,000 with max_steps 10: 10 shifts weighted 99.9."""
    s = collective_steps("alltoall", np.arange(4), 4000, ips=IPS)
    assert [f.dst.tolist() for _, f in s.variants] == [[1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]
    big = collective_steps("alltoall", np.arange(1000), 10**6, max_steps=10, ips=IPS)
    assert big.sampled and big.steps == 999 and len(big.variants) == 10
    assert sum(w for w, _ in big.variants) == pytest.approx(999)


def test_incast_sends_everything_to_rank_0() -> None:
    """Incast of 3 ranks on NICs 7, 8, 9: NICs 8 and 9 send the whole buffer to NIC 7."""
    (_, f), = collective_steps("incast", [7, 8, 9], 500, ips=IPS).variants
    assert f.src.tolist() == [8, 9] and f.dst.tolist() == [7, 7] and f.size.tolist() == [500, 500]


def test_ranks_on_one_host_exchange_off_the_fabric() -> None:
    """NICs 0 and 1 on host 0, NIC 2 on host 1: a ring's 0->1 transfer is not a flow."""
    s = collective_steps("ring", [0, 1, 2], 3000, qps=1, hosts=[0, 0, 1], ips=IPS)
    ((_, flows),) = s.variants
    assert sorted(zip(flows.src.tolist(), flows.dst.tolist(), strict=True)) == [(1, 2), (2, 0)]
    alltoall = collective_steps("alltoall", [0, 1, 2], 3000, hosts=[0, 0, 1], ips=IPS)
    pairs = {(a, b) for _, f in alltoall.variants
             for a, b in zip(f.src.tolist(), f.dst.tolist(), strict=True)}
    assert pairs == {(0, 2), (1, 2), (2, 0), (2, 1)}


def test_messages_are_full_then_the_rest_as_the_runner_posts_them() -> None:
    """2,500 bytes in messages of 1,000 rr over 2 QPs: 1,000 + 500 on QP 0, 1,000 on QP 1."""
    assert qp_bytes(2500, 2, "rr", 1000) == [1500, 1000]
    assert qp_bytes(2500, 2, "rr", None) == [2500, 0]  # None: one message


def test_wire_bytes_add_every_packets_headers() -> None:
    """2,500 B whole on one QP: 3 packets x 58 B + RETH 16 + ImmDt 4 + pad of 452 B (0)."""
    assert qp_wire_bytes(2500, 1, "rr", None) == [2500 + 3 * 58 + 16 + 4]
    # 1,025 B: 2 packets, the last of 1 B padded to 4
    assert qp_wire_bytes(1025, 1, "rr", None) == [1025 + 3 + 2 * 58 + 16 + 4]


def test_wire_bytes_follow_the_path_mtu() -> None:
    """10,000 B at path MTU 4,096 (jumbo links): 3 packets (4,096 + 4,096 + 1,808) x 58 B +
    RETH 16 + ImmDt 4; a ring step's flows carry the same when the steps are built at it."""
    assert qp_wire_bytes(10_000, 1, "rr", None, path_mtu=4096) == [10_000 + 3 * 58 + 16 + 4]
    steps = collective_steps("ring", [0, 1], 20_000, ips=IPS, message_size=None, path_mtu=4096)
    (_, flows), *_ = steps.variants
    assert flows.wire.tolist() == [10_000 + 3 * 58 + 20] * 2


def test_permutation_is_the_runs_half_shift() -> None:
    """Permutation of 4 ranks: rank r sends to r + 2, as `aizone run permutation` does."""
    (_, f), = collective_steps("permutation", [0, 1, 2, 3], 64, ips=IPS).variants
    assert list(zip(f.src.tolist(), f.dst.tolist(), strict=True)) == [(0, 2), (1, 3), (2, 0), (3, 1)]
