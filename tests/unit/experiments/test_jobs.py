"""Tests for experiments.jobs: rank orders, written out by hand from the topologies."""

from __future__ import annotations

from pathlib import Path

from experiments.jobs import alternating, racks_of, rail_hosts, rail_ring, ring_hops
from topologies.addressing import AddressPlan, plan_addresses
from topologies.spec import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[3]
# ai_zone_small's shape with one-NIC hosts and 4 CTSWs (the pinning experiment's fabric).
PIN = {"name": "pin", "racks": [{"count": 4, "hosts": 4, "nics": 1}], "ctsws": 4}


def _small() -> AddressPlan:
    return plan_addresses(load_spec(ROOT / "topologies" / "ai_zone_small.yaml"))


def test_alternating_racks_of_ai_zone_small() -> None:
    """Racks 1 and 2: h1-eth0 h3-eth0 h1-eth1 h3-eth1 h2-eth0 h4-eth0 h2-eth1 h4-eth1."""
    nics = alternating(_small(), [0, 1])
    assert nics == ["h1-eth0", "h3-eth0", "h1-eth1", "h3-eth1", "h2-eth0", "h4-eth0",
                    "h2-eth1", "h4-eth1"]
    hops = ring_hops(_small(), nics)
    assert [(a, b) for a, b, _ in hops] == [("rtsw1", "rtsw2"), ("rtsw2", "rtsw1")] * 4


def test_rail_ring_on_one_nic_hosts() -> None:
    """Host 1 of racks 1-4 (h1 h5 h9 h13), then host 2 of each, ..."""
    plan = plan_addresses(parse_spec(PIN))
    assert rail_ring(plan) == ["h1", "h5", "h9", "h13", "h2", "h6", "h10", "h14",
                               "h3", "h7", "h11", "h15", "h4", "h8", "h12", "h16"]


def test_rail_ring_sends_each_racks_nics_to_distinct_slices() -> None:
    """Each RTSW's 4 flows go to destination ports 1, 2, 3, 4 (one per slice)."""
    plan = plan_addresses(parse_spec(PIN))
    nic = {h.name: h.nics[0].intf for h in plan.hosts}
    hops = ring_hops(plan, [nic[h] for h in rail_ring(plan)])
    by: dict[str, list[int]] = {}
    for src, _dst, port in hops:
        by.setdefault(src, []).append(port)
    assert {k: sorted(v) for k, v in by.items()} == {
        "rtsw1": [1, 2, 3, 4], "rtsw2": [1, 2, 3, 4], "rtsw3": [1, 2, 3, 4],
        "rtsw4": [1, 2, 3, 4]}


def test_rail_hosts_of_some_racks() -> None:
    """Rack 1 hosts 1-2 and rack 3 host 1: h1 h9 h2."""
    plan = plan_addresses(parse_spec(PIN))
    assert rail_hosts(plan, [0, 2], [[0, 1], [0]]) == ["h1", "h9", "h2"]


def test_racks_of_nics() -> None:
    """h1-eth0 (rack 1) and h8-eth1 (rack 4) of ai_zone_small."""
    assert racks_of(_small(), ["h8-eth1", "h1-eth0"]) == ["rtsw1", "rtsw4"]
