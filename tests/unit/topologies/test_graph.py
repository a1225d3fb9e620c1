"""Tests for topologies.graph: nodes, parallel edges and paths of the fabric graph."""

from __future__ import annotations

from pathlib import Path

from topologies.addressing import plan_addresses
from topologies.graph import build_graph, uplink_paths
from topologies.spec import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[3]


def test_rack_graph_is_a_star() -> None:
    """rack.yaml: rtsw1 joined to h1 and h2."""
    g = build_graph(plan_addresses(load_spec(ROOT / "topologies" / "rack.yaml")))
    assert sorted(g.nodes) == ["h1", "h2", "rtsw1"]
    assert sorted(g.neighbors("rtsw1")) == ["h1", "h2"]
    assert g.nodes["rtsw1"]["role"] == "rtsw" and g.nodes["h1"]["kind"] == "host"
    (data,) = g.get_edge_data("h1", "rtsw1").values()
    assert data["ports"] == {"h1": 0, "rtsw1": 1} and data["tier"] == "host"


def test_parallel_uplinks_are_separate_edges() -> None:
    """Two uplinks from one RTSW to one CTSW are two edges."""
    spec = parse_spec({"racks": [{"hosts": 1, "count": 2, "uplinks": 2}], "ctsws": 1},
                      source="p.yaml")
    g = build_graph(plan_addresses(spec))
    assert g.number_of_edges("rtsw1", "ctsw1") == 2


def test_hosts_in_other_racks_have_one_path_per_ctsw() -> None:
    """zone.yaml: h1 -> h3 crosses one of the 2 CTSWs."""
    g = build_graph(plan_addresses(load_spec(ROOT / "topologies" / "zone.yaml")))
    paths = uplink_paths(g, "h1", "h3")
    assert sorted(p[2] for p in paths) == ["ctsw1", "ctsw2"]


def test_every_link_of_the_plan_is_an_edge() -> None:
    """two-zones.yaml: edges == links of the plan."""
    plan = plan_addresses(load_spec(ROOT / "topologies" / "two-zones.yaml"))
    g = build_graph(plan)
    assert g.number_of_edges() == len(plan.links)
