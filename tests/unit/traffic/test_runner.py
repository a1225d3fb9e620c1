"""A host's job on its NICs, in memory: steps in order, bytes per step, timeouts and failures
that name the step and the peer, strategies on the wire."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from traffic.collectives import Rank, build_jobs
from traffic.frames import decode
from traffic.nic import Nic, NicConfig
from traffic.roce import Opcode
from traffic.runner import JobError, JobRun, decode_tag, encode_tag
from traffic.schema import Job, Transport

WRITES = range(Opcode.RC_RDMA_WRITE_FIRST, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE + 1)


def test_tags_carry_step_message_and_chunks() -> None:
    """12 bits of step, 12 of message, 8 of chunks."""
    assert decode_tag(encode_tag(4095, 17, 255)) == (4095, 17, 255)
    assert encode_tag(1, 2, 3) == 0x00100203


def test_ring_allreduce_of_three_completes_with_every_byte_in_its_step(
    hosts: Callable[..., Any],
) -> None:
    """n=3, 30 KiB, 2 QPs: four steps per host, 10 KiB sent and received in each."""
    mem = hosts(3, rate_mbps=100)
    jobs = build_jobs("allreduce", mem.ranks, 30 * 1024, qps=2, message_bytes=4096)
    reports = mem.run(jobs)
    for h, report in reports.items():
        assert report.status == "ok", (h, report.error)
        assert [(s.bytes_sent, s.bytes_received) for s in report.steps] == [(10240, 10240)] * 4
        assert [s.messages_sent for s in report.steps] == [3] * 4  # 4096 + 4096 + 2048
        assert report.counters.data_errors == 0 and report.unexpected_bytes == 0


def test_each_step_starts_when_the_previous_one_ends(hosts: Callable[..., Any]) -> None:
    """Step k+1 of a host starts at the instant its step k completes, never before."""
    mem = hosts(3, rate_mbps=100)
    reports = mem.run(build_jobs("allreduce", mem.ranks, 9000))
    for report in reports.values():
        for a, b in zip(report.steps, report.steps[1:], strict=False):
            assert b.start == a.end and a.end > a.start


def test_no_data_of_step_k_plus_1_leaves_before_step_k_completes(
    hosts: Callable[..., Any],
) -> None:
    """Read off the wire: each WRITE's immediate data says its step; steps leave in order."""
    mem = hosts(3, rate_mbps=100)
    reports = mem.run(build_jobs("allreduce", mem.ranks, 30000))
    for h, nic in mem.nics.items():
        ends = [mem.net.log[0].time] + [s.end - 1_000_000.0 for s in reports[h].steps]
        for d in mem.net.log:
            rx = decode(d.frame)
            if d.src == nic.name and rx is not None and rx.imm is not None:
                step = decode_tag(rx.imm)[0]
                assert d.time >= ends[step], (h, step)


def test_round_robin_puts_whole_messages_on_qps_in_turn(hosts: Callable[..., Any]) -> None:
    """8 messages of 2 KiB over 4 QPs, rr: each QP carries 2 WRITEs of 2 KiB."""
    mem = hosts(2, rate_mbps=100)
    jobs = build_jobs("incast", mem.ranks, 16 * 1024, qps=4, strategy="rr", message_bytes=2048)
    mem.run(jobs)
    lasts: Counter[int] = Counter()
    for d in mem.net.log:
        rx = decode(d.frame)
        if d.src == "h1-eth0" and rx is not None and rx.imm is not None:
            lasts[rx.dqpn] += 1
    assert sorted(lasts.values()) == [2, 2, 2, 2] and len(lasts) == 4


def test_split_cuts_each_message_into_one_write_per_qp(hosts: Callable[..., Any]) -> None:
    """2 messages of 8 KiB over 4 QPs, split: each QP carries 2 WRITEs of 2 KiB (chunks=4)."""
    mem = hosts(2, rate_mbps=100)
    jobs = build_jobs("incast", mem.ranks, 16 * 1024, qps=4, strategy="split", message_bytes=8192)
    reports = mem.run(jobs)
    firsts: Counter[tuple[int, int]] = Counter()
    for d in mem.net.log:
        rx = decode(d.frame)
        if d.src == "h1-eth0" and rx is not None and rx.opcode == Opcode.RC_RDMA_WRITE_FIRST:
            firsts[(rx.dqpn, rx.dlen)] += 1
        if d.src == "h1-eth0" and rx is not None and rx.imm is not None:
            assert decode_tag(rx.imm)[2] == 4
    assert sorted(firsts.values()) == [2, 2, 2, 2] and {dlen for _, dlen in firsts} == {2048}
    assert reports["h0"].steps[0].messages_received == 2


def test_a_job_that_times_out_says_which_step_and_which_peer(hosts: Callable[..., Any]) -> None:
    """Everything h1 sends is lost: h0's job ends at its deadline, waiting for 10.8.0.2."""
    mem = hosts(2, rate_mbps=100)
    mem.net.drop = lambda frame, src: src == "h1-eth0"
    jobs = build_jobs("incast", mem.ranks, 4096)
    reports = mem.run({"h0": jobs["h0"]}, deadline=0.5)
    report = reports["h0"]
    assert report.status == "timeout"
    assert report.error is not None
    assert "step 0 of 1" in report.error
    assert "recv from 10.8.0.2 on r1>r0 (h0-eth0): 0 of 4096 bytes received" in report.error


def test_retries_exhausted_fail_the_job_with_the_qp_and_peer(hosts: Callable[..., Any]) -> None:
    """No ACK ever comes back: after retry_count timeouts the job fails, naming QP and peer."""
    mem = hosts(2, rate_mbps=100)
    mem.net.drop = lambda frame, src: src == "h0-eth0"
    jobs = build_jobs("incast", mem.ranks, 4096,
                      transport=Transport(ack_timeout_ms=10, retry_count=2))
    reports = mem.run({"h1": jobs["h1"]})
    report = reports["h1"]
    assert report.status == "failed" and report.error is not None
    (link,) = jobs["h1"].connections[0].qps  # the QP pair the job connected
    assert report.error.startswith(
        f"step 0: h1-eth0 QP {link.local:#x} -> 10.8.0.1 QP {link.remote:#x}:")
    assert "retry count exceeded" in report.error
    assert report.counters.timeouts == 3


def test_a_lost_packet_costs_a_retransmission_not_the_data(hosts: Callable[..., Any]) -> None:
    """One WRITE packet dropped in a ring AllReduce: a NAK, go-back-N, the bytes all arrive."""
    mem = hosts(3, rate_mbps=100)
    seen = {"n": 0}

    def drop_one(frame: bytes, src: str) -> bool:
        rx = decode(frame)
        if src == "h0-eth0" and rx is not None and rx.opcode in WRITES:
            seen["n"] += 1
            return seen["n"] == 5
        return False

    mem.net.drop = drop_one
    reports = mem.run(build_jobs("allreduce", mem.ranks, 30000))
    assert reports["h0"].counters.naks_received == 1 and reports["h0"].counters.retransmitted >= 1
    assert reports["h1"].counters.naks_sent == 1
    assert all(r.status == "ok" for r in reports.values())
    assert [s.bytes_received for s in reports["h1"].steps] == [10000] * 4


def test_a_job_on_a_nic_the_host_lacks_is_a_job_error() -> None:
    """The error names the NIC asked for and the NICs there are."""
    nic = Nic(NicConfig(name="eth9", mac="02:00:00:00:00:09", ip="10.0.0.9", rate_mbps=10))
    ranks = [Rank(host="a", nic="eth0", ip="10.0.0.1"), Rank(host="b", nic="eth0", ip="10.0.0.2")]
    jobs = build_jobs("incast", ranks, 10)
    with pytest.raises(JobError, match="uses NIC\\(s\\) eth0; this host has eth9"):
        JobRun(jobs["a"], {"eth9": nic}, host="a", macs={}, now=0.0, wall=0.0)


def test_stop_ends_a_running_job(hosts: Callable[..., Any]) -> None:
    """stop() ends the job with status stopped and the steps done so far."""
    mem = hosts(2, rate_mbps=1)
    jobs = build_jobs("incast", mem.ranks, 1 << 20)
    nic = mem.nics["h0"]
    run = JobRun(jobs["h0"], {nic.name: nic}, host="h0", macs={}, now=0.0, wall=0.0)
    run.poll(0.0)
    run.stop(0.5)
    report = run.report()
    assert (report.status, report.error, report.steps) == ("stopped", "stopped on request", [])


def test_start_at_holds_the_first_step_until_then(hosts: Callable[..., Any]) -> None:
    """start_at 0.25 s after set-up: the first data packet leaves at 0.25 s."""
    mem = hosts(2, rate_mbps=100)
    jobs = build_jobs("incast", mem.ranks, 2048, start_at=1_000_000.25)
    reports = mem.run(jobs)
    first = min(d.time for d in mem.net.log if d.src == "h1-eth0")
    assert first == pytest.approx(0.25 + 5e-6)
    assert reports["h1"].start == pytest.approx(1_000_000.25)


def test_bytes_nobody_expected_are_counted(hosts: Callable[..., Any]) -> None:
    """h1 sends 4096 in one message, h0 expects 1024: h0's step ends, 4096 counted unexpected."""
    mem = hosts(2, rate_mbps=100)
    jobs = build_jobs("incast", mem.ranks, 4096)
    body = jobs["h0"].model_dump()
    body["steps"][0]["recvs"][0]["bytes"] = 1024
    jobs["h0"] = Job.model_validate(body)
    reports = mem.run(jobs)
    assert reports["h0"].status == "ok" and reports["h0"].unexpected_bytes == 4096
