"""Which server runs which switch and host of a fabric spread over several machines (pure).

`place_on_servers(plan, servers, fixed=None, loads=None)` returns a
`ServerPlacement`: every node of the plan on one of `servers`, chosen to
cut the fewest and least loaded links between servers while balancing the
switches' work across servers (the emulation's CPU goes to the switches,
per frame):

- a host always runs beside its RTSW (its NIC links never cross servers);
- switches start in blocks of a breadth-first walk of the switch graph
  (neighbours together), each block holding a server's share of the
  switches' work; while the busiest server is past its share plus
  `BALANCE_SLACK`, the one move of a switch, or swap of two, that evens the
  servers' work most is made; then pairs of switches on different servers
  are swapped
  while a swap lowers the cut without taking any server past its share
  plus `BALANCE_SLACK` (a Kernighan-Lin pass over k servers), on a
  networkx graph whose edge weight is the links' expected load;
- `fixed` (the topology's `servers.placement`) pins nodes to servers: a
  pinned switch never moves, a pinned host may leave its RTSW.

`loads` (link id -> Mb/s, both ways: `controller.expectedload`, the flow
model's rule on a reference collective) gives each link's expected load
and each switch's work, the Mb/s of every link it touches, host links
included (its frames per second, up to the frame size). Without it every
link is taken to run at its tier's rate (`LinkSpec.rate_mbps`) and every
switch to be as busy as any other. A link the loads leave out (no traffic
expected) still weighs a thousandth of its rate, so among unloaded links
the cut still takes the fewest.

The first server is the machine that runs `aizone up` and the controller.
`ServerPlacement.crossing` lists the links between servers (each one a
tunnel when the fabric runs), `counts()` the switches and hosts per server,
`switch_load_mbps` each server's switch work.

The `--servers` list is read by `topologies.servernames`.

Names defined here: `ServerPlacement`, `CrossingLink`, `place_on_servers`, `BALANCE_SLACK`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import networkx as nx

from .addressing import AddressPlan, LinkPlan

__all__ = ["BALANCE_SLACK", "CrossingLink", "ServerPlacement", "place_on_servers"]

# How far past its share of the switches' work a swap may take a server (a fraction).
BALANCE_SLACK = 0.05
# The weight of a link no load is expected on, per Mb/s of its rate.
_IDLE_WEIGHT = 1e-3


@dataclass(frozen=True, kw_only=True)
class CrossingLink:
    """A link whose two ends run on different servers (a tunnel between them)."""

    link: str  # the link id, "<a_intf>--<b_intf>"
    a: str
    b: str
    a_server: str
    b_server: str
    load_mbps: float  # its expected load: the loads' figure, else the tier's rate


@dataclass(frozen=True, kw_only=True)
class ServerPlacement:
    """Every node's server, and the links between servers."""

    servers: tuple[str, ...]
    nodes: Mapping[str, str]  # node name -> server
    crossing: tuple[CrossingLink, ...]
    # server -> the expected Mb/s through its switches (every link they touch, each end
    # counted); empty when the placement had no loads to go by.
    switch_load_mbps: Mapping[str, float]

    def server_of(self, node: str) -> str:
        """The server `node` runs on (KeyError naming it when the plan has no such node)."""
        try:
            return self.nodes[node]
        except KeyError:
            raise KeyError(f"{node} is not a node of this fabric") from None

    def counts(self) -> dict[str, tuple[int, int]]:
        """server -> (switches, hosts) placed on it."""
        out = {s: [0, 0] for s in self.servers}
        for node, server in self.nodes.items():
            out[server][0 if not node.startswith("h") else 1] += 1
        return {s: (c[0], c[1]) for s, c in out.items()}

    @property
    def cut_load_mbps(self) -> float:
        """The expected load of all crossing links together."""
        return sum(c.load_mbps for c in self.crossing)

    def to_json(self) -> dict[str, object]:
        """The placement as `aizone topo show --servers --json` prints it."""
        return {"servers": list(self.servers), "nodes": dict(self.nodes),
                "counts": {s: {"switches": c[0], "hosts": c[1]}
                           for s, c in self.counts().items()},
                "crossing": [{"link": c.link, "a": c.a, "b": c.b, "a_server": c.a_server,
                              "b_server": c.b_server, "load_mbps": c.load_mbps}
                             for c in self.crossing],
                "cut_load_mbps": self.cut_load_mbps,
                "switch_load_mbps": dict(self.switch_load_mbps)}


def place_on_servers(plan: AddressPlan, servers: tuple[str, ...],
                     fixed: Mapping[str, str] | None = None, *,
                     loads: Mapping[str, float] | None = None) -> ServerPlacement:
    """Every node of `plan` on one of `servers` (see the module docstring)."""
    if not servers:
        raise ValueError("a placement needs at least one server")
    fixed = dict(fixed or {})
    names = {s.name for s in plan.switches} | {h.name for h in plan.hosts}
    for node, server in sorted(fixed.items()):
        if node not in names:
            raise ValueError(f"servers.placement: {node} is not a node of {plan.name}")
        if server not in servers:
            raise ValueError(f"servers.placement: {node} is on {server!r}, which is not one "
                             f"of the servers ({', '.join(servers)})")
    known = {lk.id for lk in plan.links}
    for link, mbps in sorted((loads or {}).items()):
        if link not in known or not mbps >= 0:
            raise ValueError(f"loads: {link}: {mbps!r} Mb/s is not a load of a link of "
                             f"{plan.name}")

    def load(lk: LinkPlan) -> float:
        if loads is None:
            return float(lk.shape.rate_mbps)
        return float(loads.get(lk.id, 0.0)) + _IDLE_WEIGHT * float(lk.shape.rate_mbps)

    graph = _switch_graph(plan, load)
    work = {s.name: 1.0 for s in plan.switches}
    if loads is not None:
        switch_names = set(work)
        work = {name: 0.0 for name in work}
        for lk in plan.links:
            for end in (lk.a, lk.b):
                if end in switch_names:
                    work[end] += float(loads.get(lk.id, 0.0))
    switches = _bfs_order(graph, [s.name for s in plan.switches])
    where = _blocks(switches, servers, fixed, work)
    _balance(graph, where, frozenset(fixed), work, servers)
    _refine(graph, where, frozenset(fixed), work, servers)
    nodes = dict(where)
    for h in plan.hosts:
        nodes[h.name] = fixed.get(h.name, where[h.rtsw])
    crossing = tuple(
        CrossingLink(link=lk.id, a=lk.a, b=lk.b, a_server=nodes[lk.a], b_server=nodes[lk.b],
                     load_mbps=float(loads.get(lk.id, 0.0)) if loads is not None
                     else float(lk.shape.rate_mbps))
        for lk in plan.links if nodes[lk.a] != nodes[lk.b])
    per_server = ({s: sum(w for n, w in work.items() if where[n] == s) for s in servers}
                  if loads is not None else {})
    return ServerPlacement(servers=servers, nodes=nodes, crossing=crossing,
                           switch_load_mbps=per_server)


def _switch_graph(plan: AddressPlan, load: Callable[[LinkPlan], float]) -> nx.Graph:
    """Switches joined by their links' summed expected load."""
    graph = nx.Graph()
    graph.add_nodes_from(s.name for s in plan.switches)
    for lk in plan.links:
        if lk.tier == "host":
            continue
        old = graph.get_edge_data(lk.a, lk.b, {"weight": 0.0})["weight"]
        graph.add_edge(lk.a, lk.b, weight=old + load(lk))
    return graph


def _bfs_order(graph: nx.Graph, switches: list[str]) -> list[str]:
    """Switches in breadth-first order from the first, each component in turn (stable)."""
    seen: list[str] = []
    for start in switches:
        if start in seen:
            continue
        seen += [n for n in nx.bfs_tree(graph, start, sort_neighbors=sorted) if n not in seen]
    return seen


def _blocks(order: list[str], servers: tuple[str, ...], fixed: Mapping[str, str],
            work: Mapping[str, float]) -> dict[str, str]:
    """Consecutive blocks of `order`, one per server, each about a server's share of the
    switches' `work` (pinned switches kept where they are, and counted)."""
    where = {n: fixed[n] for n in order if n in fixed}
    share = sum(work.values()) / len(servers)
    taken = {s: sum(work[n] for n, on in where.items() if on == s) for s in servers}
    i = 0
    for node in (n for n in order if n not in where):
        while i < len(servers) - 1 and _full(taken[servers[i]], work[node], share):
            i += 1
        where[node] = servers[i]
        taken[servers[i]] += work[node]
    return where


def _full(held: float, node: float, share: float) -> bool:
    """Does a server holding `held` take no node of work `node` more: it holds its `share`,
    or it holds some and would end further past its share with the node than short without."""
    return held >= share or (held > 0 and held + node - share > share - held)


def _cut_gain(graph: nx.Graph, where: dict[str, str], a: str, b: str) -> float:
    """How much the cut's load drops when `a` and `b` (on different servers) swap servers."""
    sa, sb = where[a], where[b]

    def cost(node: str, server: str, other: str) -> float:
        total = 0.0
        for peer, data in graph[node].items():
            if peer == other:
                continue  # the a-b edge crosses before and after a swap
            total += data["weight"] if where[peer] != server else 0.0
        return total

    before = cost(a, sa, b) + cost(b, sb, a)
    after = cost(a, sb, b) + cost(b, sa, a)
    return before - after


def _move_cost(graph: nx.Graph, where: dict[str, str], node: str, to: str) -> float:
    """How much the cut's load grows when `node` alone moves to server `to`."""
    here = where[node]
    return sum(data["weight"] * ((where[peer] != to) - (where[peer] != here))
               for peer, data in graph[node].items())


def _balance(graph: nx.Graph, where: dict[str, str], pinned: frozenset[str],
             work: Mapping[str, float], servers: tuple[str, ...]) -> None:
    """While the busiest server holds more than its share plus `BALANCE_SLACK`: move one
    switch to a less busy server, or swap two, whichever evens the servers' work most (the
    sum of the squares of their loads drops most; of equals, the one that grows the cut
    least). Each step lowers that sum, so this ends (in place)."""
    cap = sum(work.values()) / len(servers) * (1 + BALANCE_SLACK)
    taken = {s: sum(w for n, w in work.items() if where[n] == s) for s in servers}
    movable = sorted(n for n in where if n not in pinned)
    while max(taken.values()) > cap:
        best: tuple[float, float, str, str | None, str] | None = None
        for x in movable:
            for y in [None, *movable]:
                to = where[y] if y is not None else None
                for t in ([to] if to is not None else [s for s in servers]):
                    here = where[x]
                    if t == here:
                        continue
                    shift = work[x] - (work[y] if y is not None else 0.0)
                    gap = taken[here] - taken[t]
                    # Strictly between 0 and the gap, by more than rounding: a shift of
                    # the whole gap would only trade the two loads, back and forth.
                    if not 0 < shift < gap - 1e-6 * gap:
                        continue
                    evens = 2 * shift * (gap - shift)
                    cost = _move_cost(graph, where, x, t)
                    if y is not None:
                        where[x] = t  # y's move is priced with x already gone over
                        cost += _move_cost(graph, where, y, here)
                        where[x] = here
                    key = (-evens, cost, x, y, t)
                    if best is None or key[:2] < best[:2]:
                        best = key
        if best is None:
            return
        _, _, x, y, t = best
        here = where[x]
        shift = work[x] - (work[y] if y is not None else 0.0)
        where[x] = t
        if y is not None:
            where[y] = here
        taken[here] -= shift
        taken[t] += shift


def _refine(graph: nx.Graph, where: dict[str, str], pinned: frozenset[str],
            work: Mapping[str, float], servers: tuple[str, ...]) -> None:
    """Swap the pair of switches that lowers the cut most, while one does and no server ends
    past the larger of its share plus `BALANCE_SLACK` and the busiest server now (in place)."""
    movable = sorted(n for n in where if n not in pinned)
    cap = sum(work.values()) / len(servers) * (1 + BALANCE_SLACK)
    taken = {s: sum(w for n, w in work.items() if where[n] == s) for s in servers}
    while True:
        limit = max(cap, *taken.values())
        best, pair = 1e-9, None
        for i, a in enumerate(movable):
            for b in movable[i + 1:]:
                sa, sb = where[a], where[b]
                if sa == sb:
                    continue
                delta = work[b] - work[a]  # what server sa gains from the swap
                if max(taken[sa] + delta, taken[sb] - delta) > limit + 1e-9:
                    continue
                gain = _cut_gain(graph, where, a, b)
                if gain > best:
                    best, pair = gain, (a, b)
        if pair is None:
            return
        a, b = pair
        delta = work[b] - work[a]
        taken[where[a]] += delta
        taken[where[b]] -= delta
        where[a], where[b] = where[b], where[a]
