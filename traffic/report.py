"""A collective's result as nccl-tests reports it, from the agents' per-host reports.

nccl-tests (NVIDIA/nccl-tests, ``doc/PERFORMANCE.md``, "Performance
reported by NCCL tests") reports three numbers per operation:

- time ``t``: each rank times the operation, and the ranks' times are
  averaged (``src/common.cu``: ``Allreduce(args, &deltaSec, average)``);
- algorithm bandwidth ``algbw = S / t``, ``S`` the operation's size in
  bytes (per rank: the array an AllReduce reduces; for all-to-all, a rank's
  whole send buffer, ``count * nranks * typesize`` in ``alltoall.cu``);
- bus bandwidth ``busbw = algbw x factor``, the factor making the figure
  comparable with the hardware's peak whatever the number of ranks n:
  AllReduce ``2(n-1)/n`` (2(n-1) transfers per element over n links),
  ReduceScatter, AllGather and AlltoAll ``(n-1)/n``, Broadcast and Reduce 1.

GB/s there means 10^9 bytes per second; the emulated links run at Mb/s, so
the result also carries both bandwidths in Gbit/s. Incast and permutation
are not nccl-tests operations: ``S`` is what each sender sends and the
factor is 1, as for nccl-tests' point-to-point sendrecv (for incast the
root receives (n-1) x S, ``root_gbps``).

Besides nccl-tests' three numbers, ``summarize`` adds what the transport
saw (retransmissions, NAKs, timeouts, PAUSE frames and time paused, CE
marks and CNPs, ICRC errors, the kernel's drops on the agents' sockets)
and whether a host was CPU-bound: an agent whose CPU share reached
``cpu_bound_share`` of one core measured itself, not the emulated fabric.

Names: ``CollectiveResult``, ``algbw``, ``busbw``, ``summarize``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from traffic.collectives import PATTERNS, Rank, busbw_factor
from traffic.schema import HostReport, Job

__all__ = ["CollectiveResult", "algbw", "busbw", "summarize"]

CPU_BOUND_SHARE = 0.9


def algbw(size: float, seconds: float) -> float:
    """nccl-tests' algorithm bandwidth, GB/s (10^9 bytes/s): size / time."""
    if seconds <= 0:
        raise ValueError(f"seconds={seconds!r}: must be positive")
    return size / seconds / 1e9


def busbw(pattern: str, n: int, algbw_gbs: float) -> float:
    """nccl-tests' bus bandwidth, GB/s: algbw x the pattern's factor for n ranks."""
    return algbw_gbs * busbw_factor(pattern, n)


class CollectiveResult(BaseModel):
    """One collective: nccl-tests' time/algbw/busbw and the transport's counters, all hosts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: str
    ranks: int
    size: int
    status: str  # ok, or the first host status that is not
    errors: list[str]
    time_s: float  # mean over ranks of each rank's host time (nccl-tests)
    span_s: float  # first start to last end, all hosts
    algbw_gbs: float
    busbw_gbs: float
    busbw_factor: float
    algbw_gbps: float
    busbw_gbps: float
    root_gbps: float | None = None  # incast: the root's receive rate
    bytes_sent: int  # application bytes acknowledged, all hosts
    bytes_received: int
    bytes_expected: int | None = None  # from the jobs, when given
    bytes_ok: bool | None = None
    retransmitted: int
    naks_sent: int
    naks_received: int
    timeouts: int
    pause_frames: int
    paused_seconds: float
    ce_received: int
    cnps_sent: int
    cnps_received: int
    icrc_errors: int
    data_errors: int
    kernel_drops: int
    max_cpu_share: float
    cpu_bound: bool
    cpu_bound_hosts: list[str]
    hosts: dict[str, dict[str, Any]]  # per host: status, seconds, cpu_share, bytes


def summarize(
    pattern: str,
    ranks: Sequence[Rank],
    size: int,
    reports: Mapping[str, HostReport | Mapping[str, Any]],
    *,
    jobs: Mapping[str, Job] | None = None,
    cpu_bound_share: float = CPU_BOUND_SHARE,
) -> CollectiveResult:
    """Combine the hosts' reports of one collective (see the module docstring)."""
    if pattern not in PATTERNS:
        raise ValueError(f"pattern {pattern!r}: one of {', '.join(PATTERNS)}")
    n = len(ranks)
    parsed = {
        h: r if isinstance(r, HostReport) else HostReport.model_validate(r)
        for h, r in reports.items()
    }
    per_host_ranks = Counter(r.host for r in ranks)
    missing = sorted(set(per_host_ranks) - set(parsed))
    if missing:
        raise ValueError(f"no report from host(s) {', '.join(missing)}")
    weights = [(parsed[h].seconds, k) for h, k in per_host_ranks.items()]
    time_s = sum(s * k for s, k in weights) / sum(k for _, k in weights)
    span = max(r.end for r in parsed.values()) - min(r.start for r in parsed.values())
    alg = algbw(size, time_s) if time_s > 0 else 0.0
    bus = busbw(pattern, n, alg)
    statuses = [r.status for r in parsed.values()]
    status = next((s for s in statuses if s != "ok"), "ok")
    errors = [f"{h}: {r.error}" for h, r in parsed.items() if r.error]

    def total(name: str) -> float:
        """Counter `name` summed over every host's report."""
        return sum(getattr(r.counters, name) for r in parsed.values())

    sent = sum(s.bytes_sent for r in parsed.values() for s in r.steps)
    received = sum(s.bytes_received for r in parsed.values() for s in r.steps)
    expected = None
    ok = None
    if jobs is not None:
        expected = sum(x.bytes for j in jobs.values() for st in j.steps for x in st.sends)
        ok = sent == expected and received == expected
    cpu_bound_hosts = sorted(h for h, r in parsed.items() if r.cpu_share >= cpu_bound_share)
    return CollectiveResult(
        pattern=pattern,
        ranks=n,
        size=size,
        status=status,
        errors=errors,
        time_s=time_s,
        span_s=span,
        algbw_gbs=alg,
        busbw_gbs=bus,
        busbw_factor=busbw_factor(pattern, n),
        algbw_gbps=alg * 8,
        busbw_gbps=bus * 8,
        root_gbps=(n - 1) * size * 8 / time_s / 1e9 if pattern == "incast" and time_s > 0 else None,
        bytes_sent=sent,
        bytes_received=received,
        bytes_expected=expected,
        bytes_ok=ok,
        retransmitted=int(total("retransmitted")),
        naks_sent=int(total("naks_sent")),
        naks_received=int(total("naks_received")),
        timeouts=int(total("timeouts")),
        pause_frames=int(total("pause_frames")),
        paused_seconds=total("paused_seconds"),
        ce_received=int(total("ce_received")),
        cnps_sent=int(total("cnps_sent")),
        cnps_received=int(total("cnps_received")),
        icrc_errors=int(total("icrc_errors")),
        data_errors=int(total("data_errors")),
        kernel_drops=int(total("kernel_drops")),
        max_cpu_share=max(r.cpu_share for r in parsed.values()),
        cpu_bound=bool(cpu_bound_hosts),
        cpu_bound_hosts=cpu_bound_hosts,
        hosts={
            h: {"status": r.status, "seconds": r.seconds, "cpu_share": r.cpu_share,
                "bytes_sent": sum(s.bytes_sent for s in r.steps),
                "bytes_received": sum(s.bytes_received for s in r.steps)}
            for h, r in parsed.items()
        },
    )
