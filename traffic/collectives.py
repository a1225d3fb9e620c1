"""Collective schedules: one ``Job`` per host for ring AllReduce, all-to-all, incast, permutation.

The caller gives the ranks as (host, NIC, IP) endpoints in rank order, the
size, the QPs per connection and the QP-scaling strategy; ``build_jobs``
returns what each host's agent runs. Every directed pair of ranks that
exchanges data gets one connection (``traffic.schema.Connection``), known
to both hosts with the QP numbers crossed; QP numbers, UDP source ports
and initial PSNs come from ``traffic.connections`` (the allocation the flow
model and the experiments' predictor share).

Patterns (n ranks, ``size`` bytes; chunk i of n is ``size // n`` bytes, the
first ``size % n`` chunks one byte more):

- ``allreduce``: the ring algorithm (nccl-tests' PERFORMANCE.md: 2(n-1)
  transfers per element). Ring order is rank order. 2(n-1) dependent steps:
  in reduce-scatter step k (0 <= k < n-1) rank r sends chunk (r - k) mod n
  to rank r+1 and receives chunk (r - k - 1) mod n from rank r-1; in
  all-gather step k it sends chunk (r + 1 - k) mod n and receives chunk
  (r - k) mod n. Each rank sends 2(n-1)/n x size in all.
- ``alltoall``: one step; rank r sends chunk j to every rank j != r and
  receives chunk r from each (the chunk to itself stays home), as
  nccl-tests' alltoall_perf with ``size`` the per-rank buffer.
  With ``pairwise``, the same transfers in n-1 steps instead (the pairwise
  exchange of MPI's all-to-all): in step k (1 <= k < n) rank r sends chunk
  (r + k) mod n to rank r+k and receives chunk r from rank r-k, so every
  rank has one transfer out and one in at a time (no n-1 to 1 incast).
- ``incast``: one step; every rank but ``root`` (default rank 0) sends
  ``size`` bytes to the root.
- ``permutation``: one step; rank r sends ``size`` bytes to rank
  (r + shift) mod n (default shift n // 2), so every rank sends to one
  rank and receives from one.

Transfers between two ranks on one host go over the host's GPU
interconnect (NVLink), not the fabric, as NCCL's do: they are left out of
the jobs (their step still orders the others).

Each connection's UDP source port is one per directed pair (the same for
all its QPs, so that plain 5-tuple ECMP sees one flow and only E-ECMP's
destination-QP hash sees the QPs) unless ``sport_per_qp``; its initial PSN
is derived from the job name and the pair, so the two ends agree
(``traffic.connections``).

Names: ``Rank``, ``PATTERNS``, ``build_jobs``, ``chunk_sizes``,
``busbw_factor``, ``CollectiveError``.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from traffic.connections import AllocationError, plan_connections
from traffic.errors import TrafficError
from traffic.schema import (
    STRATEGY_ALIASES,
    Admission,
    Connection,
    Job,
    QpLink,
    Recv,
    Send,
    Step,
    Transport,
)

__all__ = [
    "PATTERNS",
    "CollectiveError",
    "Rank",
    "build_jobs",
    "busbw_factor",
    "chunk_sizes",
]

PATTERNS = ("allreduce", "alltoall", "incast", "permutation")


class CollectiveError(TrafficError):
    """A collective cannot be built from these arguments."""


@dataclass(frozen=True, kw_only=True)
class Rank:
    """One rank's endpoint: the host its agent runs on, the NIC, the NIC's IPv4 address."""

    host: str
    nic: str
    ip: str
    mac: str | None = None  # the MAC peers put in frames to it; None: peers resolve it

    def __post_init__(self) -> None:
        try:
            ipaddress.IPv4Address(self.ip)
        except ValueError:
            raise CollectiveError(f"rank on {self.host}/{self.nic}: {self.ip!r} is not IPv4") from None


def chunk_sizes(size: int, n: int) -> list[int]:
    """``size`` bytes in ``n`` chunks: ``size // n`` each, the first ``size % n`` one more."""
    base, extra = divmod(size, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def busbw_factor(pattern: str, n: int) -> float:
    """nccl-tests' bus bandwidth factor: 2(n-1)/n AllReduce, (n-1)/n all-to-all, else 1."""
    if pattern == "allreduce":
        return 2 * (n - 1) / n
    if pattern == "alltoall":
        return (n - 1) / n
    if pattern in ("incast", "permutation"):
        return 1.0
    raise CollectiveError(f"pattern {pattern!r}: one of {', '.join(PATTERNS)}")


# (sender rank, receiver rank, bytes) per step
_Schedule = list[list[tuple[int, int, int]]]


def _allreduce(n: int, size: int) -> _Schedule:
    chunks = chunk_sizes(size, n)
    steps: _Schedule = []
    for k in range(n - 1):  # reduce-scatter
        steps.append([(r, (r + 1) % n, chunks[(r - k) % n]) for r in range(n)])
    for k in range(n - 1):  # all-gather
        steps.append([(r, (r + 1) % n, chunks[(r + 1 - k) % n]) for r in range(n)])
    return steps


def _alltoall(n: int, size: int) -> _Schedule:
    chunks = chunk_sizes(size, n)
    return [[(r, j, chunks[j]) for r in range(n) for j in range(n) if j != r]]


def _pairwise(n: int, size: int) -> _Schedule:
    chunks = chunk_sizes(size, n)
    return [[(r, (r + k) % n, chunks[(r + k) % n]) for r in range(n)] for k in range(1, n)]


def _incast(n: int, size: int, root: int) -> _Schedule:
    return [[(r, root, size) for r in range(n) if r != root]]


def _permutation(n: int, size: int, shift: int) -> _Schedule:
    return [[(r, (r + shift) % n, size) for r in range(n) if (r + shift) % n != r]]


def build_jobs(
    pattern: str,
    ranks: list[Rank],
    size: int,
    qps: int = 1,
    strategy: str = "rr",
    *,
    message_bytes: int | None = None,
    cls: Literal["data", "control", "default"] = "data",
    admission: Admission | None = None,
    transport: Transport | None = None,
    root: int = 0,
    shift: int | None = None,
    sport_per_qp: bool = False,
    pairwise: bool = False,
    name: str | None = None,
    start_at: float | None = None,
) -> dict[str, Job]:
    """One job per host for ``pattern`` over ``ranks`` (see the module docstring)."""
    n = len(ranks)
    if pattern not in PATTERNS:
        raise CollectiveError(f"pattern {pattern!r}: one of {', '.join(PATTERNS)}")
    if n < 2:
        raise CollectiveError(f"{pattern} needs at least 2 ranks, got {n}")
    if len({(r.host, r.nic) for r in ranks}) != n:
        raise CollectiveError("two ranks share a (host, NIC): give each rank its own NIC")
    if size < 0:
        raise CollectiveError(f"size={size}: must be >= 0")
    if not 1 <= qps <= 255:
        raise CollectiveError(f"qps={qps}: must be 1..255")
    if strategy not in STRATEGY_ALIASES:
        raise CollectiveError(f"strategy {strategy!r}: split or rr (round_robin)")
    if not 0 <= root < n:
        raise CollectiveError(f"root={root}: must be a rank, 0..{n - 1}")
    if pairwise and pattern != "alltoall":
        raise CollectiveError(f"pairwise: an alltoall schedule, not {pattern}'s")
    job_name = name or f"{pattern}-{n}x{size}"
    # One connection per directed pair that carries data (`traffic.connections`: the
    # allocation the model and the predictor use too).
    try:
        plans = plan_connections(pattern, ranks, qps, job_name=job_name, root=root,
                                 shift=shift, sport_per_qp=sport_per_qp, cls=cls)
    except AllocationError as exc:
        raise CollectiveError(str(exc)) from None
    if pattern == "allreduce":
        schedule = _allreduce(n, size)
    elif pattern == "alltoall":
        schedule = _pairwise(n, size) if pairwise else _alltoall(n, size)
    elif pattern == "incast":
        schedule = _incast(n, size, root)
    else:
        shift = n // 2 if shift is None else shift % n
        schedule = _permutation(n, size, shift)
    # Ranks on one host exchange over the host's GPU interconnect (NVLink), as
    # NCCL's rings and all-to-alls do, not over the fabric: those transfers
    # carry no network traffic and complete at once.
    schedule = [[t for t in step if ranks[t[0]].host != ranks[t[1]].host] for step in schedule]

    conns = {(c.src, c.dst): c for c in plans}
    per_host_conns: dict[str, list[Connection]] = defaultdict(list)
    for c in plans:
        src, dst = ranks[c.src], ranks[c.dst]
        for me, peer, mine, theirs in ((src, dst, c.sender_qpns, c.receiver_qpns),
                                       (dst, src, c.receiver_qpns, c.sender_qpns)):
            links = [QpLink(local=mine[q], remote=theirs[q], sport=c.sports[q])
                     for q in range(qps)]
            per_host_conns[me.host].append(
                Connection(id=c.id, nic=me.nic, peer_ip=peer.ip, peer_mac=peer.mac, qps=links,
                           cls=cls, psn=c.psn)
            )

    hosts = list(dict.fromkeys(r.host for r in ranks))
    steps: dict[str, list[Step]] = {h: [] for h in hosts}
    for step in schedule:
        sends: dict[str, list[Send]] = defaultdict(list)
        recvs: dict[str, list[Recv]] = defaultdict(list)
        for s, d, nbytes in step:
            cid = conns[(s, d)].id
            sends[ranks[s].host].append(
                Send(conn=cid, bytes=nbytes, message_bytes=message_bytes, qps=qps,
                     strategy=STRATEGY_ALIASES[strategy])  # type: ignore[arg-type]
            )
            recvs[ranks[d].host].append(Recv(conn=cid, bytes=nbytes))
        for h in hosts:
            steps[h].append(Step(sends=sends[h], recvs=recvs[h]))

    jobs = {}
    for h in hosts:
        try:
            jobs[h] = Job(
                name=job_name,
                connections=per_host_conns[h],
                steps=steps[h],
                transport=transport or Transport(),
                admission=admission,
                start_at=start_at,
            )
        except ValueError as exc:
            raise CollectiveError(f"{pattern} job for {h}: {exc}") from exc
    return jobs
