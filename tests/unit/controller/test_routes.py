"""Tests for controller.routes: what each switch gets, computed from the plan alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.entities import Action, Exact, Lpm, TableEntry
from controller.routes import MODE_VALUES, NAMES, UPLINK_GROUP, compute_all, compute_routes
from topologies.addressing import ip_to_int, mac_to_int, plan_addresses
from topologies.spec import load_spec

ROOT = Path(__file__).resolve().parents[3]


def plan(name: str):
    return plan_addresses(load_spec(ROOT / "topologies" / f"{name}.yaml"))


def routes_of(entries, table=NAMES["route_table"]):
    """{(prefix, len): next_id or 'drop'} of a switch's route table."""
    out = {}
    for e in entries.entries:
        if e.table != table:
            continue
        (_, m), = e.match
        nid = dict(e.action.params).get("next_id", "drop")
        out[(str_ip(m.value), m.prefix_len)] = nid
    return out


def str_ip(n: int) -> str:
    return ".".join(str((n >> s) & 0xFF) for s in (24, 16, 8, 0))


def test_rack_rtsw_answers_arp_for_each_gateway_with_its_port_mac() -> None:
    """rack.yaml: one ARP entry per host port, replying with that port's MAC."""
    p = plan("rack")
    got = [e for e in compute_routes(p, "rtsw1").entries if e.table == NAMES["arp_table"]]
    sw = p.switch("rtsw1")
    assert got == [
        TableEntry(table=NAMES["arp_table"],
                   match=(("target_ip", Exact(value=ip_to_int(port.gateway_ip))),),
                   action=Action(name=NAMES["arp_action"],
                                 params=(("router_mac", mac_to_int(port.mac)),)))
        for port in sw.ports_of("host")
    ]


def test_rack_rtsw_routes_each_host_slash_32_to_its_port() -> None:
    """rack.yaml: h1 -> next_id 1, h2 -> next_id 2, the rest of the rack dropped."""
    assert routes_of(compute_routes(plan("rack"), "rtsw1")) == {
        ("10.0.0.1", 32): 1, ("10.0.0.3", 32): 2, ("10.0.0.0", 24): "drop"}


def test_rack_next_hops_rewrite_macs_towards_the_host() -> None:
    """Member per port: set_output(port, port MAC, host MAC); next_hop refers to it."""
    p = plan("rack")
    e = compute_routes(p, "rtsw1")
    sw = p.switch("rtsw1")
    member = {m.member_id: m for m in e.members}[2]
    assert member.profile == NAMES["selector"]
    assert member.action == Action(name=NAMES["next_action"], params=(
        ("port", 2), ("src_mac", mac_to_int(sw.port(2).mac)),
        ("dst_mac", mac_to_int(p.host("h2").nics[0].mac))))
    nh = [x for x in e.entries if x.table == NAMES["next_table"]]
    assert [(dict(x.match)["next_id"], x.member_id) for x in nh] == [
        (Exact(value=1), 1), (Exact(value=2), 2)]
    assert not e.groups


@pytest.mark.parametrize("mode", sorted(MODE_VALUES), ids=sorted(MODE_VALUES))
def test_switch_config_default_sets_mode_and_salt(mode: str) -> None:
    """The switch_config default action carries the mode value and the device id as salt."""
    (d,) = compute_routes(plan("rack"), "rtsw1", mode).defaults
    assert d.is_default and d.table == NAMES["config_table"]
    assert dict(d.action.params) == {"mode": MODE_VALUES[mode], "salt": 1}


@pytest.mark.parametrize("mode", ["ecmp", "eecmp"])
def test_zone_rtsw_hashes_remote_racks_over_all_uplinks(mode: str) -> None:
    """ecmp/eecmp: the other rack's /24 goes to one group of both uplinks."""
    p = plan("zone")
    e = compute_routes(p, "rtsw1", mode)
    assert routes_of(e)[("10.0.1.0", 24)] == UPLINK_GROUP
    (g,) = e.groups
    assert g.group_id == UPLINK_GROUP
    assert g.members == tuple(x.port for x in p.switch("rtsw1").ports_of("uplink"))


def test_zone_rtsw_pins_each_remote_slice_to_one_uplink() -> None:
    """pin: each remote NIC's /32 takes the uplink chosen by its downlink port."""
    p = plan("zone")
    e = compute_routes(p, "rtsw1", "pin")
    uplinks = [x.port for x in p.switch("rtsw1").ports_of("uplink")]
    routes = routes_of(e)
    for port in p.switch("rtsw2").ports_of("host"):
        assert routes[(port.host_ip, 32)] == uplinks[(port.port - 1) % len(uplinks)]
    assert not e.groups
    assert len({routes[(port.host_ip, 32)] for port in p.switch("rtsw2").ports_of("host")}) == 2


def test_zone_ctsw_routes_each_rack_down() -> None:
    """A CTSW routes each rack's /24 to that rack's RTSW and drops the rest of its zone."""
    p = plan("zone")
    e = compute_routes(p, "ctsw1")
    ports = {x.peer: x.port for x in p.switch("ctsw1").ports_of("downlink")}
    assert routes_of(e) == {("10.0.0.0", 24): ports["rtsw1"], ("10.0.1.0", 24): ports["rtsw2"],
                            ("10.0.0.0", 16): "drop"}


def test_two_zones_ctsw_sends_other_zone_to_atsw_and_atsw_splits_by_zone() -> None:
    """two-zones.yaml: CTSW -> other zone's /16 up; ATSW -> each zone's /16 over its CTSWs."""
    p = plan("two-zones")
    ctsw = compute_routes(p, "ctsw1")
    assert routes_of(ctsw)[("10.1.0.0", 16)] == p.switch("ctsw1").ports_of("uplink")[0].port
    atsw = compute_routes(p, "atsw1")
    r = routes_of(atsw)
    assert set(r) == {("10.0.0.0", 16), ("10.1.0.0", 16)}
    groups = {g.group_id: g.members for g in atsw.groups}
    assert len(groups[r[("10.0.0.0", 16)]]) == 2  # two CTSWs in zone 0


def test_install_order_puts_members_before_references() -> None:
    """Members, then groups, then entries; the default action last."""
    e = compute_routes(plan("zone"), "rtsw1", "ecmp")
    order = e.install_order()
    kinds = [type(x).__name__ for x in order]
    assert kinds.index("Group") > max(i for i, k in enumerate(kinds) if k == "Member")
    assert order[-1].is_default
    assert e.delete_order()[-1] == e.members[0]


def test_compute_all_covers_every_switch() -> None:
    """compute_all returns one SwitchEntries per switch."""
    p = plan("two-zones")
    assert sorted(compute_all(p)) == sorted(s.name for s in p.switches)


def test_lpm_values_are_network_addresses() -> None:
    """Route prefixes carry no host bits."""
    for e in compute_routes(plan("zone"), "ctsw1").entries:
        for _, m in e.match:
            if isinstance(m, Lpm):
                assert m.value & ((1 << (32 - m.prefix_len)) - 1) == 0


def test_unknown_mode_is_rejected() -> None:
    """A mode outside pin/ecmp/eecmp is a ValueError."""
    with pytest.raises(ValueError, match="unknown routing mode"):
        compute_routes(plan("rack"), "rtsw1", "spray")
