"""Which server runs which switch and host of a fabric spread over several machines (pure).

`place_on_servers(plan, servers, fixed=None)` returns a `ServerPlacement`:
every node of the plan on one of `servers`, chosen to cut the fewest and
least loaded links between servers while giving each server the same number
of switch processes (the emulation's CPU goes to the switches):

- a host always runs beside its RTSW (its NIC links never cross servers);
- switches start in blocks of a breadth-first walk of the switch graph
  (neighbours together), then pairs of switches on different servers are
  swapped while a swap lowers the cut (a Kernighan-Lin pass over k
  servers; swaps keep the balance), on a networkx graph whose edge weight
  is the links' expected load;
- `fixed` (the topology's `servers.placement`) pins nodes to servers: a
  pinned switch never moves, a pinned host may leave its RTSW.

A link's expected load is its tier's rate in Mb/s (`LinkSpec.rate_mbps`):
under the fabric's non-blocking collectives every link runs near its rate,
so the rate stands for the per-link loads the flow model computes.

The first server is the machine that runs `aizone up` and the controller.
`ServerPlacement.crossing` lists the links between servers (each one a
tunnel when the fabric runs), `counts()` the switches and hosts per server.

Names defined here: `ServerPlacement`, `CrossingLink`, `place_on_servers`,
`parse_servers`, `servers_argument` (the same for argparse).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass

import networkx as nx

from .addressing import AddressPlan

__all__ = ["CrossingLink", "ServerPlacement", "parse_servers", "place_on_servers",
           "servers_argument"]


@dataclass(frozen=True, kw_only=True)
class CrossingLink:
    """A link whose two ends run on different servers (a tunnel between them)."""

    link: str  # the link id, "<a_intf>--<b_intf>"
    a: str
    b: str
    a_server: str
    b_server: str
    load_mbps: float  # its expected load: the tier's rate


@dataclass(frozen=True, kw_only=True)
class ServerPlacement:
    """Every node's server, and the links between servers."""

    servers: tuple[str, ...]
    nodes: Mapping[str, str]  # node name -> server
    crossing: tuple[CrossingLink, ...]

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
                "cut_load_mbps": self.cut_load_mbps}


def parse_servers(text: str, *, where: str = "--servers") -> tuple[str, ...]:
    """"a,b,c" -> ("a", "b", "c"); ValueError naming `where` for empty or repeated names."""
    names = tuple(n.strip() for n in text.split(","))
    if not names or any(not n for n in names):
        raise ValueError(f"{where} {text!r}: give server names separated by commas "
                         f"(e.g. localhost,10.0.0.2)")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{where} {text!r}: server {dup[0]} is named twice")
    return names


def servers_argument(text: str) -> tuple[str, ...]:
    """`--servers A,B,...` for argparse (`type=`): the names, or its error with the reason."""
    try:
        return parse_servers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def place_on_servers(plan: AddressPlan, servers: tuple[str, ...],
                     fixed: Mapping[str, str] | None = None) -> ServerPlacement:
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
    graph = _switch_graph(plan)
    switches = _bfs_order(graph, [s.name for s in plan.switches])
    where = _blocks(switches, servers, fixed)
    _refine(graph, where, frozenset(fixed))
    nodes = dict(where)
    for h in plan.hosts:
        nodes[h.name] = fixed.get(h.name, where[h.rtsw])
    crossing = tuple(
        CrossingLink(link=lk.id, a=lk.a, b=lk.b, a_server=nodes[lk.a], b_server=nodes[lk.b],
                     load_mbps=float(lk.shape.rate_mbps))
        for lk in plan.links if nodes[lk.a] != nodes[lk.b])
    return ServerPlacement(servers=servers, nodes=nodes, crossing=crossing)


def _switch_graph(plan: AddressPlan) -> nx.Graph:
    """Switches joined by their links' summed expected load."""
    graph = nx.Graph()
    graph.add_nodes_from(s.name for s in plan.switches)
    for lk in plan.links:
        if lk.tier == "host":
            continue
        old = graph.get_edge_data(lk.a, lk.b, {"weight": 0.0})["weight"]
        graph.add_edge(lk.a, lk.b, weight=old + float(lk.shape.rate_mbps))
    return graph


def _bfs_order(graph: nx.Graph, switches: list[str]) -> list[str]:
    """Switches in breadth-first order from the first, each component in turn (stable)."""
    seen: list[str] = []
    for start in switches:
        if start in seen:
            continue
        seen += [n for n in nx.bfs_tree(graph, start, sort_neighbors=sorted) if n not in seen]
    return seen


def _blocks(order: list[str], servers: tuple[str, ...],
            fixed: Mapping[str, str]) -> dict[str, str]:
    """Consecutive blocks of `order`, one per server, of equal size (pinned switches kept)."""
    where = {n: fixed[n] for n in order if n in fixed}
    size = -(-len(order) // len(servers))
    load = {s: sum(1 for n in where.values() if n == s) for s in servers}
    free = [n for n in order if n not in where]
    i = 0
    for node in free:
        while load[servers[i]] >= size:
            i += 1
        where[node] = servers[i]
        load[servers[i]] += 1
    return where


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


def _refine(graph: nx.Graph, where: dict[str, str], pinned: frozenset[str]) -> None:
    """Swap the pair of switches that lowers the cut most, while one does (in place)."""
    movable = sorted(n for n in where if n not in pinned)
    while True:
        best, pair = 1e-9, None
        for i, a in enumerate(movable):
            for b in movable[i + 1:]:
                if where[a] == where[b]:
                    continue
                gain = _cut_gain(graph, where, a, b)
                if gain > best:
                    best, pair = gain, (a, b)
        if pair is None:
            return
        a, b = pair
        where[a], where[b] = where[b], where[a]
