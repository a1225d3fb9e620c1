"""nccl-tests' arithmetic (time, algbw, busbw), values by hand, and the hosts' counters summed."""

from __future__ import annotations

import pytest

from traffic.collectives import Rank, build_jobs
from traffic.report import algbw, busbw, summarize
from traffic.schema import Counters, HostReport, StepReport


def _host(name: str, seconds: float, *, cpu_share: float = 0.2, sent: int = 0,
          received: int = 0, **counters: float) -> HostReport:
    c = Counters(**counters)  # type: ignore[arg-type]
    step = StepReport(index=0, start=100.0, end=100.0 + seconds, seconds=seconds, bytes_sent=sent,
                      bytes_received=received, messages_sent=1, messages_received=1,
                      cpu_seconds=0.0, counters=c)
    return HostReport(host=name, job="j", status="ok", start=100.0, end=100.0 + seconds,
                      seconds=seconds, cpu_seconds=cpu_share * seconds, cpu_share=cpu_share,
                      steps=[step], counters=c, nics={f"{name}-eth0": c})


RANKS = [Rank(host=f"h{i}", nic=f"h{i}-eth0", ip=f"10.0.0.{i + 1}") for i in range(4)]


def test_algbw_is_size_over_time_in_gb_per_s() -> None:
    """1e9 bytes in 2 s: 0.5 GB/s."""
    assert algbw(1e9, 2.0) == 0.5


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [("allreduce", 0.75), ("alltoall", 0.375), ("incast", 0.5), ("permutation", 0.5)],
    ids=["allreduce", "alltoall", "incast", "permutation"],
)
def test_busbw_of_four_ranks(pattern: str, expected: float) -> None:
    """algbw 0.5 GB/s, n=4: AllReduce x 6/4, all-to-all x 3/4, point-to-point x 1."""
    assert busbw(pattern, 4, 0.5) == expected


def test_summary_averages_the_ranks_times_as_nccl_tests_does() -> None:
    """Two hosts timed 2 s and 4 s: time 3 s; S = 3e9: algbw 1 GB/s, busbw 1 GB/s (n=2)."""
    reports = {"h0": _host("h0", 2.0), "h1": _host("h1", 4.0)}
    result = summarize("allreduce", RANKS[:2], 3_000_000_000, reports)
    assert result.time_s == 3.0 and result.span_s == 4.0
    assert (result.algbw_gbs, result.busbw_gbs, result.busbw_factor) == (1.0, 1.0, 1.0)
    assert (result.algbw_gbps, result.busbw_gbps) == (8.0, 8.0)


def test_summary_of_four_ranks_applies_the_allreduce_factor() -> None:
    """Four hosts at 1 s, S = 1e9: algbw 1 GB/s, busbw 1.5 GB/s."""
    reports = {f"h{i}": _host(f"h{i}", 1.0) for i in range(4)}
    result = summarize("allreduce", RANKS, 1_000_000_000, reports)
    assert (result.algbw_gbs, result.busbw_gbs) == (1.0, 1.5)


def test_incast_reports_the_roots_receive_rate() -> None:
    """Three senders of 1e8 bytes into the root in 1 s: 2.4 Gb/s at the root."""
    reports = {f"h{i}": _host(f"h{i}", 1.0) for i in range(4)}
    result = summarize("incast", RANKS, 100_000_000, reports)
    assert result.root_gbps == pytest.approx(2.4)
    assert result.busbw_gbs == result.algbw_gbs == 0.1


def test_counters_are_summed_and_cpu_bound_hosts_flagged() -> None:
    """Retransmissions and pauses add up over hosts; a host at 95% of a core is CPU-bound."""
    reports = {
        "h0": _host("h0", 1.0, retransmitted=3, pause_frames=2, paused_seconds=0.25, naks_sent=1),
        "h1": _host("h1", 1.0, cpu_share=0.95, retransmitted=4, naks_received=1, cnps_sent=5),
    }
    result = summarize("allreduce", RANKS[:2], 1000, reports)
    assert (result.retransmitted, result.pause_frames, result.paused_seconds) == (7, 2, 0.25)
    assert (result.naks_sent, result.naks_received, result.cnps_sent) == (1, 1, 5)
    assert result.cpu_bound and result.cpu_bound_hosts == ["h1"]
    assert result.max_cpu_share == 0.95


def test_bytes_are_checked_against_the_jobs() -> None:
    """AllReduce of 2 ranks, 1000 bytes: each host sends and receives 1000 (2 steps of 500)."""
    jobs = build_jobs("allreduce", RANKS[:2], 1000)
    good = {h: _host(h, 1.0, sent=1000, received=1000) for h in ("h0", "h1")}
    assert summarize("allreduce", RANKS[:2], 1000, good, jobs=jobs).bytes_ok is True
    short = {"h0": _host("h0", 1.0, sent=1000, received=999), "h1": good["h1"]}
    result = summarize("allreduce", RANKS[:2], 1000, short, jobs=jobs)
    assert (result.bytes_expected, result.bytes_ok) == (2000, False)


def test_a_missing_host_report_is_an_error() -> None:
    """Every host that holds a rank must report."""
    with pytest.raises(ValueError, match="h1"):
        summarize("allreduce", RANKS[:2], 1000, {"h0": _host("h0", 1.0)})
