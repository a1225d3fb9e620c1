"""One collective of an experiment: what it is (`Collective`) and how it is run.

A `Collective` is what `POST /api/v1/run` takes (`controller.jobs.RunRequest`)
plus two things the experiments need and the request does not carry yet:

- `nics`: the ranks as NIC interfaces in rank order (the request takes
  hosts, whose NICs then come in a row, or a number of NICs placed by
  `controller.placement`);
- `ack_timeout_ms`: the RC local ACK timeout; None (the default) is the
  fabric's, as `aizone run` sets it: the controller's rule
  (`controller.jobs.fabric_ack_timeout_ms`) over the fabric's rates and
  queues and all that the job can have in flight towards one NIC
  (`experiments.sizes.running_ack_timeout_ms`). The transport's default,
  4.096 us x 2^15 = 134 ms, is NCCL's at 400 Gb/s, where a switch queue
  drains in microseconds; here every link is 10^4-10^5 times slower and so
  are its queues, and the requester would time out on packets that are
  only waiting (measured: hundreds of timeouts and thousands of go-back-N
  retransmissions with no packet dropped, and jobs failing with "retry
  count exceeded").

`run_collective(fabric, collective, on_step)` goes through the daemon
(`POST /run`) when its `RunRequest` has those fields, and otherwise runs
the same thing itself, the way the daemon does (`controller.jobs`): the
jobs from `traffic.collectives.build_jobs`, one per host, started together
a moment ahead (`start_at`) on the hosts' agents (their Unix sockets), the
switches' `tx_port`, drop and traffic-manager counters read before and
after, `traffic.report.summarize` for nccl-tests' figures and
`controller.jobs.link_loads` for the per-link bytes. Either way the answer
has the daemon's shape (`result`, `links`, `tiers`, `tm`, `switch_drops`,
`cpu_bound`, `cpu_bound_reasons`) plus `via` ("api" or "agents").

`lossless_packets(fabric)` reads each switch's lossless-class packets in
and out so far (the programs' per-port, per-class counters): a switch that
lost none of them between two readings sent out as many as came in, on
either target (BMv2's queue drops are counted nowhere else).

Names defined here: `Collective`, `run_collective`, `uses_api`,
`api_supports`, `lossless_packets`.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from controller.client import ApiError
from controller.hostagents import agents_dir
from controller.jobs import (
    CLASSES,
    PFC_COUNTERS,
    RunRequest,
    fabric_transport,
    job_fan_in,
    link_loads,
    pfc_cells,
    pfc_delta,
    tm_delta,
)
from controller.lossless import LOSSLESS, RX, TX
from controller.stats import DROP_REASONS
from traffic.agentclient import AgentClient, AgentError
from traffic.collectives import Rank, build_jobs
from traffic.report import summarize
from traffic.schema import Admission, Job, Transport

from .fabric import Fabric, FabricError
from .sizes import running_ack_timeout_ms

__all__ = ["Collective", "api_supports", "lossless_packets", "run_collective", "uses_api"]
_ids = itertools.count(1)


@dataclass(frozen=True, kw_only=True)
class Collective:
    """One collective (see the module docstring); `nics` in rank order."""

    pattern: str
    nics: tuple[str, ...]
    size: int
    qps: int = 1
    strategy: str = "rr"
    message_size: int | None = None
    admission: bool = False
    cls: str = "data"
    sport_per_qp: bool = False
    ack_timeout_ms: float | None = None  # None: the fabric's (see the module docstring)
    timeout: float = 600.0

    def body(self) -> dict[str, Any]:
        """The collective as the daemon's /run body (lists for tuples, unset fields left out)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()
                if v is not None}


def api_supports() -> set[str]:
    """The fields of the daemon's run request this checkout knows."""
    return set(RunRequest.model_fields)


def uses_api(c: Collective) -> bool:
    """Whether `run_collective` sends `c` to the daemon (else it runs it on the agents)."""
    fields = api_supports()
    return "nics" in fields and (c.ack_timeout_ms is None or "ack_timeout_ms" in fields)


def run_collective(fabric: Fabric, c: Collective,
                   on_step: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Run `c` on the fabric (see the module docstring); `FabricError` when it fails."""
    if uses_api(c):
        try:
            answer = fabric.run(c.body())
        except ApiError as exc:
            raise FabricError(str(exc)) from None
        answer["via"] = "api"
        return answer
    return _via_agents(fabric, c, on_step)


def _read_pfc(fabric: Fabric) -> dict[str, dict[str, int]]:
    """The programs' PFC frames sent and received so far, per switch (`PFC_COUNTERS`)."""
    out: dict[str, dict[str, int]] = {}
    for s in fabric.plan.switches:
        cells = pfc_cells(fabric.plan, s.name)
        out[s.name] = {key: sum(v[0] for v in fabric.counters(s.name, counter, cells).values())
                       for key, counter in PFC_COUNTERS.items()}
    return out


def lossless_packets(fabric: Fabric) -> dict[str, tuple[int, int]]:
    """Per switch, its lossless-class packets in and out so far (every port's cell)."""
    out = {}
    for s in fabric.plan.switches:
        cells = [p.port * CLASSES + LOSSLESS for p in fabric.plan.switch(s.name).ports]
        rx, tx = (fabric.counters(s.name, name, cells) for name in (RX, TX))
        out[s.name] = (sum(v[0] for v in rx.values()), sum(v[0] for v in tx.values()))
    return out


def _read_drops(fabric: Fabric) -> dict[str, dict[int, int]]:
    out = {}
    for s in fabric.plan.switches:
        cells = fabric.counters(s.name, "FabricIngress.counters.drops", list(DROP_REASONS))
        out[s.name] = {i: v[0] for i, v in cells.items()}
    return out


def _via_agents(fabric: Fabric, c: Collective,
                on_step: Callable[[int, int], None] | None) -> dict[str, Any]:
    plan = fabric.plan
    by = {n.intf: n for n in plan.nics()}
    try:
        ranks = [Rank(host=by[x].host, nic=x, ip=by[x].ip) for x in c.nics]
    except KeyError as exc:
        raise FabricError(f"no NIC {exc.args[0]!r} in fabric {plan.name}") from None
    job_id = next(_ids)

    def build(transport: Transport | None) -> dict[str, Job]:
        return build_jobs(c.pattern, ranks, c.size, c.qps, c.strategy,
                          message_bytes=c.message_size, cls=c.cls,  # type: ignore[arg-type]
                          admission=Admission() if c.admission else None, transport=transport,
                          sport_per_qp=c.sport_per_qp, name=f"exp{job_id}-{c.pattern}",
                          start_at=time.time() + 1.0)

    try:
        ack_ms = c.ack_timeout_ms
        if ack_ms is None:  # the fabric's, for what this job can have in flight (as the daemon)
            ack_ms = running_ack_timeout_ms(fabric.spec, plan, job_fan_in(build(fabric_transport(plan))))
        jobs = build(fabric_transport(plan, ack_ms))
    except ValueError as exc:
        raise FabricError(str(exc)) from None
    tm_source = fabric.runtime().tm_stats
    before = fabric.sample()
    drops0 = _read_drops(fabric)
    tm0 = {s.name: tm_source(s.name) or {} for s in plan.switches}
    pfc0 = _read_pfc(fabric)
    t0 = time.monotonic()
    reports: dict[str, Any] = {}
    errors: dict[str, str] = {}

    def one(host: str) -> None:
        """Run `host`'s job through its agent, keeping its report or error."""
        try:
            reports[host] = AgentClient(agents_dir() / f"{host}.sock").run(jobs[host], c.timeout)
        except AgentError as exc:
            errors[host] = str(exc)

    threads = [threading.Thread(target=one, args=(h,), daemon=True) for h in sorted(jobs)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        if errors:  # one failed: the others cannot finish, stop them
            for h in jobs:
                try:
                    AgentClient(agents_dir() / f"{h}.sock").stop()
                except AgentError:
                    pass
            break
        if on_step is not None:
            _poll_step(sorted(jobs), on_step)
        time.sleep(0.5)
    for t in threads:
        t.join()
    if errors:
        host = sorted(errors)[0]
        raise FabricError(f"the collective failed: {errors[host]}")
    seconds = time.monotonic() - t0
    time.sleep(0.2)  # the last ACKs have crossed the fabric
    after = fabric.sample()
    drops1 = _read_drops(fabric)
    tm1 = {s.name: tm_source(s.name) or {} for s in plan.switches}
    pfc1 = _read_pfc(fabric)
    tm = tm_delta(tm0, tm1)
    for key, n in pfc_delta(pfc0, pfc1).items():  # the programs' PFC, both targets
        tm[key] += n
    result = summarize(c.pattern, ranks, c.size, reports, jobs=jobs).model_dump()
    rates = {t: getattr(fabric.spec.links, t).rate_mbps for t in ("host", "rtsw_ctsw",
                                                                    "ctsw_atsw")}
    loads = link_loads(plan, {s: {p: v for p, v in d["tx"].items()} for s, d in
                              before.ports.items()},
                       {s: {p: v for p, v in d["tx"].items()} for s, d in after.ports.items()},
                       seconds, rates)
    drops = {sw: {DROP_REASONS[i]: drops1[sw].get(i, 0) - drops0.get(sw, {}).get(i, 0)
                  for i in DROP_REASONS if drops1[sw].get(i, 0) - drops0.get(sw, {}).get(i, 0)}
             for sw in drops1}
    reasons = []
    if result["cpu_bound"]:
        reasons.append(f"agent(s) at a full core: {', '.join(result['cpu_bound_hosts'])}")
    if result["kernel_drops"]:
        reasons.append(f"{result['kernel_drops']} frame(s) dropped by the agents' sockets")
    return {"id": job_id, "via": "agents", "request": c.body(), "pattern": c.pattern,
            "ranks_nics": list(c.nics), "wall_seconds": round(seconds, 4), "result": result,
            "links": loads["links"], "tiers": loads["tiers"],
            "switch_drops": {k: v for k, v in drops.items() if v}, "tm": tm,
            "cpu_bound": bool(reasons), "cpu_bound_reasons": reasons,
            "ack_timeout_ms": ack_ms, "samples": (before, after)}


def _poll_step(hosts: list[str], on_step: Callable[[int, int], None]) -> None:
    steps: list[int] = []
    total = 0
    for h in hosts:
        try:
            st = AgentClient(agents_dir() / f"{h}.sock").status()
        except AgentError:
            continue
        if st.get("step") is not None:
            steps.append(int(st["step"]))
        total = max(total, int(st.get("steps") or 0))
    if steps and total:
        on_step(min(steps), total)
