"""The one allocation of QP numbers, source ports and PSNs (traffic.connections) as the jobs use it.

Expected values are written out by hand: QP numbers from the rule
0x11 + (2 x peer + role) x Q + q, source ports from 49152 + crc32("<src>>
<dst>") % 16384 (computed once with zlib and pasted here).
"""

from __future__ import annotations

import pytest

from traffic.collectives import CollectiveError, Rank, build_jobs
from traffic.connections import (
    AllocationError,
    data_pairs,
    message_posts,
    plan_connections,
    source_port,
    write_frame_bytes,
)


def _ranks(n: int) -> list[Rank]:
    return [Rank(host=f"h{i}", nic=f"h{i}-eth0", ip=f"10.0.0.{i + 1}") for i in range(n)]


# A ring of 4 ranks with 2 QPs: (src ip, dst ip, UDP source port, destination QP) of the data.
RING4_QP2 = {
    ("10.0.0.1", "10.0.0.2", 56915, 19), ("10.0.0.1", "10.0.0.2", 56915, 20),
    ("10.0.0.2", "10.0.0.3", 54726, 23), ("10.0.0.2", "10.0.0.3", 54726, 24),
    ("10.0.0.3", "10.0.0.4", 60251, 27), ("10.0.0.3", "10.0.0.4", 60251, 28),
    ("10.0.0.4", "10.0.0.1", 50349, 31), ("10.0.0.4", "10.0.0.1", 50349, 32),
}


def job_tuples(jobs: dict) -> set[tuple[str, str, int, int]]:
    """(src ip, dst ip, sport, dqpn) of every QP a job sends data on."""
    ip = {f"h{i}": f"10.0.0.{i + 1}" for i in range(16)}
    out = set()
    for host, job in jobs.items():
        sending = {s.conn for step in job.steps for s in step.sends}
        for c in job.connections:
            if c.id in sending:
                out |= {(ip[host], c.peer_ip, q.sport, q.remote) for q in c.qps}
    return out


def test_ring_jobs_send_on_the_hand_worked_qps_and_ports() -> None:
    """A 4-rank ring, 2 QPs: the data's (src, dst, sport, dqpn) are the rule's, by hand."""
    assert job_tuples(build_jobs("allreduce", _ranks(4), 4096, qps=2)) == RING4_QP2


def test_the_allocation_does_not_depend_on_size_strategy_or_name() -> None:
    """Two builds that differ in size, strategy and job name send on the same QPs and ports."""
    a = build_jobs("allreduce", _ranks(4), 4096, qps=2, strategy="rr", name="a")
    b = build_jobs("allreduce", _ranks(4), 1 << 20, qps=2, strategy="split", name="b")
    assert job_tuples(a) == job_tuples(b) == RING4_QP2


def test_qp_numbers_are_unique_on_every_nic() -> None:
    """All-to-all of 6 ranks, 3 QPs: no NIC uses a QP number twice (schema checks it too)."""
    jobs = build_jobs("alltoall", _ranks(6), 6000, qps=3)
    for job in jobs.values():
        local = [q.local for c in job.connections for q in c.qps]
        assert len(local) == len(set(local)) == 2 * 5 * 3


def test_pairs_leave_out_ranks_on_one_host() -> None:
    """Ring over h0, h0, h1: only 1 -> 2 and 2 -> 0 cross the fabric."""
    assert data_pairs("ring", ["h0", "h0", "h1"]) == [(1, 2), (2, 0)]
    assert data_pairs("permutation", ["a", "b", "c", "d"]) == [(0, 2), (1, 3), (2, 0), (3, 1)]
    assert data_pairs("incast", ["a", "b", "c"], root=1) == [(0, 1), (2, 1)]


def test_connection_plan_of_one_pair_by_hand() -> None:
    """Permutation of 2 ranks, 2 QPs, a port per QP: rank 0 -> 1 and rank 1 -> 0."""
    p0, p1 = plan_connections("permutation", _ranks(2), 2, job_name="j", sport_per_qp=True)
    assert (p0.id, p0.sender_qpns, p0.receiver_qpns, p0.sports) == (
        "r0>r1", (21, 22), (19, 20), (56915, 56916))
    assert (p1.id, p1.sender_qpns, p1.receiver_qpns, p1.sports) == (
        "r1>r0", (17, 18), (23, 24), (62698, 62699))
    assert source_port("10.0.0.1", "10.0.0.2") == 56915


def test_too_many_qp_numbers_are_refused() -> None:
    """2 x ranks x QPs past 2^24: an error that says so, from the jobs too."""
    ranks = [Rank(host=f"h{i}", nic="eth0", ip=f"10.{i >> 16}.{i >> 8 & 255}.{i & 255}")
             for i in range(40000)]
    with pytest.raises(AllocationError, match="2\\^24"):
        plan_connections("ring", ranks, 255, job_name="j")
    with pytest.raises(CollectiveError, match="2\\^24"):
        build_jobs("allreduce", ranks, 40000, qps=255)


def test_message_posts_follow_the_runner() -> None:
    """2,500 B, messages of 1,000, 3 QPs: rr from turn 2 -> QPs 2, 0, 1; split cuts each."""
    assert message_posts(2500, 3, "rr", 1000, turn=2) == [(2, 1000), (0, 1000), (1, 500)]
    assert message_posts(1000, 3, "split") == [(0, 334), (1, 333), (2, 333)]
    assert message_posts(0, 3, "rr") == []


def test_write_frame_bytes_by_hand() -> None:
    """One 64 B WRITE: 58 B of headers + RETH 16 + ImmDt 4; 2,048 B: two packets."""
    assert write_frame_bytes(64) == 64 + 58 + 20
    assert write_frame_bytes(2048) == 2048 + 2 * 58 + 20
    assert write_frame_bytes(0) == 58 + 20
