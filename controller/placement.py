"""Job placement: which NICs a job's ranks run on, so that little of its traffic crosses AI zones.

`place(plan, ranks, pattern, strategy, seed)` returns the chosen NICs in
rank order (rank = GPU = NIC, as in the paper's fabric); `cross_zone_bytes`
says how many bytes per collective step then cross the ATSW layer.

Strategies:

- `packed`: the first `ranks` NICs in plan order (zone, rack, host, NIC).
- `random`: `ranks` NICs drawn at random (seeded), in random order.
- `mincut`: the paper's "minimum cut" scheduler. The job is a graph, one
  node per rank, an edge per pair that exchanges data, weighted by the
  bytes per step the pattern sends between them (`traffic_matrix`). The
  fewest zones that hold the job are used, the largest first; the ranks
  are split into one part per zone, of the zone's size (the last one what
  is left), by repeated two-way cuts with networkx's Kernighan-Lin
  bisection (`nx.community.kernighan_lin_bisection`, which keeps the sizes
  of the initial split while it swaps nodes to lower the cut weight). Each
  part then takes its zone's NICs in plan order, so neighbours in the
  pattern also share racks. For all-to-all every split of given sizes
  cuts the same bytes (each pair exchanges the same amount), so the graph
  (N^2 edges) is not built and ranks are split in order.

Patterns (bytes per step, `size` = each rank's buffer):

- `ring`: 2(N-1) steps; in each, rank i sends size/N to rank i+1 (mod N).
- `alltoall`: N-1 steps; in step k rank i sends size/N to rank i+k
  (mod N); per step on average, size/(N(N-1)) per ordered pair.
- `incast`: one step; every rank but 0 sends size to rank 0.
- `permutation`: one step; rank i sends size to rank perm(i), a random
  derangement (seeded).

The names of the patterns and strategies are in `controller.choices`.

Names defined here: `PlacementError`, `place`, `cross_zone_bytes`,
`traffic_matrix`, `permutation`.
"""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import numpy.typing as npt

from topologies.addressing import AddressPlan, NicPlan

from .choices import PATTERNS, STRATEGIES

__all__ = [
    "PlacementError",
    "cross_zone_bytes",
    "permutation",
    "place",
    "traffic_matrix",
]



class PlacementError(ValueError):
    """A job that cannot be placed as asked (too many ranks, unknown pattern or strategy)."""


def permutation(n: int, seed: int) -> npt.NDArray[np.int64]:
    """A random derangement of range(n) (no rank sends to itself), seeded; identity for n < 2."""
    if n < 2:
        return np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    while True:
        p = rng.permutation(n)
        if not np.any(p == np.arange(n)):
            return p.astype(np.int64)


def traffic_matrix(pattern: str, n: int, size: float, seed: int = 0
                   ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """(src ranks, dst ranks, bytes per step on average) of `pattern` over `n` ranks.

    All-to-all is returned as its N(N-1) pairs; callers with large N use
    `cross_zone_bytes`, which counts it without listing pairs.
    """
    _check_pattern(pattern)
    r = np.arange(n, dtype=np.int64)
    if n < 2:
        e = np.zeros(0, dtype=np.int64)
        return e, e, np.zeros(0)
    if pattern == "ring":
        return r, (r + 1) % n, np.full(n, size / n)
    if pattern == "incast":
        return r[1:], np.zeros(n - 1, dtype=np.int64), np.full(n - 1, float(size))
    if pattern == "permutation":
        return r, permutation(n, seed), np.full(n, float(size))
    src = np.repeat(r, n - 1)
    dst = (src + np.tile(np.arange(1, n), n)) % n
    return src, dst, np.full(len(src), size / (n * (n - 1)))


def _check_pattern(pattern: str) -> None:
    if pattern not in PATTERNS:
        raise PlacementError(f"unknown pattern {pattern!r} (choose from {', '.join(PATTERNS)})")


def _zones(plan: AddressPlan) -> dict[int, list[NicPlan]]:
    out: dict[int, list[NicPlan]] = {}
    hosts = {h.name: h for h in plan.hosts}
    for nic in plan.nics():
        out.setdefault(hosts[nic.host].zone, []).append(nic)
    return out


def _mincut_parts(pattern: str, n: int, sizes: list[int], seed: int) -> list[list[int]]:
    """Ranks split into parts of `sizes` (in order) with a small cut of the job's graph."""
    if len(sizes) == 1 or pattern == "alltoall":
        out, start = [], 0
        for s in sizes:
            out.append(list(range(start, start + s)))
            start += s
        return out
    src, dst, w = traffic_matrix(pattern, n, 1.0, seed)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for a, b, x in zip(src.tolist(), dst.tolist(), w.tolist(), strict=True):
        g.add_edge(a, b, weight=g.get_edge_data(a, b, {"weight": 0.0})["weight"] + x)
    parts: list[list[int]] = []
    rest = list(range(n))
    for s in sizes[:-1]:
        sub = g.subgraph(rest)
        first, second = set(rest[:s]), set(rest[s:])
        a, b = nx.community.kernighan_lin_bisection(sub, partition=(first, second),
                                                    weight="weight", seed=seed)
        # KL keeps the sizes; of two sides of the same size keep the one nearer the start.
        sides = sorted((x for x in (set(a), set(b)) if len(x) == s),
                       key=lambda x: -len(x & first))
        part = sorted(sides[0])
        parts.append(part)
        taken = set(part)
        rest = [x for x in rest if x not in taken]
    parts.append(rest)
    return parts


def place(plan: AddressPlan, ranks: int, pattern: str = "ring", strategy: str = "mincut",
          seed: int = 0) -> tuple[NicPlan, ...]:
    """The NICs of a job of `ranks` ranks, in rank order (module docstring)."""
    _check_pattern(pattern)
    if strategy not in STRATEGIES:
        raise PlacementError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    nics = plan.nics()
    if not 1 <= ranks <= len(nics):
        raise PlacementError(f"{ranks} ranks: {plan.name} has {len(nics)} NICs (one rank each)")
    if strategy == "packed":
        return nics[:ranks]
    if strategy == "random":
        return tuple(random.Random(seed).sample(list(nics), ranks))
    zones = _zones(plan)
    order = sorted(zones, key=lambda z: (-len(zones[z]), z))
    sizes, chosen = [], []
    left = ranks
    for z in order:
        if left == 0:
            break
        take = min(left, len(zones[z]))
        sizes.append(take)
        chosen.append(z)
        left -= take
    out: list[NicPlan | None] = [None] * ranks
    for z, part in zip(chosen, _mincut_parts(pattern, ranks, sizes, seed), strict=True):
        for rank, nic in zip(part, zones[z], strict=False):
            out[rank] = nic
    assert all(x is not None for x in out)
    return tuple(x for x in out if x is not None)


def cross_zone_bytes(plan: AddressPlan, placement: tuple[NicPlan, ...], pattern: str,
                     size: float, seed: int = 0) -> float:
    """Bytes per collective step (on average over its steps) that cross the ATSW layer."""
    _check_pattern(pattern)
    hosts = {h.name: h.zone for h in plan.hosts}
    zone = np.array([hosts[n.host] for n in placement], dtype=np.int64)
    n = len(zone)
    if n < 2:
        return 0.0
    if pattern == "alltoall":
        counts = np.bincount(zone)
        pairs_across = n * n - int(np.sum(counts.astype(np.int64) ** 2))
        return float(pairs_across * size / (n * (n - 1)))
    src, dst, w = traffic_matrix(pattern, n, size, seed)
    return float(np.sum(w[zone[src] != zone[dst]]))
