"""The fabric as a graph: one node per switch and host, one edge per cable.

`build_graph(plan)` returns a `networkx.MultiGraph` (parallel uplinks are
separate edges). Node attributes: `kind` ("switch" | "host"), `role`
("rtsw" | "ctsw" | "atsw" | "host"), `zone`, and `plan` (the `SwitchPlan` or
`HostPlan`). Edge attributes: `tier`, `ports` ({node: port}), `intfs`
({node: interface}), `shape` (the tier's `LinkSpec`); the edge key is the
link id `LinkPlan.id`, "<a_intf>--<b_intf>", stable across runs. Route
computation and the flow-level model walk this graph; the Mininet builder
does not need it.

Names defined here: `build_graph`, `uplink_paths`.
"""

from __future__ import annotations

import networkx as nx

from .addressing import AddressPlan

__all__ = ["build_graph", "uplink_paths"]


def build_graph(plan: AddressPlan) -> nx.MultiGraph:
    """The fabric of `plan` as a MultiGraph (see the module docstring)."""
    g = nx.MultiGraph(name=plan.name)
    for s in plan.switches:
        g.add_node(s.name, kind="switch", role=s.role, zone=s.zone, plan=s)
    for h in plan.hosts:
        g.add_node(h.name, kind="host", role="host", zone=h.zone, plan=h)
    for link in plan.links:
        g.add_edge(
            link.a,
            link.b,
            key=link.id,
            tier=link.tier,
            ports={link.a: link.a_port, link.b: link.b_port},
            intfs={link.a: link.a_intf, link.b: link.b_intf},
            shape=link.shape,
        )
    return g


def uplink_paths(g: nx.MultiGraph, src_host: str, dst_host: str) -> list[list[str]]:
    """All shortest node paths between two hosts (how many ECMP choices a flow has)."""
    return [list(p) for p in nx.all_shortest_paths(g, src_host, dst_host)]
