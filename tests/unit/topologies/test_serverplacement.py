"""Tests for topologies.serverplacement: where each node runs, cuts worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from topologies.addressing import AddressPlan, plan_addresses
from topologies.servernames import parse_servers
from topologies.serverplacement import place_on_servers
from topologies.spec import SpecError, load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[3]


def plan_of(name: str) -> AddressPlan:
    return plan_addresses(load_spec(ROOT / "topologies" / f"{name}.yaml"))


def test_ai_zone_small_on_two_servers_cuts_one_uplink_per_rack() -> None:
    """Each server: one CTSW and two racks; every RTSW's uplink to the other CTSW crosses.

    Any split of 3 + 3 switches other than one CTSW per side cuts more: both CTSWs
    with one RTSW leave 3 racks x 2 uplinks crossing; so 4 uplinks of 20 Mb/s is least.
    """
    placement = place_on_servers(plan_of("ai_zone_small"), ("a", "b"))
    assert placement.counts() == {"a": (3, 4), "b": (3, 4)}
    for server in ("a", "b"):
        on = {n for n, s in placement.nodes.items() if s == server}
        assert len({n for n in on if n.startswith("ctsw")}) == 1, on
    assert len(placement.crossing) == 4
    assert placement.cut_load_mbps == 80.0
    for c in placement.crossing:
        assert {c.a[:4], c.b[:4]} == {"rtsw", "ctsw"} and c.a_server != c.b_server


def test_hosts_run_beside_their_rack_switch() -> None:
    """No host link crosses servers: a host is placed with its RTSW."""
    plan = plan_of("ai_zone")
    placement = place_on_servers(plan, ("a", "b", "c"))
    for h in plan.hosts:
        assert placement.server_of(h.name) == placement.server_of(h.rtsw)
    assert all(not c.a.startswith("h") for c in placement.crossing)
    assert sorted(sw for sw, _h in placement.counts().values()) == [4, 4, 4]


def test_one_server_holds_everything_and_nothing_crosses() -> None:
    plan = plan_of("ai_zone_small")
    placement = place_on_servers(plan, ("only",))
    assert set(placement.nodes.values()) == {"only"} and placement.crossing == ()


def test_pinned_nodes_stay_where_the_file_puts_them() -> None:
    """A pinned switch keeps its server (its hosts follow it); a pinned host may leave it."""
    placement = place_on_servers(plan_of("ai_zone_small"), ("a", "b"),
                                 {"rtsw1": "b", "rtsw2": "b", "h3": "a"})
    assert placement.server_of("rtsw1") == placement.server_of("rtsw2") == "b"
    assert placement.server_of("h1") == "b"
    assert placement.server_of("h3") == "a"
    assert any(c.a == "h3" for c in placement.crossing)


@pytest.mark.parametrize(("fixed", "message"), [
    ({"rtsw9": "a"}, "servers.placement: rtsw9 is not a node of ai_zone_small"),
    ({"rtsw1": "c"}, "servers.placement: rtsw1 is on 'c', which is not one of the servers (a, b)"),
], ids=["unknown-node", "unknown-server"])
def test_bad_pinning_names_the_node(fixed: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        place_on_servers(plan_of("ai_zone_small"), ("a", "b"), fixed)


@pytest.mark.parametrize(("text", "message"), [
    ("a,,b", "give server names separated by commas"),
    ("a,b,a", "server a is named twice"),
], ids=["empty", "twice"])
def test_bad_server_lists_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_servers(text)


def test_topology_servers_section_is_read_and_checked() -> None:
    """`servers:` names and pins; a pin on a server not named is refused, naming the key."""
    spec = parse_spec({"racks": [{"hosts": 1}], "servers": {"names": ["here", "there"],
                                                            "placement": {"rtsw1": "there"}}})
    assert spec.servers is not None and spec.servers.names == ["here", "there"]
    with pytest.raises(SpecError, match="servers: .*placement: rtsw1 is on 'elsewhere'"):
        parse_spec({"racks": [{"hosts": 1}], "servers": {"names": ["here"],
                                                         "placement": {"rtsw1": "elsewhere"}}})


def _uniform_but_rack1(plan: AddressPlan) -> dict[str, float]:
    """Every link 10 Mb/s, but rtsw1's four host links 40 Mb/s each."""
    return {lk.id: 40.0 if lk.tier == "host" and lk.b == "rtsw1" else 10.0 for lk in plan.links}


def test_loads_balance_the_switches_work_not_their_number() -> None:
    """A busy rack gets a server's share to itself and one CTSW, worked by hand.

    Work (Mb/s through a switch, every link it touches): rtsw1 4 x 40 + 2 x 10 = 180;
    rtsw2-4 4 x 10 + 2 x 10 = 60 each; ctsw1, ctsw2 4 x 10 = 40 each; 440 in all, 220 a
    server. Only rtsw1 with one CTSW makes 220 (the three other racks with the other CTSW
    the other 220); by count (3 + 3) the side with rtsw1 would hold 280 against 160.
    """
    plan = plan_of("ai_zone_small")
    placement = place_on_servers(plan, ("a", "b"), loads=_uniform_but_rack1(plan))
    side = placement.server_of("rtsw1")
    mine = {n for n, s in placement.nodes.items() if s == side and not n.startswith("h")}
    assert mine in ({"rtsw1", "ctsw1"}, {"rtsw1", "ctsw2"}), mine
    assert placement.switch_load_mbps == {"a": 220.0, "b": 220.0}
    # Cut: rtsw1's uplink to the other CTSW and the three other racks' uplinks to this one.
    assert len(placement.crossing) == 4
    assert placement.cut_load_mbps == 40.0
    assert placement.to_json()["switch_load_mbps"] == {"a": 220.0, "b": 220.0}


def test_a_link_without_load_weighs_nothing_in_the_crossing_figures() -> None:
    """Loads that leave out every uplink (none expected there): the crossing uplinks carry
    0 Mb/s, and still the fewest of them cross (a thousandth of their rate each)."""
    plan = plan_of("ai_zone_small")
    loads = {lk.id: 10.0 for lk in plan.links if lk.tier == "host"}
    placement = place_on_servers(plan, ("a", "b"), loads=loads)
    assert placement.cut_load_mbps == 0.0
    assert len(placement.crossing) == 4  # as by rates: one uplink per rack
    assert placement.switch_load_mbps == {"a": 80.0, "b": 80.0}  # two racks of 4 x 10 each


def test_a_load_on_no_link_of_the_plan_is_refused() -> None:
    with pytest.raises(ValueError, match=r"loads: rtsw9-eth1--ctsw1-eth9: 5.0 Mb/s is not a "
                                         r"load of a link of ai_zone_small"):
        place_on_servers(plan_of("ai_zone_small"), ("a", "b"),
                         loads={"rtsw9-eth1--ctsw1-eth9": 5.0})
