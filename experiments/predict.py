"""What the switches' hash does with one experiment's job, worked out before it runs.

`link_bytes(plan, mode, collective, failed)` builds the job exactly as the
run does (`traffic.collectives.build_jobs`: the connections, UDP source
ports and QP numbers of `traffic.connections`, which the flow model uses
too) and asks `controller.jobs.predict_link_bytes`, what `aizone run`
reports beside its counters, for the payload bytes per (link id,
"up"|"down"): every send's bytes spread over its QPs as the agents do and
each (connection, QP) followed through the entries the controller
installs for `mode` with the P4 programs' hash - what the switches'
`tx_port` counters should show less headers and ACKs. The experiments put its
uplink max/mean next to the measured one, so a table says whether a
point's imbalance is the hash's (and which way this job's flows fell) or
the emulator's.

`hash_note(result, **params)` is the sentence a finding adds: the
predicted and the measured max/mean of a point (metrics `predicted_up`,
`up_imbalance`), and whether they agree (within 10%: the measured bytes
include headers and the ACKs coming back, which even the load out a little).

Names defined here: `link_bytes`, `predicted_imbalance`, `hash_note`.
"""

from __future__ import annotations

from collections.abc import Iterable

from controller.jobs import predict_link_bytes
from topologies.addressing import AddressPlan
from traffic.collectives import Rank, build_jobs

from .collective import Collective
from .schema import ExperimentResult, Param
from .stats import imbalance

__all__ = ["hash_note", "link_bytes", "predicted_imbalance"]


def link_bytes(plan: AddressPlan, mode: str, c: Collective,
               failed: frozenset[str] = frozenset()) -> dict[tuple[str, str], int]:
    """Payload bytes per (link id, direction) the job sends (see the module docstring)."""
    by = {n.intf: n for n in plan.nics()}
    ranks = [Rank(host=by[x].host, nic=x, ip=by[x].ip) for x in c.nics]
    jobs = build_jobs(c.pattern, ranks, c.size, c.qps, c.strategy,
                      message_bytes=c.message_size, sport_per_qp=c.sport_per_qp,
                      name="predict")
    return predict_link_bytes(plan, mode, jobs, failed, wire=False)


def predicted_imbalance(plan: AddressPlan, loads: dict[tuple[str, str], int], tier: str,
                        way: str, racks: Iterable[str]) -> float | None:
    """max/mean of the predicted bytes on `tier` links of the given RTSWs, one direction."""
    wanted = set(racks)
    values = [loads.get((lk.id, way), 0) for lk in plan.links
              if lk.tier == tier and lk.a in wanted]
    return imbalance(values)


def hash_note(result: ExperimentResult, **params: Param) -> str:
    """The hash's uplink max/mean for a point's job next to the measured one (one sentence)."""
    got, want = result.spread("up_imbalance", **params), result.spread("predicted_up", **params)
    if got is None or want is None:
        return ""
    what = ", ".join(str(v) for v in params.values())
    close = abs(got.mean - want.mean) <= 0.1 * want.mean
    verdict = ("as the hash places this job's flows" if close
               else "not what the hash predicts: the emulator differs from the routes")
    return (f"{what}: the installed routes and the programs' hash predict uplink max/mean "
            f"{want.mean:.2f} for this job, measured {got.mean:.2f} ({verdict}).")
