"""Collective schedules: bytes per step per rank, written out by hand; connections and QPs."""

from __future__ import annotations

import pytest

from traffic.collectives import CollectiveError, Rank, build_jobs, busbw_factor, chunk_sizes
from traffic.schema import Job


def _ranks(n: int) -> list[Rank]:
    return [Rank(host=f"h{i}", nic=f"h{i}-eth0", ip=f"10.0.0.{i + 1}") for i in range(n)]


def _sends(job: Job) -> list[list[tuple[str, int]]]:
    return [[(s.conn, s.bytes) for s in step.sends] for step in job.steps]


def _recvs(job: Job) -> list[list[tuple[str, int]]]:
    return [[(r.conn, r.bytes) for r in step.recvs] for step in job.steps]


def test_chunks_spread_the_remainder_over_the_first_chunks() -> None:
    """10 bytes in 4 chunks: 3, 3, 2, 2."""
    assert chunk_sizes(10, 4) == [3, 3, 2, 2]


def test_ring_allreduce_of_three_ranks_is_four_steps_of_a_third() -> None:
    """n=3, 3000 bytes: 2(n-1) = 4 steps, each rank sends 1000 to the next, gets 1000."""
    jobs = build_jobs("allreduce", _ranks(3), 3000)
    assert list(jobs) == ["h0", "h1", "h2"]
    assert _sends(jobs["h0"]) == [[("r0>r1", 1000)]] * 4
    assert _recvs(jobs["h0"]) == [[("r2>r0", 1000)]] * 4
    assert _sends(jobs["h2"]) == [[("r2>r0", 1000)]] * 4
    assert _recvs(jobs["h2"]) == [[("r1>r2", 1000)]] * 4


def test_ring_allreduce_with_uneven_chunks_follows_the_chunk_rotation() -> None:
    """n=4, 10 bytes (chunks 3,3,2,2): reduce-scatter sends chunk r-k, all-gather r+1-k."""
    jobs = build_jobs("allreduce", _ranks(4), 10)
    # rank 0: RS chunks 0,3,2 then AG chunks 1,0,3
    assert [s[0][1] for s in _sends(jobs["h0"])] == [3, 2, 2, 3, 3, 2]
    # rank 1: RS chunks 1,0,3 then AG chunks 2,1,0
    assert [s[0][1] for s in _sends(jobs["h1"])] == [3, 3, 2, 2, 3, 3]
    # rank 0 receives what rank 3 sends: RS chunks 3,2,1 then AG chunks 0,3,2
    assert [r[0][1] for r in _recvs(jobs["h0"])] == [2, 2, 3, 3, 2, 2]
    assert [r[0][1] for r in _recvs(jobs["h0"])] == [s[0][1] for s in _sends(jobs["h3"])]


def test_alltoall_sends_one_chunk_to_every_other_rank_in_one_step() -> None:
    """n=3, 300 bytes per rank: 100 to each of the two others, 100 from each."""
    jobs = build_jobs("alltoall", _ranks(3), 300)
    assert _sends(jobs["h0"]) == [[("r0>r1", 100), ("r0>r2", 100)]]
    assert _recvs(jobs["h0"]) == [[("r1>r0", 100), ("r2>r0", 100)]]
    assert _sends(jobs["h1"]) == [[("r1>r0", 100), ("r1>r2", 100)]]


def test_pairwise_alltoall_sends_to_one_rank_per_step() -> None:
    """n=4, 400 bytes per rank, pairwise: 3 steps; in step k rank r sends 100 to r+k, gets 100
    from r-k (rank 0: to 1, 2, 3; from 3, 2, 1)."""
    jobs = build_jobs("alltoall", _ranks(4), 400, pairwise=True)
    assert _sends(jobs["h0"]) == [[("r0>r1", 100)], [("r0>r2", 100)], [("r0>r3", 100)]]
    assert _recvs(jobs["h0"]) == [[("r3>r0", 100)], [("r2>r0", 100)], [("r1>r0", 100)]]
    assert _sends(jobs["h2"]) == [[("r2>r3", 100)], [("r2>r0", 100)], [("r2>r1", 100)]]
    assert _recvs(jobs["h2"]) == [[("r1>r2", 100)], [("r0>r2", 100)], [("r3>r2", 100)]]


def test_pairwise_is_only_an_alltoall_schedule() -> None:
    with pytest.raises(CollectiveError, match="pairwise"):
        build_jobs("incast", _ranks(3), 300, pairwise=True)


def test_incast_sends_everything_to_the_root() -> None:
    """n=3, root 0, 500 bytes: h1 and h2 send 500 each, h0 receives both."""
    jobs = build_jobs("incast", _ranks(3), 500)
    assert _sends(jobs["h0"]) == [[]] and _recvs(jobs["h0"]) == [[("r1>r0", 500), ("r2>r0", 500)]]
    assert _sends(jobs["h1"]) == [[("r1>r0", 500)]] and _recvs(jobs["h1"]) == [[]]
    assert _sends(jobs["h2"]) == [[("r2>r0", 500)]]


def test_permutation_shifts_by_half_the_ranks() -> None:
    """n=4: 0->2, 1->3, 2->0, 3->1."""
    jobs = build_jobs("permutation", _ranks(4), 64)
    assert [_sends(jobs[f"h{i}"])[0] for i in range(4)] == [
        [("r0>r2", 64)], [("r1>r3", 64)], [("r2>r0", 64)], [("r3>r1", 64)]]
    assert _recvs(jobs["h0"]) == [[("r2>r0", 64)]]


def test_both_ends_of_a_connection_agree_on_qps_psn_and_port() -> None:
    """QP numbers from traffic.connections (0x11 + (2 x peer + role) x Q + q), crossed."""
    jobs = build_jobs("allreduce", _ranks(3), 3000, qps=2)
    c01_h0 = next(c for c in jobs["h0"].connections if c.id == "r0>r1")
    c01_h1 = next(c for c in jobs["h1"].connections if c.id == "r0>r1")
    # rank 0 sends to rank 1: 0x11 + 2 x 1 x 2 + q on h0, 0x11 + 1 x 2 + q on h1
    assert [(q.local, q.remote) for q in c01_h0.qps] == [(21, 19), (22, 20)]
    assert [(q.local, q.remote) for q in c01_h1.qps] == [(19, 21), (20, 22)]
    c20_h0 = next(c for c in jobs["h0"].connections if c.id == "r2>r0")
    c20_h2 = next(c for c in jobs["h2"].connections if c.id == "r2>r0")
    # rank 2 sends to rank 0: 0x11 + 0 + q on h2, 0x11 + 5 x 2 + q on h0
    assert [(q.local, q.remote) for q in c20_h2.qps] == [(17, 27), (18, 28)]
    assert [(q.local, q.remote) for q in c20_h0.qps] == [(27, 17), (28, 18)]
    assert (c01_h0.peer_ip, c01_h1.peer_ip) == ("10.0.0.2", "10.0.0.1")
    assert c01_h0.psn == c01_h1.psn and c01_h0.qps[0].sport == c01_h1.qps[0].sport
    assert len({q.sport for q in c01_h0.qps}) == 1


def test_sport_per_qp_gives_each_qp_its_own_port() -> None:
    """With sport_per_qp, QP q of a connection uses the pair's port + q."""
    jobs = build_jobs("permutation", _ranks(2), 64, qps=4, sport_per_qp=True)
    ports = [q.sport for q in jobs["h0"].connections[0].qps]
    assert ports == [ports[0] + q for q in range(4)]


def test_options_reach_every_send() -> None:
    """qps, strategy (round_robin spelt out) and message size are on each Send."""
    jobs = build_jobs("allreduce", _ranks(2), 4096, qps=4, strategy="round_robin",
                      message_bytes=512)
    send = jobs["h0"].steps[0].sends[0]
    assert (send.qps, send.strategy, send.message_bytes, send.messages) == (4, "rr", 512, 4)


@pytest.mark.parametrize(
    ("pattern", "n", "factor"),
    [("allreduce", 4, 1.5), ("allreduce", 2, 1.0), ("alltoall", 4, 0.75), ("incast", 4, 1.0),
     ("permutation", 8, 1.0)],
    ids=["allreduce-4", "allreduce-2", "alltoall-4", "incast", "permutation"],
)
def test_busbw_factors_are_nccl_tests(pattern: str, n: int, factor: float) -> None:
    """2(n-1)/n for AllReduce, (n-1)/n for all-to-all, 1 for point-to-point patterns."""
    assert busbw_factor(pattern, n) == factor


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"pattern": "broadcast"}, "pattern"), ({"ranks": 1}, "at least 2"),
     ({"strategy": "random"}, "strategy"), ({"qps": 0}, "qps"), ({"root": 5}, "root")],
    ids=["pattern", "one-rank", "strategy", "qps", "root"],
)
def test_bad_arguments_are_collective_errors(kwargs: dict[str, object], message: str) -> None:
    """Each bad argument is named."""
    args: dict[str, object] = {"pattern": "allreduce", "ranks": 3, "size": 100}
    args.update(kwargs)
    with pytest.raises(CollectiveError, match=message):
        build_jobs(args["pattern"], _ranks(args["ranks"]), args["size"],  # type: ignore[arg-type]
                   **{k: v for k, v in args.items() if k not in ("pattern", "ranks", "size")})  # type: ignore[arg-type]


def test_two_ranks_on_one_nic_are_refused() -> None:
    """Each rank needs its own (host, NIC)."""
    r = Rank(host="h0", nic="eth0", ip="10.0.0.1")
    with pytest.raises(CollectiveError, match="share"):
        build_jobs("allreduce", [r, r], 10)


def test_ranks_on_one_host_exchange_off_the_fabric() -> None:
    """Two NICs of h0 as ranks 0 and 1: r0>r1 is over NVLink, only r1>r2 and r2>r0 cross."""
    ranks = [Rank(host="h0", nic="h0-eth0", ip="10.0.0.1"),
             Rank(host="h0", nic="h0-eth1", ip="10.0.0.3"),
             Rank(host="h1", nic="h1-eth0", ip="10.0.1.1")]
    jobs = build_jobs("allreduce", ranks, 3000)
    assert sorted(c.id for c in jobs["h0"].connections) == ["r1>r2", "r2>r0"]
    assert _sends(jobs["h0"]) == [[("r1>r2", 1000)]] * 4
    assert _recvs(jobs["h0"]) == [[("r2>r0", 1000)]] * 4
    assert _sends(jobs["h1"]) == [[("r2>r0", 1000)]] * 4
    assert _recvs(jobs["h1"]) == [[("r1>r2", 1000)]] * 4
