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
    g = build_graph(plan_addresses(load_spec(ROOT / "topologies" / "ai_zone_small.yaml")))
    paths = uplink_paths(g, "h1", "h3")
    assert sorted(p[2] for p in paths) == ["ctsw1", "ctsw2"]


def test_every_link_of_the_plan_is_an_edge() -> None:
    """two-zones.yaml: edges == links of the plan."""
    plan = plan_addresses(load_spec(ROOT / "topologies" / "two_zones.yaml"))
    g = build_graph(plan)
    assert g.number_of_edges() == len(plan.links)


def test_edge_keys_are_the_link_ids() -> None:
    """ai_zone_small: the edge rtsw1-ctsw1 is keyed "rtsw1-eth5--ctsw1-eth1", as LinkPlan.id."""
    plan = plan_addresses(load_spec(ROOT / "topologies" / "ai_zone_small.yaml"))
    g = build_graph(plan)
    assert list(g.get_edge_data("rtsw1", "ctsw1")) == ["rtsw1-eth5--ctsw1-eth1"]
    assert {k for _, _, k in g.edges(keys=True)} == {lk.id for lk in plan.links}


def test_meta_24k_graph_has_every_node_and_cable() -> None:
    """1,689 switches + 3,072 hosts; 24,576 + 27,648 + 3,888 edges."""
    g = build_graph(plan_addresses(load_spec(ROOT / "topologies" / "meta_24k.yaml")))
    assert (g.number_of_nodes(), g.number_of_edges()) == (1689 + 3072, 24576 + 27648 + 3888)
    assert g.degree("ctsw1") == 192 + 27
