"""DCQCN's reaction point (optional, off by default): rate cuts on CNPs, timed recovery."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from traffic.collectives import build_jobs
from traffic.dcqcn import Dcqcn, DcqcnParams
from traffic.frames import decode
from traffic.roce import Opcode

LINE = 10e6
WRITES = range(Opcode.RC_RDMA_WRITE_FIRST, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE + 1)


def test_a_cnp_halves_the_rate_when_alpha_is_one() -> None:
    """alpha starts at 1: rc x (1 - 1/2); alpha stays (1 - g) + g = 1; target = the old rate."""
    cc = Dcqcn(LINE, scale=1.0)
    cc.on_cnp(0.0)
    assert (cc.rate, cc.target, cc.alpha) == (5e6, 10e6, 1.0)


def test_cuts_are_at_most_one_per_alpha_interval() -> None:
    """A second CNP 10 us later changes nothing; one 55 us later cuts again to 2.5 Mb/s."""
    cc = Dcqcn(LINE, scale=1.0)
    cc.on_cnp(0.0)
    cc.on_cnp(10e-6)
    assert cc.rate == 5e6 and cc.cuts == 1
    cc.on_cnp(55e-6)
    assert (cc.rate, cc.target, cc.cuts) == (2.5e6, 5e6, 2)


def test_fast_recovery_halves_the_distance_to_the_target() -> None:
    """After a cut to 5 Mb/s (target 10), one increase interval: 7.5, then 8.75 Mb/s."""
    cc = Dcqcn(LINE, scale=1.0)
    cc.on_cnp(0.0)
    cc.poll(55e-6)
    assert cc.rate == pytest.approx(7.5e6)
    assert cc.alpha == pytest.approx(255 / 256)
    cc.poll(110e-6)
    assert cc.rate == pytest.approx(8.75e6)


def test_additive_increase_follows_fast_recovery() -> None:
    """After 5 fast-recovery rounds the target grows by R_AI (1/1000 of the line) per round."""
    cc = Dcqcn(LINE, scale=1.0, params=DcqcnParams(fast_recovery=1))
    cc.on_cnp(0.0)
    cc.poll(55e-6)  # fast recovery: (10 + 5) / 2
    cc.poll(110e-6)  # additive: target 10.01 -> capped at the line, rate (10 + 7.5) / 2
    assert (cc.target, cc.rate) == (pytest.approx(10e6), pytest.approx(8.75e6))


def test_times_scale_with_the_emulation() -> None:
    """scale 1000: the 55 us timers become 55 ms."""
    cc = Dcqcn(LINE, scale=1000.0)
    cc.on_cnp(0.0)
    assert cc.next_event() == pytest.approx(0.055)


def test_a_nic_with_dcqcn_slows_a_qp_that_gets_cnps(hosts: Callable[..., Any]) -> None:
    """Every packet CE-marked, CNP interval 0: after the first CNP the QP runs at half rate."""
    mem = hosts(2, burst_bytes=0, cnp_interval=0.0,
                dcqcn=DcqcnParams(alpha_interval=1.0, increase_interval=1.0))

    def mark(frame: bytes) -> bytes:
        rx = decode(frame)
        if rx is not None and rx.opcode in WRITES:
            marked = bytearray(frame)
            marked[15] |= 0x03
            return bytes(marked)
        return frame

    mem.net.rewrite = mark
    reports = mem.run(build_jobs("incast", mem.ranks, 20 * 1024))
    times = [d.time for d in mem.net.log if d.src == "h1-eth0" and decode(d.frame).opcode in WRITES]
    gaps = [b - a for a, b in zip(times[5:18], times[6:19], strict=True)]
    # a 1082-byte Middle at 5 Mb/s (scale 40000 makes the 1 s timers far off)
    assert gaps == pytest.approx([1082 * 8 / 5e6] * 13, rel=1e-9)
    assert reports["h1"].counters.cnps_received == 20


def test_without_dcqcn_cnps_change_nothing(hosts: Callable[..., Any]) -> None:
    """The default (as at Meta): CNPs are counted, the rate stays the line rate."""
    mem = hosts(2, burst_bytes=0, cnp_interval=0.0)
    mem.net.rewrite = lambda f: f[:15] + bytes([f[15] | 3]) + f[16:] if len(f) > 60 else f
    mem.run(build_jobs("incast", mem.ranks, 20 * 1024))
    times = [d.time for d in mem.net.log if d.src == "h1-eth0" and decode(d.frame).opcode in WRITES]
    assert times[10] - times[9] == pytest.approx(1082 * 8 / 10e6)
