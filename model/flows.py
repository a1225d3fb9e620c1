"""The flows of a collective, step by step, as numpy arrays.

A collective over N ranks (rank i on NIC `placement[i]`) is a sequence of
steps (`controller.placement` defines the patterns); in a step every
sending rank moves `b` bytes to one peer. The bytes of one (rank, peer)
pair are cut into messages of at most `message_size` bytes (near-equal
sizes) and the messages spread over Q queue pairs as the collective
library does (`traffic.qpscale`, the same arithmetic):

- `split`: every message is cut into min(Q, length) near-equal chunks,
  chunk q on QP q;
- `rr`: whole messages go to QPs in turn; the turn carries on from one
  step to the next of the same pair (message j of the pair's collective on
  QP j mod Q).

Each (pair, QP) with bytes is one flow: UDP source port `sport` (+ the QP
index with `sport_per_qp`), destination port 4791, destination QP
`first_qp` + QP index - the defaults of `traffic.agent send`.

Steps whose flows are alike are evaluated once: a `StepSet` is a list of
(weight, `Flows`) with the weights summing to the collective's number of
steps. A ring's 2(N-1) steps differ only by the QPs `rr` picks, so it has
at most Q variants; all-to-all has N-1 different steps (shift k: rank i ->
i + k) and, beyond `max_steps`, an evenly spaced sample of them stands for
all (each weighted (N-1)/samples).

Names defined here: `Flows`, `StepSet`, `collective_steps`, `qp_bytes`,
`DPORT`, `SPORT`, `FIRST_QP`, `STRATEGIES`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from controller.placement import PATTERNS, permutation

__all__ = ["DPORT", "FIRST_QP", "SPORT", "STRATEGIES", "Flows", "StepSet", "collective_steps",
           "qp_bytes"]

SPORT, DPORT, FIRST_QP = 49152, 4791, 17
STRATEGIES = ("rr", "split")
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Flows:
    """One step's flows: NIC indices (plan order), ports, destination QP, bytes."""

    src: Ints
    dst: Ints
    sport: Ints
    dport: Ints
    qp: Ints
    size: npt.NDArray[np.float64]

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


def _near_equal(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def qp_bytes(pair_bytes: int, qps: int, strategy: str, message_size: int,
             first_message: int = 0) -> list[int]:
    """Bytes on each of `qps` QPs for one pair's `pair_bytes` in one step."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown QP strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    if qps < 1 or message_size < 1:
        raise ValueError("qps and message_size must be >= 1")
    out = [0] * qps
    if pair_bytes <= 0:
        return out
    messages = _near_equal(pair_bytes, max(1, math.ceil(pair_bytes / message_size)))
    for j, length in enumerate(messages):
        if strategy == "rr":
            out[(first_message + j) % qps] += length
        else:
            for q, chunk in enumerate(_near_equal(length, max(1, min(qps, length)))):
                out[q] += chunk
    return out


def _flows(src_nic: Ints, dst_nic: Ints, per_qp: list[int], sport: int, sport_per_qp: bool,
           first_qp: int) -> Flows:
    q = np.array([i for i, b in enumerate(per_qp) if b > 0], dtype=np.int64)
    size = np.array([per_qp[i] for i in q.tolist()], dtype=np.float64)
    n = len(src_nic)
    return Flows(src=np.repeat(src_nic, len(q)), dst=np.repeat(dst_nic, len(q)),
                 sport=np.tile(sport + (q if sport_per_qp else 0 * q), n),
                 dport=np.full(n * len(q), DPORT, dtype=np.int64),
                 qp=np.tile(first_qp + q, n), size=np.tile(size, n))


def collective_steps(pattern: str, placement: npt.ArrayLike, size: int, *, qps: int = 1,
                     strategy: str = "rr", message_size: int = 1 << 20,
                     sport: int = SPORT, sport_per_qp: bool = False, first_qp: int = FIRST_QP,
                     seed: int = 0, max_steps: int = 64,
                     hosts: npt.ArrayLike | None = None) -> StepSet:
    """The steps of `pattern` over the ranks on NICs `placement` (module docstring).

    `hosts` (the host of every NIC, by NIC index) leaves out the transfers
    between two ranks on one host, which go over its GPU interconnect, not
    the fabric, as the emulator's collectives do (`traffic.collectives`).
    """
    if pattern not in PATTERNS:
        raise ValueError(f"unknown pattern {pattern!r} (choose from {', '.join(PATTERNS)})")
    nic = np.asarray(placement, dtype=np.int64)
    n = len(nic)
    if n < 2:
        raise ValueError("a collective needs at least 2 ranks")
    r = np.arange(n, dtype=np.int64)
    host = None if hosts is None else np.asarray(hosts, dtype=np.int64)

    def mk(src: Ints, dst: Ints, per_qp: list[int]) -> Flows:
        """The flows of these transfers, those within one host left out."""
        if host is not None:
            keep = host[src] != host[dst]
            src, dst = src[keep], dst[keep]
        return _flows(src, dst, per_qp, sport, sport_per_qp, first_qp)

    if pattern in ("ring", "alltoall"):
        b = size // n
        if pattern == "ring":
            steps = 2 * (n - 1)
            messages = max(1, math.ceil(b / message_size)) if b else 1
            starts: dict[int, int] = {}
            for k in range(steps if strategy == "rr" else 1):
                start = (k * messages) % qps
                starts[start] = starts.get(start, 0) + 1
            if strategy != "rr":
                starts = {0: steps}
            variants = tuple(
                (float(count), mk(nic, nic[(r + 1) % n], qp_bytes(b, qps, strategy, message_size, start)))
                for start, count in sorted(starts.items()))
            return StepSet(pattern=pattern, ranks=n, steps=steps, variants=variants)
        steps = n - 1
        shifts = np.arange(1, n)
        sampled = steps > max_steps
        if sampled:
            shifts = np.unique(np.linspace(1, n - 1, max_steps).round().astype(np.int64))
        per_qp = qp_bytes(b, qps, strategy, message_size)
        weight = steps / len(shifts)
        variants = tuple((weight, mk(nic, nic[(r + k) % n], per_qp))
                         for k in shifts.tolist())
        return StepSet(pattern=pattern, ranks=n, steps=steps, variants=variants, sampled=sampled)
    per_qp = qp_bytes(size, qps, strategy, message_size)
    if pattern == "incast":
        return StepSet(pattern=pattern, ranks=n, steps=1, variants=(
            (1.0, mk(nic[1:], np.full(n - 1, nic[0]), per_qp)),))
    return StepSet(pattern=pattern, ranks=n, steps=1, variants=(
        (1.0, mk(nic, nic[permutation(n, seed)], per_qp)),))
