"""The fabric's RC ACK timeout (controller.jobs.fabric_ack_timeout_ms), worked out by hand."""

from __future__ import annotations

import pytest

from controller.jobs import RunRequest, fabric_ack_timeout_ms, fabric_transport, job_fan_in
from topologies.addressing import plan_addresses
from topologies.spec import parse_spec
from traffic.collectives import Rank, build_jobs


def test_ai_zone_small_defaults() -> None:
    """3 queues x 64 frames x 1,082 B at 10 Mb/s = 166.2 ms: 4.096 us x 2^16 = 268.4 ms."""
    got = fabric_ack_timeout_ms({"host": 10, "rtsw_ctsw": 20}, {"host": 64, "rtsw_ctsw": 64}, 3)
    assert got == pytest.approx(268.435456)


def test_slow_links_and_long_queues() -> None:
    """3 x 128 x 1,082 B at 1 Mb/s = 3.32 s: 2^20 x 4.096 us = 4.29 s."""
    got = fabric_ack_timeout_ms({"host": 1, "rtsw_ctsw": 2}, {"host": 128, "rtsw_ctsw": 128}, 3)
    assert got == pytest.approx(4294.967296)


def test_the_slowest_tier_and_every_hop_count() -> None:
    """two_zones-like: the ATSW tier at 10 Mb/s drains slowest; 5 hops x 64 x 1,082 B at
    10 Mb/s = 277 ms: 2^17 x 4.096 us = 536.9 ms."""
    got = fabric_ack_timeout_ms({"host": 20, "rtsw_ctsw": 20, "ctsw_atsw": 10},
                                {"host": 64, "rtsw_ctsw": 64, "ctsw_atsw": 64}, 5)
    assert got == pytest.approx(536.870912)


def test_jumbo_frames_take_longer_to_drain() -> None:
    """The same queues of 4,154-B frames (jumbo links, path MTU 4,096): 3 x 64 x 4,154 B at
    10 Mb/s = 638.0 ms: 2^18 x 4.096 us = 1,073.7 ms."""
    got = fabric_ack_timeout_ms({"host": 10, "rtsw_ctsw": 20}, {"host": 64, "rtsw_ctsw": 64}, 3,
                                frame_bytes=4154)
    assert got == pytest.approx(1073.741824)


def test_fast_links_keep_nccls_default() -> None:
    """At 400 Gb/s three queues drain in microseconds: NCCL's 2^15 x 4.096 us = 134.2 ms."""
    got = fabric_ack_timeout_ms({"host": 400_000}, {"host": 64}, 3)
    assert got == pytest.approx(134.217728)


def test_request_bounds() -> None:
    """The API refuses a zero or negative ACK timeout."""
    with pytest.raises(ValueError, match="ack_timeout_ms"):
        RunRequest(pattern="allreduce", ack_timeout_ms=0)
    assert RunRequest(pattern="allreduce").ack_timeout_ms is None


def test_what_a_job_has_in_flight_towards_one_nic() -> None:
    """A 3 -> 1 incast with the RC window of 128: 384 frames may wait for h1 behind PFC;
    twice 384 x 1,082 B at 10 Mb/s = 664.8 ms, above the queues' 166 ms: 2^18 x 4.096 us."""
    got = fabric_ack_timeout_ms({"host": 10, "rtsw_ctsw": 20}, {"host": 64, "rtsw_ctsw": 64}, 3,
                                in_flight=3 * 128)
    assert got == pytest.approx(1073.741824)


def _ranks(n: int) -> list[Rank]:
    return [Rank(host=f"h{i + 1}", nic=f"h{i + 1}-eth0", ip=f"10.0.{i}.1") for i in range(n)]


def test_fan_in_of_an_incast_counts_every_sender_and_qp() -> None:
    """Incast of 4 ranks: 3 senders to rank 0, 2 QPs each: 6 QPs towards one address."""
    assert job_fan_in(build_jobs("incast", _ranks(4), 1 << 16, qps=2)) == 6


def test_fan_in_of_a_ring_is_one_neighbour() -> None:
    """Ring AllReduce: in each step a rank receives from its one neighbour (1 QP)."""
    assert job_fan_in(build_jobs("allreduce", _ranks(4), 1 << 16)) == 1


@pytest.mark.parametrize(("mtu", "path_mtu"), [(1500, 1024), (9000, 4096), (2112, 2048), (2111, 1024)])
def test_the_fabrics_transport_takes_the_path_mtu_its_links_carry(mtu: int, path_mtu: int) -> None:
    """A job's RC packets at the largest IB MTU whose packets (+64 B of headers) fit the links;
    the ACK timeout given, else the transport's default (NCCL's 2^15 x 4.096 us)."""
    plan = plan_addresses(parse_spec({"name": "m", "mtu": mtu, "zones": [
        {"racks": [{"count": 1, "hosts": 2, "nics": 1}], "ctsws": 1}]}))
    assert fabric_transport(plan).path_mtu == path_mtu
    assert fabric_transport(plan).ack_timeout_ms == pytest.approx(134.217728)
    assert fabric_transport(plan, 4294.967296).ack_timeout_ms == pytest.approx(4294.967296)
    assert fabric_transport(plan, 4294.967296).path_mtu == path_mtu
