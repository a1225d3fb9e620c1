"""One emulated NIC between its QPs and the wire: pacing at the line rate, PFC PAUSE, CNPs
on CE marks, bad frames. Two hosts in memory (``hosts`` fixture); h1 writes to h0."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from traffic.collectives import build_jobs
from traffic.endpoint import Endpoint
from traffic.frames import Flow, decode, pattern, reth
from traffic.memnet import Delivery
from traffic.pfc import pfc_frame
from traffic.roce import Opcode

WRITES = range(Opcode.RC_RDMA_WRITE_FIRST, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE + 1)
# At 10 Mb/s a Middle packet (14 + 20 + 8 + 12 + 1024 + 4 = 1082 bytes) holds the link 865.6 us.
MIDDLE_SECONDS = 1082 * 8 / 10e6


def _data_from(log: list[Delivery], nic: str) -> list[Delivery]:
    out = []
    for d in log:
        rx = decode(d.frame)
        if d.src == nic and rx is not None and rx.opcode in WRITES:
            out.append(d)
    return out


def _one_way(hosts: Callable[..., Any], size: int, qps: int = 1, **nic: Any) -> tuple[Any, dict]:
    """h1 writes ``size`` bytes to h0 (incast of two ranks, root h0)."""
    mem = hosts(2, **nic)
    return mem, build_jobs("incast", mem.ranks, size, qps=qps)


def test_data_leaves_at_the_line_rate(hosts: Callable[..., Any]) -> None:
    """Without a burst allowance, Middle packets leave exactly 865.6 us apart at 10 Mb/s."""
    mem, jobs = _one_way(hosts, 20 * 1024, burst_bytes=0)
    mem.run(jobs)
    times = [d.time for d in _data_from(mem.net.log, "h1-eth0")]
    assert len(times) == 20
    # frame i+1 leaves when frame i's bits are out: Middle i (1..17) to frame i+1
    gaps = [b - a for a, b in zip(times[1:18], times[2:19], strict=True)]
    assert gaps == pytest.approx([MIDDLE_SECONDS] * 17, rel=1e-9)


def test_a_burst_allowance_sends_frames_in_pairs_at_the_same_rate(
    hosts: Callable[..., Any],
) -> None:
    """burst_bytes=4096 (2 KiB of credit per wake-up): Middles go two at a time, 2 x 865.6 us apart."""
    mem, jobs = _one_way(hosts, 40 * 1024, burst_bytes=4096)
    mem.run(jobs)
    times = [d.time for d in _data_from(mem.net.log, "h1-eth0")]
    starts = sorted(set(times[4:36]))
    assert all(times.count(t) == 2 for t in starts)
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert gaps == pytest.approx([2 * MIDDLE_SECONDS] * len(gaps), rel=1e-9)


def test_a_pause_stops_the_data_priority_for_its_quanta(hosts: Callable[..., Any]) -> None:
    """PAUSE(priority 3, 1000 quanta) at t=5 ms: no data leaves h1 until 5 + 51.2 ms."""
    mem, jobs = _one_way(hosts, 100 * 1024, burst_bytes=0)
    mem.net.inject("h1-eth0", bytes(pfc_frame("02:00:00:00:99:99", {3: 1000})), at=0.005)
    reports = mem.run(jobs)
    times = [d.time for d in _data_from(mem.net.log, "h1-eth0")]
    resume = 0.005 + 1000 * 512 / 10e6  # 51.2 ms of quanta at 10 Mb/s
    during = [t for t in times if 0.005 + 1e-5 < t < resume]
    assert during == []
    assert min(t for t in times if t > 0.005 + 1e-5) >= resume
    counters = reports["h1"].counters
    assert counters.pause_frames == 1
    assert counters.paused_seconds == pytest.approx(0.0512)


def test_xon_ends_a_pause_at_once(hosts: Callable[..., Any]) -> None:
    """PAUSE at 5 ms, XON (quanta 0) at 10 ms: sending resumes at 10 ms; 5 ms paused."""
    mem, jobs = _one_way(hosts, 100 * 1024, burst_bytes=0)
    src = "02:00:00:00:99:99"
    mem.net.inject("h1-eth0", bytes(pfc_frame(src, {3: 0xFFFF})), at=0.005)
    mem.net.inject("h1-eth0", bytes(pfc_frame(src, {3: 0})), at=0.010)
    reports = mem.run(jobs)
    times = [d.time for d in _data_from(mem.net.log, "h1-eth0")]
    after = min(t for t in times if t > 0.005 + 1e-5)
    assert after == pytest.approx(0.010 + 5e-6)  # sent at the XON, arrives one delay later
    assert reports["h1"].counters.paused_seconds == pytest.approx(0.005)


def test_a_pause_of_another_priority_does_not_stop_data(hosts: Callable[..., Any]) -> None:
    """PAUSE for priority 5 only: the data class (priority 3) keeps its pace."""
    mem, jobs = _one_way(hosts, 40 * 1024, burst_bytes=0)
    mem.net.inject("h1-eth0", bytes(pfc_frame("02:00:00:00:99:99", {5: 0xFFFF})), at=0.005)
    reports = mem.run(jobs)
    times = [d.time for d in _data_from(mem.net.log, "h1-eth0")]
    gaps = [b - a for a, b in zip(times[1:38], times[2:39], strict=True)]
    assert gaps == pytest.approx([MIDDLE_SECONDS] * 37, rel=1e-9)
    assert reports["h1"].counters.paused_seconds == 0.0


def _mark_ce_from(ip_last_octet: int) -> Callable[[bytes], bytes]:
    def rewrite(frame: bytes) -> bytes:
        rx = decode(frame)
        if rx is None or rx.opcode not in WRITES or rx.src_ip[3] != ip_last_octet:
            return frame
        marked = bytearray(frame)
        marked[15] |= 0x03  # ECN CE, as a switch marks it (the ICRC masks the TOS byte)
        return bytes(marked)

    return rewrite


def test_ce_marks_get_at_most_one_cnp_per_qp_per_interval(hosts: Callable[..., Any]) -> None:
    """20 CE-marked packets 0.87 ms apart, CNP interval 2 ms: CNPs for packets 0, 3, ... 18."""
    mem, jobs = _one_way(hosts, 20 * 1024, burst_bytes=0, cnp_interval=0.002)
    mem.net.rewrite = _mark_ce_from(2)  # h1 is 10.8.0.2
    reports = mem.run(jobs)
    cnps = [d for d in mem.net.log if d.src == "h0-eth0" and decode(d.frame).opcode == 0x81]
    assert len(cnps) == 7
    h1_qp = jobs["h1"].connections[0].qps[0].local
    for d in cnps:
        rx = decode(d.frame)
        assert rx is not None and rx.icrc_ok and rx.becn and rx.dqpn == h1_qp
        assert d.frame[15] >> 2 == 48  # the control class DSCP
    assert reports["h0"].counters.ce_received == 20
    assert (reports["h0"].counters.cnps_sent, reports["h1"].counters.cnps_received) == (7, 7)


def test_cnp_interval_is_per_qp(hosts: Callable[..., Any]) -> None:
    """Two QPs, round-robin, interval longer than the transfer: one CNP for each QP."""
    mem = hosts(2, cnp_interval=1.0)
    jobs = build_jobs("incast", mem.ranks, 8 * 1024, qps=2, message_bytes=1024)
    mem.net.rewrite = _mark_ce_from(2)
    reports = mem.run(jobs)
    assert reports["h0"].counters.cnps_sent == 2


def test_default_cnp_interval_is_4us_times_the_scale(hosts: Callable[..., Any]) -> None:
    """10 Mb/s standing for 400 Gb/s is 40,000 times slower: 4 us becomes 160 ms."""
    mem = hosts(1)
    assert mem.nics["h0"].config.cnp_seconds == pytest.approx(0.16)


def test_a_corrupted_frame_is_dropped_counted_and_recovered(hosts: Callable[..., Any]) -> None:
    """One data frame with a flipped bit: ICRC error at h0, a NAK, go-back-N, data intact."""
    mem, jobs = _one_way(hosts, 10 * 1024, burst_bytes=4096)
    seen = {"n": 0}

    def corrupt(frame: bytes) -> bytes:
        rx = decode(frame)
        if rx is not None and rx.opcode in WRITES:
            seen["n"] += 1
            if seen["n"] == 4:
                bad = bytearray(frame)
                bad[100] ^= 0x40
                return bytes(bad)
        return frame

    mem.net.rewrite = corrupt
    reports = mem.run(jobs)
    h0, h1 = reports["h0"].counters, reports["h1"].counters
    assert (h0.icrc_errors, h0.naks_sent, h1.naks_received) == (1, 1, 1)
    # Frames leave in pairs (2 KiB of credit per wake-up): the gap shows when PSNs 4 and 5
    # arrive together, the NAK comes back before the next pair, and PSNs 3, 4, 5 go again.
    assert h1.retransmitted == 3
    assert h0.data_errors == 0 and reports["h0"].steps[0].bytes_received == 10 * 1024


def test_frames_for_an_unknown_qp_are_dropped_and_counted(hosts: Callable[..., Any]) -> None:
    """A WRITE to a QP number nobody created is counted as unknown_qp, nothing else moves."""
    mem, jobs = _one_way(hosts, 1024)
    reports_before = mem.run(jobs)
    nic0 = mem.nics["h0"]
    flow = Flow(src=Endpoint(mac="02:00:00:00:08:02", ip="10.8.0.2", port=1),
                dst=Endpoint(mac=nic0.config.mac, ip="10.8.0.1", qpn=0x7777), dscp=26)
    mem.net.inject("h0-eth0", flow.frame(Opcode.RC_RDMA_WRITE_ONLY, 0, ext=reth(0, 0, 8),
                                         payload=pattern(0, 8)))
    mem.net.run()
    assert reports_before["h0"].counters.unknown_qp == 0
    assert nic0.totals(mem.net.now)["unknown_qp"] == 1


def test_a_connection_rate_limit_paces_each_qp_below_the_line_rate(
    hosts: Callable[..., Any],
) -> None:
    """rate_limit_mbps=1 on a 10 Mb/s NIC: Middle packets leave 8.656 ms apart, not 0.8656 ms."""
    mem, jobs = _one_way(hosts, 10 * 1024, burst_bytes=0)
    conn = jobs["h1"].connections[0].model_copy(update={"rate_limit_mbps": 1.0})
    jobs["h1"] = jobs["h1"].model_copy(update={"connections": [conn]})
    reports = mem.run(jobs)
    times = [d.time for d in _data_from(mem.net.log, "h1-eth0")]
    assert len(times) == 10
    gaps = [b - a for a, b in zip(times[1:8], times[2:9], strict=True)]
    assert gaps == pytest.approx([1082 * 8 / 1e6] * 7, rel=1e-9)
    assert reports["h1"].steps[-1].bytes_sent == 10 * 1024


def test_a_rate_limit_must_be_positive() -> None:
    """A connection cannot ask for a rate of zero: pydantic names the field."""
    from pydantic import ValidationError

    from traffic.schema import Connection, QpLink

    with pytest.raises(ValidationError, match="rate_limit_mbps"):
        Connection(id="c", nic="h0-eth0", peer_ip="10.8.0.2", qps=[QpLink(local=1, remote=2)],
                   rate_limit_mbps=0)
