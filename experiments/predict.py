"""What the switches' hash does with one experiment's job, worked out before it runs.

`link_bytes(plan, mode, collective, failed)` builds the job exactly as the
run does (`traffic.collectives.build_jobs`: the same connections, UDP
source ports and QP numbers), spreads every send's bytes over its QPs as
the agents do (`traffic.runner`: messages of `message_size`, whole on the
next QP for `rr` with the turn carried over, one chunk per QP for
`split`), and follows each (connection, QP) through the entries the
controller installs for `mode` (`controller.routes.compute_all`) with the
P4 programs' hash (`controller.paths.predict_path`). It returns the
payload bytes per (link id, "up"|"down"): what the switches' `tx_port`
counters should show less headers and ACKs. The experiments put its
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

from collections import Counter
from collections.abc import Iterable

from controller.paths import predict_path
from controller.routes import compute_all
from topologies.addressing import AddressPlan
from traffic.collectives import Rank, build_jobs
from traffic.qpscale import split

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
    entries = {k: v.install_order() for k, v in compute_all(plan, mode, failed).items()}
    lower = {lk.id: lk.a for lk in plan.links}
    out: Counter[tuple[str, str]] = Counter()
    for job in jobs.values():
        conns = {x.id: x for x in job.connections}
        turn: Counter[str] = Counter()
        for step in job.steps:
            for send in step.sends:
                conn = conns[send.conn]
                qps = conn.qps[:send.qps] if send.qps else conn.qps
                size = send.message_bytes or send.bytes
                per_qp: Counter[int] = Counter()
                left = send.bytes
                while left > 0:
                    length = min(size, left)
                    left -= length
                    if send.strategy == "split":
                        for p in split(1, length, len(qps)):
                            per_qp[p.qp_index] += p.length
                    else:
                        per_qp[turn[conn.id] % len(qps)] += length
                        turn[conn.id] += 1
                for qi, nbytes in per_qp.items():
                    path = predict_path(plan, entries, conn.nic, conn.peer_ip,
                                        sport=qps[qi].sport, qp=qps[qi].remote)
                    for hop in path.hops:
                        way = "up" if lower.get(hop.link) == hop.switch else "down"
                        out[(hop.link, way)] += nbytes
    return dict(out)


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
