"""Which NICs an experiment's job runs on, and in what rank order.

The daemon's `POST /run` takes ranks as hosts in rank order (`hosts`, a
rank per NIC or per host) or as a number of NICs placed by
`controller.placement` (`packed`, `mincut`, `random` with a seed). The
experiments need rings whose every hop crosses the fabric (the traffic the
paper's RTSW uplinks carry: a large job's ring hops go from rack to rack),
so:

- `alternating(plan, racks)`: every NIC of the given racks, taking one
  from each rack in turn (h1-eth0, h3-eth0, h1-eth1, h3-eth1, ... for
  racks 1 and 2 of `ai_zone_small`): a ring whose every hop crosses racks
  and in which each rack's NICs all send up at once;
- `rail_ring(plan)` / `rail_hosts(plan, racks, slots)`: on a fabric of
  one-NIC hosts, hosts ordered so that host k of a rack sends to host k
  of the next rack (NCCL's rail-aligned rings): every hop crosses racks
  and, with whole racks, each rack's NICs send to destinations in
  different slices;
- `racks_of(plan, nics)`: the RTSWs whose racks hold the given NICs;
- `ring_hops(plan, nics)`: (source RTSW, destination RTSW, destination's
  RTSW port) of each ring hop, to say which slices a job's traffic uses.

Names defined here: `alternating`, `rail_ring`, `rail_hosts`, `racks_of`,
`ring_hops`, `placed`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from controller.placement import place
from topologies.addressing import AddressPlan, NicPlan

__all__ = ["alternating", "placed", "racks_of", "rail_hosts", "rail_ring", "ring_hops"]


def placed(plan: AddressPlan, ranks: int, pattern: str, placement: str, seed: int
           ) -> list[NicPlan]:
    """The NICs the daemon will place the job on (the placement's own code)."""
    return list(place(plan, ranks, pattern, placement, seed))


def _racks(plan: AddressPlan) -> list[list[str]]:
    """Hosts per rack (by RTSW, in plan order), each rack's hosts in port order."""
    by: dict[str, list[tuple[int, str]]] = {}
    for h in plan.hosts:
        n = h.nics[0]
        by.setdefault(n.switch, []).append((n.switch_port, h.name))
    return [[name for _, name in sorted(v)] for v in by.values()]


def _rack_nics(plan: AddressPlan) -> list[list[str]]:
    """NIC interfaces per rack (by RTSW, in plan order), each rack's in RTSW port order."""
    by: dict[str, list[tuple[int, str]]] = {}
    for n in plan.nics():
        by.setdefault(n.switch, []).append((n.switch_port, n.intf))
    return [[intf for _, intf in sorted(v)] for v in by.values()]


def alternating(plan: AddressPlan, racks: Sequence[int]) -> list[str]:
    """Every NIC of racks `racks` (0-based), one from each rack in turn."""
    rows = [_rack_nics(plan)[r] for r in racks]
    out: list[str] = []
    for j in range(max(len(r) for r in rows)):
        out += [r[j] for r in rows if j < len(r)]
    return out


def rail_hosts(plan: AddressPlan, racks: Sequence[int], slots: Sequence[Sequence[int]]
               ) -> list[str]:
    """Hosts `slots[i]` (0-based host positions) of rack `racks[i]` (0-based), rail order.

    The order takes slot position j of every listed rack in turn, then
    position j + 1, ...: host j of rack a is followed by host j of rack b.
    """
    all_racks = _racks(plan)
    rows = [[all_racks[r][s] for s in sl] for r, sl in zip(racks, slots, strict=True)]
    out: list[str] = []
    for j in range(max(len(r) for r in rows)):
        out += [r[j] for r in rows if j < len(r)]
    return out


def rail_ring(plan: AddressPlan) -> list[str]:
    """Every host, rail-aligned: host 1 of each rack, then host 2 of each rack, ..."""
    racks = _racks(plan)
    return rail_hosts(plan, list(range(len(racks))), [list(range(len(r))) for r in racks])


def racks_of(plan: AddressPlan, nics: Iterable[str]) -> list[str]:
    """RTSWs (in plan order) whose racks hold any of the NIC interfaces."""
    wanted = set(nics)
    return sorted({n.switch for n in plan.nics() if n.intf in wanted},
                  key=lambda s: [x.name for x in plan.switches].index(s))


def ring_hops(plan: AddressPlan, nics: Sequence[str]) -> list[tuple[str, str, int]]:
    """(source RTSW, destination RTSW, destination's RTSW port) of each ring hop."""
    by = {n.intf: n for n in plan.nics()}
    seq = [by[x] for x in nics]
    return [(a.switch, b.switch, b.switch_port) for a, b in zip(seq, seq[1:] + seq[:1],
                                                               strict=True)]
