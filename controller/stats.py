"""Fabric statistics from the switches' own counters, over an interval.

Every `interval` seconds `StatsPoller` reads, from every ready switch, the
cells that exist (the plan's ports, eight classes each) of the programs'
counters and registers over P4Runtime:

- `rx_port` / `tx_port` (packets and bytes per port),
- `tx_port_tc` (per (port, class)), `ecn_marked` (per (port, class)),
- `drops` (per drop reason, `p4/include/define.p4`),
- `queue_depth` / `queue_peak` registers (per (port, class); both written
  back to 0 after each read, so they are the interval's last and largest),

and, where the target has them (p4switch's traffic manager through its
control API), PFC pauses sent and received and queue tail drops per
(port, priority). A `Snapshot` turns two readings into rates: per link and
direction bytes/s, packets/s and the share of the tier's emulated rate; per
(port, class) queue depth; PFC pauses; ECN marks; drops by reason; and per
tier the imbalance (max/mean) of the uplinks' load. `aizone stats`, the API
and the dashboard all show this one snapshot.

Names defined here: `StatsPoller`, `Reading`, `build_snapshot`,
`DROP_REASONS`, `TIER_DIRECTIONS`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from topologies.addressing import AddressPlan, LinkPlan

from .sessions import CounterCell, FabricSessions
from .tasks import DaemonTasks

__all__ = ["DROP_REASONS", "TIER_DIRECTIONS", "Reading", "StatsPoller", "build_snapshot"]

LOG = logging.getLogger("aizone.stats")
TCS = 8
# Drop reasons: the index of FabricIngress.counters.drops (p4/include/define.p4).
DROP_REASONS = {1: "no_route", 2: "ttl", 3: "pfc_frame", 4: "acl", 5: "not_ip", 6: "parser",
                7: "checksum"}
COUNTERS = {
    "rx": "FabricIngress.counters.rx_port",
    "tx": "FabricEgress.counters.tx_port",
    "tx_tc": "FabricEgress.counters.tx_port_tc",
    "ecn": "FabricEgress.ecn.ecn_marked",
    "drops": "FabricIngress.counters.drops",
    # The programs' own PFC (p4/include/control/pfc.p4): frames sent out of, and received
    # on, each (port, class); totals, like the traffic manager's.
    "pfc_tx": "FabricEgress.pfc.pfc_tx",
    "pfc_rx": "FabricEgress.pfc.pfc_rx",
}
REGISTERS = {"depth": "FabricEgress.counters.queue_depth",
             "peak": "FabricEgress.counters.queue_peak"}
# For each tier, the direction that is "up" (towards the spine): the lower
# tier's node is `a` in every LinkPlan.
TIER_DIRECTIONS = {"host": "host up", "rtsw_ctsw": "rtsw up", "ctsw_atsw": "ctsw up"}


@dataclass(kw_only=True)
class Reading:
    """One poll of one switch: counter cells, registers and traffic-manager figures."""

    switch: str
    at: float
    rx: dict[int, CounterCell] = field(default_factory=dict)
    tx: dict[int, CounterCell] = field(default_factory=dict)
    tx_tc: dict[int, CounterCell] = field(default_factory=dict)
    ecn: dict[int, CounterCell] = field(default_factory=dict)
    drops: dict[int, CounterCell] = field(default_factory=dict)
    depth: dict[int, int] = field(default_factory=dict)
    peak: dict[int, int] = field(default_factory=dict)
    pfc_tx: dict[int, CounterCell] = field(default_factory=dict)
    pfc_rx: dict[int, CounterCell] = field(default_factory=dict)
    tm: dict[str, Any] | None = None  # p4switch tm_stats()["queues"], keyed "port/prio"


TmSource = Callable[[str], dict[str, Any] | None]


class StatsPoller:
    """Reads every switch each interval and publishes a snapshot (see the module docstring)."""

    def __init__(self, plan: AddressPlan, sessions: FabricSessions, *, interval: float = 1.0,
                 rates: dict[str, float] | None = None, tm_source: TmSource | None = None,
                 on_snapshot: Callable[[dict[str, Any]], object] | None = None,
                 link_up: Callable[[str], bool] | None = None, program_pfc: bool = False) -> None:
        self.plan = plan
        self.sessions = sessions
        self.interval = interval
        self.rates = rates or {}
        self.tm_source = tm_source
        self.on_snapshot = on_snapshot
        self.link_up = link_up or (lambda _link: True)
        self.program_pfc = program_pfc
        self.previous: dict[str, Reading] = {}
        self.latest: dict[str, Any] = {}
        self._ports = {s.name: sorted(p.port for p in s.ports) for s in plan.switches}

    def start(self, tasks: DaemonTasks) -> None:
        """Poll every `interval` seconds as a task of `tasks` (cancelled with the others)."""
        tasks.spawn(self._run(), "stats")

    async def _run(self) -> None:
        next_at = time.monotonic()
        while True:
            next_at += self.interval
            try:
                await self.poll()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - statistics must never stop the daemon
                LOG.exception("statistics poll failed")
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            if time.monotonic() - next_at > self.interval:
                next_at = time.monotonic()  # fell behind (CPU-bound): skip, do not burst

    async def read(self, name: str) -> Reading:
        """One reading of switch `name` (peak registers are cleared after reading)."""
        ports = self._ports[name]
        cells = [p * TCS + tc for p in ports for tc in range(TCS)]
        s = self.sessions
        at = time.time()
        # One Read for the counters and one for the registers: every RPC costs the
        # switch (its gRPC threads, hand-offs) far more than another cell in it does.
        wanted = {COUNTERS["rx"]: ports, COUNTERS["tx"]: ports, COUNTERS["tx_tc"]: cells,
                  COUNTERS["ecn"]: cells, COUNTERS["drops"]: DROP_REASONS}
        if self.program_pfc:  # the programs' PFC counters, only where it is on
            wanted |= {COUNTERS["pfc_tx"]: cells, COUNTERS["pfc_rx"]: cells}
        counters, registers = await asyncio.gather(
            s.read_counter_sets(name, wanted),
            s.read_register_sets(name, {REGISTERS["depth"]: cells, REGISTERS["peak"]: cells}))
        depth, peak = registers[REGISTERS["depth"]], registers[REGISTERS["peak"]]
        # Both are cleared once read (one Write), so each reading is of its own
        # interval: the depth is that of the interval's last packet (0 for an idle
        # queue, not the depth the last packet of long ago saw), the peak the interval's.
        clear = {reg: {i: 0 for i, v in got.items() if v} for reg, got in registers.items()}
        if any(clear.values()):
            await s.write_register_sets(name, clear)
        tm = None
        if self.tm_source is not None:
            tm = await asyncio.to_thread(self.tm_source, name)
        return Reading(switch=name, at=at, rx=counters[COUNTERS["rx"]],
                       tx=counters[COUNTERS["tx"]], tx_tc=counters[COUNTERS["tx_tc"]],
                       ecn=counters[COUNTERS["ecn"]], drops=counters[COUNTERS["drops"]],
                       depth=depth, peak=peak, pfc_tx=counters.get(COUNTERS["pfc_tx"], {}),
                       pfc_rx=counters.get(COUNTERS["pfc_rx"], {}), tm=tm)

    async def poll(self) -> dict[str, Any]:
        """Read every ready switch now; the new snapshot (also kept and sent to `on_snapshot`)."""
        names = [n for n in self._ports if self.sessions.is_ready(n)]
        results = await asyncio.gather(*(self.read(n) for n in names), return_exceptions=True)
        current: dict[str, Reading] = {}
        for name, r in zip(names, results, strict=True):
            if isinstance(r, Reading):
                current[name] = r
            else:
                LOG.debug("%s: statistics read failed: %s", name, r)
        snap = build_snapshot(self.plan, self.previous, current, self.rates, self.link_up)
        self.previous.update(current)
        self.latest = snap
        if self.on_snapshot is not None:
            self.on_snapshot(snap)
        return snap


def _delta(now: dict[int, CounterCell], before: dict[int, CounterCell] | None,
           index: int) -> tuple[int, int]:
    """(packets, bytes) gained by one cell; a counter that went back (a restarted switch) restarts."""
    cur = now.get(index)
    if cur is None:
        return 0, 0
    old = before.get(index) if before else None
    if old is None or cur.packets < old.packets or cur.bytes < old.bytes:
        return (cur.packets, cur.bytes) if old is not None else (0, 0)
    return cur.packets - old.packets, cur.bytes - old.bytes


def _rate(pkts: int, nbytes: int, dt: float, rate_mbps: float | None) -> dict[str, Any]:
    if dt <= 0:
        return {"bps": 0.0, "pps": 0.0, "util": None}
    bps = nbytes * 8 / dt
    return {"bps": round(bps, 1), "pps": round(pkts / dt, 1),
            "util": round(bps / (rate_mbps * 1e6), 4) if rate_mbps else None}


def _imbalance(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"links": 0, "mean_bps": 0.0, "max_bps": 0.0, "imbalance": None}
    mean = sum(values) / len(values)
    top = max(values)
    return {"links": len(values), "mean_bps": round(mean, 1), "max_bps": round(top, 1),
            "imbalance": round(top / mean, 3) if mean > 0 else None}


def build_snapshot(plan: AddressPlan, before: dict[str, Reading], now: dict[str, Reading],
                   rates: dict[str, float],
                   link_up: Callable[[str], bool] = lambda _l: True) -> dict[str, Any]:
    """Rates and states between two sets of readings (see the module docstring)."""
    dts = {n: r.at - before[n].at for n, r in now.items() if n in before}
    switches: dict[str, Any] = {}
    for name, r in now.items():
        old = before.get(name)
        dt = dts.get(name, 0.0)
        ports: dict[str, Any] = {}
        for p in plan.switch(name).ports:
            classes: dict[str, Any] = {}
            for tc in range(TCS):
                i = p.port * TCS + tc
                pk, by = _delta(r.tx_tc, old.tx_tc if old else None, i)
                marks, _ = _delta(r.ecn, old.ecn if old else None, i)
                depth, peak = r.depth.get(i, 0), r.peak.get(i, 0)
                entry: dict[str, Any] = {}
                if pk or by:
                    entry.update(_rate(pk, by, dt, None))
                if marks:
                    entry["ecn_marks"] = marks
                if depth or peak:
                    entry["queue_depth"], entry["queue_peak"] = depth, peak
                tm = (r.tm or {}).get(f"{p.port}/{tc}")
                if tm:
                    for key in ("pauses_sent", "pauses_received", "dropped", "paused"):
                        if tm.get(key):
                            entry[f"tm_{key}" if key == "dropped" else key] = tm[key]
                    if tm.get("depth") and "queue_depth" not in entry:
                        entry["queue_depth"] = tm["depth"]
                for key, cells in (("pauses_sent", r.pfc_tx), ("pauses_received", r.pfc_rx)):
                    n = cells[i].packets if i in cells else 0
                    if n:  # the program's PFC frames (totals), added to the TM's
                        entry[key] = entry.get(key, 0) + n
                if entry:
                    classes[str(tc)] = entry
            rxp, rxb = _delta(r.rx, old.rx if old else None, p.port)
            txp, txb = _delta(r.tx, old.tx if old else None, p.port)
            ports[str(p.port)] = {"peer": p.peer, "kind": p.kind,
                                  "rx": _rate(rxp, rxb, dt, None), "tx": _rate(txp, txb, dt, None),
                                  "rx_packets": r.rx[p.port].packets if p.port in r.rx else 0,
                                  "tx_packets": r.tx[p.port].packets if p.port in r.tx else 0,
                                  "classes": classes}
        drops = {}
        for idx, reason in DROP_REASONS.items():
            pk, _ = _delta(r.drops, old.drops if old else None, idx)
            total = r.drops[idx].packets if idx in r.drops else 0
            if pk or total:
                drops[reason] = {"interval": pk, "total": total}
        switches[name] = {"ports": ports, "drops": drops, "interval": round(dt, 3)}

    links: list[dict[str, Any]] = []
    tiers: dict[str, list[float]] = {}
    for lk in plan.links:
        up_dir = _direction(lk, now, before, dts, rates, up=True)
        down_dir = _direction(lk, now, before, dts, rates, up=False)
        link_id = lk.id
        alive = link_up(link_id)
        links.append({"id": link_id, "tier": lk.tier, "a": lk.a, "a_port": lk.a_port,
                      "b": lk.b, "b_port": lk.b_port, "rate_mbps": rates.get(lk.tier),
                      "up": alive, "a_to_b": up_dir, "b_to_a": down_dir})
        if up_dir is not None and alive and lk.tier != "host":
            tiers.setdefault(TIER_DIRECTIONS[lk.tier], []).append(up_dir["bps"])
    return {"at": time.time(), "switches": switches, "links": links,
            "tiers": {k: _imbalance(v) for k, v in tiers.items()}}


def _direction(lk: LinkPlan, now: dict[str, Reading], before: dict[str, Reading],
               dts: dict[str, float], rates: dict[str, float], *, up: bool) -> dict[str, Any] | None:
    """Load of one direction of a link: `up` = from a (lower tier) to b.

    Counted where the switch sends it (tx of the sending port); a host's
    sending is counted as rx of the RTSW port it reaches.
    """
    sender, s_port, receiver, r_port = ((lk.a, lk.a_port, lk.b, lk.b_port) if up
                                        else (lk.b, lk.b_port, lk.a, lk.a_port))
    if sender in now and sender in dts:
        pk, by = _delta(now[sender].tx, before[sender].tx, s_port)
        return _rate(pk, by, dts[sender], rates.get(lk.tier))
    if receiver in now and receiver in dts:
        pk, by = _delta(now[receiver].rx, before[receiver].rx, r_port)
        return _rate(pk, by, dts[receiver], rates.get(lk.tier))
    return None
