"""What each link of a fabric is expected to carry: the loads that place the emulation on servers.

`expected_link_mbps(plan, mode)` runs the rule the controller predicts
`aizone run` with (`controller.jobs.predict_link_bytes`: the flow model's
rule on the agents' own connections, the same numbers `aizone model`
gives) on a reference job: a ring AllReduce over every NIC, packed, 8 QPs
round-robin, the experiments' collective over the whole fabric. Its bytes
per link and direction become a rate: a bandwidth-bound collective lasts
as long as its busiest link direction needs at that link's rate, and
every link carries its bytes over that time. A link's load is its two
directions together, in Mb/s; a link the job does not use has none. The
sending NICs' own cables count too (`from_nic`): a switch spends CPU on
every frame it takes in.

`topologies.serverplacement.place_on_servers(..., loads=...)` cuts the
least loaded links between servers and balances the switches' loads
(frames per second, up to the frame size) from these figures.

Names defined here: `expected_link_mbps`, `REFERENCE_QPS`, `REFERENCE_BYTES`.
"""

from __future__ import annotations

from collections import Counter

from topologies.addressing import AddressPlan
from traffic.collectives import Rank, build_jobs

from .jobs import predict_link_bytes
from .placement import place

__all__ = ["REFERENCE_BYTES", "REFERENCE_QPS", "expected_link_mbps"]

REFERENCE_QPS = 8  # the experiments' most spread case (E-ECMP's point)
REFERENCE_BYTES = 1 << 20  # per rank: only the shares matter, the bytes cancel out


def expected_link_mbps(plan: AddressPlan, mode: str) -> dict[str, float]:
    """link id -> expected Mb/s, both ways together, while the reference job runs at the
    fabric's rates (see the module docstring); a link it does not use is absent."""
    nics = place(plan, len(plan.nics()), "ring", "packed")
    ranks = [Rank(host=n.host, nic=n.intf, ip=n.ip) for n in nics]
    jobs = build_jobs("allreduce", ranks, REFERENCE_BYTES, REFERENCE_QPS, "rr",
                      name="placement-reference")
    per_way = predict_link_bytes(plan, mode, jobs, from_nic=True)
    rate = {lk.id: lk.shape.rate_mbps for lk in plan.links}
    # The job's time: its busiest direction of any link at that link's rate (s).
    seconds = max((b * 8 / (rate[link] * 1e6) for (link, _way), b in per_way.items()),
                  default=0.0)
    if seconds <= 0:
        return {}
    both: Counter[str] = Counter()
    for (link, _way), nbytes in per_way.items():
        both[link] += nbytes
    return {link: nbytes * 8 / seconds / 1e6 for link, nbytes in sorted(both.items())}
