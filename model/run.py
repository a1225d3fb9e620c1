"""One model run: a topology, a job and a routing mode in; link loads, imbalance and time out.

`run_model(spec, plan, config)` places the job (`controller.placement`),
builds its steps (`model.flows`), routes every flow with the switches'
routes and hash (`model.forward`), adds up the bytes per directed link per
step and estimates the collective's time under max-min fair sharing
(`model.maxmin`). `Model(spec, plan, failed)` keeps the route graph and
link table, so sweeps and several modes reuse them.

What is reported (`ModelResult`, `to_json()`):

- `loads`: bytes per directed link per collective step (the mean over the
  collective's steps, weighted by how many steps each variant stands for),
  and `wire_loads` the same in frame bytes (headers included);
  `link_totals()` gives the whole collective's bytes per (link, direction),
  what `aizone run` counts on the switches;
- per tier and direction (`TIERS`): max, mean and max/mean over the
  directed links that leave a node sending job traffic in that tier-
  direction (so the idle uplinks of a busy RTSW count, the links of racks
  the job does not use do not);
- the bottleneck: the directed link with the highest load / rate;
- `time_s`: the sum over steps of each step's fluid completion time at
  the links' represented rates (payload bytes; headers not counted);
- flows routed, dropped (no route, a dead link) and looping.

Names defined here: `ModelConfig`, `ModelResult`, `Model`, `run_model`, `TierStats`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from controller.choices import STRATEGIES as PLACEMENTS
from controller.placement import place
from controller.routegraph import RouteGraph, check_mode
from topologies.addressing import AddressPlan
from traffic.connections import check_qp_strategy

from .flows import Flows, collective_steps
from .forward import MAX_HOPS, TIERS, LinkTable, route_flows
from .maxmin import completion_time

__all__ = ["Model", "ModelConfig", "ModelResult", "TierStats", "run_model"]


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """What to model (the `aizone model` options)."""

    pattern: str = "ring"
    ranks: int | None = None  # None: every NIC
    placement: str = "packed"
    mode: str = "eecmp"
    qps: int = 1
    strategy: str = "rr"
    size: int = 1 << 30  # bytes per rank's buffer
    message_size: int | None = 1 << 20  # None: each step's bytes as one message (aizone run's)
    sport_per_qp: bool = False
    failed: tuple[str, ...] = ()
    seed: int = 0
    max_steps: int = 16  # all-to-all steps evaluated (an evenly spaced sample beyond)
    timing: bool = True  # estimate the time (max-min); off: loads only
    rel_tol: float = 0.02  # max-min rounds merge rates within 2 % (model.maxmin)
    max_events: int = 2  # fluid re-allocations per step (model.maxmin)

    def check(self) -> None:
        """Raise ValueError for an unknown mode, QP strategy or placement, or a bad size."""
        check_mode(self.mode)
        check_qp_strategy(self.strategy)
        if self.placement not in PLACEMENTS:
            raise ValueError(f"unknown placement {self.placement!r} "
                             f"(choose from {', '.join(PLACEMENTS)})")
        if not 1 <= self.qps <= 255:
            raise ValueError(f"qps={self.qps}: must be 1..255")
        if self.size < 1 or (self.message_size is not None and self.message_size < 1):
            raise ValueError("size and message size must be >= 1 byte")


@dataclass(frozen=True, kw_only=True)
class TierStats:
    """Loads of one tier-direction's links (bytes per step): max, mean and max/mean."""

    tier: str
    links: int  # directed links counted
    max_bytes: float
    mean_bytes: float
    imbalance: float  # max / mean (0 when the tier carries nothing)


@dataclass(frozen=True, kw_only=True)
class ModelResult:
    """What one run found (module docstring)."""

    topology: str
    config: ModelConfig
    ranks: int
    steps: int
    sampled_steps: bool
    flows_per_step: int
    dropped_flows: int
    looping_flows: int
    tiers: tuple[TierStats, ...]
    bottleneck: str
    bottleneck_bytes: float
    bottleneck_utilisation_s: float  # bottleneck bytes / its rate: seconds per step at best
    time_s: float
    loads: npt.NDArray[np.float64] = field(repr=False)
    wire_loads: npt.NDArray[np.float64] = field(repr=False)  # frame bytes, as `loads`
    links: LinkTable = field(repr=False)

    def tier(self, name: str) -> TierStats:
        """The stats of tier-direction `name` (one of `TIERS`)."""
        return next(t for t in self.tiers if t.tier == name)

    def link_loads(self) -> dict[str, float]:
        """Bytes per step by '<link id> up|down', for the links that carry any."""
        return {self.links.name(int(d)): float(self.loads[d]) for d in np.flatnonzero(self.loads)}

    def link_totals(self, *, wire: bool = True) -> dict[tuple[str, str], float]:
        """Bytes per (link id, "up"|"down") over the whole collective, for the links that
        carry any: frame bytes (what the switches' tx counters count of the job's data) or,
        `wire=False`, payload bytes. A sampled all-to-all gives the sample's estimate."""
        loads = (self.wire_loads if wire else self.loads) * self.steps
        return {(self.links.ids[self.links.link[d]], TIERS[self.links.tier[d]].split()[1]):
                float(loads[d]) for d in np.flatnonzero(loads)}

    def to_json(self, *, with_links: bool = True) -> dict[str, Any]:
        """The result as JSON-ready data; `with_links` adds every loaded link's bytes."""
        out: dict[str, Any] = {
            "topology": self.topology, "config": asdict(self.config), "ranks": self.ranks,
            "steps": self.steps, "sampled_steps": self.sampled_steps,
            "flows_per_step": self.flows_per_step, "dropped_flows": self.dropped_flows,
            "looping_flows": self.looping_flows,
            "tiers": [asdict(t) for t in self.tiers],
            "bottleneck": {"link": self.bottleneck, "bytes_per_step": self.bottleneck_bytes,
                           "seconds_per_step": self.bottleneck_utilisation_s},
            "time_s": self.time_s,
        }
        if with_links:
            out["links"] = self.link_loads()
        return out


class Model:
    """A fabric ready to be modelled: its live route graph and directed links."""

    def __init__(self, spec: Any, plan: AddressPlan, failed: frozenset[str] = frozenset()) -> None:
        self.spec = spec
        self.plan = plan
        self.graph = RouteGraph(plan, failed)
        self.links = LinkTable(self.graph, spec)
        host_index = {h.name: i for i, h in enumerate(plan.hosts)}
        self._hosts = np.array([host_index[n.host] for n in plan.nics()], dtype=np.int64)
        self._ips = [n.ip for n in plan.nics()]

    def run(self, config: ModelConfig) -> ModelResult:
        """Place, build, route and time the job `config` describes on this fabric."""
        config.check()
        if frozenset(config.failed) != self.graph.failed:
            return Model(self.spec, self.plan, frozenset(config.failed)).run(config)
        n = config.ranks or len(self.graph.nic_ips)
        nics = place(self.plan, n, config.pattern, config.placement, config.seed)
        where = np.array([self.graph.nic_index[x.intf] for x in nics], dtype=np.int64)
        steps = collective_steps(config.pattern, where, config.size, ips=self._ips,
                                 qps=config.qps, strategy=config.strategy,
                                 message_size=config.message_size,
                                 sport_per_qp=config.sport_per_qp,
                                 max_steps=config.max_steps, hosts=self._hosts,
                                 path_mtu=self.plan.path_mtu)
        n_links = len(self.links)
        weights = np.array([w for w, _ in steps.variants])
        weights = weights / weights.sum()
        # Route every variant's flows in one pass (the per-switch work is shared).
        sizes = [len(f) for _, f in steps.variants]
        var_of = np.repeat(np.arange(len(sizes)), sizes)
        flows = Flows(**{k: np.concatenate([getattr(f, k) for _, f in steps.variants])
                         for k in ("src", "dst", "sport", "dport", "qp", "size", "wire")})
        r = route_flows(self.graph, self.links, flows, config.mode)
        ok = r.delivered[r.flow_of]
        loads: npt.NDArray[np.float64] = np.bincount(
            r.link_of[ok], weights=(flows.size * weights[var_of])[r.flow_of[ok]],
            minlength=n_links).astype(np.float64)
        wire = flows.size if flows.wire is None else flows.wire
        wire_loads: npt.NDArray[np.float64] = np.bincount(
            r.link_of[ok], weights=(wire * weights[var_of])[r.flow_of[ok]],
            minlength=n_links).astype(np.float64)
        lost = ~r.delivered
        dropped = int(np.sum(lost & (r.hops < MAX_HOPS))) // len(sizes)
        looping = int(np.sum(lost & (r.hops >= MAX_HOPS))) // len(sizes)
        time_s = 0.0
        if config.timing:
            starts = np.concatenate([[0], np.cumsum(sizes)])
            pair_var = var_of[r.flow_of]
            for v, (w, _f) in enumerate(steps.variants):
                sel = (pair_var == v) & ok
                t, _ = completion_time(r.flow_of[sel] - starts[v], r.link_of[sel],
                                       np.where(r.delivered[starts[v]:starts[v + 1]],
                                                flows.size[starts[v]:starts[v + 1]], 0.0),
                                       self.links.capacity, max_events=config.max_events,
                                       rel_tol=config.rel_tol)
                time_s += w * t
        flows_per_step = max(sizes)
        tiers = _tier_stats(self.links, loads)
        seconds = loads * 8 / self.links.capacity
        b = int(np.argmax(seconds)) if n_links else 0
        return ModelResult(
            topology=self.plan.name, config=config, ranks=n, steps=steps.steps,
            sampled_steps=steps.sampled, flows_per_step=flows_per_step, dropped_flows=dropped,
            looping_flows=looping, tiers=tiers, bottleneck=self.links.name(b),
            bottleneck_bytes=float(loads[b]), bottleneck_utilisation_s=float(seconds[b]),
            time_s=time_s if config.timing else float("nan"), loads=loads,
            wire_loads=wire_loads, links=self.links)


def _tier_stats(links: LinkTable, loads: npt.NDArray[np.float64]) -> tuple[TierStats, ...]:
    busy_src: dict[int, set[str]] = {}
    for d in np.flatnonzero(loads).tolist():
        busy_src.setdefault(int(links.tier[d]), set()).add(links.src[d])
    out = []
    for t, name in enumerate(TIERS):
        srcs = busy_src.get(t, set())
        sel = np.array([links.tier[d] == t and links.src[d] in srcs for d in range(len(links))],
                       dtype=bool) if srcs else np.zeros(len(links), dtype=bool)
        vals = loads[sel]
        mx = float(vals.max()) if len(vals) else 0.0
        mean = float(vals.mean()) if len(vals) else 0.0
        out.append(TierStats(tier=name, links=int(sel.sum()), max_bytes=mx, mean_bytes=mean,
                             imbalance=mx / mean if mean else 0.0))
    return tuple(out)


def run_model(spec: Any, plan: AddressPlan, config: ModelConfig) -> ModelResult:
    """One run on a fresh `Model` (see `Model.run`)."""
    return Model(spec, plan, frozenset(config.failed)).run(config)
