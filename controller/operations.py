"""The operations the local API calls: each reads or changes the fabric a daemon keeps.

Every function takes the `controller.daemon.Daemon` first and, but for
`status` and `shutdown`, raises `DaemonError` when its fabric is not up
(`Daemon.need`); the API (`controller.api`) maps that error to 409 and the
others it raises (an unknown switch, host or counter) to 400. Changes to
the intent (`set_mode`, `set_acl`) hold the daemon's operation lock, as a
reroute does (`controller.failures`, which also holds `find_link` and
`set_link`); a collective (`run_job`) holds the job lock, one at a time.

Names defined here: `status`, `topology`, `metrics`, `set_mode`, `acl`,
`set_acl`, `routes`, `history`, `counters`, `check`, `trace`, `run_job`,
`exec_in_host`, `capture`, `shutdown`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from topologies.spec import MODES, FabricSpec

from .entities import TableEntry
from .errors import DaemonError

if TYPE_CHECKING:
    from .daemon import Daemon
    from .hostagents import HostAgents

__all__ = ["acl", "capture", "check", "counters", "exec_in_host", "history", "metrics",
           "routes", "run_job", "set_acl", "set_mode", "shutdown", "status", "topology",
           "trace"]


# --- what the daemon holds -----------------------------------------------------------


async def status(daemon: Daemon) -> dict[str, Any]:
    """The phase and API addresses and, once there is a fabric, its switches, hosts, links."""
    rt = daemon.rt
    data: dict[str, Any] = {"phase": daemon.phase, "error": daemon.error, "pid": os.getpid(),
                            "api": daemon.api_addresses, "started_at": daemon.started_at}
    if rt is None:
        return data
    sessions = daemon.sessions
    switches = []
    for s in rt.plan.switches:
        alive = await asyncio.to_thread(rt.fabric.switch_alive, s.name) if rt.fabric else False
        last = sessions.last.get(s.name) if sessions else None
        switches.append({"name": s.name, "role": s.role, "grpc_addr": s.grpc_addr,
                         "server": rt.fabric.placement.get(s.name) if rt.fabric else None,
                         "device_id": s.device_id, "alive": alive,
                         "ready": sessions.is_ready(s.name) if sessions else False,
                         "last_reconcile": last.to_json() if last else None})
    spec = rt.spec
    data.update({
        "name": rt.plan.name, "topology": str(rt.topology), "target": rt.target,
        "mode": daemon.intent.mode if daemon.intent else None,
        "scale": _scale(spec), "switches": switches,
        # The machines it is spread over, this one first (empty: this machine alone).
        "servers": list(rt.fabric.servers) if rt.fabric else [],
        "clock_offsets": dict(rt.fabric.clock_offsets) if rt.fabric else {},
        # The servers whose clock is now too far from this machine's, and why.
        "clock_off": dict(daemon.clocks.off) if daemon.clocks else {},
        "hosts": [{"name": h.name, "zone": h.zone, "rack": h.rack,
                   "server": rt.fabric.placement.get(h.name) if rt.fabric else None,
                   "nics": [{"intf": n.intf, "ip": n.ip} for n in h.nics]}
                  for h in rt.plan.hosts],
        "links": [{"id": lk.id, "tier": lk.tier, "a": lk.a, "b": lk.b,
                   "up": daemon.link_usable(lk.id)}
                  for lk in rt.plan.links],
        "failed": sorted(daemon.intent.failed) if daemon.intent else [],
        "failures": [vars(f) for f in rt.failures.values()],
        "restarts": rt.restarts[-20:],
    })
    return data


def topology(daemon: Daemon) -> dict[str, Any]:
    """Nodes and edges by tier: what the dashboard draws."""
    rt, intent, _ = daemon.need()
    nodes = [{"id": s.name, "kind": "switch", "role": s.role, "zone": s.zone,
              "position": s.position} for s in rt.plan.switches]
    nodes += [{"id": h.name, "kind": "host", "role": "host", "zone": h.zone, "rack": h.rack,
               "position": h.position, "rtsw": h.rtsw} for h in rt.plan.hosts]
    rates = _scale(rt.spec)
    edges = [{"id": lk.id, "a": lk.a, "b": lk.b, "tier": lk.tier,
              "a_port": lk.a_port, "b_port": lk.b_port,
              "rate_mbps": rates.get(lk.tier, {}).get("rate_mbps"),
              "up": daemon.link_usable(lk.id)} for lk in rt.plan.links]
    return {"name": rt.plan.name, "mode": intent.mode, "nodes": nodes, "edges": edges}


def metrics(daemon: Daemon) -> bytes:
    """`GET /metrics`: the Prometheus exposition of the fabric (`controller.metrics`)."""
    from .metrics import MetricsSource, render

    rt, _, sessions = daemon.need()
    poller = daemon.stats
    return render(MetricsSource(
        plan=rt.plan, readings=lambda: dict(poller.previous) if poller else {},
        switch_up=sessions.is_ready, link_up=daemon.link_usable,
        transitions=lambda: dict(rt.transitions),
        reconvergence=lambda: dict(rt.reconvergence), jobs=lambda: dict(daemon.jobs)))


# --- the intent ----------------------------------------------------------------------


async def set_mode(daemon: Daemon, mode: str) -> dict[str, Any]:
    """Switch the live fabric to routing `mode`; the previous mode, seconds and writes.

    Raises `DaemonError` for an unknown mode or a fabric that is not up.
    """
    if mode not in MODES:
        raise DaemonError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
    _, intent, sessions = daemon.need()
    async with daemon.op_lock:
        before = intent.mode
        t0 = time.monotonic()
        intent.mode = mode
        results = await sessions.apply(f"mode {mode}")
        seconds = time.monotonic() - t0
    daemon.save_meta()
    record = {"mode": mode, "previous": before, "seconds": round(seconds, 4),
              "writes": {n: r.counts for n, r in results.items()}}
    daemon.bus.publish("mode", record)
    return record


def acl(daemon: Daemon) -> dict[str, Any]:
    """The ACL rules people added, per switch."""
    _, intent, _ = daemon.need()
    from .entities import Ternary, describe
    from .intent import ACL_ACTIONS

    short = {v: k for k, v in ACL_ACTIONS.items()}

    def rule(e: TableEntry) -> dict[str, Any]:
        """One rule as the API shows it: action, priority, ternary match and text."""
        match = {n: [m.value, m.mask] for n, m in e.match if isinstance(m, Ternary)}
        return {"action": short.get(e.action.name if e.action else "", "?"),
                "priority": e.priority, "match": match, "text": describe(e)}

    return {sw: [rule(e) for e in rules] for sw, rules in sorted(intent.acl.items())}


async def set_acl(daemon: Daemon, switch: str, rules: Sequence[TableEntry]) -> dict[str, Any]:
    """Replace the ACL rules a person put on `switch` (drop, permit, punt) and write them."""
    rt, intent, sessions = daemon.need()
    if switch not in sessions.switches:
        raise DaemonError(f"no switch named {switch!r} in fabric {rt.plan.name}")
    keys = [r.key() for r in rules]
    if len(set(keys)) != len(keys):
        raise DaemonError("two ACL rules with the same match and priority")
    async with daemon.op_lock:
        t0 = time.monotonic()
        intent.acl[switch] = tuple(rules)
        if not rules:
            del intent.acl[switch]
        results = await sessions.apply(f"acl {switch}")
        seconds = time.monotonic() - t0
    record = {"switch": switch, "rules": len(rules), "seconds": round(seconds, 4),
              "writes": {n: r.counts for n, r in results.items()
                         if any(r.counts[k] for k in ("insert", "modify", "delete"))}}
    daemon.bus.publish("acl", record)
    return record


# --- what the switches hold ----------------------------------------------------------


async def routes(daemon: Daemon, switch: str | None = None) -> dict[str, Any]:
    """The entries read back from `switch` (None: every one), each compared with the intent."""
    rt, intent, sessions = daemon.need()
    names = [switch] if switch else [s.name for s in rt.plan.switches]
    for n in names:
        if n not in sessions.switches:
            raise DaemonError(f"no switch named {n!r} in fabric {rt.plan.name}")
    from .entities import describe
    from .intent import diff

    out: dict[str, Any] = {}
    for n in names:
        current = await sessions.read_state(n)
        d = diff(intent.for_switch(n), current)
        out[n] = {"entries": sorted(_entry_json(e, describe) for e in current),
                  "matches_intent": d.empty, "diff": d.counts()}
    return {"mode": intent.mode, "failed": sorted(intent.failed), "switches": out}


def history(daemon: Daemon, switch: str, limit: int | None = None) -> dict[str, Any]:
    """The P4Runtime writes the controller sent `switch`, oldest first (`controller.writelog`)."""
    rt, _, sessions = daemon.need()
    if switch not in sessions.switches:
        raise DaemonError(f"no switch named {switch!r} in fabric {rt.plan.name}")
    records = daemon.write_log.read(switch, limit) if daemon.write_log is not None else []
    return {"switch": switch, "writes": [r.to_json() for r in records]}


async def counters(daemon: Daemon, switch: str, counter: str,
                   indexes: list[int]) -> dict[str, Any]:
    """Cells of one of a switch's indexed counters, read now."""
    rt, _, sessions = daemon.need()
    if switch not in sessions.switches:
        raise DaemonError(f"no switch named {switch!r} in fabric {rt.plan.name}")
    if sessions.schema(switch).counters.get(counter) is None:
        raise DaemonError(f"{switch} has no counter {counter!r}")
    cells = await sessions.read_counters(switch, counter, indexes)
    return {"switch": switch, "counter": counter,
            "cells": {str(i): {"packets": c.packets, "bytes": c.bytes}
                      for i, c in sorted(cells.items())}}


# --- traffic -------------------------------------------------------------------------


async def check(daemon: Daemon, *, roce: bool = True) -> dict[str, Any]:
    """All ordered host pairs: ping NIC k to NIC k; a RoCEv2 transfer per pair with `roce`."""
    from .check import check_pairs
    from .jobs import fabric_job_ack_timeout_ms

    rt, _, sessions = daemon.need()
    daemon.bus.publish("check", {"phase": "start"})
    ack_ms = (fabric_job_ack_timeout_ms(_job_context(daemon, rt, sessions, daemon.agents))
              if daemon.agents is not None else None)
    result = await check_pairs(rt.plan, rt.fabric, daemon.agents, roce=roce,
                               ack_timeout_ms=ack_ms,
                               progress=lambda done, total: daemon.bus.publish(
                                   "check", {"phase": "running", "done": done,
                                             "total": total}))
    daemon.bus.publish("check", {"phase": "done", "ok": result["ok"],
                                 "failed": len(result["failed"])})
    return result


async def trace(daemon: Daemon, *, send: bool, dport: int, **flow: Any) -> dict[str, Any]:
    """Predict a flow's path from the entries read back, and confirm it with counters.

    `flow`: what `controller.trace.resolve_flow` takes (src and dst, or a
    job and its connection; QP index, QPs, explicit sport/qp).
    """
    from .jobs import fabric_job_ack_timeout_ms
    from .paths import PathError
    from .trace import resolve_flow
    from .trace import trace as trace_flow

    rt, _, sessions = daemon.need()
    if send and daemon.job_lock.locked():
        raise DaemonError("a collective is running: its agents cannot send a trace's flow now")
    try:
        chosen = resolve_flow(rt.plan, daemon.jobs, **flow)
        if not send or daemon.agents is None:
            return await trace_flow(sessions, rt.plan, None, chosen, dport=dport, send=send)
        # the fabric's RC ACK timeout, as for `aizone run` and `aizone check`
        ack_ms = fabric_job_ack_timeout_ms(_job_context(daemon, rt, sessions, daemon.agents))
        async with daemon.job_lock:  # the agents run one job at a time
            return await trace_flow(sessions, rt.plan, daemon.agents, chosen, dport=dport,
                                    send=True, ack_timeout_ms=ack_ms)
    except (ValueError, PathError) as exc:
        raise DaemonError(str(exc)) from None


async def run_job(daemon: Daemon, req: Any) -> dict[str, Any]:
    """Run one collective on the agents (one at a time); see `controller.jobs`."""
    from traffic.agentclient import AgentError

    from .jobs import RunError, run_collective

    rt, _, sessions = daemon.need()
    if daemon.agents is None:
        raise DaemonError("the traffic agents are not running")
    if daemon.job_lock.locked():
        raise DaemonError("a collective is already running (one at a time)")
    if daemon.clocks is not None and daemon.clocks.off:
        why = next(iter(daemon.clocks.off.values()))
        raise DaemonError(f"{why}; the job is not started (its clock is read every "
                          f"{daemon.clocks.interval:g} s: `aizone status`)")
    ctx = _job_context(daemon, rt, sessions, daemon.agents)
    async with daemon.job_lock:
        try:
            out = await run_collective(ctx, req)
        except RunError as exc:
            raise DaemonError(str(exc)) from None
        except AgentError as exc:
            raise DaemonError(f"the collective failed: {exc}") from None
    out["mode"] = daemon.intent.mode if daemon.intent else None
    out["failed_links"] = sorted(daemon.intent.failed) if daemon.intent else []
    out["scale"] = _scale(rt.spec)
    daemon.jobs[out["id"]] = out
    while len(daemon.jobs) > 50:
        daemon.jobs.pop(min(daemon.jobs))
    return out


def _job_context(daemon: Daemon, rt: Any, sessions: Any, agents: HostAgents) -> Any:
    """What a collective (or the check's RoCEv2 half) needs of the running fabric."""
    from .jobs import JobContext

    rates = {tier: getattr(rt.spec.links, tier).rate_mbps
             for tier in ("host", "rtsw_ctsw", "ctsw_atsw")}
    used: set[str] = {lk.tier for lk in rt.plan.links}
    queues: dict[str, int] = {tier: getattr(rt.spec.links, tier).queue
                              for tier in rates if tier in used}
    return JobContext(plan=rt.plan, sessions=sessions, agents=agents,
                      publish=daemon.bus.publish, tm_stats=rt.fabric.tm_stats, rates=rates,
                      failed=daemon.intent.failed if daemon.intent else frozenset(),
                      program_pfc=bool(daemon.intent and daemon.intent.program_pfc),
                      queues=queues, mode=daemon.intent.mode if daemon.intent else None)


# --- hosts ---------------------------------------------------------------------------


async def exec_in_host(daemon: Daemon, host: str, argv: Sequence[str], timeout: float = 30,
                       *, limit: int = 1 << 20) -> dict[str, Any]:
    """Run `argv` in `host`; at most `limit` bytes of each output stream are kept."""
    rt, _, _ = daemon.need()
    if host not in {h.name for h in rt.plan.hosts}:
        raise DaemonError(f"no host named {host!r} in fabric {rt.plan.name}")
    if not argv:
        raise DaemonError("give a command to run")
    try:
        proc = await asyncio.to_thread(rt.fabric.host_run, host, list(argv), timeout,
                                       limit=limit)
    except FileNotFoundError as exc:
        raise DaemonError(f"{host}: {exc.strerror}: {argv[0]}") from None
    except subprocess.TimeoutExpired:
        raise DaemonError(f"{host}: {argv[0]} did not finish within {timeout:g} s "
                          f"(it was stopped)") from None
    return {"host": host, "argv": list(argv), "returncode": proc.returncode,
            "stdout": proc.stdout, "stderr": proc.stderr}


async def capture(daemon: Daemon, target: str, *, seconds: float, count: int | None = None,
                  snaplen: int | None = None, bpf: str | None = None,
                  on_end: Callable[[], None] | None = None
                  ) -> tuple[Any, AsyncGenerator[bytes, None]]:
    """A capture point and its pcap stream (`controller.capture.start_capture`; `on_end`
    is called once its tcpdump has ended, read or not)."""
    from .capture import CaptureError, start_capture

    rt, _, _ = daemon.need()
    try:
        return await start_capture(rt.plan, rt.fabric, target, seconds=seconds,
                                   count=count, snaplen=snaplen, bpf=bpf, on_end=on_end)
    except CaptureError as exc:
        raise DaemonError(str(exc)) from None


# --- the daemon ----------------------------------------------------------------------


async def shutdown(daemon: Daemon) -> dict[str, Any]:
    """Ask the daemon to stop; answers at once, before the fabric is down."""
    daemon.request_stop()
    return {"stopping": True, "pid": os.getpid()}


def _scale(spec: FabricSpec) -> dict[str, Any]:
    line = getattr(spec, "line_rate_gbps", None)
    out: dict[str, Any] = {"line_rate_gbps": line, "mtu": spec.mtu}
    for tier in ("host", "rtsw_ctsw", "ctsw_atsw"):
        rate = getattr(getattr(spec.links, tier), "rate_mbps", None)
        out[tier] = {"rate_mbps": rate,
                     "scale": round(line * 1000 / rate, 1) if line and rate else None}
    return out


def _entry_json(e: Any, describe: Any) -> str:
    text: str = describe(e)
    action = getattr(e, "action", None)
    if action is not None:
        params = ", ".join(f"{k}={v:#x}" if k.endswith("mac") else f"{k}={v}"
                           for k, v in action.params)
        text += f" -> {action.name.rsplit('.', 1)[-1]}({params})"
    elif getattr(e, "member_id", None) is not None:
        text += f" -> member {e.member_id}"
    elif getattr(e, "group_id", None) is not None:
        text += f" -> group {e.group_id}"
    elif hasattr(e, "members"):
        text += f" members {list(e.members)}"
    return text


