"""The flows of a collective, step by step, as numpy arrays: the same connections the agents run.

A collective over N ranks (rank i on NIC `placement[i]`) is a sequence of
steps, the schedules of `traffic.collectives`: a ring's 2(N-1) steps rank
r -> r+1, all-to-all's N-1 shifts, incast to rank 0, and the permutation
r -> r + N/2. In a step every sending rank moves `b` bytes to one peer
(ring and all-to-all: size // N, the `size % N` bytes the agents spread
over the first chunks left out). The bytes of one (rank, peer) pair are
cut into messages as the agents' runner cuts them (`traffic.runner`):
messages of `message_size` bytes and the rest last (None: the step's bytes
as one message), spread over Q queue pairs as the collective library does
(`traffic.qpscale`):

- `split`: every message is cut into min(Q, length) near-equal chunks,
  chunk q on QP q;
- `rr`: whole messages go to QPs in turn; the turn carries on from one
  step to the next of the same pair (message j of the pair's collective on
  QP j mod Q).

Each (pair, QP) with bytes is one flow, with the QP numbers and source
ports of `traffic.connections` (the allocation the agents' jobs use):
destination QP `receiver_qpn(sender rank, q, Q)`, UDP source port
`source_port(src ip, dst ip, q)`, destination port 4791. A flow carries
its payload bytes (`size`) and its frame bytes (`wire`: every RDMA WRITE's
headers, `traffic.connections.write_frame_bytes`, at the agents' path MTU).

Steps whose flows are alike are evaluated once: a `StepSet` is a list of
(weight, `Flows`) with the weights summing to the collective's number of
steps. A ring's 2(N-1) steps differ only by the QPs `rr` picks, so it has
at most Q variants; all-to-all has N-1 different steps (shift k: rank i ->
i + k) and, beyond `max_steps`, an evenly spaced sample of them stands for
all (each weighted (N-1)/samples).

Names defined here: `Flows`, `StepSet`, `collective_steps`, `qp_bytes`,
`qp_wire_bytes`, `DPORT`, `PATH_MTU`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from controller.choices import PATTERNS
from traffic.connections import (
    message_posts,
    receiver_qpn,
    source_port,
    write_frame_bytes,
)
from traffic.roce import ROCEV2_UDP_PORT
from traffic.schema import Transport

__all__ = ["DPORT", "PATH_MTU", "Flows", "StepSet", "collective_steps",
           "qp_bytes", "qp_wire_bytes"]

DPORT = ROCEV2_UDP_PORT
PATH_MTU = Transport().path_mtu  # the agents' default path MTU (a fabric's: AddressPlan.path_mtu)
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Flows:
    """One step's flows: NIC indices (plan order), ports, destination QP, payload bytes and
    frame bytes (`wire`: headers included; None: as `size`)."""

    src: Ints
    dst: Ints
    sport: Ints
    dport: Ints
    qp: Ints
    size: npt.NDArray[np.float64]
    wire: npt.NDArray[np.float64] | None = None

    def __len__(self) -> int:
        return len(self.src)


@dataclass(frozen=True)
class StepSet:
    """A collective as distinct steps and how many steps each stands for."""

    pattern: str
    ranks: int
    steps: int  # steps of the whole collective
    variants: tuple[tuple[float, Flows], ...]
    sampled: bool = False  # all-to-all evaluated on a sample of its steps


def qp_bytes(pair_bytes: int, qps: int, strategy: str, message_size: int | None,
             first_message: int = 0) -> list[int]:
    """Bytes on each of `qps` QPs for one pair's `pair_bytes` in one step."""
    out = [0] * qps
    for q, length in message_posts(pair_bytes, qps, strategy, message_size, first_message):
        out[q] += length
    return out


def qp_wire_bytes(pair_bytes: int, qps: int, strategy: str, message_size: int | None,
                  first_message: int = 0, path_mtu: int = PATH_MTU) -> list[int]:
    """Frame bytes (headers included, `traffic.connections.write_frame_bytes`) on each QP."""
    out = [0] * qps
    for q, length in message_posts(pair_bytes, qps, strategy, message_size, first_message):
        out[q] += write_frame_bytes(length, path_mtu)
    return out


def _messages(pair_bytes: int, message_size: int | None) -> int:
    return -(-pair_bytes // (message_size or pair_bytes)) if pair_bytes > 0 else 0


class _Builder:
    """Flows of transfers between ranks, with the shared allocation's QPs and ports."""

    def __init__(self, nic: Ints, qps: int, ips: Sequence[str], sport_per_qp: bool,
                 host: Ints | None, strategy: str, message_size: int | None,
                 path_mtu: int = PATH_MTU) -> None:
        self.nic, self.qps, self.ips, self.per_qp = nic, qps, ips, sport_per_qp
        self.host, self.strategy, self.message_size = host, strategy, message_size
        self.path_mtu = path_mtu

    def flows(self, src: Ints, dst: Ints, pair_bytes: int, first_message: int = 0) -> Flows:
        """The flows of ranks `src` -> `dst` (arrays), each pair `pair_bytes` this step."""
        s_nic, d_nic = self.nic[src], self.nic[dst]
        if self.host is not None:  # transfers within a host stay off the fabric
            keep = self.host[s_nic] != self.host[d_nic]
            src, dst, s_nic, d_nic = src[keep], dst[keep], s_nic[keep], d_nic[keep]
        args = (pair_bytes, self.qps, self.strategy, self.message_size, first_message)
        per_qp, wire = qp_bytes(*args), qp_wire_bytes(*args, path_mtu=self.path_mtu)
        q = np.array([i for i, b in enumerate(per_qp) if b > 0], dtype=np.int64)
        n, k = len(src), len(q)
        base = np.array([source_port(self.ips[a], self.ips[b])
                         for a, b in zip(s_nic.tolist(), d_nic.tolist(), strict=True)],
                        dtype=np.int64)
        qq = np.tile(q, n)
        sport = np.repeat(base, k) + (qq if self.per_qp else 0)
        return Flows(src=np.repeat(s_nic, k), dst=np.repeat(d_nic, k), sport=sport % 65536,
                     dport=np.full(n * k, DPORT, dtype=np.int64),
                     qp=receiver_qpn(np.repeat(src, k), qq, self.qps),
                     size=np.tile(np.array([per_qp[i] for i in q.tolist()], dtype=np.float64), n),
                     wire=np.tile(np.array([wire[i] for i in q.tolist()], dtype=np.float64), n))


def collective_steps(pattern: str, placement: npt.ArrayLike, size: int, *, ips: Sequence[str],
                     qps: int = 1, strategy: str = "rr", message_size: int | None = 1 << 20,
                     sport_per_qp: bool = False, max_steps: int = 64,
                     hosts: npt.ArrayLike | None = None, path_mtu: int = PATH_MTU) -> StepSet:
    """The steps of `pattern` over the ranks on NICs `placement` (module docstring).

    `ips` is every NIC's IPv4 address, by NIC index (the source ports are
    hashed from them). `hosts` (the host of every NIC, by NIC index) leaves
    out the transfers between two ranks on one host, which go over its GPU
    interconnect, not the fabric, as the emulator's collectives do
    (`traffic.collectives`). `path_mtu`: the NICs' (`AddressPlan.path_mtu`), which sets
    the frames' header bytes (`wire`).
    """
    if pattern not in PATTERNS:
        raise ValueError(f"unknown pattern {pattern!r} (choose from {', '.join(PATTERNS)})")
    nic = np.asarray(placement, dtype=np.int64)
    n = len(nic)
    if n < 2:
        raise ValueError("a collective needs at least 2 ranks")
    r = np.arange(n, dtype=np.int64)
    host = None if hosts is None else np.asarray(hosts, dtype=np.int64)
    mk = _Builder(nic, qps, ips, sport_per_qp, host, strategy, message_size, path_mtu).flows

    if pattern in ("ring", "alltoall"):
        b = size // n
        if pattern == "ring":
            steps = 2 * (n - 1)
            messages = _messages(b, message_size)
            starts: dict[int, int] = {}
            for k in range(steps):
                start = (k * messages) % qps if strategy == "rr" else 0
                starts[start] = starts.get(start, 0) + 1
            variants = tuple((float(count), mk(r, (r + 1) % n, b, start))
                             for start, count in sorted(starts.items()))
            return StepSet(pattern=pattern, ranks=n, steps=steps, variants=variants)
        steps = n - 1
        shifts = np.arange(1, n)
        sampled = steps > max_steps
        if sampled:
            shifts = np.unique(np.linspace(1, n - 1, max_steps).round().astype(np.int64))
        weight = steps / len(shifts)
        variants = tuple((weight, mk(r, (r + k) % n, b)) for k in shifts.tolist())
        return StepSet(pattern=pattern, ranks=n, steps=steps, variants=variants, sampled=sampled)
    if pattern == "incast":
        return StepSet(pattern=pattern, ranks=n, steps=1, variants=(
            (1.0, mk(r[1:], np.zeros(n - 1, dtype=np.int64), size)),))
    return StepSet(pattern=pattern, ranks=n, steps=1, variants=(
        (1.0, mk(r, (r + n // 2) % n, size)),))
