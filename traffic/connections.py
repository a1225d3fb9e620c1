"""Who talks to whom in a collective, and on which QP numbers and UDP source ports: one allocation.

The agents' jobs (`traffic.collectives`), the flow model (`model.flows`)
and the experiments' predictor all take the connections of a collective
from here, so the destination QP and source port the switches hash are the
same in all three. Everything is a function of the ranks (rank i: a host,
a NIC, its IPv4 address), the pattern, the QPs per connection and the job's
name; nothing depends on the order in which connections are made.

- Pairs (`data_pairs`): the directed (sender rank, receiver rank) pairs
  that carry data, in sorted order: ``allreduce``/``ring`` r -> r+1;
  ``alltoall`` every r -> j != r; ``incast`` every r -> root;
  ``permutation`` r -> r + shift (default n // 2), all mod n. Pairs whose
  two ranks are on one host are left out: they exchange over the host's
  GPU interconnect, not the fabric.
- QP numbers (`sender_qpn`, `receiver_qpn`): on the NIC of rank x, the QPs
  of its connection with rank y are numbered from ``FIRST_QPN`` (0x11, the
  first a NIC hands out after its reserved ones) at offset (2y + role) x Q,
  role 0 where x sends, 1 where x receives, plus the QP index q. They are
  unique per NIC, need no counter (so the model computes them for any
  pair of a sampled step), and fit 24 bits for every job up to 2n x Q <
  2^24 - 17 (a 24,576-rank job with 255 QPs). The data packets of QP q of
  s -> d carry destination QP ``receiver_qpn(s, q, Q)`` (d's QP); their
  ACKs carry ``sender_qpn(d, q, Q)``.
- UDP source port (`source_port`): 49152 + crc32("<src ip>><dst ip>") mod
  16384, one per directed pair and the same for all its QPs, so plain
  5-tuple ECMP sees one flow and only E-ECMP's destination-QP hash sees the
  QPs; with ``sport_per_qp`` QP q adds q (mod 65536).
- Initial PSN (`initial_psn`): crc32("<job>/<s>><d>") mod 2^24, so the two
  ends agree without talking.

`plan_connections(pattern, ranks, qps, job_name=...)` returns one
`ConnectionPlan` per pair with all of the above. `write_frame_bytes` is
what one RDMA WRITE of a given length puts on the wire (`ACK_FRAME_BYTES`
for an ACK), for whoever predicts switch counters; `message_posts` the
WRITEs an agent posts for one send (messages over QPs, `traffic.runner`'s
rule), so every predictor spreads bytes over QPs alike.

Names: `Endpoint`, `ConnectionPlan`, `AllocationError`, `plan_connections`,
`data_pairs`, `sender_qpn`, `receiver_qpn`, `source_port`, `initial_psn`,
`write_frame_bytes`, `message_posts`, `check_qp_strategy`, `FIRST_QPN`, `SPORT_BASE`, `SPORT_SPAN`, `ACK_FRAME_BYTES`,
`WRITE_HEADER_BYTES`, `PAIR_PATTERNS`, `QP_STRATEGIES`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from traffic.errors import TrafficError

__all__ = [
    "ACK_FRAME_BYTES",
    "FIRST_QPN",
    "PAIR_PATTERNS",
    "QP_STRATEGIES",
    "SPORT_BASE",
    "SPORT_SPAN",
    "WRITE_HEADER_BYTES",
    "AllocationError",
    "ConnectionPlan",
    "Endpoint",
    "check_qp_strategy",
    "data_pairs",
    "initial_psn",
    "message_posts",
    "plan_connections",
    "receiver_qpn",
    "sender_qpn",
    "source_port",
    "write_frame_bytes",
]

FIRST_QPN = 0x11
SPORT_BASE = 49152
SPORT_SPAN = 16384
_QPN_LIMIT = 1 << 24
# The pattern names the collectives use, and the model's name for the ring.
PAIR_PATTERNS = ("allreduce", "ring", "alltoall", "incast", "permutation")
# How a connection spreads its messages over its QPs (`message_posts`): whole messages in
# turn, or every message cut into one chunk per QP (`round_robin` is also taken for rr).
QP_STRATEGIES = ("rr", "split")
# Per packet of an RDMA WRITE: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4; the
# first (or only) packet adds a RETH (16), the last (or only) an ImmDt (4): the agents
# post every WRITE with immediate data (`traffic.qpscale.encode_imm`).
WRITE_HEADER_BYTES = 14 + 20 + 8 + 12 + 4
_RETH, _IMMDT = 16, 4
# An RC ACK: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + AETH 4 + ICRC 4.
ACK_FRAME_BYTES = 14 + 20 + 8 + 12 + 4 + 4


class AllocationError(TrafficError):
    """The connections of a collective cannot be allocated from these arguments."""


class Endpoint(Protocol):
    """What the allocation needs of a rank: its host, its NIC and the NIC's IPv4 address."""

    @property
    def host(self) -> str: ...

    @property
    def nic(self) -> str: ...

    @property
    def ip(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class ConnectionPlan:
    """One directed pair's connection: its QPs on both NICs, ports, initial PSN and class."""

    id: str  # "r<s>>r<d>"
    src: int  # sending rank
    dst: int  # receiving rank
    sender_qpns: tuple[int, ...]  # on the sender's NIC: the ACKs' destination QPs
    receiver_qpns: tuple[int, ...]  # on the receiver's NIC: the data's destination QPs
    sports: tuple[int, ...]  # UDP source port of each QP (both directions)
    psn: int
    cls: str


def data_pairs(pattern: str, hosts: Sequence[str], *, root: int = 0,
               shift: int | None = None) -> list[tuple[int, int]]:
    """The directed (sender, receiver) rank pairs of `pattern` that cross the fabric, sorted.

    `hosts` is each rank's host, in rank order (module docstring).
    """
    n = len(hosts)
    if pattern not in PAIR_PATTERNS:
        raise AllocationError(f"pattern {pattern!r}: one of {', '.join(PAIR_PATTERNS)}")
    if n < 2:
        raise AllocationError(f"{pattern} needs at least 2 ranks, got {n}")
    if pattern in ("allreduce", "ring"):
        pairs = [(r, (r + 1) % n) for r in range(n)]
    elif pattern == "alltoall":
        pairs = [(r, j) for r in range(n) for j in range(n) if j != r]
    elif pattern == "incast":
        if not 0 <= root < n:
            raise AllocationError(f"root={root}: must be a rank, 0..{n - 1}")
        pairs = [(r, root) for r in range(n) if r != root]
    else:
        k = n // 2 if shift is None else shift % n
        pairs = [(r, (r + k) % n) for r in range(n) if (r + k) % n != r]
    return sorted({(s, d) for s, d in pairs if hosts[s] != hosts[d]})


_I = TypeVar("_I")  # int, or a numpy integer array: the arithmetic is the same


def sender_qpn(dst: _I, q: _I, qps: int) -> _I:
    """The QP number of QP `q` on the sender's NIC of its connection to rank `dst`."""
    return FIRST_QPN + 2 * dst * qps + q  # type: ignore[operator, return-value]


def receiver_qpn(src: _I, q: _I, qps: int) -> _I:
    """The QP number of QP `q` on the receiver's NIC of its connection from rank `src`."""
    return FIRST_QPN + (2 * src + 1) * qps + q  # type: ignore[operator, return-value]


def source_port(src_ip: str, dst_ip: str, q: int = 0, *, per_qp: bool = False) -> int:
    """The UDP source port of QP `q` of the connection from `src_ip` to `dst_ip`."""
    base = SPORT_BASE + zlib.crc32(f"{src_ip}>{dst_ip}".encode()) % SPORT_SPAN
    return (base + q) % 65536 if per_qp else base


def initial_psn(job_name: str, src: int, dst: int) -> int:
    """The first PSN of connection `src` -> `dst` of job `job_name` (both ends compute it)."""
    return zlib.crc32(f"{job_name}/{src}>{dst}".encode()) & 0xFFFFFF


def write_frame_bytes(length: int, path_mtu: int = 1024) -> int:
    """Bytes on the wire of one RDMA WRITE with immediate of `length` bytes (every packet)."""
    if length < 0 or path_mtu < 1:
        raise ValueError(f"length={length}, path_mtu={path_mtu}: need length >= 0, MTU >= 1")
    packets = max(1, -(-length // path_mtu))
    last = length - (packets - 1) * path_mtu
    return length + (-last % 4) + packets * WRITE_HEADER_BYTES + _RETH + _IMMDT


def check_qp_strategy(strategy: str) -> str:
    """`strategy` if it is one of `QP_STRATEGIES`, else `ValueError`."""
    if strategy not in QP_STRATEGIES:
        raise ValueError(f"unknown QP strategy {strategy!r} (choose from {', '.join(QP_STRATEGIES)})")
    return strategy


def message_posts(nbytes: int, qps: int, strategy: str, message_bytes: int | None = None,
                  turn: int = 0) -> list[tuple[int, int]]:
    """(QP index, bytes) of each RDMA WRITE an agent posts for one send of `nbytes`.

    As `traffic.runner` posts them (without admission): messages of
    `message_bytes` (None: the whole send), the rest last; `rr` (or
    `round_robin`) puts message m whole on QP (turn + m) mod `qps`, where
    `turn` counts the connection's earlier messages; `split` cuts every
    message into min(qps, length) near-equal chunks, chunk q on QP q.
    """
    check_qp_strategy("rr" if strategy == "round_robin" else strategy)
    if qps < 1 or (message_bytes is not None and message_bytes < 1):
        raise ValueError(f"qps={qps}, message_bytes={message_bytes}: both must be >= 1")
    if nbytes <= 0:
        return []
    size = message_bytes or nbytes
    full, rest = divmod(nbytes, size)
    out: list[tuple[int, int]] = []
    for m, length in enumerate([size] * full + ([rest] if rest else [])):
        if strategy == "split":
            chunks = max(1, min(qps, length))
            base, extra = divmod(length, chunks)
            out += [(q, base + (1 if q < extra else 0)) for q in range(chunks)]
        else:
            out.append(((turn + m) % qps, length))
    return out


def plan_connections(pattern: str, ranks: Sequence[Endpoint], qps: int, *, job_name: str,
                     root: int = 0, shift: int | None = None, sport_per_qp: bool = False,
                     cls: str = "data") -> tuple[ConnectionPlan, ...]:
    """One `ConnectionPlan` per data pair of `pattern` over `ranks` (module docstring)."""
    n = len(ranks)
    if not 1 <= qps <= 255:
        raise AllocationError(f"qps={qps}: must be 1..255")
    if FIRST_QPN + 2 * n * qps > _QPN_LIMIT:
        raise AllocationError(f"{n} ranks x {qps} QPs: QP numbers would pass 2^24 "
                               f"(2 x ranks x QPs must stay under {_QPN_LIMIT - FIRST_QPN})")
    if len({(r.host, r.nic) for r in ranks}) != n:
        raise AllocationError("two ranks share a (host, NIC): give each rank its own NIC")
    out = []
    for s, d in data_pairs(pattern, [r.host for r in ranks], root=root, shift=shift):
        src, dst = ranks[s], ranks[d]
        out.append(ConnectionPlan(
            id=f"r{s}>r{d}", src=s, dst=d,
            sender_qpns=tuple(sender_qpn(d, q, qps) for q in range(qps)),
            receiver_qpns=tuple(receiver_qpn(s, q, qps) for q in range(qps)),
            sports=tuple(source_port(src.ip, dst.ip, q, per_qp=sport_per_qp)
                         for q in range(qps)),
            psn=initial_psn(job_name, s, d), cls=cls))
    return tuple(out)
