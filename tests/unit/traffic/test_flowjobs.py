"""One flow as two hosts' jobs (`traffic.flowjobs`), run on in-memory hosts: what leaves the
source is exactly the flow asked for (destination QPs, UDP source port, class), and every
message arrives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from traffic.flowjobs import flow_jobs, received, sent
from traffic.frames import decode
from traffic.roce import Opcode
from traffic.schema import MAX_MESSAGES

WRITES = range(Opcode.RC_RDMA_WRITE_FIRST, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE + 1)


def _data(log: list[Any], nic: str) -> list[tuple[int, int, int]]:
    """(destination QP, UDP source port, DSCP) of every data packet `nic` sent."""
    out = []
    for d in log:
        rx = decode(d.frame)
        if d.src == nic and rx is not None and rx.opcode in WRITES:
            out.append((rx.dqpn, int.from_bytes(d.frame[34:36], "big"), d.frame[15] >> 2))
    return out


def test_the_flow_on_the_wire_is_the_one_asked_for(hosts: Callable[..., Any]) -> None:
    """Three QPs, sport 50000, class data: 6 one-packet messages, two per QP, all in DSCP 26."""
    mem = hosts(2)
    src, dst = mem.ranks[1], mem.ranks[0]
    jobs = flow_jobs(src, dst, qps=(17, 99, 4242), sport=50000, messages=6, size=256)
    reports = mem.run(jobs)
    wire = _data(mem.net.log, "h1-eth0")
    assert sorted(wire) == sorted([(q, 50000, 26) for q in (17, 99, 4242)] * 2)
    assert sent(reports["h1"])["packets"] == 6
    got = received(reports["h0"])
    assert (got["packets"], got["messages_complete"], got["bytes"]) == (6, 6, 6 * 256)


def test_the_control_class_sends_with_its_dscp(hosts: Callable[..., Any]) -> None:
    """cls='control': the data packets carry DSCP 48."""
    mem = hosts(2)
    jobs = flow_jobs(mem.ranks[0], mem.ranks[1], qps=(5,), sport=49152, messages=2, size=64,
                     cls="control")
    mem.run(jobs)
    assert {dscp for _, _, dscp in _data(mem.net.log, "h0-eth0")} == {48}


def test_more_messages_than_one_step_holds_go_in_several_steps(hosts: Callable[..., Any]) -> None:
    """MAX_MESSAGES + 3 messages: two steps, every message received."""
    mem = hosts(2, rate_mbps=1000.0)
    n = MAX_MESSAGES + 3
    jobs = flow_jobs(mem.ranks[1], mem.ranks[0], qps=(17,), sport=49152, messages=n, size=4)
    assert [len(j.steps) for j in jobs.values()] == [2, 2]
    reports = mem.run(jobs)
    assert received(reports["h0"])["messages_complete"] == n
    assert sent(reports["h1"])["messages"] == n


def test_a_rate_is_shared_by_the_qps(hosts: Callable[..., Any]) -> None:
    """4 Mb/s over four QPs: each QP's connection is limited to 1 Mb/s."""
    mem = hosts(2)
    jobs = flow_jobs(mem.ranks[1], mem.ranks[0], qps=(1, 2, 3, 4), sport=1, messages=1, size=1,
                     rate_mbps=4.0)
    assert jobs["h1"].connections[0].rate_limit_mbps == 1.0
    assert jobs["h0"].connections[0].rate_limit_mbps is None


def test_both_ends_on_one_host_make_one_job(hosts: Callable[..., Any]) -> None:
    """Source and destination NICs of one host: one job holding both connections."""
    mem = hosts(2)
    a, b = mem.ranks
    jobs = flow_jobs(a, b.__class__(host=a.host, nic=b.nic, ip=b.ip), qps=(7,), sport=1,
                     messages=1, size=1)
    assert list(jobs) == [a.host]
    assert [c.nic for c in jobs[a.host].connections] == [a.nic, b.nic]


def test_a_flow_from_a_nic_to_itself_is_refused(hosts: Callable[..., Any]) -> None:
    mem = hosts(1)
    with pytest.raises(ValueError, match="to itself"):
        flow_jobs(mem.ranks[0], mem.ranks[0], qps=(7,), sport=1, messages=1, size=1)


def test_a_paced_flow_takes_its_frames_at_its_rate(hosts: Callable[..., Any]) -> None:
    """40 one-packet messages of 1 KiB over four QPs at 4 Mb/s on a 10 Mb/s NIC: the last
    data frame leaves 39 frame times of 1,082 B at 4 Mb/s after the first, not at 10 Mb/s."""
    mem = hosts(2, burst_bytes=0)
    jobs = flow_jobs(mem.ranks[1], mem.ranks[0], qps=(1, 2, 3, 4), sport=1, messages=40,
                     size=1024, rate_mbps=4.0)
    mem.run(jobs)
    times = [d.time for d in mem.net.log if d.src == "h1-eth0"
             and (rx := decode(d.frame)) is not None and rx.opcode in WRITES]
    assert len(times) == 40
    assert times[-1] - times[0] == pytest.approx(39 * 1082 * 8 / 4e6, rel=0.03)
