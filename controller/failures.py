"""Failures in a running fabric: routing around dead links, restarting dead switch processes.

A link goes down or comes back either by hand (`set_link`, what `aizone
link` asks) or as the link prober sees it (`link_changed`, the prober's
callback); both end in `reroute`, which recomputes the failed set under
the daemon's operation lock, writes the switches and records what the
failure cost (`Failure`: detection and reconvergence times, and the
packets the link swallowed, from `link_balance`). `supervise` is the
background loop that restarts a switch process that died
(`restart_switch`); its session reconciles it when it is back.

Every function but `failed_set` takes the `controller.daemon.Daemon` whose
state it reads and changes.

Names defined here: `Failure`, `failed_set`, `find_link`, `set_link`,
`link_changed`, `reroute`, `link_balance`, `supervise`, `restart_switch`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import DaemonError
from .probes import LinkProber, LinkState

if TYPE_CHECKING:
    from .daemon import Daemon

__all__ = ["Failure", "failed_set", "find_link", "link_balance", "link_changed", "reroute",
           "restart_switch", "set_link", "supervise"]


@dataclass
class Failure:
    """A link down, from the CLI or detected by probes, and what it cost."""

    link: str
    cause: str  # "admin" | "probe"
    at: float
    detected_after: float | None = None
    reconverged_after: float | None = None
    lost_packets: int | None = None


def failed_set(admin_down: set[str], prober: LinkProber | None) -> frozenset[str]:
    """The links routing must avoid: those set down by hand and those the probes find dead."""
    probed = {k for k, s in (prober.links.items() if prober else ()) if not s.up}
    return frozenset(admin_down | probed)


# --- links, by hand ------------------------------------------------------------------


def find_link(daemon: Daemon, a: str, b: str, index: int = 0) -> str:
    """The id of the `index`-th link between nodes `a` and `b` (either order)."""
    rt, _, _ = daemon.need()
    ids = [lk.id for lk in rt.plan.links if {lk.a, lk.b} == {a, b}]
    if not ids:
        names = {s.name for s in rt.plan.switches} | {h.name for h in rt.plan.hosts}
        missing = [n for n in (a, b) if n not in names]
        if missing:
            raise DaemonError(f"no node named {missing[0]!r} in fabric {rt.plan.name}")
        raise DaemonError(f"{a} and {b} are not linked")
    if not 0 <= index < len(ids):
        raise DaemonError(f"{a}-{b} has {len(ids)} link(s): index must be 0..{len(ids) - 1}")
    return ids[index]


async def set_link(daemon: Daemon, link: str, up: bool, *,
                   silent: bool = False) -> dict[str, Any]:
    """Fail or restore a link; with `silent`, routing is not told (the probes must find it)."""
    rt, _, _ = daemon.need()
    if link not in {lk.id for lk in rt.plan.links}:
        raise DaemonError(f"no link {link!r} in fabric {rt.plan.name}")
    t0 = time.monotonic()
    await asyncio.to_thread(rt.fabric.set_link, link, up, silent=silent)
    if silent:
        daemon.bus.publish("link", {"link": link, "up": up, "cause": "silent"})
        return {"link": link, "up": up, "silent": True, "changed": False,
                "seconds": round(time.monotonic() - t0, 4)}
    daemon.bus.publish("link", {"link": link, "up": up, "cause": "admin"})
    if up:
        daemon.admin_restoring.add(link)
        try:
            rt.admin_down.discard(link)
            # Back into service once probes cross it again (or at once for a host link).
            deadline = time.monotonic() + 5
            while (daemon.prober is not None and link in daemon.prober.links
                   and not daemon.prober.is_up(link) and time.monotonic() < deadline):
                await asyncio.sleep(0.05)
            record = await reroute(daemon, link, up, "admin", None)
        finally:
            daemon.admin_restoring.discard(link)
    else:
        rt.admin_down.add(link)
        record = await reroute(daemon, link, up, "admin", None)
    record["seconds"] = round(time.monotonic() - t0, 4)
    return record


# --- links, as the probes see them ---------------------------------------------------


def link_changed(daemon: Daemon, state: LinkState) -> None:
    """The prober saw a link die or come back: route around it / back onto it."""
    daemon.bus.publish("link", {"link": state.link, "up": state.up, "cause": "probe",
                                "detected_after": state.detected_after})
    if state.up and state.link in daemon.admin_restoring:
        return
    # Expendable: a reroute that loses a race with the fabric stopping is no failure.
    daemon.tasks.spawn(reroute(daemon, state.link, state.up, "probe", state.detected_after),
                       f"reroute {state.link}", expendable=True)


async def reroute(daemon: Daemon, link: str, up: bool, cause: str,
                  detected_after: float | None) -> dict[str, Any]:
    """Write the routes for the failed set after `link` went down or up, and what it cost."""
    rt, intent, sessions = daemon.need()
    t0 = time.monotonic()
    async with daemon.op_lock:
        failed = failed_set(rt.admin_down, daemon.prober)
        if failed == intent.failed:
            return {"link": link, "up": up, "changed": False}
        intent.failed = failed
        if not up:
            rt.failures[link] = Failure(link=link, cause=cause, at=time.time(),
                                        detected_after=detected_after)
        results = await sessions.apply(f"link {'up' if up else 'down'} {link}")
    seconds = time.monotonic() - t0
    key = (link, "up" if up else "down")
    rt.transitions[key] = rt.transitions.get(key, 0) + 1
    rt.reconvergence[link] = seconds
    record: dict[str, Any] = {"link": link, "up": up, "cause": cause,
                              "reconverged_after": round(seconds, 4),
                              "detected_after": detected_after,
                              "writes": {n: r.counts for n, r in results.items()
                                         if any(r.counts[k] for k in
                                                ("insert", "modify", "delete"))}}
    if not up:
        await asyncio.sleep(0.3)  # what was queued towards the dead link has left
        balance = await link_balance(daemon, link)
        baseline = rt.balances.get(link, 0)
        # Never below 0: packets in flight when the two ends were read.
        record["lost_packets"] = max(0, balance - baseline) if balance is not None else None
        failure = rt.failures.get(link)
        if failure is not None:
            failure.reconverged_after = seconds
            failure.lost_packets = record["lost_packets"]
    else:
        rt.failures.pop(link, None)
        balance = await link_balance(daemon, link)
        if balance is not None:
            rt.balances[link] = balance  # what it lost so far is not the next failure's
    daemon.save_meta()
    daemon.bus.publish("rerouted", record)
    return record


async def link_balance(daemon: Daemon, link: str) -> int | None:
    """Packets sent into `link` that did not come out of its other end, both ways.

    Each end's tx_port counter minus the other end's rx_port counter: on a
    live link the two agree (but for packets in flight), so what a dead
    link swallowed is what the balance grew by since the link was last
    restored. None when a switch at either end cannot be read.
    """
    rt, _, sessions = daemon.need()
    lk = next((x for x in rt.plan.links if x.id == link), None)
    if lk is None or lk.tier == "host":
        return None
    total = 0
    for (s, sp), (r, rp) in (((lk.a, lk.a_port), (lk.b, lk.b_port)),
                             ((lk.b, lk.b_port), (lk.a, lk.a_port))):
        if not (sessions.is_ready(s) and sessions.is_ready(r)):
            return None
        tx = await sessions.read_counters(s, "FabricEgress.counters.tx_port", [sp])
        rx = await sessions.read_counters(r, "FabricIngress.counters.rx_port", [rp])
        total += (tx[sp].packets if sp in tx else 0) - (rx[rp].packets if rp in rx else 0)
    return total


# --- switches ------------------------------------------------------------------------


async def supervise(daemon: Daemon) -> None:
    """Restart a switch process that died; its session reconciles it when it is back."""
    rt = daemon.rt
    assert rt is not None and daemon.sessions is not None
    while True:
        await asyncio.sleep(0.5)
        for s in rt.plan.switches:
            if daemon.phase != "up" or rt.fabric is None:
                break
            alive = await asyncio.to_thread(rt.fabric.switch_alive, s.name)
            if alive:
                continue
            await restart_switch(daemon, s.name)


async def restart_switch(daemon: Daemon, name: str) -> dict[str, Any]:
    """Start switch `name` again, wait for its session to reconcile it; what it took."""
    rt = daemon.rt
    assert rt is not None and daemon.sessions is not None
    t0 = time.monotonic()
    daemon.sessions.forget(name)
    daemon.bus.publish("switch", {"switch": name, "phase": "died"})
    pid = await asyncio.to_thread(rt.fabric.restart_switch, name)
    t1 = time.monotonic()
    daemon.bus.publish("switch", {"switch": name, "phase": "restarted", "pid": pid})
    await daemon.sessions.wait_ready(timeout=120, names=[name])
    for lk in rt.plan.links:  # its counters started again from zero
        if name in (lk.a, lk.b) and lk.tier != "host":
            link = lk.id
            balance = await link_balance(daemon, link)
            if balance is not None:
                rt.balances[link] = balance
    last = daemon.sessions.last.get(name)
    record = {"switch": name, "pid": pid, "restart_seconds": round(t1 - t0, 3),
              "reconcile_seconds": round(last.seconds, 4) if last else None,
              "total_seconds": round(time.monotonic() - t0, 3),
              "writes": last.counts if last else None}
    rt.restarts.append(record)
    daemon.bus.publish("switch", {**record, "phase": "reconciled"})
    return record
