"""Collectives on the running fabric: ranks placed, jobs run by the agents, load read from the switches.

`run_collective(ctx, request)` is what `aizone run` (and the experiments)
ask the daemon for:

1. ranks: the NICs the request names (`hosts`, one rank per NIC or per
   host), or `ranks` NICs placed by `controller.placement` (`packed`,
   `mincut`, `random`);
2. one job per host (`traffic.collectives.build_jobs`), starting together
   a moment later (`start_at`, so every QP exists before data arrives);
3. the switches' `tx_port`, `drops` and traffic-manager counters read
   before and after, the jobs run by the agents meanwhile (progress is
   published as "job" events);
4. the result: nccl-tests' time, algbw and busbw and the transport's
   counters (`traffic.report.summarize`), the bytes each fabric link
   carried during the job with the max/mean imbalance per tier and
   direction, drops by reason, PFC pauses sent by the switches, and
   whether the run was CPU-bound (an agent at a full core, or frames its
   kernel socket dropped: the emulator, not the emulated fabric, was the
   limit);
5. next to what the switches counted, what the routes predict
   (`predict_link_bytes`, with the fabric's mode, before the job runs):
   frame bytes of the job's data per link and direction
   (`up_predicted_bytes`, `down_predicted_bytes`) and each tier's
   predicted max, mean and max/mean (`tiers[...]["predicted"]`) - the flow
   model's numbers for this job (`model.run`, `docs/model.md`). The
   counters also hold the ACKs going back and the controller's link probes
   (60 B per port every `DaemonConfig.probe_interval`, 0.2 s) over
   `counted_seconds`, the time from the
   first counter reading to the last.

The RC ACK timeout (`ack_timeout_ms` of the request, else
`fabric_ack_timeout_ms`) is the fabric's: the transport's default (NCCL's
`NCCL_IB_TIMEOUT=15`, 134 ms) is made for 400 G links, and at the emulated
rates a few full switch queues take longer than that to drain, so packets
that are only waiting would time out and be sent again (go-back-N) into
the congestion that delayed them. In a lossless fabric a packet may also
wait behind everything in flight towards its destination (PFC holds it
upstream instead of dropping it): the job's largest fan-in (`job_fan_in`,
the QPs that send to one address in one step) times the RC window, at the
slowest tier's rate, with a factor of two for the emulator's own delays.

Names defined here: `RunRequest`, `JobContext`, `run_collective`,
`PATTERN_ALIASES`, `link_loads`, `predict_link_bytes`, `fabric_ack_timeout_ms`,
`fabric_job_ack_timeout_ms`, `fabric_transport`, `job_fan_in`, `FRAME_BYTES`, `machine_cpu`, `proc_stat_cpu`,
`MACHINE_BUSY`, `tm_delta`, `pfc_delta`, `pfc_cells`, `PFC_COUNTERS`.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from topologies.addressing import AddressPlan, NicPlan
from topologies.mtu import ROCE_FRAME
from traffic.collectives import Rank, build_jobs
from traffic.connections import message_posts, write_frame_bytes
from traffic.errors import TrafficError
from traffic.report import summarize
from traffic.schema import Admission, Job, Transport

from .hostagents import HostAgents
from .paths import PathError, predict_path
from .routes import compute_all
from .sessions import FabricSessions
from .stats import DROP_REASONS, TIER_DIRECTIONS

__all__ = ["FRAME_BYTES", "MACHINE_BUSY", "PATTERN_ALIASES", "JobContext", "RunRequest",
           "fabric_ack_timeout_ms", "fabric_job_ack_timeout_ms", "fabric_transport", "job_fan_in",
           "link_loads",
           "machine_cpu", "path_queues", "predict_link_bytes", "proc_stat_cpu",
           "pfc_cells", "pfc_delta",
           "run_collective", "tm_delta", "PFC_COUNTERS"]

# The share of the machine's CPU time above which a job is reported CPU-bound: the
# switches and agents it emulates competed for the cores.
MACHINE_BUSY = 0.9


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU time of the whole machine so far, in clock ticks (/proc/stat)."""
    return proc_stat_cpu(Path("/proc/stat").read_text())


def proc_stat_cpu(text: str) -> tuple[float, float]:
    """(busy, total) clock ticks of all CPUs from the text of a machine's /proc/stat (its
    first line, "cpu ...", is enough)."""
    values = [float(v) for v in text.splitlines()[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0.0)
    total = sum(values[:8])
    return total - idle, total

# A full RoCEv2 data frame at the default links' path MTU (`topologies.mtu.ROCE_FRAME`);
# a fabric's own is `AddressPlan.roce_frame`.
FRAME_BYTES = ROCE_FRAME
# IB's local ACK timeout is 4.096 us x 2^k; NCCL's default k (NCCL_IB_TIMEOUT) is 15.
_IB_TIMEOUT_UNIT_S, _NCCL_DEFAULT_K = 4.096e-6, 15

# `ring` is the model's and the placement's name for the ring AllReduce.
PATTERN_ALIASES = {"ring": "allreduce", "allreduce": "allreduce", "alltoall": "alltoall",
                   "incast": "incast", "permutation": "permutation"}
_PLACEMENT_PATTERN = {"allreduce": "ring", "alltoall": "alltoall", "incast": "incast",
                      "permutation": "permutation"}
_ids = itertools.count(1)


class RunRequest(BaseModel):
    """What `aizone run` asks for (also the API's `POST /run` body)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: Literal["allreduce", "ring", "alltoall", "incast", "permutation"]
    ranks: int | None = Field(default=None, ge=2, description="NICs to place the job on")
    hosts: list[str] | None = Field(default=None, description="these hosts, in rank order")
    per: Literal["nic", "host"] = Field(default="nic",
                                        description="with hosts: a rank per NIC or per host")
    placement: Literal["packed", "mincut", "random"] = "packed"
    size: int = Field(default=1 << 20, ge=0, le=1 << 34, description="bytes per rank")
    qps: int = Field(default=1, ge=1, le=255)
    strategy: Literal["rr", "split", "round_robin"] = "rr"
    message_size: int | None = Field(default=None, ge=1,
                                     description="the library's message size (default: whole "
                                                 "chunks)")
    admission: bool = False
    cls: Literal["data", "control", "default"] = "data"
    sport_per_qp: bool = False
    seed: int = 0
    timeout: float = Field(default=600, gt=0, le=7200)
    ack_timeout_ms: float | None = Field(
        default=None, gt=0, le=600_000,
        description="the RC ACK timeout (default: the fabric's, `fabric_ack_timeout_ms`)")


@dataclass
class JobContext:
    """What a collective needs of the daemon."""

    plan: AddressPlan
    sessions: FabricSessions
    agents: HostAgents
    publish: Callable[[str, dict[str, Any]], object]
    tm_stats: Callable[[str], dict[str, Any] | None] | None = None
    program_pfc: bool = False  # the programs' PFC is on: count its frames too
    rates: dict[str, float] | None = None
    failed: frozenset[str] = frozenset()
    queues: dict[str, int] | None = None  # switch queue length (packets) per link tier
    mode: str | None = None  # the routing mode: the prediction follows its routes


def path_queues(atsw: bool) -> int:
    """The switch queues on a fabric's longest path: RTSW, CTSW, RTSW (3), or through the
    ATSW layer RTSW, CTSW, ATSW, CTSW, RTSW (5)."""
    return 5 if atsw else 3


def fabric_ack_timeout_ms(rates: dict[str, float], queues: dict[str, int], hops: int,
                          in_flight: int = 0, rtt_ms: float = 0.0,
                          frame_bytes: int = FRAME_BYTES) -> float:
    """The ACK timeout for a fabric: the smallest 4.096 us x 2^k (k >= 15) above the time
    `hops` full switch queues of full frames take to drain at the slowest tier's rate, and
    above twice the time `in_flight` full frames (all a job can have in flight towards one
    NIC, which PFC holds rather than drops) take at that rate, plus `rtt_ms`, the round trip
    the topology's scaled latency adds (`AddressPlan.delayed_rtt_s`): an ACK comes back no
    sooner. `frame_bytes`: a full frame at the links' path MTU (`AddressPlan.roce_frame`)."""
    slowest = min(rates.values())
    frame_s = frame_bytes * 8 / (slowest * 1e6)
    worst = max(hops * max(queues.values()), 2 * in_flight) * frame_s + rtt_ms / 1e3
    k = max(_NCCL_DEFAULT_K, math.ceil(math.log2(worst / _IB_TIMEOUT_UNIT_S)))
    return _IB_TIMEOUT_UNIT_S * 1e3 * 2**k


def fabric_transport(plan: AddressPlan, ack_timeout_ms: float | None = None) -> Transport:
    """The RC transport of the fabric's NICs: their active path MTU, which follows from the
    links' MTU (`AddressPlan.path_mtu`), and `ack_timeout_ms` when given (None or 0: the
    transport's default)."""
    if ack_timeout_ms:
        return Transport(path_mtu=plan.path_mtu, ack_timeout_ms=ack_timeout_ms)
    return Transport(path_mtu=plan.path_mtu)


def job_fan_in(jobs: dict[str, Job]) -> int:
    """The most QPs of `jobs` that send to one address in the same step (at least 1)."""
    senders: dict[tuple[int, str], int] = {}
    for job in jobs.values():
        conns = {c.id: c for c in job.connections}
        for i, step in enumerate(job.steps):
            for send in step.sends:
                conn = conns[send.conn]
                key = (i, conn.peer_ip)
                senders[key] = senders.get(key, 0) + (send.qps or len(conn.qps))
    return max(senders.values(), default=1)


def fabric_job_ack_timeout_ms(ctx: JobContext, in_flight: int = 0) -> float | None:
    """`fabric_ack_timeout_ms` for the running fabric (None: its rates or queues unknown)."""
    if not ctx.rates or not ctx.queues:
        return None
    tiers = [t for t in ctx.queues if t in ctx.rates]
    hops = path_queues(any(s.role == "atsw" for s in ctx.plan.switches))
    return fabric_ack_timeout_ms({t: ctx.rates[t] for t in tiers},
                                 {t: ctx.queues[t] for t in tiers}, hops, in_flight,
                                 rtt_ms=ctx.plan.delayed_rtt_s * 1e3,
                                 frame_bytes=ctx.plan.roce_frame)


class RunError(ValueError):
    """A collective that cannot be run as asked (unknown host, too many ranks)."""


def _ranks(plan: AddressPlan, req: RunRequest) -> list[NicPlan]:
    from .placement import PlacementError, place

    if req.hosts:
        nics: list[NicPlan] = []
        for name in req.hosts:
            try:
                h = plan.host(name)
            except KeyError:
                raise RunError(f"no host named {name!r} in fabric {plan.name}") from None
            nics += list(h.nics) if req.per == "nic" else [h.nics[0]]
        if req.ranks is not None and req.ranks != len(nics):
            raise RunError(f"{len(nics)} NICs on the hosts given, but ranks={req.ranks}")
        return nics
    n = req.ranks if req.ranks is not None else len(plan.nics())
    try:
        return list(place(plan, n, _PLACEMENT_PATTERN[PATTERN_ALIASES[req.pattern]],
                          req.placement, req.seed))
    except PlacementError as exc:
        raise RunError(str(exc)) from None


async def _read_tx(ctx: JobContext) -> dict[str, dict[int, tuple[int, int]]]:
    names = [s.name for s in ctx.plan.switches]
    reads = await asyncio.gather(*(ctx.sessions.read_counters(
        n, "FabricEgress.counters.tx_port", [p.port for p in ctx.plan.switch(n).ports])
        for n in names))
    return {n: {i: (c.packets, c.bytes) for i, c in cells.items()}
            for n, cells in zip(names, reads, strict=True)}


async def _read_drops(ctx: JobContext) -> dict[str, dict[int, int]]:
    names = [s.name for s in ctx.plan.switches]
    reads = await asyncio.gather(*(ctx.sessions.read_counters(
        n, "FabricIngress.counters.drops", DROP_REASONS) for n in names))
    return {n: {i: c.packets for i, c in cells.items()} for n, cells in zip(names, reads,
                                                                          strict=True)}


async def _read_tm(ctx: JobContext) -> dict[str, dict[str, Any]]:
    if ctx.tm_stats is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for s in ctx.plan.switches:
        got = await asyncio.to_thread(ctx.tm_stats, s.name)
        if got is not None:
            out[s.name] = got
    return out


def predict_link_bytes(plan: AddressPlan, mode: str, jobs: dict[str, Job],
                       failed: frozenset[str] = frozenset(), *, wire: bool = True,
                       from_nic: bool = False) -> dict[tuple[str, str], int]:
    """Bytes per (link id, "up"|"down") that the jobs' data puts on every link, worked out.

    Each send is cut into WRITEs as the agents post them
    (`traffic.connections.message_posts`: messages over QPs, the `rr` turn
    carried over per connection) and each (connection, QP) is followed
    through the entries the controller installs for `mode`
    (`controller.routes.compute_all`) with the programs' hash
    (`controller.paths.predict_path`): the flow model's rule (`model.run`)
    on the job's own connections. `wire`: frame bytes, headers included
    (`write_frame_bytes`), which is what `tx_port` counts of the data;
    else payload bytes. ACKs and the controller's probes are not in it. `from_nic`: also the
    sending NIC's own cable into its RTSW ("up"), which no switch sends on and `tx_port`
    does not count.
    """
    entries = {k: v.install_order() for k, v in compute_all(plan, mode, failed).items()}
    lower = {lk.id: lk.a for lk in plan.links}
    into = {(lk.b, lk.b_port): lk.id for lk in plan.links if lk.tier == "host"}
    out: Counter[tuple[str, str]] = Counter()
    for job in jobs.values():
        conns = {c.id: c for c in job.connections}
        turn: Counter[str] = Counter()
        mtu = job.transport.path_mtu
        for step in job.steps:
            for send in step.sends:
                conn = conns[send.conn]
                qps = conn.qps[:send.qps] if send.qps else conn.qps
                posts = message_posts(send.bytes, len(qps), send.strategy, send.message_bytes,
                                      turn[conn.id])
                turn[conn.id] += len(posts)
                per_qp: Counter[int] = Counter()
                for q, length in posts:
                    per_qp[q] += write_frame_bytes(length, mtu) if wire else length
                for q, nbytes in sorted(per_qp.items()):
                    try:
                        path = predict_path(plan, entries, conn.nic, conn.peer_ip,
                                            sport=qps[q].sport, qp=qps[q].remote)
                    except PathError:
                        continue  # no route: nothing to predict on any link
                    if from_nic and path.hops:
                        first = path.hops[0]
                        out[(into[(first.switch, first.ingress_port)], "up")] += nbytes
                    for hop in path.hops:
                        way = "up" if lower.get(hop.link) == hop.switch else "down"
                        out[(hop.link, way)] += nbytes
    return dict(out)


def _tier_summary(values: dict[str, list[int]]) -> dict[str, dict[str, Any]]:
    """Per tier label: links, mean, max, min and max/mean of the bytes listed."""
    summary = {}
    for label, vals in sorted(values.items()):
        mean = sum(vals) / len(vals)
        summary[label] = {"links": len(vals), "mean_bytes": round(mean, 1),
                          "max_bytes": max(vals), "min_bytes": min(vals),
                          "imbalance": round(max(vals) / mean, 4) if mean > 0 else None}
    return summary


def link_loads(plan: AddressPlan, before: dict[str, dict[int, tuple[int, int]]],
               after: dict[str, dict[int, tuple[int, int]]], seconds: float,
               rates: dict[str, float] | None = None,
               failed: frozenset[str] = frozenset(),
               predicted: dict[tuple[str, str], int] | None = None) -> dict[str, Any]:
    """Bytes each fabric link carried per direction between two readings, and per-tier imbalance.

    Links in `failed` are listed but left out of the imbalance: a dead link
    idles on purpose. With `predicted` (`predict_link_bytes`), every link
    also shows the predicted bytes (`up_predicted_bytes`, ...) and every
    tier the predicted max, mean, min and max/mean (`predicted`).
    """
    links = []
    tiers: dict[str, list[int]] = {}
    want: dict[str, list[int]] = {}
    for lk in plan.links:
        if lk.tier == "host":
            continue
        row: dict[str, Any] = {"id": lk.id, "tier": lk.tier, "a": lk.a, "b": lk.b}
        for key, (sw, port) in (("up", (lk.a, lk.a_port)), ("down", (lk.b, lk.b_port))):
            b0 = before.get(sw, {}).get(port, (0, 0))
            b1 = after.get(sw, {}).get(port, (0, 0))
            nbytes = max(0, b1[1] - b0[1])
            row[f"{key}_bytes"] = nbytes
            row[f"{key}_packets"] = max(0, b1[0] - b0[0])
            rate = (rates or {}).get(lk.tier)
            row[f"{key}_util"] = (round(nbytes * 8 / seconds / (rate * 1e6), 4)
                                  if rate and seconds > 0 else None)
            label = TIER_DIRECTIONS[lk.tier].replace(" up", f" {key}")
            if predicted is not None:
                row[f"{key}_predicted_bytes"] = predicted.get((lk.id, key), 0)
            if lk.id not in failed:
                tiers.setdefault(label, []).append(nbytes)
                if predicted is not None:
                    want.setdefault(label, []).append(row[f"{key}_predicted_bytes"])
        links.append(row)
    summary = _tier_summary(tiers)
    for label, pred in _tier_summary(want).items():
        summary[label]["predicted"] = {k: pred[k] for k in ("mean_bytes", "max_bytes",
                                                             "min_bytes", "imbalance")}
    return {"links": links, "tiers": summary}


def _step_seconds(reports: dict[str, dict[str, Any]]) -> list[float]:
    """Per step, the time from its first start to its last end over every host."""
    spans: dict[int, tuple[float, float]] = {}
    for rep in reports.values():
        for st in rep.get("steps", []):
            lo, hi = spans.get(st["index"], (st["start"], st["end"]))
            spans[st["index"]] = (min(lo, st["start"]), max(hi, st["end"]))
    return [round(hi - lo, 6) for _, (lo, hi) in sorted(spans.items())]


# The programs' own PFC counts (p4/include/control/pfc.p4), per (port, class) cell: the
# frames a switch sent out of a port (XOFF, refreshes and XON) and those it received.
PFC_COUNTERS = {"pauses_sent": "FabricEgress.pfc.pfc_tx",
                "pauses_received": "FabricEgress.pfc.pfc_rx"}
CLASSES = 8


def pfc_cells(plan: AddressPlan, switch: str) -> list[int]:
    """The (port, class) cells of `switch`'s PFC counters: port * 8 + class."""
    return [p.port * CLASSES + tc for p in plan.switch(switch).ports for tc in range(CLASSES)]


def pfc_delta(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]
              ) -> dict[str, int]:
    """PFC frames the programs sent and received between two readings (`PFC_COUNTERS`)."""
    return {key: sum(after[sw].get(key, 0) - before.get(sw, {}).get(key, 0) for sw in after)
            for key in PFC_COUNTERS}


async def _read_pfc(ctx: JobContext) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    if not ctx.program_pfc:  # the programs' PFC is off: nothing to read
        return out
    for s in ctx.plan.switches:
        cells = pfc_cells(ctx.plan, s.name)
        out[s.name] = {}
        for key, counter in PFC_COUNTERS.items():
            got = await ctx.sessions.read_counters(s.name, counter, cells)
            out[s.name][key] = sum(c.packets for c in got.values())
    return out


def tm_delta(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
              ) -> dict[str, int]:
    """PFC pauses sent and received and tail drops, summed over every switch queue."""
    out = {"pauses_sent": 0, "pauses_received": 0, "tm_dropped": 0}
    for sw, queues in after.items():
        for key, q in queues.items():
            old = before.get(sw, {}).get(key, {})
            out["pauses_sent"] += q.get("pauses_sent", 0) - old.get("pauses_sent", 0)
            out["pauses_received"] += q.get("pauses_received", 0) - old.get("pauses_received", 0)
            out["tm_dropped"] += q.get("dropped", 0) - old.get("dropped", 0)
    return out


async def run_collective(ctx: JobContext, req: RunRequest) -> dict[str, Any]:
    """Run one collective (see the module docstring); raises `RunError` for a bad request."""
    pattern = PATTERN_ALIASES[req.pattern]
    nics = _ranks(ctx.plan, req)
    ranks = [Rank(host=n.host, nic=n.intf, ip=n.ip) for n in nics]
    job_id = next(_ids)

    def build(transport: Transport | None) -> dict[str, Job]:
        return build_jobs(pattern, ranks, req.size, req.qps, req.strategy,
                          message_bytes=req.message_size, cls=req.cls,
                          admission=Admission() if req.admission else None,
                          transport=transport, sport_per_qp=req.sport_per_qp,
                          name=f"job{job_id}-{pattern}", start_at=time.time() + 1.0)

    try:
        jobs = build(fabric_transport(ctx.plan))
        ack_ms = req.ack_timeout_ms
        if ack_ms is None:  # the fabric's, for what this job can have in flight
            ack_ms = fabric_job_ack_timeout_ms(ctx, job_fan_in(jobs) * Transport().window)
        if ack_ms:
            jobs = build(fabric_transport(ctx.plan, ack_ms))
    except (ValueError, TrafficError) as exc:
        raise RunError(str(exc)) from None
    predicted = (await asyncio.to_thread(predict_link_bytes, ctx.plan, ctx.mode, jobs, ctx.failed)
                 if ctx.mode else None)
    hosts = sorted(jobs)
    ctx.publish("job", {"id": job_id, "phase": "start", "pattern": pattern, "ranks": len(ranks),
                        "size": req.size, "qps": req.qps, "strategy": req.strategy,
                        "hosts": hosts})
    c0 = time.monotonic()
    tx0, drops0, tm0 = await _read_tx(ctx), await _read_drops(ctx), await _read_tm(ctx)
    pfc0 = await _read_pfc(ctx)
    t0, cpu0 = time.monotonic(), machine_cpu()

    async def progress() -> None:
        """Publish the job's progress (its slowest rank's step) every 0.5 s until cancelled."""
        while True:
            await asyncio.sleep(0.5)
            st = await ctx.agents.status(hosts)
            steps = [s.get("step") for s in st.values() if s.get("step") is not None]
            total = max((s.get("steps") or 0 for s in st.values()), default=0)
            ctx.publish("job", {"id": job_id, "phase": "running", "elapsed": round(
                time.monotonic() - t0, 2), "step": min(steps) if steps else None,
                "steps": total})

    watcher = asyncio.create_task(progress())
    try:
        reports = await ctx.agents.run_all(jobs, req.timeout)
    except BaseException as exc:
        ctx.publish("job", {"id": job_id, "phase": "failed", "error": str(exc)})
        raise
    finally:
        watcher.cancel()
    seconds = time.monotonic() - t0
    cpu1 = machine_cpu()
    busy = (cpu1[0] - cpu0[0]) / (cpu1[1] - cpu0[1]) if cpu1[1] > cpu0[1] else 0.0
    await asyncio.sleep(0.2)  # the last ACKs have crossed the fabric
    tx1, drops1, tm1 = await _read_tx(ctx), await _read_drops(ctx), await _read_tm(ctx)
    pfc1 = await _read_pfc(ctx)
    counted = time.monotonic() - c0
    result = summarize(pattern, ranks, req.size, reports, jobs=jobs).model_dump()
    loads = link_loads(ctx.plan, tx0, tx1, seconds, ctx.rates, ctx.failed, predicted)
    drops = {sw: {DROP_REASONS[i]: drops1[sw].get(i, 0) - drops0.get(sw, {}).get(i, 0)
                  for i in DROP_REASONS
                  if drops1[sw].get(i, 0) - drops0.get(sw, {}).get(i, 0)}
             for sw in drops1}
    tm = tm_delta(tm0, tm1)
    for key, n in pfc_delta(pfc0, pfc1).items():  # the programs' PFC, both targets
        tm[key] += n
    cpu_reasons = []
    if busy >= MACHINE_BUSY:
        cpu_reasons.append(f"the machine's CPUs were {busy:.0%} busy (the switches and agents "
                           f"competed for them)")
    if result["cpu_bound"]:
        cpu_reasons.append(f"agent(s) at a full core: {', '.join(result['cpu_bound_hosts'])}")
    if result["kernel_drops"]:
        cpu_reasons.append(f"{result['kernel_drops']} frame(s) dropped by the agents' sockets")
    out = {"id": job_id, "request": req.model_dump(), "pattern": pattern,
           "ranks_nics": [n.intf for n in nics], "wall_seconds": round(seconds, 4),
           "counted_seconds": round(counted, 4),
           "ack_timeout_ms": ack_ms if ack_ms else Transport().ack_timeout_ms,
           "path_mtu": ctx.plan.path_mtu,
           "machine_cpu": round(busy, 3),
           "step_seconds": _step_seconds(reports),
           "result": result, "links": loads["links"], "tiers": loads["tiers"],
           "switch_drops": {k: v for k, v in drops.items() if v}, "tm": tm,
           "cpu_bound": bool(cpu_reasons), "cpu_bound_reasons": cpu_reasons}
    ctx.publish("job", {"id": job_id, "phase": "done", "time_s": result["time_s"],
                        "step_seconds": out["step_seconds"],
                        "busbw_gbps": result["busbw_gbps"], "tiers": loads["tiers"],
                        "cpu_bound": out["cpu_bound"]})
    return out
